package lua

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/redis/go-redis/v9"
)

// DifferentialCalls returns n times (µs) at which to call one key under lim,
// for Differential, starting at start. The same arguments always give the
// same times.
//
// The mix is the one the six built-in scripts are held to: mostly calls
// around the rate, with 4% exactly one window after one of the last 16
// calls when that is not before the latest (the sliding log's boundary), 4% at the same true time as the call before, 20% bursts
// within 50 µs, 10% just before, on or just after a window edge, 4% after
// one to five seconds idle, and 15% of all but the exactly-one-window calls
// told a time up to 60 ms behind, as from a node whose clock is behind (never
// below 0). The times are therefore not sorted.
//
// The calls advance by about the window every ten calls and by seconds
// every twenty-five, so one window seldom holds more than about twenty
// calls: a limit (or burst) well above that is seldom reached. Admitted below
// Calls in the DiffReport shows that denials were exercised. It is an error for lim to be invalid, start or n to be
// negative, or a time to pass algos.MaxTime: start earlier.
func DifferentialCalls(seed uint64, lim algos.Limit, start int64, n int) ([]int64, error) {
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("lua: differential calls: %w", err)
	}
	if start < 0 || start > algos.MaxTime {
		return nil, fmt.Errorf("lua: differential calls: start %d µs is not within 0 and algos.MaxTime", start)
	}
	if n < 0 {
		return nil, fmt.Errorf("lua: differential calls: %d calls", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6f7665727368))
	gap := lim.Window / lim.Rate
	truth := start // the true time of the latest call
	var told []int64
	times := make([]int64, n)
	for i := range times {
		t := truth
		exact := false
		switch p := rng.IntN(100); {
		case p < 4 && len(told) > 0: // exactly one window after an earlier call
			t = max(t, told[rng.IntN(len(told))]+lim.Window)
			exact = true
		case p < 8: // the same µs
		case p < 28: // a burst
			t += rng.Int64N(50)
		case p < 38: // just before, on or just after a window edge
			t = (t/lim.Window+1)*lim.Window - rng.Int64N(3*gap+1) + rng.Int64N(2)
			t = max(t, truth)
		case p < 42: // idle for seconds
			t += algos.Second + rng.Int64N(4*algos.Second)
		default: // around the rate
			t += rng.Int64N(gap + 1)
		}
		if t > algos.MaxTime {
			return nil, fmt.Errorf("lua: differential calls: call %d of %d from %d µs reaches past algos.MaxTime; start earlier", i, n, start)
		}
		truth = t
		now := t
		if rng.IntN(100) < 15 && !exact {
			now = max(0, now-rng.Int64N(60_001))
		}
		times[i] = now
		if told = append(told, now); len(told) > 16 {
			told = told[1:]
		}
	}
	return times, nil
}

// MaxReported is how many differences of each kind a DiffReport keeps.
const MaxReported = 5

// diffChunk is how many calls Differential sends in one pipeline; the key's
// TTL is checked after each.
const diffChunk = 200

// TTLSlack is how far under TTL of the last decision Differential accepts a
// key's PTTL, read after the pipeline that made that decision: time passes
// between the two, more under -race.
const TTLSlack = 500 * time.Millisecond

// DiffReport is what Differential found for one key.
type DiffReport struct {
	Algorithm string      // the Go twin's name
	StateDoc  string      // the Go twin's StateDoc: what the stored values mean
	Key       string      // the key the script ran on
	Limit     algos.Limit // the limit of every call
	Calls     int         // how many calls ran, on both
	Admitted  int         // how many of them the Go twin admitted

	// Differences counts the calls whose decision or stored values differ;
	// First holds the first MaxReported of them, in call order. After the
	// first, the two states may have parted, so the rest can be its echoes.
	Differences int
	First       []Difference

	// TTLChecks counts the times the key's expiry was read (after every
	// pipeline of calls); TTLDifferences how many were wrong, and FirstTTL
	// the first MaxReported of those.
	TTLChecks      int
	TTLDifferences int
	FirstTTL       []TTLDifference
}

// OK reports whether every call and every expiry agreed.
func (r DiffReport) OK() bool { return r.Differences == 0 && r.TTLDifferences == 0 }

// Summary is one line: the calls, the admits, the differences and the TTLs.
func (r DiffReport) Summary() string {
	return fmt.Sprintf("%d calls (%d admitted), %d differences, %d of %d TTLs within bound",
		r.Calls, r.Admitted, r.Differences, r.TTLChecks-r.TTLDifferences, r.TTLChecks)
}

// String is the summary, headed by the algorithm, key and limit, followed by
// every difference the report kept, in words.
func (r DiffReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %q, %v: %s", r.Algorithm, r.Key, r.Limit, r.Summary())
	for _, d := range r.First {
		b.WriteString("\n")
		b.WriteString(d.String())
	}
	if r.Differences > len(r.First) {
		fmt.Fprintf(&b, "\n(%d more differences not shown)", r.Differences-len(r.First))
	}
	for _, d := range r.FirstTTL {
		b.WriteString("\n")
		b.WriteString(d.String())
	}
	if r.TTLDifferences > len(r.FirstTTL) {
		fmt.Fprintf(&b, "\n(%d more TTL differences not shown)", r.TTLDifferences-len(r.FirstTTL))
	}
	return b.String()
}

// Difference is one call on which the script and its Go twin disagree.
type Difference struct {
	Call int   // the call's index in the times given to Differential
	Now  int64 // the time told, µs
	// Before is what the Go twin's state held before the call, in
	// algos.State.Stored order. Up to the first difference the script's key
	// held the same.
	Before    []int64
	Go, Lua   algos.Decision // the twin's decision and the script's
	GoStored  []int64        // the twin's state after the call
	LuaStored []int64        // what the script says the key holds after it
	StateDoc  string         // what the stored values mean, from the twin
}

// Fields names what differs, in the order allowed, remaining, retry-after,
// reset, stored.
func (d Difference) Fields() []string {
	var f []string
	if d.Go.Allowed != d.Lua.Allowed {
		f = append(f, "allowed")
	}
	if d.Go.Remaining != d.Lua.Remaining {
		f = append(f, "remaining")
	}
	if d.Go.RetryAfter != d.Lua.RetryAfter {
		f = append(f, "retry-after")
	}
	if d.Go.Reset != d.Lua.Reset {
		f = append(f, "reset")
	}
	if !slices.Equal(d.GoStored, d.LuaStored) {
		f = append(f, "stored")
	}
	return f
}

// String says in words what differs, what the twin held before the call,
// and both decisions and both states after it.
func (d Difference) String() string {
	doc := ""
	if d.StateDoc != "" {
		doc = " (" + d.StateDoc + ")"
	}
	before := shortInts(d.Before) + doc
	if len(d.Before) == 0 {
		before = "nothing (the key was absent)"
	}
	return fmt.Sprintf("call %d at %d µs differs in %s:\n"+
		"  before the call the twin held %s\n"+
		"  go twin: %s; stores %s\n"+
		"  script:  %s; stores %s",
		d.Call, d.Now, strings.Join(d.Fields(), ", "),
		before,
		describe(d.Go), shortInts(d.GoStored),
		describe(d.Lua), shortInts(d.LuaStored))
}

// TTLDifference is a key whose expiry is not what the script's last decision
// before the check asks for.
type TTLDifference struct {
	Call     int            // the last call before the check
	Decision algos.Decision // the script's decision on that call
	// Absent is true when the script said the key holds nothing, so the key
	// should not exist; otherwise its PTTL should be at most TTL(Decision)
	// and at most TTLSlack under it.
	Absent bool
	// Got is the key's PTTL as go-redis reads it: -1ns when the key has no
	// expiry, -2ns when it does not exist.
	Got time.Duration
}

// String says what the expiry was and what it should have been.
func (d TTLDifference) String() string {
	var got string
	switch d.Got {
	case -1:
		got = "the key has no expiry"
	case -2:
		got = "the key does not exist"
	default:
		got = fmt.Sprintf("the key expires in %v", d.Got)
	}
	want := "it should not exist, as the script stores nothing"
	if !d.Absent {
		bound := TTL(d.Decision)
		want = fmt.Sprintf("want at most %v (reset %d µs rounded up to the ms, plus %v) and no less than %v",
			bound, d.Decision.Reset, TTLMargin, bound-TTLSlack)
	}
	return fmt.Sprintf("TTL after call %d (%s): %s; %s", d.Call, describe(d.Decision), got, want)
}

// Differential runs each of times as a call on key, in that order, through
// the script l in Redis and through l.Algorithm().Decide in Go from an absent
// key (the zero algos.State), and compares each pair of decisions (allowed,
// remaining, retry-after, reset) and the values stored after each call.
// After every 200 calls it also reads the key's expiry, which must be
// TTL(decision) of the script's last decision, at most TTLSlack less, or the
// key absent if the script stores nothing. The stored values compared are
// the ones the script replies with: the layout in Redis is the script's own
// and is not read back, though a script that writes one thing and replies
// another will part from its twin on a later call that reads it.
//
// The key must not exist beforehand; Differential leaves it as the last call
// left it. Every time must be within 0 and algos.MaxTime (a negative time
// would make the script read Redis TIME). It returns an error for these, for
// an invalid limit, and for anything that stops a call: Redis unreachable, a
// Lua error, a reply of the wrong shape. Disagreements are not errors: they
// are in the report, whose OK says whether there were any.
func Differential(ctx context.Context, c redis.Cmdable, l *Limiter, key string, lim algos.Limit, times []int64) (DiffReport, error) {
	if l == nil {
		return DiffReport{}, errors.New("lua: differential: nil Limiter")
	}
	if key == "" {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: empty key", l.Name())
	}
	if err := lim.Validate(); err != nil {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: %w", l.Name(), err)
	}
	for i, t := range times {
		if t < 0 || t > algos.MaxTime {
			return DiffReport{}, fmt.Errorf("lua: differential of %s: call %d at %d µs is not within 0 and algos.MaxTime", l.Name(), i, t)
		}
	}
	n, err := c.Exists(ctx, key).Result()
	if err != nil {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: %w", l.Name(), err)
	}
	if n != 0 {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: key %q already exists; the Go twin starts from an absent key", l.Name(), key)
	}
	algo := l.Algorithm()
	rep := DiffReport{Algorithm: algo.Name, StateDoc: algo.StateDoc, Key: key, Limit: lim}
	var state algos.State
	for from := 0; from < len(times); from += diffChunk {
		part := times[from:min(len(times), from+diffChunk)]
		reqs := make([]Request, len(part))
		for i, now := range part {
			reqs[i] = Request{Key: key, Limit: lim, Now: now}
		}
		replies, err := l.DoAll(ctx, c, reqs)
		if err != nil {
			return rep, fmt.Errorf("lua: differential of %s, calls %d to %d: %w", l.Name(), from, from+len(part)-1, err)
		}
		for i, now := range part {
			before := state.Stored()
			want := algo.Decide(&state, now, lim)
			wantStored := state.Stored()
			got := replies[i]
			rep.Calls++
			if want.Allowed {
				rep.Admitted++
			}
			if got.Decision == want && slices.Equal(got.Stored, wantStored) {
				continue
			}
			if rep.Differences++; len(rep.First) < MaxReported {
				rep.First = append(rep.First, Difference{
					Call: from + i, Now: now, Before: before,
					Go: want, Lua: got.Decision, GoStored: wantStored, LuaStored: got.Stored,
					StateDoc: algo.StateDoc,
				})
			}
		}
		last := replies[len(replies)-1]
		if err := checkTTL(ctx, c, key, from+len(part)-1, last, &rep); err != nil {
			return rep, fmt.Errorf("lua: differential of %s: %w", l.Name(), err)
		}
	}
	return rep, nil
}

// checkTTL reads key's PTTL and records in rep whether it is what the
// script's reply to call asks for.
func checkTTL(ctx context.Context, c redis.Cmdable, key string, call int, last Reply, rep *DiffReport) error {
	got, err := c.PTTL(ctx, key).Result()
	if err != nil {
		return err
	}
	rep.TTLChecks++
	absent := len(last.Stored) == 0
	ok := got == -2
	if !absent {
		bound := TTL(last.Decision)
		ok = got >= 0 && got <= bound && got >= bound-TTLSlack
	}
	if ok {
		return nil
	}
	if rep.TTLDifferences++; len(rep.FirstTTL) < MaxReported {
		rep.FirstTTL = append(rep.FirstTTL, TTLDifference{Call: call, Decision: last.Decision, Absent: absent, Got: got})
	}
	return nil
}

// describe says a decision in words.
func describe(d algos.Decision) string {
	verdict := "denied"
	if d.Allowed {
		verdict = "admitted"
	}
	return fmt.Sprintf("%s, remaining %d, retry-after %d µs, reset %d µs", verdict, d.Remaining, d.RetryAfter, d.Reset)
}

// shortInts prints stored values, a long log as its first 3 and last 8.
func shortInts(v []int64) string {
	if len(v) <= 12 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%v … %v (%d values)", v[:3], v[len(v)-8:], len(v))
}
