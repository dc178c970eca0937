package xtimerate

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// Name is the Spec's name, as reports print it.
const Name = "x/time/rate"

// EpochUnixMicro is the instant the library is told for now = 0, in µs of
// Unix time: 2025-01-01T00:00:00Z. It is fixed, so that a run is the same
// on every machine and every day; the library never reads the machine's
// clock through this adapter.
const EpochUnixMicro int64 = 1_735_689_600_000_000

// At is the time.Time the library is told for now µs: EpochUnixMicro + now,
// exactly, for every int64 now. A negative now (a node whose clock is
// behind the true time 0) is simply an instant before the epoch: nothing in
// the library cares where time 0 is, only how far apart two instants are.
func At(now int64) time.Time {
	const epochSec = EpochUnixMicro / 1_000_000 // the epoch is a whole second
	return time.Unix(epochSec+now/1_000_000, (now%1_000_000)*1000).UTC()
}

// maxWait bounds the adapter's search for RetryAfter and Reset, in µs:
// 2^53 µs, about 285 years. A validated limit refills a whole bucket in less
// than 2^52 µs (Burst × Unit < 2^52 scaled tokens at ≥ 1 a µs), and the
// library refills up to 292 years of elapsed time in one step, so a search
// never gets there; the bound only keeps a broken state from looping.
const maxWait int64 = 1 << 53

// Spec is golang.org/x/time/rate as a limiter under test: named "x/time/rate",
// a CallerClock limiter (it decides at the time it is told), promising the
// token bucket's algos.BucketPromise. New makes one
// rate.NewLimiter(rate.Limit(Rate·10⁶/Window), Burst) per key, lazily, each
// starting full; Allow tells it At(now) and calls AllowN(At(now), 1), which
// gives Allowed.
//
// The other fields are read afterwards from the library's public API,
// TokensAt, which does not change the limiter, and mean what
// algos.Decision says they mean for this library. It decides as follows
// (rate.go, reserveN with maxFutureReserve 0): tokens = TokensAt(t) - 1; it
// admits when tokens ≥ 0, or when the wait for the missing part,
// time.Duration(-tokens/limit × 10⁹) ns, truncates to 0, that is when less
// than 1 ns worth of a token is missing. The adapter applies that same rule,
// in the same float64 arithmetic, to TokensAt at other instants:
//
//   - Remaining: from tok = TokensAt(t) after the call, the number of
//     further AllowN(t, 1) the library would admit: ⌊tok⌋ (for tok ≥ 1,
//     whose subtractions of 1 are exact), then those the 1 ns slack lets
//     through, replayed one by one (one at most for a limit of 10⁹ a second
//     or less; up to 2^20 are counted above).
//   - RetryAfter (a denial only): the least whole d ≥ 1 µs at which the
//     library would admit a retry at At(now+d): the estimate
//     ⌈(1-tok)/limit⌉ µs, checked against the rule at d and d-1, and a
//     search when it is off (after a time before the library's last, which
//     it does not refill for).
//   - Reset: the least whole d ≥ 0 µs after which the library admits as
//     many at one instant as from a full bucket (Burst, for a limit of 10⁹
//     a second or less): its tokens are at the cap, or short of it by less
//     than 1 ns worth; found the same way from ⌈(Burst-tok)/limit⌉.
//
// Where float rounding makes it differ from the exact integer
// algos.TokenBucket, on one node with a true clock: the library's tokens
// are float64, refilled by elapsed.Seconds() × limit, and drift from the
// exact count by about 10⁻¹⁵ of a token either way, so a bucket that is
// exactly k tokens may read k - 10⁻¹⁵. Its own admit rule absorbs that, and
// so does the adapter's Reset, so over 14 400 seeded calls (the tests) every
// Decision is identical to algos.TokenBucket's, field for field. Read
// naively (⌊tok⌋, or Reset as TokensAt reaching exactly Burst), the drift
// would show: on 1 749 of those calls TokensAt reaches Burst 1 µs after the
// exact bucket is full. Rounding is not the only difference: above 10⁹ a
// second, where a token refills in under 1 ns, the truncation of the wait
// to whole ns lets the library admit past an empty bucket (at 2001 per µs,
// burst 3: 5 admits at one instant; TestBreaksAboveOnePerNanosecond), which
// breaks the bucket promise.
//
// Under a skewed caller the library differs from algos.TokenBucket (which
// stores last = now on every call): told a time before its last, the
// library refills nothing and, only if it admits, moves last back to that
// time, so the next caller on time is refilled for the gap again; a denial
// leaves it untouched. See TestSkewedCaller.
//
// ExactRetry is true: a retry 1 µs before RetryAfter is denied and one at
// RetryAfter admitted, by construction (RetryAfter is the least µs at which
// the library's own rule admits), and held by TestFieldsAreExact, which
// replays every decision of seeded sequences on a fresh limiter and checks
// Remaining, RetryAfter and Reset against what the library then does.
func Spec() limiter.Spec {
	return limiter.Spec{
		Name:       Name,
		Clock:      limiter.CallerClock,
		Promise:    algos.BucketPromise,
		New:        limiter.PerKey(newKey),
		ExactRetry: true,
	}
}

// key is one key's library limiter and its limit as float64.
type key struct {
	lim   *rate.Limiter
	limit float64 // tokens a second, as the library holds it
	burst float64
	fullN int64 // admits at one instant from a full bucket: Burst, at ≤ 10⁹/s
}

func newKey(l algos.Limit, _ int64) (limiter.Decider, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("xtimerate: %w", err)
	}
	limit := rate.Limit(float64(l.Rate) * 1e6 / float64(l.Window))
	k := &key{
		lim:   rate.NewLimiter(limit, int(l.Burst)),
		limit: float64(limit),
		burst: float64(l.Burst),
	}
	k.fullN = k.remaining(k.burst, math.MaxInt64)
	return k, nil
}

// Decide calls AllowN(At(now), 1) and reads the rest off TokensAt.
func (k *key) Decide(now int64) algos.Decision {
	t := At(now)
	d := algos.Decision{Allowed: k.lim.AllowN(t, 1)}
	tok := k.lim.TokensAt(t)
	d.Remaining = k.remaining(tok, math.MaxInt64)
	if !d.Allowed {
		d.RetryAfter = k.first(now, tok, 1, k.admits)
	}
	d.Reset = k.first(now, tok, k.burst, k.idle)
	return d
}

// admits is the library's decision for one request at an instant where
// TokensAt reads tok: reserveN with n = 1 and maxFutureReserve 0.
func (k *key) admits(tok float64) bool {
	tok -= 1
	if tok >= 0 {
		return true
	}
	wait := -tok / k.limit * float64(time.Second) // durationFromTokens
	return wait <= float64(math.MaxInt64) && time.Duration(wait) <= 0
}

// idle reports a bucket from which the library admits as many at one
// instant as from a full one: tokens at the cap (advance caps them at
// exactly burst), or short of it by less than the 1 ns slack of admits.
func (k *key) idle(tok float64) bool {
	return tok >= k.burst || k.remaining(tok, k.fullN) >= k.fullN
}

// remaining counts the admits the library would give at one instant from
// tok, stopping at most: the library takes 1 from its tokens per admit (at
// the same instant it refills exactly 0), and subtracting 1 from a float64
// of at least 1 and below 2^52 is exact, so the first ⌊tok⌋ admits leave
// tokens ≥ 0 and are skipped over at once; those after are the ones the
// 1 ns slack of admits lets through, replayed one by one in the library's
// own arithmetic (at most one for a limit of 10⁹ a second or less, about
// limit/10⁹ above), up to maxExtra of them.
func (k *key) remaining(tok float64, most int64) int64 {
	var n int64
	if tok >= 1 {
		n = min(int64(tok), most)
		tok -= float64(n)
	}
	for i := 0; n < most && i < maxExtra && k.admits(tok); i++ {
		n++
		tok -= 1
	}
	return n
}

// maxExtra bounds the admits past an empty bucket that remaining replays,
// which only a limit of more than 2^20·10⁹ a second reaches.
const maxExtra = 1 << 20

// first is the least d ≥ 0 µs at which ok holds for TokensAt(At(now+d)),
// given tok = TokensAt(At(now)); it starts from the estimate
// ⌈(target-tok)/limit⌉ µs, which is usually right or 1 µs off, and
// searches when it is not. TokensAt never decreases as time goes on, so ok,
// once true, stays true.
func (k *key) first(now int64, tok, target float64, ok func(float64) bool) int64 {
	if ok(tok) {
		return 0
	}
	at := func(d int64) bool { return ok(k.lim.TokensAt(At(now + d))) }
	hi := int64(1)
	if est := math.Ceil((target - tok) / k.limit * 1e6); est > 1 {
		hi = int64(min(est, float64(maxWait)))
	}
	lo := int64(0) // ok is false at lo
	for !at(hi) {
		if hi >= maxWait {
			return maxWait
		}
		lo, hi = hi, min(2*hi, maxWait)
	}
	// The estimate is usually right or a µs or two late: step back from it
	// before searching the rest.
	for range 2 {
		if hi-lo <= 1 {
			break
		}
		if !at(hi - 1) {
			return hi
		}
		hi--
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if at(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
