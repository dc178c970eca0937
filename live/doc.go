// Package live judges a deployed rate limiter from the outside: it drives
// a target (a Go function, or HTTP nodes) in real time, open or closed
// loop, records every request as the client saw it (record.Record), and
// judges the records against the limit's promise (Judge), printing the row
// the tables print.
//
// Its promise is soundness under the client's timing uncertainty. A client
// does not see when a request was decided, only that it was decided
// between its send and its answer: every verdict holds for every way the
// decisions can lie inside those intervals. An over-admission is reported
// only when no placement of the admits keeps the promise, so a slow
// network, a starved machine or a stalled driver can hide a breach but
// never invent one; a verdict does not depend on how fast the machine was.
// The waits an answer names (Reset, Retry-After) are judged the same way,
// and allowing for the whole-second rounding of the header conventions
// (reset.go): a rounding up by an honest service never convicts it.
//
// # What it owns, and what it must not import
//
// The targets (Func, HTTP) and the parsing of the header conventions
// services ship (X-RateLimit-*, the IETF RateLimit, RateLimit-Policy and
// RateLimit-* fields, Retry-After in seconds or as an HTTP-date), the
// driver (Drive: open loop on vegeta's pacer, a plan of requests such as
// the simulator's clients, or closed loop, each key a record.Client of
// its own, such as traffic's RetryAfterClient or AtResetClient) and the
// one judge of records
// (Judge, Verdict), whoever made them: a record whose producer saw the
// decision (the simulator's, replay's under MONITOR) is placed at that
// instant. The record itself (Record, Answer) is package record's, and
// the kinds of breach the judge names (breach.Kind) package breach's, the
// hunt's judge's too. It imports algos, breach, internal/encode and
// record, nothing else of this module:
// the reference middleware, the fleet and Redis appear in its tests only,
// as one service it judges.
package live
