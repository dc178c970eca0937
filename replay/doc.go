// Package replay plays the simulator's own traffic against a real Redis in
// real time, records when each request was sent and when Redis ran it (by
// Redis's clock), and hands those timings back to the simulator, which must
// then reproduce every decision Redis made.
//
// One goroutine per node, each with its own connection, sends that node's
// requests of model.Plan at their planned times. The atomic deployments call
// the algos/lua scripts; the GET/SET deployment calls lua.NonAtomic. Every
// call INCRs one sequence key, so the replay applies the operations in
// exactly the order Redis ran them, ties in TIME included.
//
// # What it owns, and what it must not import
//
// Playing a case live (Play), the recording (Played, Recording), and
// handing it back to the simulator (Replay, MeanDelay, Ideal). It imports
// algos, algos/lua and model; never scenarios or study, whose traffic and
// reports are built beside it, not under it.
package replay
