package algos

import "fmt"

// Some answers are wrong whatever the algorithm behind them, because a
// caller acts on them: a negative wait sends it back before it was
// answered, a Retry-After on an admit tells it to wait for what it has, a
// Retry-After past the Reset says a retry is refused when the key is idle
// again, a Remaining above what the limit can ever hold promises requests
// it cannot admit, and a wait far longer than any limit of its size needs
// is a unit or an epoch mistaken for a duration. AnswerBounds names them,
// so that every run checks every answer without knowing the algorithm.

// AnswerBounds is what any limiter enforcing one Limit may answer.
type AnswerBounds struct {
	// MostRemaining is the most a Remaining may say: max(L, B), the most
	// any of the six admits at one instant.
	MostRemaining int64
	// LongestWait is the longest Reset (and so Retry-After) that is not
	// absurd: ten times W·⌈B/L⌉ + 2W (the longest any of the six needs to
	// get back to idle, a sliding counter's two windows included), plus
	// Spread, the most the caller's clock can be behind the one the
	// limiter last decided by (a skewed or stepped caller is told to wait
	// that gap too).
	LongestWait int64
}

// Answers is the bounds of an answer under l, for callers whose clocks are
// up to spread µs apart (0 for one true clock).
func (l Limit) Answers(spread int64) AnswerBounds {
	idle := l.Window*ceilDiv(l.Burst, l.Rate) + 2*l.Window
	wait := MaxTime
	if idle <= (MaxTime-max(spread, 0))/10 {
		wait = 10*idle + max(spread, 0)
	}
	return AnswerBounds{MostRemaining: max(l.Rate, l.Burst), LongestWait: wait}
}

// Bad is true when d is an answer no limiter under b may give. It is a few
// comparisons, for a run to ask of every answer; Why says which rule d
// breaks.
func (b *AnswerBounds) Bad(d *Decision) bool {
	return b.BadAnswer(d.Allowed, d.Remaining, d.RetryAfter, d.Reset)
}

// BadAnswer is Bad of the answer with these fields, for a caller that
// keeps them apart (a Decision is too wide to pass in registers, and one
// built to be asked about costs more than asking).
func (b *AnswerBounds) BadAnswer(allowed bool, remaining, retryAfter, reset int64) bool {
	return remaining|retryAfter|reset < 0 || remaining > b.MostRemaining ||
		reset > b.LongestWait || retryAfter > reset || (allowed && retryAfter != 0)
}

// Why says which rule d breaks, in words, or "" when it breaks none.
func (b *AnswerBounds) Why(d Decision) string {
	verdict := "refused"
	if d.Allowed {
		verdict = "admitted"
	}
	switch {
	case d.Remaining < 0:
		return fmt.Sprintf("%s with a negative Remaining (%d)", verdict, d.Remaining)
	case d.RetryAfter < 0:
		return fmt.Sprintf("%s with a negative Retry-After (%s)", verdict, FormatMicros(d.RetryAfter))
	case d.Reset < 0:
		return fmt.Sprintf("%s with a negative Reset (%s)", verdict, FormatMicros(d.Reset))
	case d.Allowed && d.RetryAfter != 0:
		return fmt.Sprintf("admitted with a Retry-After (%s): an admit has nothing to wait for", FormatMicros(d.RetryAfter))
	case d.Remaining > b.MostRemaining:
		return fmt.Sprintf("%s with Remaining %d, more than the limit ever holds (%d)", verdict, d.Remaining, b.MostRemaining)
	case d.Reset > b.LongestWait:
		return fmt.Sprintf("%s with Reset %s, longer than any limit of this size needs (at most %s)", verdict, FormatMicros(d.Reset), FormatMicros(b.LongestWait))
	case d.RetryAfter > d.Reset:
		return fmt.Sprintf("refused with Retry-After %s, after its Reset (%s): a retry is refused when the key is idle again", FormatMicros(d.RetryAfter), FormatMicros(d.Reset))
	}
	return ""
}
