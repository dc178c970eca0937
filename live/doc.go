// Package live drives a deployed rate limiter from the outside: it sends
// to a target (a Go function, or HTTP nodes) in real time, open or closed
// loop, reads each answer in the header conventions services ship, and
// records every request as the client saw it (record.Record). Package
// judge judges the records (judge.Records), and prints the row the tables
// print.
//
// A client does not see when a request was decided, only that it was
// decided between its send and its answer: the driver records both
// instants as this machine saw them, and never claims a decision time it
// did not see, so that a slow network or a starved machine can widen what
// the judge must allow for, never narrow it. A target that does see its
// decisions (Observer: a script that reads the store's TIME and counts its
// calls, as the study's trials run) says so, and its records carry what
// it saw: the decision's instant, the time told, their order.
//
// # What it owns, and what it must not import
//
// The targets (Func, Observer, HTTP) and the parsing of the header conventions
// services ship (X-RateLimit-*, the IETF RateLimit, RateLimit-Policy and
// RateLimit-* fields, Retry-After in seconds or as an HTTP-date), and the
// driver (Drive: open loop on vegeta's pacer, a plan of requests such as
// the simulator's clients or a study trial's, from a Start of the caller's
// choosing, or closed loop, each key a record.Client of its own, such as
// traffic's RetryAfterClient or AtResetClient). The
// record itself (Record, Answer) is package record's, the judge package
// judge's. It imports algos and record, nothing else of this module: the
// reference middleware, the fleet, Redis and the judge appear in its
// tests only, the service it drives and what reads its records.
package live
