package record

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/overshoot-go/overshoot/algos"
)

// Seen says which of a record's own times its producer saw: a live client
// sees neither the instant its request was decided nor the clock the
// limiter read, the simulator sees both. The zero Seen is neither, so a
// record built by hand claims nothing it does not say.
type Seen uint8

const (
	// SeenDecided: Record.Decided is the true time of the decision.
	SeenDecided Seen = 1 << iota
	// SeenTold: Record.Told is the time the limiter was told or read.
	SeenTold
	// SeenOrder: Record.Order is the decision's place in the order its
	// limiter made its decisions, which the decision times alone do not
	// give when two fall in one µs. Only with SeenDecided.
	SeenOrder
)

// Has reports whether every time of t is in s.
func (s Seen) Has(t Seen) bool { return s&t == t }

// Fields says which parts of an answer the limiter stated. A field it did
// not state (or stated in a form that could not be read) is left out of
// every check: a judge never guesses it.
type Fields uint8

const (
	// FieldLimit: the answer stated its quota (Answer.Limit).
	FieldLimit Fields = 1 << iota
	// FieldRemaining: the answer stated Decision.Remaining.
	FieldRemaining
	// FieldReset: the answer stated Decision.Reset.
	FieldReset
	// FieldRetryAfter: the answer stated Decision.RetryAfter.
	FieldRetryAfter
	// FieldsDecision is what an algos.Decision states: every count but
	// the quota. A limiter called in process (a live.Func, the
	// simulator's) answers these.
	FieldsDecision = FieldRemaining | FieldReset | FieldRetryAfter
	// FieldsAll is every field.
	FieldsAll = FieldLimit | FieldsDecision
)

// Has reports whether every field of g is in f.
func (f Fields) Has(g Fields) bool { return f&g == g }

// Answer is what one request was answered: the decision in µs, the quota
// when the limiter says it, which of those it said, and the first header
// that could not be read.
type Answer struct {
	// Decision is the verdict (Allowed) and the counts the limiter stated,
	// in µs; a count not in Known is 0 and means nothing.
	algos.Decision
	// Limit is the quota the answer stated (X-RateLimit-Limit, the IETF
	// limit or policy), when Known has FieldLimit.
	Limit int64
	// Known is which counts the answer stated.
	Known Fields
	// Delta is which of the waits (FieldReset, FieldRetryAfter) were
	// stated as a delay from the answer (delay-seconds, milliseconds, µs
	// in process), which an honest limiter rounds up once, rather than as
	// an instant (an epoch, an HTTP-date) a parser turned into the wait
	// until it, which may read late or early (see live's TrueWait). The
	// zero Delta claims neither, and a judge then allows for both. The
	// record's file carries it (reset_is_delay, retry_after_is_delay) for
	// the waits Known has.
	Delta Fields
	// Malformed is the first header that was present but unreadable, in
	// words ("" when every header read): its field is left unknown.
	Malformed string
}

// Record is what a client saw of one request, in µs of true time (the
// client's clock, for a live run): the request, when it was sent, decided
// and answered, the time its limiter was told or read, and the whole
// answer.
type Record struct {
	// Key is the key the request was counted under.
	Key string
	// Node is the node (or the target's node URL) it was sent to, from 0.
	Node int
	// Cost is the units the request asked for, 0 when its producer did
	// not say (a request that asks for 1, as every request of overshoot's
	// own traffic does).
	Cost int64
	// Sent is when the request left the client, Answered when its answer
	// came back. Answered ≥ Sent.
	Sent, Answered int64
	// Decided is the true time the limiter decided, within [Sent,
	// Answered], when Seen has SeenDecided (never for a live target).
	Decided int64
	// Told is the time the limiter was told or read when it decided (the
	// node's clock it was sent, the store's TIME), when Seen has SeenTold.
	Told int64
	// Order is the decision's place among the run's decisions, from 1,
	// when Seen has SeenOrder (the simulator's records, and a live run's
	// ordered by MONITOR): of two records decided in the same µs, the one
	// with the smaller Order was decided first. Orders compare only
	// within one run's records.
	Order int64
	// Seen is which of Decided, Told and Order the producer saw.
	Seen Seen
	// Answer is the parsed answer; it means nothing when Err is set.
	Answer
	// Status is the HTTP status (0 when the target is not HTTP, or when
	// none came back).
	Status int
	// Err is why the request has no decision: a transport error, a
	// timeout, a status neither 2xx nor 429, the limiter's error, or a
	// request the driver could not send. nil for a decision.
	Err error
}

// IsDecided reports whether the record holds a decision (Err is nil).
func (r Record) IsDecided() bool { return r.Err == nil }

// Span is where the decision certainly lies, in true time: [Decided,
// Decided] when the producer saw it, else [Sent, Answered].
func (r Record) Span() (from, to int64) {
	if r.Seen.Has(SeenDecided) {
		return r.Decided, r.Decided
	}
	return r.Sent, r.Answered
}

// String is the record on one line: key, node, times and outcome.
func (r Record) String() string {
	var out string
	switch {
	case r.Err != nil:
		out = "error: " + r.Err.Error()
	case r.Allowed:
		out = "admitted"
	default:
		out = "denied"
	}
	if r.Status != 0 {
		out = fmt.Sprintf("%d, %s", r.Status, out)
	}
	if r.Err == nil {
		if r.Known.Has(FieldLimit) {
			out += fmt.Sprintf(", Limit %d", r.Limit)
		}
		if r.Known.Has(FieldRemaining) {
			out += fmt.Sprintf(", Remaining %d", r.Remaining)
		}
		if r.Known.Has(FieldReset) {
			out += ", Reset " + FormatDuration(r.Reset)
		}
		if r.Known.Has(FieldRetryAfter) && (r.RetryAfter != 0 || !r.Allowed) {
			out += ", Retry-After " + FormatDuration(r.RetryAfter)
		}
	}
	at := ""
	if r.Seen.Has(SeenDecided) && r.Decided != r.Answered {
		at = ", decided +" + algos.FormatTime(r.Decided)
	}
	return fmt.Sprintf("key %s, node %d, sent +%s%s, answered +%s: %s", r.Key, r.Node, algos.FormatTime(r.Sent), at, algos.FormatTime(r.Answered), out)
}

// FormatDuration writes a duration in µs as a person reads it, to three
// figures: 1.234s, 12.5ms, 450µs.
func FormatDuration(us int64) string {
	switch {
	case us >= algos.Second || us <= -algos.Second:
		return fmt.Sprintf("%.3fs", float64(us)/float64(algos.Second))
	case us >= 1000 || us <= -1000:
		return fmt.Sprintf("%.1fms", float64(us)/1000)
	}
	return fmt.Sprintf("%dµs", us)
}

// Ranks is, for n decisions, each one's rank from 1 (what Record.Order
// holds when Seen has SeenOrder): by its Decided, those of one µs by
// their place in the order their producer saw them made. at(i) gives
// decision i's Decided and that place (any count that grows with each
// decision: a store's sequence of commands, the simulator's run order),
// and whether it has one at all; one without gets rank 0, no rank (two
// producers' counts that tie, in one µs, are ranked as given). The
// simulator, replay and the live driver all rank their records by it.
func Ranks(n int, at func(i int) (decided, order int64, ok bool)) []int64 {
	type key struct {
		i              int
		decided, order int64
	}
	var ordered []key
	for i := range n {
		if d, o, ok := at(i); ok {
			ordered = append(ordered, key{i, d, o})
		}
	}
	slices.SortFunc(ordered, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.decided, b.decided), cmp.Compare(a.order, b.order), cmp.Compare(a.i, b.i))
	})
	ranks := make([]int64, n)
	for rank, k := range ordered {
		ranks[k.i] = int64(rank + 1)
	}
	return ranks
}
