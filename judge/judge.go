package judge

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/record"
)

// THE JUDGE. A client knows of each request only that it was decided
// somewhere in [Sent, Answered]. So a set of admits of one key that were
// all sent at or after x and all answered by y was certainly decided
// within [x, y], whatever the network, the scheduler or the target did in
// between: in every placement of the decisions inside their intervals,
// those admits fall in a closed interval of length y − x. If the promise
// allows fewer admits in any interval of that length, every placement
// breaks it, and the breach is certain; if it allows as many, some
// placement may keep it, and nothing is said. A slow answer only widens
// an interval, which can hide a breach, never invent one.
//
// A record whose producer saw the decision (record.SeenDecided: the
// simulator's, replay's under MONITOR) has the interval [Decided, Decided]
// (record.Record.Span), so the same judge reads a simulated run exactly:
// TestJudgeOfSimulatedRecordsAgreesWithTheModel holds it to the model's own
// promise check.
//
// The judge therefore asks, for every x that is some admit's Sent and
// every y that is some admit's Answered (the only places the count
// C(x, y) of admits inside [x, y] changes), whether C(x, y) exceeds what
// the promise allows in y − x:
//
//   - a bucket promise, B + L·(y − x)/W: C·W − L·y > B·W − L·x. With the
//     admits ranked by Answered and added in decreasing order of Sent, the
//     left side at each admit's rank is kept in a segment tree (adding an
//     admit raises the count of every later rank by one), so the largest
//     is read in O(log n) for each x: O(n log n) for n admits.
//   - a sliding window promise, L in any window of W: more than L admits
//     with y − x < W.
//   - an aligned or anchored window promise, L in each window: the client
//     sees neither the target's clock nor where its windows start, and a
//     span shorter than W meets at most two windows, so more than 2L
//     admits with y − x < W.
//
// Promise.CheckAdmits is not used on a placement: a placement that breaks
// the promise (every admit at its Sent, say) does not show that every
// placement does, so a check of one placement is either unsound (it
// convicts a limiter that a slower network made look fast) or, placed to
// favour the limiter, needs the optimal placement, which is a scheduling
// problem of its own. The counts above are stated in the promise's own
// numbers (Rate, Window, Burst), as the algos checker's are, and
// TestJudgeIsSoundAgainstTheTrueTimes holds them to CheckAdmits of the
// true times on seeded runs.

// Option is a setting of one call of Records.
type Option func(*settings)

type settings struct {
	exact, perNode bool
}

// Exact holds the limiter to its promise as a floor too: a request that
// one more admit would not take past the promise, after the key's admits
// before it, must be admitted (breach.HonestTurnedAway), judged as
// soundly as the admits are (honest.go). An exact limiter owes that (the
// six's token bucket, leaky bucket and GCRA under a bucket promise, the
// sliding log under a sliding one), and so does a service whose promise
// to its clients is a guarantee; a conservative limiter (the sliding
// counter, a quota split across nodes) does not, and is not judged so
// without it.
func Exact() Option { return func(s *settings) { s.exact = true } }

// PerNode judges each node's answers as a limiter of their own: a key on
// each node (record.Record.Node) is held to the whole promise apart from
// the same key on the others, as a deployment whose nodes each keep their
// own state must have each of them do. A deployment can then be told
// apart from its limiter: a bucket per node over-admits the key (Records
// without PerNode convicts the deployment) while every node's bucket keeps
// the promise (Records with PerNode clears the limiter). Nodes that share
// a key's state must not be judged so: each node's view leaves out what
// the others took, and its waits look broken. Verdict.Keys then counts a
// key once on each node it was sent to.
func PerNode() Option { return func(s *settings) { s.perNode = true } }

// Breach is every breach of one kind in a run.
type Breach struct {
	Kind breach.Kind
	// Count is how many: the records, for an answer; for an
	// over-admission, the admits beyond the promise in each caught key's
	// worst certain span, summed over the keys; for breach.ResetTooShort, the
	// Resets disproved.
	Count int64
	// First is the first record that shows it: the earliest sent, for an
	// answer; for an over-admission, the admit that closes the worst
	// certain span of the caught key whose span closes first; for
	// breach.ResetTooShort, the earliest sent denial that disproves a Reset.
	First record.Record
	// Why says what First shows, in words.
	Why string
}

// Verdict is a run judged from its records.
type Verdict struct {
	Promise string
	Limit   algos.Limit
	// Keys is the keys driven (with PerNode, each key once on each node);
	// Offered the records, Admitted and Denied the decided ones, Failed
	// the rest (errors, timeouts, not sent).
	Keys                              int
	Offered, Admitted, Denied, Failed int
	// Most is the most admits of one key certainly decided within one
	// window (within a closed span of Window for a bucket promise, a span
	// shorter than it for a window promise), and Allowed is the most the
	// promise allows there as the client can judge it: B + L for a bucket,
	// L for a sliding window, 2L for windows whose starts it cannot see.
	// For aligned windows when every decision was seen (record.SeenDecided),
	// Most is the most admits of one key in one aligned window, and Allowed L.
	Most, Allowed int64
	// Breaches holds one Breach per kind seen, in breach.Kind order.
	Breaches []Breach
	// Unjudged says why the admits were not judged against the promise
	// ("" when they were).
	Unjudged string
}

// Clean reports whether the run was judged and showed no breach.
func (v Verdict) Clean() bool { return v.Unjudged == "" && len(v.Breaches) == 0 }

// Caught is the breach of kind k, if the run showed one.
func (v Verdict) Caught(k breach.Kind) (Breach, bool) {
	for _, b := range v.Breaches {
		if b.Kind == k {
			return b, true
		}
	}
	return Breach{}, false
}

// RowHeader is the line above Row's.
func (v Verdict) RowHeader() string {
	most := "most in " + algos.FormatMicros(v.Limit.Window)
	return fmt.Sprintf("%5s %8s %9s %7s %7s %12s %9s  %s", "keys", "offered", "admitted", "denied", "failed", most, "promised", "verdict")
}

// Row is the run on one line, as a table prints it: the keys, the
// requests offered, admitted, denied and failed, the most admits of one
// key certainly within one window against what the promise allows there,
// and the verdict: "clean", "caught: " and the breaches with their
// counts, or "unjudged: " and why.
func (v Verdict) Row() string {
	verdict := "clean"
	switch {
	case len(v.Breaches) > 0:
		parts := make([]string, len(v.Breaches))
		for i, b := range v.Breaches {
			parts[i] = fmt.Sprintf("%s %d", b.Kind, b.Count)
		}
		verdict = "caught: " + strings.Join(parts, ", ")
		if v.Unjudged != "" {
			verdict += "; promise unjudged: " + v.Unjudged
		}
	case v.Unjudged != "":
		verdict = "unjudged: " + v.Unjudged
	}
	return fmt.Sprintf("%5d %8d %9d %7d %7d %12d %9d  %s", v.Keys, v.Offered, v.Admitted, v.Denied, v.Failed, v.Most, v.Allowed, verdict)
}

// String is the row under its header, and each breach's first record.
func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", v.RowHeader(), v.Row())
	for _, br := range v.Breaches {
		fmt.Fprintf(&b, "%s: %s\n  first: %s\n", br.Kind, br.Why, br.First)
	}
	return b.String()
}

// promiseShape is how the client can judge a promise.
type promiseShape uint8

const (
	unknownShape promiseShape = iota
	bucketShape               // B + L·Δ/W in any closed interval of length Δ
	slidingShape              // L in any window of W
	windowsShape              // L in each window the client cannot see
)

// shapeOf is how a client can judge p: by its shape (algos.Promise.Shape),
// when it is one of the four built-in promises made for l.
func shapeOf(p algos.Promise, l algos.Limit) promiseShape {
	shape, made := p.Shape()
	if made != l {
		return unknownShape
	}
	switch shape {
	case algos.BucketShape:
		return bucketShape
	case algos.SlidingWindowShape:
		return slidingShape
	case algos.AlignedWindowShape, algos.AnchoredWindowShape:
		return windowsShape
	}
	return unknownShape
}

// Records judges records (one run, any order, any keys) against promise
// under l: every key's admits against the promise (breach.OverAdmission, only
// when certain: see the comment at the top of judge.go; an aligned window
// promise, when every decision was seen, window by window: see aligned.go), every decided
// answer against the bounds of any limiter under l (breach.BadAnswer, on the
// fields the answer stated), every stated Remaining against the key's
// admits certainly before it (breach.RemainingTooHigh, for a bucket or sliding
// promise, or an aligned window one whose every decision was seen: see
// remaining.go and aligned.go), every retry at its Retry-After on a key
// nothing else touched (breach.RetryDenied, whatever the promise: see
// retries.go), every stated Reset against its Retry-After
// (breach.ResetBeforeRetryAfter) and against the longest the promise takes to
// idle (breach.ResetPastIdle), every burst at a Reset on a key nothing else
// touched (breach.ResetTooShort, at least its first request whatever the promise:
// see reset.go), every unreadable header (breach.MalformedAnswer), and, with
// Exact, every denial of a request the promise certainly allowed
// (breach.HonestTurnedAway, for a bucket or sliding promise: see honest.go). promise
// must be one of algos' four built-in promises of l; another
// (NewPromise's, or one of another limit) is left unjudged, and so says
// the verdict.
func Records(records []record.Record, promise algos.Promise, l algos.Limit, opts ...Option) Verdict {
	var set settings
	for _, o := range opts {
		o(&set)
	}
	v := Verdict{Promise: promise.Text, Limit: l, Offered: len(records)}
	found := [breach.NumKinds]*Breach{}
	note := func(k breach.Kind, n int64, r record.Record, why string, before bool) {
		if b := found[k]; b == nil {
			found[k] = &Breach{Kind: k, Count: n, First: r, Why: why}
		} else {
			b.Count += n
			if before {
				b.First, b.Why = r, why
			}
		}
	}
	// noteEarliest notes a rule's breaches (none when rv has none), its
	// first the earliest sent across keys.
	noteEarliest := func(k breach.Kind, rv ruleVerdict) {
		if rv.count > 0 {
			b := found[k]
			note(k, rv.count, rv.first, rv.why, b != nil && rv.first.Sent < b.First.Sent)
		}
	}
	// noteOne notes r as a breach of k when why says one.
	noteOne := func(k breach.Kind, r record.Record, why string) {
		if why != "" {
			noteEarliest(k, ruleVerdict{count: 1, first: r, why: why})
		}
	}
	limitErr := l.Validate()
	var bounds algos.AnswerBounds
	if limitErr == nil {
		bounds = l.Answers(0) // an invalid limit may divide by zero
	}
	shape := shapeOf(promise, l)
	idle, idleWords := int64(0), ""
	burst := int64(1) // what an idle key grants, as far as the judge knows the promise
	if limitErr == nil {
		idle, idleWords = idleBound(shape, promise)
		switch shape {
		case bucketShape:
			burst = l.Burst
		case slidingShape, windowsShape:
			burst = l.Rate
		}
	}
	// A limiter is a key's state: one per key, or, with PerNode, one per
	// key on each node.
	type limiterOf struct {
		key  string
		node int
	}
	byKey := map[limiterOf][]record.Record{}     // the admits
	answersOf := map[limiterOf][]record.Record{} // the decisions that state Remaining
	all := map[limiterOf][]record.Record{}       // every record, for the retries
	var keys []limiterOf
	for _, r := range records {
		k := limiterOf{key: r.Key, node: -1}
		if set.perNode {
			k.node = r.Node
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
			byKey[k] = nil
		}
		all[k] = append(all[k], r)
		if r.Err != nil {
			v.Failed++
			continue
		}
		if r.Known.Has(record.FieldRemaining) {
			answersOf[k] = append(answersOf[k], r)
		}
		if r.Allowed {
			v.Admitted++
			byKey[k] = append(byKey[k], r)
		} else {
			v.Denied++
		}
		noteOne(breach.MalformedAnswer, r, r.Malformed)
		if limitErr == nil {
			noteOne(breach.BadAnswer, r, badAnswer(r, &bounds))
		}
		noteOne(breach.ResetBeforeRetryAfter, r, resetBeforeRetryAfter(r))
	}
	v.Keys = len(keys)
	slices.SortFunc(keys, func(a, b limiterOf) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.node, b.node)) })
	for _, k := range keys {
		denied, extended := judgeRetries(all[k])
		noteEarliest(breach.RetryDenied, denied)
		noteEarliest(breach.RetryExtended, extended)
		spread := clockSpread(all[k])
		for _, r := range all[k] {
			noteOne(breach.ResetPastIdle, r, resetPastIdle(r, idle, idleWords, spread))
		}
		noteEarliest(breach.ResetTooShort, judgeResetDenied(all[k], burst, spread))
		noteEarliest(breach.RemainingTooHigh, judgeAdmitAfterZero(all[k]))
	}
	switch {
	case limitErr != nil:
		v.Unjudged = "invalid limit: " + limitErr.Error()
	case shape == unknownShape:
		v.Unjudged = fmt.Sprintf("the promise %q is not one of algos' four built-in promises of %v", promise.Text, l)
	default:
		seen := alignedSeen(records, promise, shape)
		for _, k := range keys {
			var c keyVerdict
			var err error
			if seen {
				c = judgeAlignedSeen(byKey[k], l)
			} else if c, err = judgeKey(byKey[k], shape, l); err != nil {
				v.Unjudged = err.Error()
				break
			}
			v.Most, v.Allowed = max(v.Most, c.most), c.allowed
			if c.excess > 0 {
				b := found[breach.OverAdmission]
				note(breach.OverAdmission, c.excess, c.last, c.why, b != nil && c.last.Answered < b.First.Answered)
			}
			if seen {
				noteEarliest(breach.RemainingTooHigh, judgeRemainingAlignedSeen(answersOf[k], byKey[k], l))
			} else {
				noteEarliest(breach.RemainingTooHigh, judgeRemaining(answersOf[k], byKey[k], shape, l))
			}
			if set.exact {
				hv, err := judgeHonest(all[k], shape, l)
				if err != nil {
					v.Unjudged = err.Error()
					break
				}
				noteEarliest(breach.HonestTurnedAway, hv)
			}
		}
	}
	for _, b := range found {
		if b != nil {
			v.Breaches = append(v.Breaches, *b)
		}
	}
	return v
}

// ruleVerdict is one rule judged on one key's records: how many records
// broke it, the earliest sent of them, and why.
type ruleVerdict struct {
	count int64
	first record.Record
	why   string
}

// note counts r as a breach, keeping the earliest sent and its why (asked
// only when r is that one).
func (rv *ruleVerdict) note(r record.Record, why func() string) {
	rv.count++
	if rv.count == 1 || r.Sent < rv.first.Sent {
		rv.first, rv.why = r, why()
	}
}

// badAnswer says which rule of b the fields r stated break, or "". A
// field not stated is given a value that breaks none (Reset, when absent,
// is taken as the Retry-After).
func badAnswer(r record.Record, b *algos.AnswerBounds) string {
	d := r.Decision
	if !r.Known.Has(record.FieldRemaining) {
		d.Remaining = 0
	}
	if !r.Known.Has(record.FieldRetryAfter) {
		d.RetryAfter = 0
	}
	if !r.Known.Has(record.FieldReset) {
		d.Reset = max(d.RetryAfter, 0)
	} else if d.Reset >= 0 && d.RetryAfter > d.Reset {
		// Judged with the rounding slack it needs as breach.ResetBeforeRetryAfter.
		d.Reset = d.RetryAfter
	}
	if !b.Bad(&d) {
		return ""
	}
	why := b.Why(d)
	if !r.Known.Has(record.FieldReset) {
		why += " (no Reset was sent: it is taken as the Retry-After)"
	}
	return why
}

// keyVerdict is one key's admits judged.
type keyVerdict struct {
	most, allowed int64
	excess        int64         // admits beyond the promise in the worst certain span (0: none)
	last          record.Record // the admit that closes it
	why           string
}

// judgeKey judges one key's admits (each Answered ≥ Sent), each placed
// in its Span: at its decision where the record saw it.
func judgeKey(admits []record.Record, shape promiseShape, l algos.Limit) (keyVerdict, error) {
	var kv keyVerdict
	switch shape {
	case bucketShape:
		kv.allowed = l.Burst + l.Rate
	case slidingShape:
		kv.allowed = l.Rate
	case windowsShape:
		kv.allowed = 2 * l.Rate
	}
	n := len(admits)
	if n == 0 {
		return kv, nil
	}
	seen := true // every decision's instant is known: the words say so
	for _, r := range admits {
		if r.Answered < r.Sent {
			return kv, fmt.Errorf("a record answered before it was sent (%s)", r)
		}
		seen = seen && r.Seen.Has(record.SeenDecided)
	}
	// Each admit's span, [from, to], by from, latest first; and each
	// admit's rank by to. From here on Sent and Answered are the span's.
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(i, j int) int {
		fi, _ := admits[i].Span()
		fj, _ := admits[j].Span()
		return cmp.Compare(fj, fi)
	})
	bySent := make([]record.Record, n)
	for k, i := range perm {
		bySent[k] = admits[i]
		bySent[k].Sent, bySent[k].Answered = admits[i].Span()
	}
	within := "were sent at or after +%s and answered by +%s, so decided within %s"
	if seen {
		within = "were decided from +%s to +%s, within %s"
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(bySent[i].Answered, bySent[j].Answered) })
	rank := make([]int, n)
	answered := make([]int64, n) // by rank
	for r, i := range order {
		rank[i], answered[r] = r, bySent[i].Answered
	}
	w, rt, err := countScale(n, answered[n-1], l)
	if err != nil {
		return kv, err
	}
	counts, inserted := newFenwick(n), make([]bool, n)
	tree := newMaxTree(n)
	span := l.Window // the window of Most: a closed span for a bucket
	if shape != bucketShape {
		span = l.Window - 1 // shorter than W
	}
	var best int64 // the worst excess, scaled by w for a bucket
	for i := 0; i < n; {
		x := bySent[i].Sent
		for ; i < n && bySent[i].Sent == x; i++ { // every admit sent at x or later
			r := rank[i]
			counts.add(r)
			inserted[r] = true
			tree.set(r, int64(counts.prefix(r))*w-rt*answered[r])
			tree.addFrom(r+1, w)
		}
		// Most: the admits in [x, x+span].
		end, _ := slices.BinarySearch(answered, x+span+1) // ranks answered ≤ x+span
		c := int64(counts.prefix(end - 1))
		kv.most = max(kv.most, c)
		var excess int64
		var to int
		switch shape {
		case bucketShape:
			m, at := tree.max()
			excess, to = m-(l.Burst*w-rt*x), at
		default:
			excess, to = c-kv.allowed, end-1
		}
		if excess > best {
			best = excess
			if shape != bucketShape {
				for !inserted[to] { // the latest answered of the admits counted
					to--
				}
			}
			y := answered[to]
			kv.last = admits[perm[order[to]]]
			count := int64(counts.prefix(to))
			switch shape {
			case bucketShape:
				allowed := l.Burst + l.Rate*(y-x)/l.Window
				kv.excess = count - allowed
				kv.why = fmt.Sprintf("%d admits of key %s "+within+", but at most %d + %d·%s/%s = %d are promised in any interval that long (%.2fx)",
					count, kv.last.Key, algos.FormatTime(x), algos.FormatTime(y), record.FormatDuration(y-x), l.Burst, l.Rate, record.FormatDuration(y-x), algos.FormatMicros(l.Window), allowed, float64(count)/float64(allowed))
			case slidingShape:
				kv.excess = count - l.Rate
				kv.why = fmt.Sprintf("%d admits of key %s "+within+", but at most %d in any %s are promised",
					count, kv.last.Key, algos.FormatTime(x), algos.FormatTime(y), record.FormatDuration(y-x), l.Rate, algos.FormatMicros(l.Window))
			default:
				kv.excess = count - 2*l.Rate
				kv.why = fmt.Sprintf("%d admits of key %s "+within+", which meets at most two windows of %s, each promised at most %d",
					count, kv.last.Key, algos.FormatTime(x), algos.FormatTime(y), record.FormatDuration(y-x), algos.FormatMicros(l.Window), l.Rate)
			}
		}
	}
	if kv.excess <= 0 {
		kv.excess, kv.last, kv.why = 0, record.Record{}, ""
	}
	return kv, nil
}

// countScale is l's window and rate divided by their gcd g, the units in
// which a bucket's counts are compared (C·w − r·y against B·w − r·x), or
// an error when n admits of one key over times up to last cannot be
// counted exactly in 63 bits: such a run is not judged rather than judged
// wrong.
func countScale(n int, last int64, l algos.Limit) (w, rt int64, err error) {
	g := gcdOf(l.Rate, l.Window)
	w, rt = l.Window/g, l.Rate/g
	if hi, lo := bits.Mul64(uint64(n+1+int(l.Burst)), uint64(w)); hi != 0 || lo > math.MaxInt64/8 {
		return 0, 0, fmt.Errorf("%d admits of one key under %v are too many to count exactly", n, l)
	}
	if hi, lo := bits.Mul64(uint64(last+1), uint64(rt)); hi != 0 || lo > math.MaxInt64/8 {
		return 0, 0, fmt.Errorf("a run of %s under %v is too long to count exactly", algos.FormatMicros(last), l)
	}
	return w, rt, nil
}

func gcdOf(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fenwick counts the admits added, by rank.
type fenwick []int32

func newFenwick(n int) fenwick { return make(fenwick, n+1) }

func (f fenwick) add(i int) {
	for i++; i < len(f); i += i & -i {
		f[i]++
	}
}

// prefix is how many were added at ranks 0..i (0 for i < 0).
func (f fenwick) prefix(i int) int {
	s := 0
	for i++; i > 0; i -= i & -i {
		s += int(f[i])
	}
	return s
}

// maxTree is a segment tree over ranks: point set, add to a suffix, and
// the largest value with its (latest) rank. A rank not set holds unset.
type maxTree struct {
	n    int
	val  []int64
	at   []int
	lazy []int64
}

const unset = math.MinInt64 / 2

func newMaxTree(n int) *maxTree {
	t := &maxTree{n: n, val: make([]int64, 4*n), at: make([]int, 4*n), lazy: make([]int64, 4*n)}
	t.build(1, 0, n-1)
	return t
}

func (t *maxTree) build(node, lo, hi int) {
	t.val[node], t.at[node] = unset, hi
	if lo < hi {
		mid := (lo + hi) / 2
		t.build(2*node, lo, mid)
		t.build(2*node+1, mid+1, hi)
	}
}

func (t *maxTree) push(node int) {
	if d := t.lazy[node]; d != 0 {
		for _, c := range [2]int{2 * node, 2*node + 1} {
			t.val[c] += d
			t.lazy[c] += d
		}
		t.lazy[node] = 0
	}
}

func (t *maxTree) pull(node int) {
	l, r := 2*node, 2*node+1
	if t.val[r] >= t.val[l] {
		t.val[node], t.at[node] = t.val[r], t.at[r]
	} else {
		t.val[node], t.at[node] = t.val[l], t.at[l]
	}
}

// set puts v at rank i.
func (t *maxTree) set(i int, v int64) { t.setIn(1, 0, t.n-1, i, v) }

func (t *maxTree) setIn(node, lo, hi, i int, v int64) {
	if lo == hi {
		t.val[node], t.at[node] = v, lo
		return
	}
	t.push(node)
	if mid := (lo + hi) / 2; i <= mid {
		t.setIn(2*node, lo, mid, i, v)
	} else {
		t.setIn(2*node+1, mid+1, hi, i, v)
	}
	t.pull(node)
}

// addFrom adds d to every rank from i on. An unset rank stays far below
// any set one: the adds it gets are bounded by the checks in judgeKey.
func (t *maxTree) addFrom(i int, d int64) {
	if i < t.n {
		t.addIn(1, 0, t.n-1, i, d)
	}
}

func (t *maxTree) addIn(node, lo, hi, i int, d int64) {
	if hi < i {
		return
	}
	if lo >= i {
		t.val[node] += d
		t.lazy[node] += d
		return
	}
	t.push(node)
	mid := (lo + hi) / 2
	t.addIn(2*node, lo, mid, i, d)
	t.addIn(2*node+1, mid+1, hi, i, d)
	t.pull(node)
}

// max is the largest value set and its rank.
func (t *maxTree) max() (int64, int) { return t.val[1], t.at[1] }
