// Package judge is the judge of records: it holds what clients saw of a
// run (record.Record, from any producer: live's driver, the simulator,
// replay, a file of yours read by cmd/judge) to a limit's promise and to
// what every answer says (Records, Verdict), and gives the table's "over"
// from records against a reference algorithm (Over).
//
// Its promise is soundness under the client's timing uncertainty. A client
// does not see when a request was decided, only that it was decided
// between its send and its answer: every verdict holds for every way the
// decisions can lie inside those intervals. An over-admission is reported
// only when no placement of the admits keeps the promise, so a slow
// network, a starved machine or a stalled driver can hide a breach but
// never invent one; a verdict does not depend on how fast the machine was.
// A record whose producer saw the decision (record.SeenDecided: the
// simulator's, replay's under MONITOR) is placed at that instant. The
// waits an answer names (Reset, Retry-After) are judged the same way, and
// allowing for the rounding of the header conventions (reset.go,
// TrueWait): a rounding up by an honest service never convicts it.
//
// The rules, each beside its arithmetic: over-admission (judge.go),
// Remaining (remaining.go), Resets (reset.go), retries at their
// Retry-After (retries.go), bad and unreadable answers (judge.go), and,
// asked for with Exact, denials the promise certainly allowed
// (honest.go). With PerNode each node's answers are judged as a limiter
// of their own, which tells a deployment from its limiter.
//
// # What it owns, and what it must not import
//
// The rules over records and their options (Exact, PerNode), the Verdict
// with its row and JSON (Schema), and Over. The record is package record's, the kinds of breach package
// breach's (the hunt's judge, in scenarios, names its breaches in them
// too). It imports algos, breach, internal/encode and record, nothing
// else of this module: it neither drives nor parses (package live does),
// so that a recording made anywhere is judged by the same rules.
package judge
