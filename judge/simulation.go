package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/traffic"
)

// THE JUDGE OF A SIMULATED RUN. The simulator sees every decision: the
// instance that made it (the store, for every node of a shared
// deployment; each node, for a local one), the time that instance was told
// and the true time it decided. So a simulated run is judged exactly, not
// within spans as records are: every check is made per instance, in the
// time the instance was told, so that a fleet is held to exactly what one
// limiter owes its callers, and a clock error or a node that never saw the
// earlier request is not mistaken for a bug. Only the clients' keys
// (below traffic.NumClients) are judged; the other keys are background.

// Evidence is one client's first breach of one kind in a simulated run
// (the judge of records states its breaches as Breach, from records):
// its Kind, where it lies and why (Violation: From and To on the
// instance's clock, Reason in words), and the requests that show it, one a
// line (Trace), when the judge has them.
type Evidence struct {
	Kind      breach.Kind
	Violation *algos.Violation
	Trace     []string
}

// Kinds is one client's first Evidence of each kind of breach in a run
// (nil where it showed none), indexed by breach.Kind.
type Kinds [breach.NumKinds]*Evidence

// Keep sets f as its kind's evidence unless the client has some already.
func (k *Kinds) Keep(f *Evidence) {
	if k[f.Kind] == nil {
		k[f.Kind] = f
	}
}

// Simulation judges simulated runs, one at a time, against the whole
// contract (see Judge), in memory it keeps from run to run: a hunt judges
// thousands of runs of some 20,000 requests each, and allocating this anew
// for each would bring the garbage collector into most of its time. Its
// zero value is ready to use; one Simulation serves one goroutine.
type Simulation struct {
	retryAfter [traffic.NumClients][]int64 // per closed-loop key, each answer's Retry-After, in the order sent (Watch)
	all        []judged
	keys       []int64   // sort keys (byInstance)
	order      []int32   // request indices grouped by instance (byInstance)
	groups     [][]int32 // each instance's part of order
	starts     []int32
	states     []instanceState              // honestyInOrder
	mine       [traffic.NumClients][]judged // each closed-loop client's requests, in the order sent (sentBy)
	over       []judged                     // an over-admitting client's admits in the window (overAdmission)
	latest     []int64                      // each instance's latest told time (badTally)
	watched    bool                         // Watch was called for the run Judge judges next
}

// Watch is loop with each client wrapped to keep, for the next Judge, the
// Retry-After of every answer it is handed: all a Judge reads of the
// closed-loop clients' answers besides the run's outcomes (retries). A run
// to be judged is played with the clients Watch returns.
func (sc *Simulation) Watch(loop []record.LoopClient) []record.LoopClient {
	sc.watched = true
	out := slices.Clone(loop)
	for i, lc := range out {
		if lc.Key < 0 || lc.Key >= traffic.NumClients {
			continue
		}
		inner, dst := lc.New, &sc.retryAfter[lc.Key]
		*dst = (*dst)[:0]
		out[i].New = func() record.Client {
			c := inner()
			if own, ok := c.(traffic.RetryAfterKeeper); ok {
				own.KeepRetryAfters(dst) // one of package traffic's clients: it keeps them itself
				return c
			}
			return &recorder{Client: c, retryAfter: dst}
		}
	}
	return out
}

// recorder keeps the Retry-After of every answer one closed-loop client
// was given, in order.
type recorder struct {
	record.Client
	retryAfter *[]int64
}

func (r *recorder) Next(last *record.Record) (int64, bool) {
	if last != nil {
		*r.retryAfter = append(*r.retryAfter, last.Decision.RetryAfter)
	}
	return r.Client.Next(last)
}

// Judge holds res, the run of cfg (its closed-loop clients Watch's), to
// the rules a run's records show, and keeps in found each client's first
// breach of each kind it finds and had none of:
//
//   - OverAdmission, at each client's first break of its promise
//     (model.KeyResult.Violation), with the admits that opened the window
//     and those that closed it;
//   - BadAnswer (an answer no limiter may give, algos.AnswerBounds, or a
//     panic; an error the limiter returns is no breach) and ResetPastIdle
//     (a Reset past the instance's promise's longest idle, plus how far the
//     instance had been told ahead of the caller, for a limiter that is
//     not Conservative and whose promise is built in), in every deployment;
//   - HonestTurnedAway (not for a Conservative limiter or a promise with
//     no envelope), RemainingTooHigh and ResetTooShort (Conservative
//     limiters included: refusing more than the promise asks is a design,
//     promising more than it allows is not; an admit at the very instant of
//     an answer of Remaining 0 is RemainingTooHigh too), and RetryDenied
//     and RetryExtended (a closed-loop client's next request after a
//     denial, on the same instance), where every instance keeps its state
//     for the whole run and decides at a time it was told: no wipe, no
//     restart, not the GET/SET race.
//
// An instance told a time earlier than one it was told before (clocks
// that disagree) is judged for honesty only up to there: past that, the
// promise says nothing of what it owes. A run played without Watch's
// clients is not judged on its retries (their Retry-Afters were not
// kept). The rules that play a run again (other keys, node clocks, a
// reference) are the caller's.
func (sc *Simulation) Judge(cfg *model.Config, res *model.Result, found *[traffic.NumClients]Kinds) {
	if !sc.watched {
		for k := range sc.retryAfter {
			sc.retryAfter[k] = sc.retryAfter[k][:0] // no answer kept: no retry judged
		}
	}
	sc.watched = false
	v := newRunView(cfg, res)
	for c := range min(traffic.NumClients, len(res.Keys)) {
		if viol := res.Keys[c].Violation; viol != nil {
			found[c].Keep(sc.overAdmission(&v, c, viol))
		}
	}
	// The bad answers are counted on honesty's pass where there is one
	// (each kind is kept apart, so the order they are found in does not
	// matter).
	var bad badTally
	bad.reset(&v, &sc.latest)
	if judgeable(*cfg) {
		sc.judgeContract(cfg, &v, found, &bad)
	}
	if !bad.done {
		bad.countAll(&v)
	}
	bad.findings(&v, found)
}

// judgeContract holds a judgeable run (v, of cfg) to honesty, its
// Remainings and Resets, and its Retry-Afters, keeping each client's first
// breach of each kind in found, and counts its bad answers into bad on
// the same pass when it can (bad.done).
func (sc *Simulation) judgeContract(cfg *model.Config, v *runView, found *[traffic.NumClients]Kinds, bad *badTally) {
	if !sc.honestyAndBad(cfg.Limiter, *cfg, v, found, bad) {
		all := sc.requestsOf(*cfg, v.res)
		honesty(cfg.Limiter, *cfg, all, sc.byInstance(all), found)
	}
	if !sc.retriesInOrder(v, found) {
		mine := sc.sentBy(v)
		for _, lc := range cfg.Loop {
			if lc.Key >= 0 && lc.Key < traffic.NumClients {
				retries(mine[lc.Key], lc.Key, sc.retryAfter[lc.Key], found)
			}
		}
	}
}

// traceLine is one request of a trace: when its instance was told it, who
// sent it, when it was decided, and what was decided.
func traceLine(r judged, what string) string {
	return fmt.Sprintf("told %s  node %d  decided %s  %s", algos.FormatTime(r.told), r.node, algos.FormatTime(r.decided), what)
}

func outcome(r judged) string {
	switch {
	case r.failed:
		return "error"
	case r.admitted:
		return "admitted"
	}
	return "refused"
}

// judged is one request as the judge sees it.
type judged struct {
	told, decided    int64
	remaining, reset int64
	key, node        int32
	instance         int32
	admitted, failed bool
}

// judgeable reports whether a run under cfg can be held to honesty and
// Retry-After: every instance must keep its state for the whole run (no
// wipe, no restart) and see each request at a time it was told (not the
// GET/SET race, whose copies decide apart from the state).
func judgeable(cfg model.Config) bool {
	switch cfg.Deployment {
	case model.Ideal, model.NodeClock, model.StoreClock:
		return true
	case model.LocalSplit, model.LocalFull:
		return cfg.RestartEvery == 0
	}
	return false
}

// requestsOf lays out every request of a run (the fixed ones, then the
// closed-loop ones in the order sent) with the instance that decided it and
// the time that instance was told, as the run carried it (model.Outcome.Told).
// The slice is sc's, valid until its next Judge.
func (sc *Simulation) requestsOf(cfg model.Config, res *model.Result) []judged {
	all := slices.Grow(sc.all[:0], len(res.Outcomes))[:len(res.Outcomes)]
	sc.all = all
	local := cfg.Deployment.PerNode()
	nodes := int32(cfg.Nodes)
	for i, o := range res.Outcomes {
		r := judged{key: o.Key, node: o.Node, told: o.Told, decided: o.Decided, remaining: o.Remaining, reset: o.Reset, admitted: o.Admitted, failed: o.Failed}
		r.instance = r.key
		if local {
			r.instance = r.key*nodes + r.node
		}
		all[i] = r
	}
	return all
}

// byInstance groups the requests' indices by instance, each group in the
// order the instance decided them (by decision time, then request order).
// The groups are sc's, valid until its next Judge.
func (sc *Simulation) byInstance(all []judged) [][]int32 {
	n := int32(0)
	for _, r := range all {
		n = max(n, r.instance+1)
	}
	// A counting sort by instance, in request order within each.
	starts := slices.Grow(sc.starts[:0], int(n)+1)[:n+1]
	clear(starts)
	for _, r := range all {
		starts[r.instance+1]++
	}
	for k := int32(1); k <= n; k++ {
		starts[k] += starts[k-1]
	}
	order := slices.Grow(sc.order[:0], len(all))[:len(all)]
	next := starts[:n] // advanced past each placed index, then restored below
	for i, r := range all {
		order[next[r.instance]] = int32(i)
		next[r.instance]++
	}
	groups := slices.Grow(sc.groups[:0], int(n))[:n]
	from := int32(0)
	for k := range groups {
		groups[k] = order[from:next[k]:next[k]]
		from = next[k]
	}
	sc.starts, sc.order, sc.groups = starts, order, groups
	for _, g := range groups {
		sc.sortByDecision(all, g)
	}
	return groups
}

// sentBy lists, for each closed-loop client's key of the run, the
// client's requests in the order it sent them (request order), in one pass
// over the closed-loop requests. The lists are sc's, valid until the next
// call.
func (sc *Simulation) sentBy(v *runView) *[traffic.NumClients][]judged {
	for k := range sc.mine {
		sc.mine[k] = sc.mine[k][:0]
	}
	var loopKey [traffic.NumClients]bool
	for _, lc := range v.cfg.Loop {
		if lc.Key >= 0 && lc.Key < traffic.NumClients {
			loopKey[lc.Key] = true
		}
	}
	fixed := len(v.cfg.Requests)
	var loops [traffic.NumClients]int
	for _, q := range v.res.LoopRequests {
		if q.Key >= 0 && q.Key < traffic.NumClients {
			loops[q.Key]++
		}
	}
	for k := range loopKey {
		if loopKey[k] && k < len(v.res.Keys) && v.res.Keys[k].Requests > loops[k] {
			// Fixed requests on the client's key too; they come first in
			// request order (a hunt's traffic has none: this pass is rare).
			for i, q := range v.cfg.Requests {
				if q.Key == k {
					sc.mine[k] = append(sc.mine[k], v.at(int32(i)))
				}
			}
		}
	}
	for i, q := range v.res.LoopRequests {
		if q.Key >= 0 && q.Key < traffic.NumClients && loopKey[q.Key] {
			sc.mine[q.Key] = append(sc.mine[q.Key], v.at(int32(fixed+i)))
		}
	}
	return &sc.mine
}

// sortByDecision orders g by decision time, ties in request order. Both fit
// one int64 for any run a hunt makes, and sorting plain integers is what
// keeps the judge a small part of a hunt's time. Most groups come already
// in that order or nearly (the store decides in the order requests arrive,
// a node in the order they are sent), which a check sees in one pass.
func (sc *Simulation) sortByDecision(all []judged, g []int32) {
	const idxBits = 24
	if slices.IsSortedFunc(g, func(a, b int32) int { return cmp.Compare(all[a].decided, all[b].decided) }) {
		return // and ties are in request order already: g is
	}
	keys := slices.Grow(sc.keys[:0], len(g))[:len(g)]
	sc.keys = keys
	for j, i := range g {
		d := all[i].decided
		if d < 0 || d >= 1<<(62-idxBits) || len(all) >= 1<<idxBits {
			slices.SortStableFunc(g, func(a, b int32) int { return cmp.Compare(all[a].decided, all[b].decided) })
			return
		}
		keys[j] = d<<idxBits | int64(i)
	}
	slices.Sort(keys)
	for j, k := range keys {
		g[j] = int32(k & (1<<idxBits - 1))
	}
}

// runView reads the requests of one run as the judge sees them, without
// laying them all out: the judge of a hunt reads each request once or
// twice, in the order the run decided them, and a copy of every request
// would cost as much as the reading.
type runView struct {
	cfg   *model.Config
	res   *model.Result
	local bool
	nodes int32
}

func newRunView(cfg *model.Config, res *model.Result) runView {
	return runView{cfg: cfg, res: res, nodes: int32(cfg.Nodes),
		local: cfg.Deployment.PerNode()}
}

// at is request i, as requestsOf lays it out.
func (v *runView) at(i int32) judged {
	o := &v.res.Outcomes[i]
	told, instance, key := v.toldAt(i)
	return judged{told: told, key: key, instance: instance, node: o.Node, decided: o.Decided, remaining: o.Remaining, reset: o.Reset, admitted: o.Admitted, failed: o.Failed}
}

// toldAt is the time request i's instance was told, the instance and the
// key: what at lays out of it besides its outcome, as values that a
// caller comparing two requests keeps in registers (a judged is too wide
// for that, and is stored and copied again at every call).
func (v *runView) toldAt(i int32) (told int64, instance, key int32) {
	o := &v.res.Outcomes[i]
	told, instance, key = o.Told, o.Key, o.Key
	if v.local {
		instance = key*v.nodes + o.Node
	}
	return told, instance, key
}

// instanceState is one instance as honestyInOrder follows it.
type instanceState struct {
	env         algos.Envelope // reset for each run (its memory kept from run to run)
	before      int64          // the time it was last told
	lastDecided int64
	lastIndex   int32
	ended       bool // told a time before one it was told earlier
	stale       bool // allowsFrom is to be asked again (an admit since)
	allowsFrom  int64
	admits      int
	// candidate: its first refusal that the promise allowed, as a
	// position in Order (-1 for none) and a request index, and the admits
	// before it.
	candidate       int
	candidateIndex  int32
	candidateAdmits int
	answers         answerState
}

// answerState follows what one instance's answers said of its Remaining
// and its Reset: the time it last answered Remaining 0, and its first
// answer whose Remaining the promise did not allow (breach.RemainingTooHigh) and
// whose Reset came too soon (breach.ResetTooShort).
type answerState struct {
	zeroAt           int64 // told of its latest answer with Remaining 0; MinInt64 for none
	idle             int64 // the envelope's IdleAt, asked again after an admit
	idleKnown        bool
	remaining, reset claim
}

// claim is an instance's first answer that claimed what the promise did
// not allow: its position in Order (or in its instance's group), its
// request index, the instance's admits up to and with it, and the bound it
// broke (for a Remaining, the most it could say, -1 for an admit at the
// instant of a Remaining 0; for a Reset, the earliest idle time).
type claim struct {
	found  bool
	pos    int
	index  int32
	admits int
	bound  int64
}

// done is true once both claims are found: nothing more to check.
func (s *answerState) done() bool { return s.remaining.found && s.reset.found }

// check holds r, an answer of the instance at position pos, to what env
// (the instance's admits up to and with r) allows, keeping the first
// answer that claims more of each kind.
func (s *answerState) check(env *algos.Envelope, r *judged, pos int, index int32, admits int) {
	if r.failed {
		return
	}
	s.checkAnswer(env, r.told, r.remaining, r.reset, r.admitted, pos, index, admits)
}

// checkAnswer is check of an answer that is not an error, told at told,
// by its fields.
func (s *answerState) checkAnswer(env *algos.Envelope, told, remaining, reset int64, admitted bool, pos int, index int32, admits int) {
	if admitted {
		s.idleKnown = false
	}
	if !s.reset.found && reset >= 0 { // a negative one is a bad answer
		if !s.idleKnown {
			s.idle, s.idleKnown = env.IdleAt(), true
		}
		if told+reset < s.idle {
			s.reset = claim{found: true, pos: pos, index: index, admits: admits, bound: s.idle}
		}
	}
	switch {
	case s.remaining.found:
	case admitted && told == s.zeroAt:
		s.remaining = claim{found: true, pos: pos, index: index, admits: admits, bound: -1}
	case remaining == 0:
		s.zeroAt = told
	default:
		if env.Exceeds(told, remaining) {
			s.remaining = claim{found: true, pos: pos, index: index, admits: admits, bound: env.Headroom(told)}
		}
	}
}

// remainingFinding is the breach.RemainingTooHigh finding of c, for r, its
// answer, with before, the requests its instance decided just before it
// (latest first).
func (c *claim) remainingFinding(r judged, before []judged, where string, promise algos.Promise) *Evidence {
	reason := fmt.Sprintf("%s answered Remaining %d at %s, after %d admits, where the promise allows %d more (%s)",
		where, r.remaining, algos.FormatTime(r.told), c.admits, c.bound, promise.Text)
	if c.bound < 0 {
		reason = fmt.Sprintf("%s admitted a request at %s, the instant it had answered Remaining 0 (after %d admits)",
			where, algos.FormatTime(r.told), c.admits)
	}
	return claimFinding(breach.RemainingTooHigh, reason, r, before, remainingText)
}

// resetFinding is the breach.ResetTooShort finding of c, as remainingFinding.
func (c *claim) resetFinding(r judged, before []judged, where string, promise algos.Promise) *Evidence {
	reason := fmt.Sprintf("%s answered Reset %s at %s (idle at %s), after %d admits, where the promise gives a whole burst only from %s (%s)",
		where, algos.FormatMicros(r.reset), algos.FormatTime(r.told), algos.FormatTime(r.told+r.reset), c.admits,
		algos.FormatTime(c.bound), promise.Text)
	return claimFinding(breach.ResetTooShort, reason, r, before, resetText)
}

// claimFinding is a finding of kind at r, its trace the requests before
// it (latest first) and r, each as text says.
func claimFinding(kind breach.Kind, reason string, r judged, before []judged, text func(judged) string) *Evidence {
	f := &Evidence{Kind: kind, Violation: &algos.Violation{From: r.told, To: r.told, Reason: reason}}
	for k := len(before) - 1; k >= 0; k-- {
		f.Trace = append(f.Trace, traceLine(before[k], text(before[k])))
	}
	f.Trace = append(f.Trace, traceLine(r, text(r)))
	return f
}

// resetText is a request's outcome with the Reset it was told.
func resetText(r judged) string {
	if r.failed {
		return outcome(r)
	}
	return fmt.Sprintf("%s, Reset %s", outcome(r), algos.FormatMicros(r.reset))
}

// remainingText is a request's outcome with the Remaining it was told.
func remainingText(r judged) string {
	if r.failed {
		return outcome(r)
	}
	return fmt.Sprintf("%s, Remaining %d", outcome(r), r.remaining)
}

// honestyInOrder is honesty, judged in one pass over the run's decisions
// in the order the model made them (Result.Order), which for a judgeable
// deployment is each instance's order: by decision time, ties in request
// order, byInstance's. It checks that as it goes, and returns false,
// having found nothing, when an instance's decisions come in any other
// order: the caller then lays the requests out and sorts them (honesty).
// The finding kept for a client is the one honesty keeps: its instances'
// first, taken in instance order, honest requests turned away before
// Remainings too high.
func (sc *Simulation) honestyInOrder(spec limiter.Spec, cfg model.Config, v *runView, out *[traffic.NumClients]Kinds) bool {
	return sc.honestyAndBad(spec, cfg, v, out, nil)
}

// honestyAndBad is honestyInOrder, counting bad answers into bad (when not
// nil) on the same pass, which it marks done when it read every request:
// the judge of a hunt then reads each request once.
func (sc *Simulation) honestyAndBad(spec limiter.Spec, cfg model.Config, v *runView, out *[traffic.NumClients]Kinds, bad *badTally) bool {
	l := instanceLimit(cfg)
	promise := spec.Promise(l)
	if probe := (algos.Envelope{}); !probe.Reset(promise) {
		return true
	}
	honest := !spec.Conservative
	n := len(v.res.Keys)
	if v.local {
		n *= cfg.Nodes
	}
	states := slices.Grow(sc.states[:0], n)[:n]
	sc.states = states
	for k := range states {
		// Each instance starts before any time and index, so that its
		// first request passes the checks below without a branch of its own.
		st := &states[k]
		st.env.Reset(promise)
		st.before, st.lastDecided, st.lastIndex = math.MinInt64, math.MinInt64, -1
		st.ended, st.stale, st.admits, st.candidate = false, true, 0, -1
		st.answers = answerState{zeroAt: math.MinInt64}
	}
	// v.at, written out and cut to what the checks read: the loop runs
	// once per request of every judged run.
	outcomes := v.res.Outcomes
	nodes, local := int(v.nodes), v.local
	// In every judgeable deployment but two, an instance is told times in
	// the order it decides (the store's clock, a local node's own, Ideal's
	// true one), which the order check below holds to never running back:
	// only the instances of the node clock and of GET, decide, SET, told
	// their nodes' clocks, can end.
	byDecided := cfg.Deployment != model.NodeClock && cfg.Deployment != model.GetSet
	for pos, i := range v.res.Order {
		o := &outcomes[i]
		key := int(o.Key)
		inst := key
		if local {
			inst = key*nodes + int(o.Node)
		}
		if bad != nil && uint(key) < traffic.NumClients {
			bad.see(o, i, key, inst)
		}
		st := &states[inst]
		if o.Decided < st.lastDecided || (o.Decided == st.lastDecided && i < st.lastIndex) {
			return false
		}
		st.lastDecided, st.lastIndex = o.Decided, i
		told := o.Told
		if !byDecided {
			if st.ended {
				continue
			}
			if told < st.before {
				st.ended = true // past here the promise says nothing of what it owes
				continue
			}
			st.before = told
		}
		switch {
		case o.Failed:
			continue
		case o.Admitted:
			st.env.Admit(told)
			st.admits++
			st.stale = true
		case honest && key < traffic.NumClients && st.candidate < 0:
			// told is no earlier than the instance's admits, so Allows(told)
			// is told ≥ AllowsFrom, asked once per admit rather than once
			// per refusal (most of a flood's requests).
			if st.stale {
				st.allowsFrom, st.stale = st.env.AllowsFrom(), false
			}
			if told >= st.allowsFrom {
				st.candidate, st.candidateIndex, st.candidateAdmits = pos, i, st.admits
			}
		}
		if as := &st.answers; key < traffic.NumClients && !as.done() {
			// A refusal that says Remaining 0, with a Reset that cannot be
			// short (already found, negative, or no earlier than the idle
			// time known since the last admit), only marks the instant of
			// its Remaining 0: checkAnswer, cut to that for most of a
			// flood's refusals.
			if !o.Admitted && o.Remaining == 0 && (as.reset.found || o.Reset < 0 || (as.idleKnown && told+o.Reset >= as.idle)) {
				if !as.remaining.found {
					as.zeroAt = told
				}
			} else {
				as.checkAnswer(&st.env, told, o.Remaining, o.Reset, o.Admitted, pos, i, st.admits)
			}
		}
	}
	if bad != nil {
		bad.done = true
	}
	for inst := range states {
		st := &states[inst]
		if st.candidate < 0 {
			continue
		}
		r := v.at(st.candidateIndex)
		if out[r.key][breach.HonestTurnedAway] != nil {
			continue
		}
		f := &Evidence{Kind: breach.HonestTurnedAway, Violation: &algos.Violation{From: r.told, To: r.told, Reason: fmt.Sprintf(
			"%s refused a request at %s, after %d admits, where one more keeps the promise (%s)",
			where(r, v.local), algos.FormatTime(r.told), st.candidateAdmits, promise.Text)}}
		// The refusal and the requests its instance decided just before.
		for _, p := range sc.before(v, st.candidate, r.instance) {
			f.Trace = append([]string{traceLine(p, outcome(p))}, f.Trace...)
		}
		f.Trace = append(f.Trace, traceLine(r, outcome(r)))
		out[r.key][breach.HonestTurnedAway] = f
	}
	for inst := range states {
		as := &states[inst].answers
		for _, c := range []*claim{&as.remaining, &as.reset} {
			if !c.found {
				continue
			}
			r := v.at(c.index)
			before := sc.before(v, c.pos, r.instance)
			if c == &as.remaining {
				out[r.key].Keep(c.remainingFinding(r, before, where(r, v.local), promise))
			} else {
				out[r.key].Keep(c.resetFinding(r, before, where(r, v.local), promise))
			}
		}
	}
	return true
}

// before is the requests instance decided just before position pos of
// the run's Order, latest first, at most traceLength-1 of them.
func (sc *Simulation) before(v *runView, pos int, instance int32) []judged {
	var out []judged
	for p := pos - 1; p >= 0 && len(out) < traceLength-1; p-- {
		if r := v.at(v.res.Order[p]); r.instance == instance {
			out = append(out, r)
		}
	}
	return out
}

// where names the instance that decided r: the store, or its node.
func where(r judged, local bool) string {
	if local {
		return fmt.Sprintf("node %d", r.node)
	}
	return "the store"
}

// badTally is what a run's answers show on their own, before it is worded:
// per client, how many of its answers were bad (or its limiter panicked,
// breach.BadAnswer) and how many told a Reset past the promise's longest
// idle (breach.ResetPastIdle), with the first of each in the order the run
// decided them (-1 for none). Neither rule needs what the instance
// admitted, only what it was told: a few comparisons an answer. A
// judgeable run counts them in honestyAndBad's pass (see), any other on
// a pass of its own (countAll); findings words them.
type badTally struct {
	bounds algos.AnswerBounds
	// idle is the longest a key of the instance's promise needs to become
	// idle, left alone (algos.Promise.LongestIdle); 0 when not judged (a
	// Conservative limiter, which may be idle later than its promise, or a
	// promise of its own). idleWhy says what it is.
	idle    int64
	idleWhy string
	// latest is, per instance, the latest time it was told so far, in the
	// order it decided: its state may run that far ahead of a caller told
	// an earlier time (a node clock behind, a request overtaken on the
	// way), and such a caller is rightly told to wait that much longer.
	latest []int64
	count  [traffic.NumClients]int
	first  [traffic.NumClients]int32
	past   [traffic.NumClients]int
	pastAt [traffic.NumClients]int32
	ahead  [traffic.NumClients]int64 // how far the first one's instance had been told ahead of it
	done   bool                      // every request was counted
}

// reset makes t an empty tally of v's run, following its instances in
// latest (memory kept from run to run).
func (t *badTally) reset(v *runView, latest *[]int64) {
	t.bounds = v.cfg.Limit.Answers(v.cfg.ClockSpread())
	t.idle, t.idleWhy = 0, ""
	if spec := v.cfg.Limiter; !spec.Conservative {
		if idle, why, ok := spec.Promise(instanceLimit(*v.cfg)).LongestIdle(); ok {
			t.idle, t.idleWhy = idle, why
		}
	}
	n := len(v.res.Keys)
	if v.local {
		n *= int(v.nodes)
	}
	*latest = slices.Grow((*latest)[:0], n)[:n]
	t.latest = *latest
	t.clear()
}

// clear drops every count.
func (t *badTally) clear() {
	t.count, t.past, t.done = [traffic.NumClients]int{}, [traffic.NumClients]int{}, false
	for c := range t.first {
		t.first[c], t.pastAt[c] = -1, -1
	}
	for k := range t.latest {
		t.latest[k] = math.MinInt64
	}
}

// bad reports whether o is an answer no limiter may give, or a panic.
func (t *badTally) bad(o *model.Outcome) bool {
	if o.Failed {
		return o.Panicked
	}
	return t.bounds.BadAnswer(o.Admitted, o.Remaining, o.RetryAfter, o.Reset)
}

// pastIdle reports whether o, an answer of instance inst, told a Reset
// past the promise's longest idle plus how far the instance had been told
// ahead of it (lead), and follows the instance's latest time: called on
// every answer of the instance, in the order it decided.
func (t *badTally) pastIdle(o *model.Outcome, inst int) (past bool, lead int64) {
	if t.idle == 0 || o.Failed {
		return false, 0
	}
	if latest := &t.latest[inst]; *latest > o.Told {
		lead = *latest - o.Told
	} else {
		*latest = o.Told
	}
	return o.Reset-lead > t.idle, lead
}

// add counts request i, on key, a bad answer.
func (t *badTally) add(i int32, key int) {
	t.count[key]++
	if t.first[key] < 0 {
		t.first[key] = i
	}
}

// addPast counts request i, on key, a Reset past idle, its instance told
// lead ahead of it.
func (t *badTally) addPast(i int32, key int, lead int64) {
	t.past[key]++
	if t.pastAt[key] < 0 {
		t.pastAt[key], t.ahead[key] = i, lead
	}
}

// see counts request i, on key (a client's), of instance inst, answered o,
// taken in the order the run decided them.
func (t *badTally) see(o *model.Outcome, i int32, key, inst int) {
	if t.bad(o) {
		t.add(i, key)
	}
	if past, lead := t.pastIdle(o, inst); past {
		t.addPast(i, key, lead)
	}
}

// countAll counts every request of v's run on its own passes, dropping
// what a pass that did not finish counted.
func (t *badTally) countAll(v *runView) {
	t.clear()
	// The bad answers are counted in request order, which reads the
	// outcomes in memory order; only a run with a bad answer is read again
	// in decision order, for each client's first.
	for i := range v.res.Outcomes {
		if !t.bad(&v.res.Outcomes[i]) {
			continue
		}
		if key := v.res.Outcomes[i].Key; key >= 0 && key < traffic.NumClients {
			t.count[key]++
		}
	}
	wanted := 0 // clients with a bad answer whose first is not found yet
	for _, n := range t.count {
		if n > 0 {
			wanted++
		}
	}
	for _, i := range v.res.Order {
		if wanted == 0 {
			break
		}
		if !t.bad(&v.res.Outcomes[i]) {
			continue
		}
		if key := int(v.res.Outcomes[i].Key); key >= 0 && key < traffic.NumClients && t.first[key] < 0 {
			t.first[key] = i
			wanted--
		}
	}
	// A Reset past idle needs each instance's latest time: decision order.
	if t.idle > 0 {
		for _, i := range v.res.Order {
			_, inst, key := v.toldAt(i)
			if key < 0 || key >= traffic.NumClients {
				continue
			}
			if past, lead := t.pastIdle(&v.res.Outcomes[i], int(inst)); past {
				t.addPast(i, int(key), lead)
			}
		}
	}
	t.done = true
}

// findings gives each client with a bad answer its breach.BadAnswer
// finding, and each with a Reset past idle its breach.ResetPastIdle one.
func (t *badTally) findings(v *runView, out *[traffic.NumClients]Kinds) {
	such := func(n int) string { return map[bool]string{true: "answer", false: "answers"}[n == 1] }
	for c, n := range t.count {
		if n == 0 || out[c][breach.BadAnswer] != nil {
			continue
		}
		r := v.at(t.first[c])
		o := &v.res.Outcomes[t.first[c]]
		why, text := "the limiter panicked (a panic is never an answer)", "panicked"
		if !o.Failed {
			why, text = t.bounds.Why(o.Decision()), AnswerText(o.Decision())
		}
		out[c][breach.BadAnswer] = &Evidence{Kind: breach.BadAnswer, Violation: &algos.Violation{From: r.told, To: r.told, Reason: fmt.Sprintf(
			"told %s, %s; %d such %s in the run", algos.FormatTime(r.told), why, n, such(n))},
			Trace: []string{traceLine(r, text)}}
	}
	for c, n := range t.past {
		if n == 0 || out[c][breach.ResetPastIdle] != nil {
			continue
		}
		r := v.at(t.pastAt[c])
		d := v.res.Outcomes[t.pastAt[c]].Decision()
		ahead := ""
		if t.ahead[c] > 0 {
			ahead = fmt.Sprintf(", plus the %s its %s had been told ahead of it", algos.FormatMicros(t.ahead[c]), where(r, v.local))
		}
		out[c][breach.ResetPastIdle] = &Evidence{Kind: breach.ResetPastIdle, Violation: &algos.Violation{From: r.told, To: r.told, Reason: fmt.Sprintf(
			"told %s, answered Reset %s, past the longest any key of its promise needs to become idle, left alone, %s (%s)%s; %d such %s in the run",
			algos.FormatTime(r.told), algos.FormatMicros(d.Reset), algos.FormatMicros(t.idle), t.idleWhy, ahead, n, such(n))},
			Trace: []string{traceLine(r, AnswerText(d))}}
	}
}

// overAdmission is the breach.OverAdmission finding of the client on key, whose
// admits broke the promise as viol says: its trace is the admits that
// opened the window and those that closed it, each on the limiter that
// decided it.
func (sc *Simulation) overAdmission(v *runView, key int, viol *algos.Violation) *Evidence {
	in := sc.over[:0]
	defer func() { sc.over = in[:0] }()
	order, outcomes := v.res.Order, v.res.Outcomes
	if v.cfg.Deployment != model.GetSet {
		// Order is by decision time here: only the window's part is read.
		from, _ := slices.BinarySearchFunc(order, viol.From, func(i int32, t int64) int { return cmp.Compare(outcomes[i].Decided, t) })
		order = order[from:]
	}
	for _, i := range order {
		o := &outcomes[i]
		if o.Decided > viol.To && v.cfg.Deployment != model.GetSet {
			break
		}
		if o.Admitted && o.Decided >= viol.From && o.Decided <= viol.To {
			if r := v.at(i); int(r.key) == key {
				in = append(in, r)
			}
		}
	}
	slices.SortStableFunc(in, func(a, b judged) int { return cmp.Compare(a.decided, b.decided) })
	if viol.Admits > 0 && int64(len(in)) > viol.Admits {
		in = in[:viol.Admits] // an aligned window's admits past the one that broke it
	}
	f := &Evidence{Kind: breach.OverAdmission, Violation: viol}
	const ends = 3 // admits shown at each end of the window
	for j, r := range in {
		switch {
		case j < ends || j >= len(in)-ends:
			f.Trace = append(f.Trace, traceLine(r, fmt.Sprintf("admitted, %d of %d", j+1, len(in))))
		case j == ends:
			f.Trace = append(f.Trace, fmt.Sprintf("... %d more admitted", len(in)-2*ends))
		}
	}
	return f
}

// AnswerText is a whole answer, as a trace line of an Evidence shows it.
func AnswerText(d algos.Decision) string {
	verdict := "refused"
	if d.Allowed {
		verdict = "admitted"
	}
	return fmt.Sprintf("%s, Remaining %d, Retry-After %s, Reset %s", verdict, d.Remaining,
		algos.FormatMicros(d.RetryAfter), algos.FormatMicros(d.Reset))
}

// instanceLimit is the limit one instance enforces.
func instanceLimit(cfg model.Config) algos.Limit {
	if cfg.Deployment != model.LocalSplit {
		return cfg.Limit
	}
	n := int64(cfg.Nodes)
	l, err := algos.NewLimit(cfg.Limit.Rate/n, cfg.Limit.Window, cfg.Limit.Burst/n)
	if err != nil { // the model refused such a run before it got here
		return cfg.Limit
	}
	return l
}

// traceLength is how many requests a trace of an honest request turned
// away shows: the refusal and those its instance decided just before.
const traceLength = 6

// honesty finds, per client, the first refusal that the promise allowed.
// An instance told a time earlier than one before it (clocks that disagree)
// is judged only up to there: past that, the promise says nothing of what
// it owes.
func honesty(spec limiter.Spec, cfg model.Config, all []judged, groups [][]int32, out *[traffic.NumClients]Kinds) {
	l := instanceLimit(cfg)
	promise := spec.Promise(l)
	local := cfg.Deployment.PerNode()
	type keyed struct {
		key int32
		f   *Evidence
	}
	var high []keyed // each instance's Remaining too high and Reset too short, kept after the refusals
	for _, g := range groups {
		env, ok := promise.Envelope()
		if !ok {
			return
		}
		as := answerState{zeroAt: math.MinInt64}
		var before int64
		admits := 0
		for j, i := range g {
			r := all[i]
			if j > 0 && r.told < before {
				break
			}
			before = r.told
			switch {
			case r.failed:
			case r.admitted:
				env.Admit(r.told)
				admits++
			case !spec.Conservative && r.key < traffic.NumClients && out[r.key][breach.HonestTurnedAway] == nil && env.Allows(r.told):
				f := &Evidence{Kind: breach.HonestTurnedAway, Violation: &algos.Violation{From: r.told, To: r.told, Reason: fmt.Sprintf(
					"%s refused a request at %s, after %d admits, where one more keeps the promise (%s)",
					where(r, local), algos.FormatTime(r.told), admits, promise.Text)}}
				for _, k := range g[max(0, j-traceLength+1) : j+1] {
					f.Trace = append(f.Trace, traceLine(all[k], outcome(all[k])))
				}
				out[r.key][breach.HonestTurnedAway] = f
			}
			if r.key < traffic.NumClients && !as.done() {
				had := as
				as.check(env, &r, j, i, admits)
				if as.remaining.found && !had.remaining.found {
					high = append(high, keyed{r.key, as.remaining.remainingFinding(r, prior(all, g, j), where(r, local), promise)})
				}
				if as.reset.found && !had.reset.found {
					high = append(high, keyed{r.key, as.reset.resetFinding(r, prior(all, g, j), where(r, local), promise)})
				}
			}
		}
	}
	for _, h := range high {
		out[h.key].Keep(h.f)
	}
}

// prior is the requests of group g decided just before its j-th, latest
// first, at most traceLength-1 of them.
func prior(all []judged, g []int32, j int) []judged {
	var out []judged
	for _, k := range slices.Backward(g[max(0, j-traceLength+1):j]) {
		out = append(out, all[k])
	}
	return out
}

// retries holds a closed-loop client (on key) to the answers it was given:
// its next request after a denial, on the same instance, is admitted if it
// came at or after the Retry-After, and if it came before and was denied,
// it is not told to wait past the deadline it came early for. The
// retry-after client tests the first; the drain-idle and reset-burst
// clients, which come back early, the second. mine are the client's
// requests, in the order it sent them; retryAfter are the Retry-Afters of
// the answers it was handed, in the same order (the last request may have
// none).
func retries(mine []judged, key int, retryAfter []int64, out *[traffic.NumClients]Kinds) {
	if key >= traffic.NumClients {
		return
	}
	mine = mine[:min(len(mine), len(retryAfter))]
	for k := 1; k < len(mine) && !retriesDone(&out[key]); k++ {
		if b := retryBreach(mine[k-1], mine[k], retryAfter[k-1], retryAfter[k]); b != 0 && out[key][b] == nil {
			out[key][b] = retryFinding(b, mine[k-1], mine[k], retryAfter[k-1], retryAfter[k])
		}
	}
}

// retriesDone is true once a client has both kinds of retry breach.
func retriesDone(k *Kinds) bool {
	return k[breach.RetryDenied] != nil && k[breach.RetryExtended] != nil
}

// retryBreach judges r, a closed-loop client's next request after d,
// which it was answered with Retry-After dRetry (and r with rRetry): the
// breach when r breaks what d's answer promised (breach.RetryDenied or
// breach.RetryExtended), 0 otherwise (retries). It only compares: a client breaks
// it on most of its retries, and retryFinding words the first of each.
func retryBreach(d, r judged, dRetry, rRetry int64) breach.Kind {
	if d.failed || d.admitted || r.failed || r.admitted || r.instance != d.instance {
		return 0
	}
	return retryBreachTold(d.told, r.told, dRetry, rRetry)
}

// retryBreachTold is retryBreach of two denials on one instance, told at
// dTold and rTold.
func retryBreachTold(dTold, rTold, dRetry, rRetry int64) breach.Kind {
	if rTold < dTold {
		return 0
	}
	switch deadline := dTold + dRetry; {
	case rTold >= deadline:
		return breach.RetryDenied
	case rTold+rRetry > deadline:
		return breach.RetryExtended
	}
	return 0
}

// retryFinding is the finding of breach b (retryBreach's) by r after d.
func retryFinding(b breach.Kind, d, r judged, dRetry, rRetry int64) *Evidence {
	deadline := d.told + dRetry
	trace := []string{
		traceLine(d, fmt.Sprintf("refused, Retry-After %s", algos.FormatMicros(dRetry))),
		traceLine(r, fmt.Sprintf("refused, Retry-After %s", algos.FormatMicros(rRetry))),
	}
	if b == breach.RetryDenied {
		return &Evidence{breach.RetryDenied, &algos.Violation{From: d.told, To: r.told, Reason: fmt.Sprintf(
			"denied at %s with Retry-After %s, retried at %s (%s later), denied again with Retry-After %s",
			algos.FormatTime(d.told), algos.FormatMicros(dRetry), algos.FormatTime(r.told),
			algos.FormatMicros(r.told-d.told), algos.FormatMicros(rRetry))}, trace}
	}
	return &Evidence{breach.RetryExtended, &algos.Violation{From: d.told, To: r.told, Reason: fmt.Sprintf(
		"denied at %s until %s, retried early at %s and told to wait until %s",
		algos.FormatTime(d.told), algos.FormatTime(deadline), algos.FormatTime(r.told), algos.FormatTime(r.told+rRetry))}, trace}
}

// retriesInOrder is retries for every closed-loop client of the run, in
// one pass over the closed-loop requests in the order sent, each judged
// against the one its client sent before it on the same key: no list of
// each client's requests is made. It returns false, having found nothing,
// when some closed-loop client's key also has fixed requests (they come
// first in its order; a hunt's traffic has none): the caller then lists
// them (sentBy) and calls retries.
func (sc *Simulation) retriesInOrder(v *runView, out *[traffic.NumClients]Kinds) bool {
	type follow struct {
		n      int   // the client's requests so far
		prev   int32 // its last one's index
		denied bool  // and whether it was denied (neither admitted nor failed)
		on     bool  // a closed-loop client's key, not yet judged
	}
	var keys [traffic.NumClients]follow
	for _, lc := range v.cfg.Loop {
		if lc.Key >= 0 && lc.Key < traffic.NumClients {
			keys[lc.Key].on = !retriesDone(&out[lc.Key])
		}
	}
	var loops [traffic.NumClients]int
	var found [traffic.NumClients]Kinds
	for k := range found {
		found[k][breach.RetryDenied], found[k][breach.RetryExtended] = out[k][breach.RetryDenied], out[k][breach.RetryExtended]
	}
	fixed := int32(len(v.cfg.Requests))
	outcomes := v.res.Outcomes
	for j, q := range v.res.LoopRequests {
		key := q.Key
		if key < 0 || key >= traffic.NumClients {
			continue
		}
		loops[key]++
		st := &keys[key]
		if !st.on {
			continue
		}
		ra := sc.retryAfter[key]
		if st.n >= len(ra) {
			st.on = false // past the last answer recorded
			continue
		}
		i := fixed + int32(j)
		o := &outcomes[i]
		// Only a denial after a denial can break what the first promised
		// (retryBreach); the rest pass without being laid out.
		if st.n > 0 && st.denied && !o.Admitted && !o.Failed {
			dTold, dInstance, _ := v.toldAt(st.prev)
			rTold, rInstance, _ := v.toldAt(i)
			if b := retryBreachTold(dTold, rTold, ra[st.n-1], ra[st.n]); dInstance == rInstance && b != 0 && found[key][b] == nil {
				found[key][b] = retryFinding(b, v.at(st.prev), v.at(i), ra[st.n-1], ra[st.n])
				st.on = !retriesDone(&found[key])
			}
		}
		st.prev, st.denied = i, !o.Admitted && !o.Failed
		st.n++
	}
	for _, lc := range v.cfg.Loop {
		if k := lc.Key; k >= 0 && k < traffic.NumClients && k < len(v.res.Keys) && v.res.Keys[k].Requests > loops[k] {
			return false
		}
	}
	for k := range found {
		out[k][breach.RetryDenied], out[k][breach.RetryExtended] = found[k][breach.RetryDenied], found[k][breach.RetryExtended]
	}
	return true
}
