// Package replay plays traffic against a real Redis in real time, from one
// goroutine per node, records what happened (by Redis's clock), and hands
// the recording back to the simulator, which must then reproduce every
// decision Redis made.
//
// Two runners share the nodes and their timing:
//
//   - Play runs overshoot's six algorithms as their redis/lua scripts, or
//     the GET/SET client (lua.GetSet). Every call INCRs one sequence key
//     and returns Redis TIME, so Recording.Replay applies the operations in
//     exactly the order Redis ran them, ties in TIME included.
//   - PlayLive runs any limiter whose state lives in Redis (a Subject: its
//     limiter.Spec, whose New is the simulated twin, and a Connect that
//     makes each node's limiter on the real store). A library's script says
//     nothing about when it ran, so the run learns it from MONITOR: every
//     command in Redis's order, stamped with the store's clock, split into
//     calls by a hook counting each node's commands; a script that reads
//     TIME is stamped where it read it. LiveRecording.Replay then decides
//     every call again on the twin, in that order, at the time the node
//     told it (caller clock) or the store's clock then (store clock).
//
// # What it owns, and what it must not import
//
// Playing live (Play, PlayLive, Subject, Script), the recordings (Played,
// Recording, Call, LiveRecording), ordering a run by MONITOR (monitor.go),
// handing a recording back to the simulator (Replay, MeanDelay,
// Simulate, Ideal), and a recording as records (Records, records.go). It
// imports algos, redis/lua, limiter, model and record; never
// scenarios, study or an adapter, whose traffic, reports and libraries are
// built beside it, not under it.
package replay
