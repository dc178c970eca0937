// Command judge judges a file of records (package record: the JSON lines
// of overshoot.record/v1, or their CSV) against a limit's promise, with
// judge.Records, the judge of every run's records: a recording of your own
// service, made by any tool that writes those columns, is judged by the
// rules overshoot's own runs are (over-admission only when certain,
// answers no limiter may give, Remaining, retries at their Retry-After,
// Resets). A wait the file marks as stated as a delay (reset_is_delay,
// retry_after_is_delay) is judged as tightly as the live run judged it;
// one not marked, as possibly an instant, more loosely. With -exact the
// promise is a floor too (judge.Exact): a request it certainly allowed
// must have been admitted. With -per-node each node's answers are judged
// as a limiter of their own (judge.PerNode), for nodes that each keep
// their own state. With -promise aligned, a file whose every decided
// record gives decided_us (the simulator's) is judged window by window,
// each window [k·W, (k+1)·W) of the file's clock, which must then be the
// clock the limiter aligns its windows on.
//
//	go run ./cmd/judge -rate 10 -window 1s -burst 10 -promise bucket records.jsonl
//
// It prints the verdict's row and each breach's first record (-json: the
// verdict as overshoot.live/v1) and exits 1 when the run is not clean, 2
// on bad input.
//
// # What it owns, and what it must not import
//
// The command line only. It imports algos, judge and record of this module.
package main
