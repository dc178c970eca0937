// Package judge is the one judge of overshoot: every rule a limiter's
// answers are held to lives here, in package breach's kinds. It judges
// what clients saw of a run (record.Record, from any producer: live's
// driver, the simulator, replay, a file of yours read by cmd/judge)
// against a limit's promise and what every answer says (Records, Verdict),
// gives the table's "over" from records against a reference algorithm
// (Over), and judges the simulator's own runs exactly (Simulation, which
// the hunt runs on every seed).
//
// Its promise is soundness under the client's timing uncertainty. A client
// does not see when a request was decided, only that it was decided
// between its send and its answer: every verdict holds for every way the
// decisions can lie inside those intervals. An over-admission is reported
// only when no placement of the admits keeps the promise, so a slow
// network, a starved machine or a stalled driver can hide a breach but
// never invent one; a verdict does not depend on how fast the machine was.
// A record whose producer saw the decision (record.SeenDecided: the
// simulator's, replay's under MONITOR) is placed at that instant, and when
// every decision of a run was seen, a promise of aligned windows is judged
// window by window (aligned.go), as the hunt judges it. The
// waits an answer names (Reset, Retry-After) are judged the same way, and
// allowing for the rounding of the header conventions (reset.go,
// TrueWait): a rounding up by an honest service never convicts it.
//
// The rules, each beside its arithmetic: over-admission (judge.go),
// Remaining (remaining.go), both for seen aligned windows (aligned.go), Resets (reset.go), retries at their
// Retry-After (retries.go), bad and unreadable answers (judge.go), and,
// asked for with Exact, denials the promise certainly allowed
// (honest.go). With PerNode each node's answers are judged as a limiter
// of their own, which tells a deployment from its limiter.
//
// A simulated run needs no such allowance: the simulator saw which
// instance decided each request (the store, or a node of a local
// deployment) and the time that instance was told. Simulation holds it to
// the same contract exactly, per instance and in told time
// (simulation.go): over-admission with the admits that opened and closed
// the window, honest requests turned away, Remaining and Reset against the
// promise, Resets past idle, bad answers and panics, retries at their
// Retry-After, each client's first breach of each kind with the requests
// that show it (Evidence). TestTheTwoJudgesAgreeOnTheHuntsRuns, in
// scenarios, holds the two ways to agree where both judge.
//
// # What it owns, and what it must not import
//
// The rules over records and their options (Exact, PerNode), the Verdict
// with its row and JSON (Schema), Over, and the judge of simulated runs
// (Simulation, Evidence, Kinds). The record is package record's, the kinds
// of breach package breach's. It imports algos, breach, internal/encode and
// record, and, for the simulator's runs, model (the run), limiter (the
// Spec's promise) and traffic (which keys are the clients'): it neither
// drives nor parses (package live does; the hunt plays the runs and the
// runs played again), so that a recording made anywhere is judged by the
// same rules.
package judge
