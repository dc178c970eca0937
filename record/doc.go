// Package record is the one record of what a client saw of one request,
// whoever produced it: the simulator (model.Result.Records), a live run of
// a deployed service (live.Drive), replay's runs against a real Redis
// (replay.Recording.Records, LiveRecording.Records), and a file a user
// recorded with a tool of their own (ReadJSONL, ReadCSV; cmd/judge judges
// one). Every judge of answered requests (judge.Records) reads this record,
// so a simulated run and a live one are judged by the same rules.
//
// A record carries the request (key, node, cost), its times in µs (sent,
// the time the limiter was told or read, decided, answered) and the whole
// answer: allowed, the quota, Remaining, Reset and Retry-After, with which
// of them the answer stated (Fields), an unreadable header, an HTTP status,
// or the error that left the request undecided. A producer that cannot
// know a time (a live client sees neither the limiter's clock nor the
// instant of the decision) says it did not see it (Seen), and a judge reasons only from
// what is known: from Sent and Answered alone, a decision lies somewhere
// between them.
//
// # The words every package speaks
//
// Beside the record, the package holds the rest of the vocabulary the
// traffic generators, the simulator and the judges share, so that none of
// them imports another for a word: the Request (a key, the true time it is
// sent, and a pinned node), the seeded random Stream every draw behind a
// golden file comes from, the closed-loop Client (which the simulator and
// the live driver both play, handing it each answer's Record), the
// LoopClient that puts it on a key, the clocks' even spread over a
// skew (Offset), and MaxKeys. One request keeps its names from the
// generator to the verdict: Sent, then Told (the time the limiter was told
// or read), Decided and Answered.
//
// # What it owns, and what it must not import
//
// The vocabulary above (request.go, stream.go, loop.go), the Record, the
// Answer and its Fields, and the record's file format,
// overshoot.record/v1 (JSON Lines: WriteJSONL, ReadJSONL; the same columns
// as CSV: WriteCSV, ReadCSV), with the ParseError of a line that cannot
// be read, which package traffic's readers of traces return too. It
// imports algos (for algos.Decision) and internal/encode only, so that the
// traffic generators, the simulator, the live driver and the readers of
// traces can all speak it.
package record
