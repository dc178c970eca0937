package httpcheck

import (
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// view is one exchange's answer as the rules read it: its record, parsed
// by live.Parse, with each count it stated.
type view struct {
	Exchange
	judged                        bool // a 2xx or a 429: the contract applies
	limit, remaining              int64
	limitOK, remainingOK, resetOK bool
	// resetLo < the time from the decision until the key is idle ≤ resetHi
	// (judge.TrueWait of the Reset).
	resetLo, resetHi time.Duration
	retry            time.Duration // a 429's Retry-After, when retryOK
	retryLo          time.Duration // the true wait behind it is more than this (judge.TrueWait)
	retryOK          bool
	retryWhy         string // why a 429's Retry-After is unusable
}

func (r *Report) view(e Exchange) view {
	a := e.Record.Answer
	v := view{Exchange: e, judged: admitted(e.Status) || e.Status == http.StatusTooManyRequests}
	v.limit, v.limitOK = a.Limit, a.Known.Has(record.FieldLimit) && a.Limit >= 0
	v.remaining, v.remainingOK = a.Remaining, a.Known.Has(record.FieldRemaining) && a.Remaining >= 0
	if v.resetOK = a.Known.Has(record.FieldReset) && a.Reset >= 0; v.resetOK {
		lo, hi := judge.TrueWait(e.Record, record.FieldReset)
		v.resetLo, v.resetHi = micros(lo), micros(hi)
	}
	if e.Status == http.StatusTooManyRequests {
		v.retry, v.retryWhy, v.retryOK = retryOf(e)
		lo, _ := judge.TrueWait(e.Record, record.FieldRetryAfter)
		v.retryLo = micros(lo)
	}
	return v
}

// micros is µs as a Duration, saturating.
func micros(us int64) time.Duration {
	if us > math.MaxInt64/int64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// resetWords describes v's Reset for a message.
func (v view) resetWords() string {
	switch {
	case !v.resetOK:
		return "no usable Reset"
	case v.Record.Delta.Has(record.FieldReset):
		return "Reset " + secs(micros(v.Record.Reset))
	}
	return fmt.Sprintf("Reset %s (an instant, %s after the response)", v.Reset, secs(micros(v.Record.Reset)))
}

// mayHaveReset reports whether the key may have become idle within
// elapsed of v's request being sent.
func (v view) mayHaveReset(elapsed time.Duration) bool {
	return v.resetOK && elapsed > v.resetLo
}

// retryOf reads a 429's Retry-After, as live.Parse did, as the wait it
// asks for, or says why it cannot be honoured.
func retryOf(e Exchange) (time.Duration, string, bool) {
	a := e.Record.Answer
	raw := strings.TrimSpace(e.RetryAfter)
	switch {
	case raw == "":
		return 0, "a 429 without Retry-After: the client cannot know when to retry", false
	case !a.Known.Has(record.FieldRetryAfter) && strings.HasPrefix(a.Malformed, HeaderRetryAfter):
		return 0, a.Malformed, false
	case !a.Known.Has(record.FieldRetryAfter):
		return 0, fmt.Sprintf("Retry-After %q is neither whole seconds nor an HTTP-date", raw), false
	}
	wait := micros(a.RetryAfter)
	if wait >= time.Second {
		return wait, "", true
	}
	if a.Delta.Has(record.FieldRetryAfter) {
		return 0, fmt.Sprintf("Retry-After %s: below 1 s, so a client retries at once into the same refusal", raw), false
	}
	against := "Date"
	if e.Date == "" {
		against = "the time it arrived (no Date)"
	}
	return 0, fmt.Sprintf("Retry-After %q is %s after %s: less than 1 s", raw, secs(wait), against), false
}

// refill is ⌈limit × elapsed / window⌉: the most Remaining may rise in
// elapsed at limit per window (0 for no time).
func refill(limit int64, elapsed, window time.Duration) int64 {
	if limit <= 0 || elapsed <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(limit), uint64(elapsed))
	if hi >= uint64(window) {
		return math.MaxInt64
	}
	q, rem := bits.Div64(hi, lo, uint64(window))
	if rem > 0 {
		q++
	}
	return int64(min(q, math.MaxInt64))
}

// judge applies every rule to the exchanges and records the breaches.
// optLimit is Options.Limit.
func (r *Report) judge(optLimit int64, maxWait time.Duration) {
	views := make([]view, len(r.Exchanges))
	for i, e := range r.Exchanges {
		views[i] = r.view(e)
	}
	limitFrom := fmt.Sprintf("Options.Limit is %d", optLimit)
	if optLimit == 0 {
		r.Limit = 0
		for _, v := range views {
			if v.judged && v.limitOK && v.limit > 0 {
				r.Limit, limitFrom = v.limit, fmt.Sprintf("#%d said %d", v.N, v.limit)
				break
			}
		}
	}
	add := func(rule Rule, why string, e view, prev *view) {
		b := RuleBreach{Rule: rule, Why: why, Exchange: e.Exchange}
		if prev != nil {
			pe := prev.Exchange
			b.Previous = &pe
		}
		r.Breaches = append(r.Breaches, b)
	}

	for _, v := range views {
		if !v.judged {
			add(RuleStatus, fmt.Sprintf("status %d %s: neither admitted (2xx) nor refused (429)", v.Status, http.StatusText(v.Status)), v, nil)
			continue
		}
		if why := headerProblems(v, r.Limit, limitFrom); why != "" {
			add(RuleHeaders, why, v, nil)
		}
		if v.Status == http.StatusTooManyRequests && !v.retryOK {
			add(RuleRetryAfter, v.retryWhy, v, nil)
		}
		if v.remainingOK && r.Limit > 0 && v.remaining > r.Limit {
			add(RuleRemainingBounds, fmt.Sprintf("Remaining %d is above the limit %d", v.remaining, r.Limit), v, nil)
		}
		if v.remainingOK && v.Status == http.StatusTooManyRequests && v.remaining != 0 {
			add(RuleRemainingBounds, fmt.Sprintf("a 429 that says Remaining %d: a refused request has none left", v.remaining), v, nil)
		}
		if v.Status == http.StatusTooManyRequests && v.retryOK && v.resetOK && v.retryLo >= v.resetHi {
			add(RuleResetConsistent, fmt.Sprintf("Retry-After %s is longer than %s: the key would be idle before the client may retry", secs(v.retry), v.resetWords()), v, nil)
		}
		if v.remainingOK && v.resetOK && r.Limit > 0 && v.remaining < r.Limit && v.resetHi <= 0 {
			add(RuleResetConsistent, fmt.Sprintf("Remaining %d is below the limit %d, yet %s says the key is idle already", v.remaining, r.Limit, v.resetWords()), v, nil)
		}
	}

	r.judgeRises(views, add)
	r.judgeBurst(views[:r.Burst], add)
	r.judgeRetry(views, maxWait, add)
	r.judgeLive()

	order := func(ru Rule) int {
		return slices.IndexFunc(rules, func(x ruleInfo) bool { return x.rule == ru })
	}
	slices.SortStableFunc(r.Breaches, func(a, b RuleBreach) int {
		if c := order(a.Rule) - order(b.Rule); c != 0 {
			return c
		}
		return a.Exchange.N - b.Exchange.N
	})
}

type adder func(rule Rule, why string, e view, prev *view)

// judgeLive judges the exchanges' records with judge.Records (Report.Live
// says against what). Without a limit, or with a Window finer than a µs,
// the promise is left unjudged and the rules that need none still run.
func (r *Report) judgeLive() {
	recs := make([]record.Record, len(r.Exchanges))
	for i, e := range r.Exchanges {
		recs[i] = e.Record
	}
	l, err := algos.NewLimit(r.Limit, r.Window.Microseconds(), r.Limit)
	if err != nil {
		l = algos.Limit{Rate: r.Limit, Window: r.Window.Microseconds(), Burst: r.Limit}
	}
	r.Live = judge.Records(recs, algos.AlignedWindowPromise(l), l)
}

// headerProblems lists what is wrong with v's rate-limit headers: the
// X-RateLimit-* fields, or the IETF RateLimit fields live.Parse reads in
// their place.
func headerProblems(v view, limit int64, limitFrom string) string {
	var why []string
	bad := func(name, raw string, known bool, val int64) {
		switch {
		case known:
			why = append(why, fmt.Sprintf("%s %d is negative", name, val))
		case raw == "":
			why = append(why, "no "+name)
		default:
			why = append(why, fmt.Sprintf("%s %q is not a non-negative integer", name, raw))
		}
	}
	a := v.Record.Answer
	switch {
	case !v.limitOK:
		bad(HeaderLimit, v.Limit, a.Known.Has(record.FieldLimit), a.Limit)
	case limit > 0 && v.limit != limit:
		why = append(why, fmt.Sprintf("%s %d, but %s", HeaderLimit, v.limit, limitFrom))
	}
	if !v.remainingOK {
		bad(HeaderRemaining, v.Remaining, a.Known.Has(record.FieldRemaining), a.Remaining)
	}
	if !v.resetOK {
		bad(HeaderReset, v.Reset, a.Known.Has(record.FieldReset), a.Reset)
	}
	if len(why) == 0 && a.Malformed != "" {
		why = append(why, "a header that cannot be read: "+a.Malformed)
	}
	return strings.Join(why, "; ")
}

// judgeRises holds each rise of Remaining to the refill the rate allows
// between the earlier request's sending and the later response's arrival,
// which contains the time between the two decisions.
func (r *Report) judgeRises(views []view, add adder) {
	if r.Limit <= 0 {
		return
	}
	var prev *view
	for i := range views {
		v := &views[i]
		if !v.judged || !v.remainingOK {
			continue
		}
		if prev != nil {
			elapsed := v.Received - prev.Sent
			rise, allow := v.remaining-prev.remaining, refill(r.Limit, elapsed, r.Window)
			if rise > allow && !prev.mayHaveReset(elapsed) {
				excuse := fmt.Sprintf("#%d carried no usable Reset to excuse it", prev.N)
				if prev.resetOK {
					excuse = fmt.Sprintf("#%d's %s cannot have come (rounded up, it means more than %s)", prev.N, prev.resetWords(), secs(max(prev.resetLo, 0)))
				}
				add(RuleRemainingRises, fmt.Sprintf(
					"Remaining rose from %d to %d within %s (#%d sent to #%d received); %d per %v refills at most %d in that time, and %s",
					prev.remaining, v.remaining, dur(elapsed), prev.N, v.N, r.Limit, r.Window, allow, excuse), *v, prev)
			}
		}
		prev = v
	}
}

// judgeBurst holds the burst to the limit: it must meet a 429, and each of
// its admits must fit in Limit, plus the rate's refill since the burst
// began, plus what Remaining showed coming back where a reset may have
// come. That last term is exact for a window that restarts its count (its
// admits are Limit − the last Remaining + the count given back at each
// restart), and a bucket's admits fit in the first two.
func (r *Report) judgeBurst(burst []view, add adder) {
	if len(burst) == 0 {
		return
	}
	first, last := burst[0], burst[len(burst)-1]
	switch span := last.Received - first.Sent; {
	case slices.ContainsFunc(burst, func(v view) bool { return v.Status == http.StatusTooManyRequests }):
	case r.Limit > 0 && int64(len(burst)) <= mostAdmits(r.Limit, span, r.Window):
		// The machine answered too slowly for the burst to go past the
		// limit's refill: no 429 was owed (plan carried it on as far as
		// it may).
		r.Unjudged = fmt.Sprintf("%s: the burst of %d requests took %s, in which %d per %v may admit %d: the machine answered too slowly to show whether the limit is enforced",
			RuleLimitEnforced, len(burst), dur(span), r.Limit, r.Window, mostAdmits(r.Limit, span, r.Window))
	default:
		limit := "no limit advertised"
		if r.Limit > 0 {
			limit = fmt.Sprintf("a limit of %d", r.Limit)
		}
		add(RuleLimitEnforced, fmt.Sprintf("the burst of %d requests met no 429 (%d admitted, %s)", len(burst), r.Admitted, limit), last, &first)
	}
	if r.Limit <= 0 {
		return
	}
	if !slices.ContainsFunc(burst, func(v view) bool { return !v.judged || !v.remainingOK || !v.resetOK }) &&
		r.overBurst(burst, add) {
		return
	}
	// Whatever Reset says: a count can start over at most once a Window,
	// and a span shorter than k Windows meets at most k+1 of them, so no
	// limit of Limit per Window admits more than Limit·(⌊span/Window⌋+2)
	// (a bucket of burst Limit admits Limit plus the refill, less). A
	// Reset in whole seconds under a window of a second may have come at
	// every response, and gives overBurst back every rise it sees; this
	// bound still catches nodes that each admit a limit. It needs no
	// header but the Limit, so it also judges a burst with headers missing.
	var n int64
	for _, v := range burst {
		if !admitted(v.Status) {
			continue
		}
		n++
		span := v.Received - first.Sent
		restarts := int64(span/r.Window) + 1
		if bound := mostAdmits(r.Limit, span, r.Window); n > bound {
			add(RuleLimitEnforced, fmt.Sprintf(
				"admit %d of the burst came %s after it began; %d per %v starts its count over at most %d %s in that time, so admits at most %d, whatever Reset says",
				n, dur(span), r.Limit, r.Window, restarts, plural(int(restarts), "time", "times"), bound), v, &first)
			return
		}
	}
}

// mostAdmits is the most admits any limit of limit per window gives in a
// span: it starts its count over at most ⌊span/window⌋+1 times, so
// limit·(⌊span/window⌋+2) (a bucket of burst limit refilling limit per
// window gives less). judgeBurst holds a burst to it, and plan carries a
// burst that met no 429 on while it may still have been within it.
func mostAdmits(limit int64, span, window time.Duration) int64 {
	return satMul(limit, int64(span/window)+2)
}

// overBurst holds every prefix of a burst whose responses all carry
// Remaining and Reset to Limit, the refill since the burst began, and what
// the responses showed coming back where a reset may have come; it
// reports whether it found a breach.
func (r *Report) overBurst(burst []view, add adder) bool {
	first := burst[0]
	var n, credit int64
	for i, v := range burst {
		grant := int64(0)
		if admitted(v.Status) {
			grant = 1
		}
		if i > 0 {
			prev := burst[i-1]
			if back := v.remaining - prev.remaining + grant; back > 0 && prev.mayHaveReset(v.Received-prev.Sent) {
				credit += back
			}
		}
		if grant == 0 {
			continue
		}
		n++
		refilled := refill(r.Limit, v.Received-first.Sent, r.Window)
		if bound := satAdd(satAdd(r.Limit, refilled), credit); n > bound {
			add(RuleLimitEnforced, fmt.Sprintf(
				"admit %d of the burst came %s after it began; %d per %v admits at most %d by then (%d at once, %d refilled at that rate, %d given back at resets)",
				n, dur(v.Received-first.Sent), r.Limit, r.Window, bound, r.Limit, refilled, credit), v, &first)
			return true
		}
	}
	return false
}

// judgeRetry holds the burst's last 429 to its Retry-After: the request
// sent that long after it arrived must be admitted.
func (r *Report) judgeRetry(views []view, maxWait time.Duration, add adder) {
	if r.Burst == 0 {
		return
	}
	last := views[r.Burst-1]
	if last.Status != http.StatusTooManyRequests || !last.retryOK {
		return
	}
	if last.retry > maxWait {
		add(RuleRetryHonoured, fmt.Sprintf("Retry-After %s is longer than MaxWait %v: not waited", secs(last.retry), maxWait), last, nil)
		return
	}
	if len(views) <= r.Burst {
		return
	}
	retry := views[r.Burst]
	if !admitted(retry.Status) {
		add(RuleRetryHonoured, fmt.Sprintf("the retry sent %s after #%d arrived with Retry-After %s was answered %d %s",
			dur(retry.Sent-last.Received), last.N, secs(last.retry), retry.Status, http.StatusText(retry.Status)), retry, &last)
	}
}

// secs prints a duration in whole seconds as the headers give them.
func secs(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}

func satMul(a, b int64) int64 {
	if a > 0 && b > 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
