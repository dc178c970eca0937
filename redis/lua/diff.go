package lua

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/redis/go-redis/v9"
)

// MaxReported is how many findings of each kind (differences, errors, TTLs)
// a DiffReport keeps in words.
const MaxReported = 5

// diffChunk is how many calls Differential sends in one pipeline.
const diffChunk = 500

// TTLSlack is how far either side of its bounds Differential accepts a key's
// life after a call: an expiry is set in whole ms. The life is its
// PEXPIRETIME less the Redis TIME the script read (TTLDifference.Got) for
// the lower bound, which guards the fresh burst; for the upper bound, less
// the TIME read just after the call (GotLatest), by which the expiry was
// set, so that no pause of Redis between the two reads as a late expiry.
const TTLSlack = 2 * time.Millisecond

// DefaultMaxTTL is the longest Differential lets a key live after a call when
// DiffOptions.MaxTTL is zero: an hour, longer than most limits' windows and
// refills, as a key's expiry is often a constant hour.
const DefaultMaxTTL = time.Hour

// DiffOptions tunes DifferentialWith. The zero value is Differential's.
type DiffOptions struct {
	// MaxTTL is the longest a key may live after a call. A key may always
	// live until TTLMargin after its state is idle (rounded up to the ms, as
	// TTL sets it), even when that is longer than MaxTTL. Zero means
	// DefaultMaxTTL; a negative MaxTTL is an error.
	MaxTTL time.Duration
	// StopAfter, when positive, ends the comparison once the report holds
	// that many differences, at the end of the pipeline that found them,
	// instead of running every call: a report with a difference is not OK
	// whatever follows, and what follows the first difference can be its
	// echoes. The report then has Stopped set and fewer Calls than Planned.
	// Zero runs every call; a negative StopAfter is an error.
	StopAfter int
	// Clock, when set, is the store's clock, which Differential then sets
	// on the store-clock path: before each call there, to that call's time
	// in times (back, with StepBack, for a time behind the one before), so
	// that the script reads at µs resolution exactly the times the told
	// path tells, and the call runs alone, its TIME held to the clock
	// exactly. A simredis.Server is one. Nothing else may set that clock
	// while Differential runs. Without it the store's clock is its own (a
	// real Redis's), and the calls there go in pipelines, as fast as Redis
	// runs them.
	Clock ClockedStore
}

// ClockedStore is a store whose clock the caller sets, in µs of Unix time,
// as simredis.Server's is: SetClock moves it forward, StepBack back, and
// Clock says where it is. Redis TIME answers it.
type ClockedStore interface {
	Clock() int64
	SetClock(us int64) error
	StepBack(us int64) error
}

// StoreClockKeySuffix is appended to Differential's key for the key the
// store-clock path runs on: the two paths keep states of their own, at
// times of their own.
const StoreClockKeySuffix = ":store-clock"

// The expiry Differential reads: TTLDifference.Got is one of these when the
// key has no expiry or does not exist (go-redis's PTTL values).
const (
	NoExpiry   time.Duration = -1
	KeyMissing time.Duration = -2
)

// DiffReport is what Differential found for one key on one path. OK says
// whether it is a pass; everything else says why, in counts and in words.
// Differential's report is the told path's, and holds the store-clock
// path's in OnStoreClock.
type DiffReport struct {
	Algorithm string // the Go twin's name
	StateDoc  string // the Go twin's StateDoc: what the stored values mean
	// Clock is whose time the calls ran at: CallerClock, each told the
	// time in ARGV[1]; StoreClock, told -1, the script reading Redis TIME
	// and the twin deciding at the TIME it read, held to when the call ran.
	// A script's two ways of learning the time are two pieces of code, and
	// one can be wrong while the other is right.
	Clock    limiter.Clock
	Key      string        // the key the script ran on
	Limit    algos.Limit   // the limit of every call
	MaxTTL   time.Duration // the bound on a key's life applied (DiffOptions.MaxTTL)
	Planned  int           // how many calls Differential was given
	Calls    int           // how many of them ran, on both
	Admitted int           // how many of those the Go twin admitted

	// Differences counts the calls whose decision or stored values differ;
	// First holds the first MaxReported of them, in call order. After the
	// first, the two states may have parted, so the rest can be its echoes.
	Differences int
	First       []Difference

	// Errors counts what kept a call from being compared: a script error,
	// a reply that could not be read, an expiry that could not be read, a
	// script that does not load, a comparison that stopped. FirstErrors
	// holds the first MaxReported of them.
	Errors      int
	FirstErrors []CallError

	// TTLChecks counts the calls after which the key's expiry was read
	// (every call whose reply was read); TTLDifferences how many of those
	// let the key expire before the twin's state is idle, or live past the
	// bound; FirstTTL the first MaxReported of those.
	TTLChecks      int
	TTLDifferences int
	FirstTTL       []TTLDifference

	// Expired counts the calls that found the key gone, as the store said
	// it was: absent after the call before, or with an expiry the store's
	// clock had reached (the told times stand still while Redis's clock
	// runs on, so a machine that pauses the comparison long enough lets a
	// key expire between two calls). The script decided them on an absent
	// key, and so did the twin. The expiry was itself held to the TTL check
	// of the call before, so following it forgives no early one.
	Expired int

	// Stopped is set when the comparison ended early, as DiffOptions.StopAfter
	// asked, with Calls of the Planned run.
	Stopped bool

	// OnStoreClock is, on the told path's report, the store-clock path's:
	// the same number of calls on Key+StoreClockKeySuffix, the script told
	// nothing and reading TIME, each decided by the twin at the TIME the
	// script read. It is nil when that path did not run: the script does
	// not load, or the told path stopped (an error, or StopAfter).
	OnStoreClock *DiffReport
}

// OK reports whether the script and its twin agreed on everything, on both
// paths: every planned call ran (at least one), none gave an error, every
// decision and stored value was the same, and every call's expiry was read
// and within bound. A report Differential did not complete is never OK,
// nor is a told path's report without the store-clock path's.
func (r DiffReport) OK() bool {
	if r.Clock == limiter.StoreClock {
		return r.PathOK()
	}
	return r.PathOK() && r.OnStoreClock != nil && r.OnStoreClock.Clock == limiter.StoreClock && r.OnStoreClock.PathOK()
}

// PathOK is OK of r's own path alone, whatever OnStoreClock holds: so that
// a test can say which path a script passes and which it fails.
func (r DiffReport) PathOK() bool {
	return r.Planned > 0 && r.Calls == r.Planned && r.Errors == 0 && r.Differences == 0 &&
		r.TTLChecks == r.Calls && r.TTLDifferences == 0
}

// Summary is one line: the calls, the admits, the differences, the errors
// and the TTLs, then the same for the store-clock path when it ran.
func (r DiffReport) Summary() string {
	line := r.summary()
	if s := r.OnStoreClock; s != nil {
		line += fmt.Sprintf("; reading TIME: %s", s.summary())
	}
	return line
}

// summary is Summary of r's own path.
func (r DiffReport) summary() string {
	calls := fmt.Sprintf("%d calls", r.Calls)
	if r.Calls != r.Planned {
		calls = fmt.Sprintf("%d of %d calls", r.Calls, r.Planned)
	}
	line := fmt.Sprintf("%s (%d admitted), %d differences, %d errors, %d of %d TTLs within bound",
		calls, r.Admitted, r.Differences, r.Errors, r.TTLChecks-r.TTLDifferences, r.TTLChecks)
	if r.Expired > 0 {
		line += fmt.Sprintf(", %d found the key expired by the store's clock", r.Expired)
	}
	return line
}

// String is the summary, headed by the algorithm, key and limit, followed by
// every error, difference and TTL the report kept, in words, and by why it
// is not OK when nothing else says so; then the same of the store-clock
// path, or that it did not run.
func (r DiffReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %q, %v: %s", r.Algorithm, r.Key, r.Limit, r.Summary())
	r.details(&b)
	switch s := r.OnStoreClock; {
	case r.Clock == limiter.StoreClock: // a store-clock path's report holds no other
	case s == nil:
		b.WriteString("\nthe store-clock path (the script reading TIME) did not run")
	case !s.PathOK():
		fmt.Fprintf(&b, "\non the store-clock path, reading TIME on %q: %s", s.Key, s.summary())
		s.details(&b)
	}
	return b.String()
}

// details writes the errors, differences and TTLs r kept, in words, and why
// it is not OK when nothing else says so.
func (r DiffReport) details(b *strings.Builder) {
	list := func(items []string, total int, what string) {
		for _, s := range items {
			b.WriteString("\n")
			b.WriteString(s)
		}
		if total > len(items) {
			fmt.Fprintf(b, "\n(%d more %s not shown)", total-len(items), what)
		}
	}
	list(strs(r.FirstErrors), r.Errors, "errors")
	list(strs(r.First), r.Differences, "differences")
	list(strs(r.FirstTTL), r.TTLDifferences, "TTL differences")
	switch {
	case r.Planned == 0:
		b.WriteString("\nnothing was compared: no calls")
	case r.Stopped:
		fmt.Fprintf(b, "\nthe comparison stopped after %d of %d calls, at the difference it was asked to stop after", r.Calls, r.Planned)
	case r.Calls != r.Planned && r.Errors == 0:
		fmt.Fprintf(b, "\nthe comparison stopped after %d of %d calls", r.Calls, r.Planned)
	case r.TTLChecks != r.Calls && r.Errors == 0:
		fmt.Fprintf(b, "\nthe expiry was read after %d of %d calls", r.TTLChecks, r.Calls)
	}
}

func strs[T fmt.Stringer](v []T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = x.String()
	}
	return out
}

func (r *DiffReport) addError(e CallError) {
	if r.Errors++; len(r.FirstErrors) < MaxReported {
		r.FirstErrors = append(r.FirstErrors, e)
	}
}

// CallError is what kept one call (or the whole script) from being
// compared.
type CallError struct {
	Call int // the call's index in the times, or -1 for the script as a whole
	// Told is the call's time, µs: the time told, or on the store-clock path
	// the TIME the script read (when its reply gave one when it ran), else
	// the earliest the call can have run.
	Told  int64
	Clock limiter.Clock // where the call's time came from
	What  string        // what failed, in words
	Err   string        // the error, as Redis or the reply's reader put it
}

// String says which call failed, what failed and why.
func (e CallError) String() string {
	if e.Call < 0 {
		return fmt.Sprintf("%s: %s", e.What, e.Err)
	}
	return fmt.Sprintf("%s: %s: %s", callAt(e.Call, e.Told, e.Clock), e.What, e.Err)
}

// callAt names a call and its time, and says when the time is TIME's.
func callAt(call int, now int64, p limiter.Clock) string {
	if p == limiter.StoreClock {
		return fmt.Sprintf("call %d at %d µs (its TIME)", call, now)
	}
	return fmt.Sprintf("call %d at %d µs", call, now)
}

// Difference is one call on which the script and its Go twin disagree.
type Difference struct {
	Call  int           // the call's index in the times given to Differential
	Told  int64         // the time told, µs, or on the store-clock path the TIME the script read
	Clock limiter.Clock // where the call's time came from
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
	return fmt.Sprintf("%s differs in %s:\n"+
		"  before the call the twin held %s\n"+
		"  go twin: %s; stores %s\n"+
		"  script:  %s; stores %s",
		callAt(d.Call, d.Told, d.Clock), strings.Join(d.Fields(), ", "),
		before,
		describe(d.Go), shortInts(d.GoStored),
		describe(d.Lua), shortInts(d.LuaStored))
}

// TTLDifference is a call after which the key's expiry is unsafe or
// unbounded: the key can expire before the twin's state is idle (a call
// after the expiry would find an absent key and hand out a fresh burst
// early), or it lives longer than the bound, or it exists although the twin
// stores nothing.
type TTLDifference struct {
	Call     int            // the call's index in the times
	Told     int64          // the time told, µs, or on the store-clock path the TIME the script read
	Clock    limiter.Clock  // where the call's time came from
	Decision algos.Decision // the Go twin's decision on the call
	// Absent is true when the twin stores nothing after the call, so the
	// key should not exist.
	Absent bool
	// Idle is how long after the call's time the twin's state becomes idle:
	// the shortest safe life. Never is true when it does not become idle
	// before algos.MaxTime, so that no expiry is safe.
	Idle  time.Duration
	Never bool
	// Max is the longest life accepted after this call: the larger of
	// DiffOptions.MaxTTL and Idle rounded up to the ms plus TTLMargin.
	Max time.Duration
	// Got is how long the key lives after the call (its PEXPIRETIME less
	// the Redis TIME of the call), or NoExpiry, or KeyMissing.
	Got time.Duration
	// GotLatest is how long it lives after the TIME read just after the
	// call: the script set the expiry by then, so a key set to live at
	// most Max never looks late, however long the machine paused Redis
	// between the script's TIME and its SET (Redis 7.0 counts an expiry
	// from the moment it sets it).
	GotLatest time.Duration
}

// Early reports whether the key can expire (or is gone) before the twin's
// state is idle, TTLSlack aside.
func (d TTLDifference) Early() bool {
	switch {
	case d.Absent || d.Got == NoExpiry:
		return false
	case d.Never:
		return true
	}
	return d.Got < d.Idle-TTLSlack // KeyMissing is below any Idle past the slack
}

// Late reports whether the key lives past the bound (or has no expiry)
// even counted from the TIME read just after the call, TTLSlack aside.
func (d TTLDifference) Late() bool {
	return !d.Absent && (d.Got == NoExpiry || d.GotLatest > d.Max+TTLSlack)
}

// within reports whether the expiry is what the twin's state asks for.
func (d TTLDifference) within() bool {
	if d.Absent {
		return d.Got == KeyMissing
	}
	return !d.Never && !d.Early() && !d.Late()
}

// String says what the expiry was, what it should have been, and why.
func (d TTLDifference) String() string {
	var got string
	switch d.Got {
	case NoExpiry:
		got = "the key has no expiry"
	case KeyMissing:
		got = "the key does not exist"
	default:
		got = fmt.Sprintf("the key expires %v after the call", d.Got)
	}
	var want string
	switch {
	case d.Absent:
		want = "it should not exist, as the twin stores nothing"
	case d.Never:
		want = "the twin's state does not become idle before algos.MaxTime, so no expiry is safe"
	case d.Early():
		want = fmt.Sprintf("too early: the twin's state is not idle until %v after the call, and a call after the expiry would start from a fresh state; want at least %v and at most %v",
			d.Idle, d.Idle, d.Max)
	case d.Late():
		if d.Got != NoExpiry {
			got += fmt.Sprintf(" (%v after the TIME read just after it)", d.GotLatest)
		}
		want = fmt.Sprintf("too late: want at most %v (the larger of the bound and the time to idle plus %v) and at least %v, when the twin's state is idle",
			d.Max, TTLMargin, d.Idle)
	default:
		want = fmt.Sprintf("within bound: at least %v and at most %v", d.Idle, d.Max)
	}
	its := ""
	if d.Clock == limiter.StoreClock {
		its = "its TIME; "
	}
	return fmt.Sprintf("TTL after call %d at %d µs (%sgo twin: %s): %s; %s", d.Call, d.Told, its, describe(d.Decision), got, want)
}

// Differential is DifferentialWith the zero DiffOptions: a key may live up
// to DefaultMaxTTL after a call, and the store's clock is its own.
func Differential(ctx context.Context, c redis.Cmdable, l *Script, key string, lim algos.Limit, times []int64) (DiffReport, error) {
	return DifferentialWith(ctx, c, l, key, lim, times, DiffOptions{})
}

// DifferentialWith runs the script l in Redis and l.Algorithm().Decide in
// Go from an absent key (the zero algos.State) on two paths, and compares
// each pair of decisions (allowed, remaining, retry-after, reset) and the
// values stored after each call. First told the time: each of times is a
// call on key, in that order, its time told to the script (ARGV[1]) and to
// the twin. Then on the store clock, on key+StoreClockKeySuffix: as many
// calls, the script told nothing, so that it reads Redis TIME as the
// prelude does, and the twin deciding at the TIME the script's reply says
// it read, which must lie between TIMEs read just before and just after
// the call (so a script cannot lie its way into agreement by more than
// that). With opt.Clock, that TIME is each call's time in times, to the
// µs, as DiffOptions.Clock says; without it, it is a real Redis's, every
// call a few µs after the one before. The returned report is the told
// path's, with the store-clock path's in OnStoreClock; OK holds both.
//
// The stored values compared are the ones the script replies with: the
// layout in Redis is the script's own and is not read back, though a
// script that writes one thing and replies another will part from its twin
// on a later call that reads it.
//
// After every call it also reads the key's expiry (PEXPIRETIME, Redis 7),
// and measures the key's life from the Redis TIME in the script's reply. The
// key must live until the twin's state after the call is idle, less
// TTLSlack: an earlier expiry hands the next caller a fresh state early. It
// may live longer, up to the larger of opt.MaxTTL and TTLMargin past idle.
// When the twin stores nothing, the key must not exist.
//
// The state is idle at the first time T from which deciding on it gives
// what deciding on an absent key gives (a full bucket, a window no longer
// counted, a log whose entries are all outside the window). It is found
// from the twin alone, so it holds for a user's twin as for the six: a call
// at T (and at T+1 and T+2W) on a copy of the state must decide and store
// exactly what it does on an absent key, after which nothing tells the two
// apart. The search starts at now + Reset of the twin's decision, which is
// where it ends for the six algorithms, and goes on from there when the
// twin's Reset says otherwise. Past algos.MaxTime, the twin's Reset is
// taken at its word.
//
// The told times run ahead of Redis's clock, so a key set to expire on one
// call is judged as if each later call had set it again. Redis's clock runs
// on meanwhile, so a key can really expire between two calls, however
// right its expiry, when the machine pauses the comparison for longer than
// the key had to live. A call that met the key gone by the store's account
// (PEXPIRETIME after the call before found no key, or the script read a
// Redis TIME at or past the expiry it gave), and whose reply is what the
// twin decides and stores on an absent key, is compared with that, and the
// twin goes on from the absent key too (DiffReport.Expired counts them):
// judged by the store's clock, the call is right, and the expiry it met
// was checked on the call before.
//
// Neither key may exist beforehand; DifferentialWith leaves each as the
// last call on it left it. Every time must be within 0 and algos.MaxTime (a
// negative time would make the script read Redis TIME). It returns an
// error, and sends nothing, for these, for an invalid limit and for a
// negative MaxTTL or StopAfter. Whatever the script does wrong is in the
// report, not an error: a difference, an expiry out of bound, a script
// error, a reply that cannot be read, a script that does not load (then
// neither path runs). What stops the comparison partway (Redis unreachable,
// ctx done, the Go twin panicking, a clock that cannot be set) is an error,
// returned with the report so far, which is then not OK; the store-clock
// path does not run after the told path stopped, by an error or StopAfter.
func DifferentialWith(ctx context.Context, c redis.Cmdable, l *Script, key string, lim algos.Limit, times []int64, opt DiffOptions) (DiffReport, error) {
	if l == nil {
		return DiffReport{}, errors.New("lua: differential: nil Script")
	}
	if key == "" {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: empty key", l.Name())
	}
	if err := lim.Validate(); err != nil {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: %w", l.Name(), err)
	}
	if opt.MaxTTL < 0 {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: MaxTTL %v is negative", l.Name(), opt.MaxTTL)
	}
	if opt.StopAfter < 0 {
		return DiffReport{}, fmt.Errorf("lua: differential of %s: StopAfter %d is negative", l.Name(), opt.StopAfter)
	}
	for i, t := range times {
		if t < 0 || t > algos.MaxTime {
			return DiffReport{}, fmt.Errorf("lua: differential of %s: call %d at %d µs is not within 0 and algos.MaxTime", l.Name(), i, t)
		}
	}
	maxTTL := opt.MaxTTL
	if maxTTL == 0 {
		maxTTL = DefaultMaxTTL
	}
	algo := l.Algorithm()
	report := func(p limiter.Clock, key string) *DiffReport {
		return &DiffReport{Algorithm: algo.Name, StateDoc: algo.StateDoc, Clock: p, Key: key, Limit: lim, MaxTTL: maxTTL, Planned: len(times)}
	}
	told, store := report(limiter.CallerClock, key), report(limiter.StoreClock, key+StoreClockKeySuffix)
	for _, k := range []string{told.Key, store.Key} {
		n, err := c.Exists(ctx, k).Result()
		if err != nil {
			return DiffReport{}, fmt.Errorf("lua: differential of %s: %w", l.Name(), err)
		}
		if n != 0 {
			return DiffReport{}, fmt.Errorf("lua: differential of %s: key %q already exists; the Go twin starts from an absent key", l.Name(), k)
		}
	}
	stop := func(rep *DiffReport, err error) (DiffReport, error) {
		rep.addError(CallError{Call: -1, Clock: rep.Clock, What: "the comparison stopped", Err: err.Error()})
		return *told, fmt.Errorf("lua: differential of %s, %s: %w", l.Name(), rep.Clock, err)
	}
	if err := l.script.Load(ctx, c).Err(); err != nil {
		if !isReply(err) {
			return stop(told, err)
		}
		told.addError(CallError{Call: -1, What: "the script does not load", Err: err.Error()})
		return *told, nil
	}
	for _, rep := range []*DiffReport{told, store} {
		d := differ{rep: rep, l: l, key: rep.Key, lim: lim, maxTTL: maxTTL, idle: idleSearch{decide: algo.Decide, lim: lim}, expiry: keyMissingAt}
		if rep.Clock == limiter.StoreClock {
			told.OnStoreClock, d.clock = store, opt.Clock
		}
		size := diffChunk
		if d.clock != nil {
			size = 1 // the clock is set between calls
		}
		for from := 0; from < len(times); from += size {
			if err := d.chunk(ctx, c, from, times[from:min(len(times), from+size)]); err != nil {
				return stop(rep, err)
			}
			if opt.StopAfter > 0 && rep.Differences >= opt.StopAfter && rep.Calls < rep.Planned {
				rep.Stopped = true
				break
			}
		}
		if rep.Stopped {
			break
		}
	}
	return *told, nil
}

// differ holds one path's twin and report between pipelines.
type differ struct {
	rep    *DiffReport
	l      *Script
	key    string
	lim    algos.Limit
	maxTTL time.Duration
	state  algos.State
	idle   idleSearch
	// expiry is the key's PEXPIRETIME after the last call (ms since the
	// epoch, or -1 for none, -2 for no key), or unknownExpiry when it was
	// not read.
	expiry int64
	// clock, on the store-clock path, is the store's clock to set to each
	// call's time before the call (DiffOptions.Clock), or nil.
	clock ClockedStore
}

// keyMissingAt is what PEXPIRETIME answers for no key; unknownExpiry marks
// an expiry that could not be read.
const (
	keyMissingAt  int64 = -2
	unknownExpiry int64 = math.MinInt64
)

// setClock moves the store's clock to us, forward or back.
func setClock(s ClockedStore, us int64) error {
	if us < s.Clock() {
		return s.StepBack(us)
	}
	return s.SetClock(us)
}

// chunk sends part, the calls from index from on, in one pipeline, each
// followed by PEXPIRETIME and a TIME, and compares each with the twin: each
// call ran between the TIMEs around it, which hold the TIME its script read
// and bound when it set its key's expiry. With a clock to set, part is one
// call, run at its time. It returns what stops the comparison.
func (d *differ) chunk(ctx context.Context, c redis.Cmdable, from int, part []int64) error {
	onStore := d.rep.Clock == limiter.StoreClock
	if d.clock != nil {
		if err := setClock(d.clock, part[0]); err != nil {
			return fmt.Errorf("setting the store's clock for call %d to %d µs: %w", from, part[0], err)
		}
	}
	pipe := c.Pipeline()
	times := []*redis.TimeCmd{pipe.Time(ctx)}
	evals := make([]*redis.Cmd, len(part))
	expiries := make([]*redis.Cmd, len(part))
	for i, now := range part {
		if onStore {
			now = -1 // the script reads TIME
		}
		keys, args, err := d.l.prepare(Args{Key: d.key, Limit: d.lim, Told: now})
		if err != nil {
			return err
		}
		evals[i] = d.l.script.EvalSha(ctx, pipe, keys, args...)
		expiries[i] = pipe.Do(ctx, "PEXPIRETIME", d.key)
		times = append(times, pipe.Time(ctx))
	}
	_, _ = pipe.Exec(ctx) // each command's error is read below
	for _, cmd := range times {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	for i := range part {
		// A failure that is not Redis's reply to the command (the
		// connection, ctx) stops the comparison; a reply is the script's.
		for _, cmd := range []redis.Cmder{evals[i], expiries[i]} {
			if err := cmd.Err(); err != nil && !isReply(err) {
				return err
			}
		}
	}
	for i, now := range part {
		ran := [2]int64{times[i].Val().UnixMicro(), times[i+1].Val().UnixMicro()}
		if err := d.compare(from+i, now, evals[i], expiries[i], ran); err != nil {
			return err
		}
	}
	return nil
}

// compare decides call on the twin and compares the script's reply and the
// key's expiry with it. ran bounds the Redis TIME of the call. Told the
// time, the twin decides at told; on the store clock, at the TIME the
// script's reply says it read when that is within ran, or else (it gave
// none, or one from when it did not run) at ran[0], the earliest it ran:
// the twin must decide something to go on from, and the reply is then an
// error anyway.
func (d *differ) compare(call int, told int64, eval, expiry *redis.Cmd, ran [2]int64) error {
	rep, lim := d.rep, d.lim
	got, readWhat, readErr := readEval(eval)
	timed := readErr == nil && got.RedisTime >= ran[0] && got.RedisTime <= ran[1]
	now := told
	if rep.Clock == limiter.StoreClock {
		now = ran[0]
		if timed {
			now = got.RedisTime
		}
	}
	before := d.state.Stored()
	expiredAt := d.expiry
	d.expiry = unknownExpiry // until this call's is read
	want, err := decide(d.l.algo.Decide, &d.state, now, lim)
	if err != nil {
		return fmt.Errorf("%s: %w", callAt(call, now, rep.Clock), err)
	}
	wantStored := d.state.Stored()
	rep.Calls++
	if want.Allowed {
		rep.Admitted++
	}
	fail := func(what string, err any) error {
		rep.addError(CallError{Call: call, Told: now, Clock: rep.Clock, What: what, Err: fmt.Sprint(err)})
		return nil
	}
	if readErr != nil {
		return fail(readWhat, readErr)
	}
	same := func(dec algos.Decision, stored []int64) bool {
		return got.Decision == dec && slices.Equal(got.Stored, stored)
	}
	gone := expiredAt == keyMissingAt || expiredAt >= 0 && got.RedisTime >= expiredAt*1000
	if !same(want, wantStored) && timed && gone {
		// The key was gone after the call before, or the store's clock had
		// reached its expiry: the script rightly found it absent.
		var fresh algos.State
		alt, err := decide(d.l.algo.Decide, &fresh, now, lim)
		if err != nil {
			return fmt.Errorf("%s: %w", callAt(call, now, rep.Clock), err)
		}
		if altStored := fresh.Stored(); same(alt, altStored) {
			switch {
			case alt.Allowed && !want.Allowed:
				rep.Admitted++
			case !alt.Allowed && want.Allowed:
				rep.Admitted--
			}
			d.state, want, wantStored = fresh, alt, altStored
			rep.Expired++
		}
	}
	if !same(want, wantStored) {
		if rep.Differences++; len(rep.First) < MaxReported {
			rep.First = append(rep.First, Difference{
				Call: call, Told: now, Clock: rep.Clock, Before: before,
				Go: want, Lua: got.Decision, GoStored: wantStored, LuaStored: got.Stored,
				StateDoc: d.l.algo.StateDoc,
			})
		}
	}
	if !timed {
		return fail("the script's reply could not be read",
			fmt.Sprintf("its Redis TIME %d µs is not when it ran (between %d and %d µs)", got.RedisTime, ran[0], ran[1]))
	}
	at, err := expiry.Int64()
	if err != nil {
		return fail("the key's expiry could not be read (PEXPIRETIME needs Redis 7)", err)
	}
	d.expiry = at
	return d.checkTTL(call, now, want, wantStored, at, got.RedisTime, ran[1])
}

// readEval reads a script call's reply, or says what kept it from being
// read: what failed, and why.
func readEval(eval *redis.Cmd) (ScriptReply, string, error) {
	if err := eval.Err(); err != nil {
		if errors.Is(err, redis.Nil) {
			return ScriptReply{}, "the script's reply could not be read", errors.New("it replied nil")
		}
		return ScriptReply{}, "the script failed", err
	}
	got, err := readReply(eval.Val())
	if err != nil {
		return ScriptReply{}, "the script's reply could not be read", err
	}
	return got, "", nil
}

// checkTTL records whether the key, which expires at (ms, or -1, -2, as
// PEXPIRETIME says) after a call whose script read redisTime (µs) and
// which ended by after (µs, the TIME read just after it), lives until the
// twin's state is idle and not past the bound.
func (d *differ) checkTTL(call int, now int64, want algos.Decision, stored []int64, at, redisTime, after int64) error {
	rep := d.rep
	rep.TTLChecks++
	td := TTLDifference{Call: call, Told: now, Clock: rep.Clock, Decision: want, Absent: len(stored) == 0,
		Got: lifeOf(at, redisTime), GotLatest: lifeOf(at, after)}
	if !td.Absent {
		idle, err := d.idle.find(d.state, now, want.Reset)
		if err != nil {
			return fmt.Errorf("%s: %w", callAt(call, now, rep.Clock), err)
		}
		td.Never, td.Max = idle.Never, d.maxTTL
		if !idle.Never {
			td.Idle = micros(idle.At - now)
			td.Max = max(d.maxTTL, TTL(algos.Decision{Reset: idle.At - now}))
		}
	}
	if !td.within() {
		if rep.TTLDifferences++; len(rep.FirstTTL) < MaxReported {
			rep.FirstTTL = append(rep.FirstTTL, td)
		}
	}
	return nil
}

// lifeOf is how long a key that expires at (PEXPIRETIME: ms since the
// epoch, or -1 for none, -2 for no key) lives after redisTime (µs).
func lifeOf(at, redisTime int64) time.Duration {
	switch {
	case at == -1:
		return NoExpiry
	case at < 0:
		return KeyMissing
	case at > math.MaxInt64/1000:
		return math.MaxInt64
	}
	return micros(at*1000 - redisTime)
}

// micros is µs as a Duration, saturating rather than overflowing.
func micros(us int64) time.Duration {
	if us > math.MaxInt64/1000 {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// isReply reports whether err is Redis's error reply to a command (or its
// nil reply), not a failure to reach Redis.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
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
