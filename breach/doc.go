// Package breach is the one vocabulary of the ways a limiter can break
// its contract: the Kind every judge of this module reports, so that a
// breach found in simulation and one found live have the same name and
// mean the same thing.
//
// Package judge speaks it in two ways. The hunt's (judge.Simulation, with
// the reruns package scenarios plays) sees every decision exactly, in
// simulated time, and can run the limiter again: it names
// OverAdmission, HonestTurnedAway, RetryDenied, RetryExtended,
// OffReference, BadAnswer, RemainingTooHigh, ResetTooShort, ResetPastIdle,
// KeysShareState and ReadsNodeClock. The judge of records (judge.Records) sees
// only what a client saw, each decision somewhere between its request's
// sending and its answer's arrival, and speaks only when every placement
// of the decisions breaks the rule: it names OverAdmission, RetryDenied,
// RetryExtended, BadAnswer, RemainingTooHigh, ResetTooShort and
// ResetPastIdle, HonestTurnedAway when asked to hold the promise as a
// floor too (judge.Exact), and two kinds only answers read off the wire can show,
// MalformedAnswer and ResetBeforeRetryAfter (the hunt, knowing the exact
// waits, calls a Retry-After past the Reset a BadAnswer). Both hold a
// Reset to the same longest idle, algos.Promise.LongestIdle. On the runs a
// hunt judges, every kind the judge of records finds in the run's records the
// hunt finds too, or its cause: a refusal at a Reset or after a
// Retry-After that a client can only call ResetTooShort or RetryDenied,
// the hunt, seeing the limiter, may name HonestTurnedAway, and a Remaining
// too high from nodes deciding on copies, OverAdmission (scenarios'
// TestTheTwoJudgesAgreeOnTheHuntsRuns holds them to it).
//
// # What it owns
//
// The kinds and their names. It imports nothing of the module, so every
// judge and every report can speak it.
package breach
