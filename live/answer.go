package live

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// ResetUnit is how an X-RateLimit-Reset value is read: services ship
// seconds from now, milliseconds from now, and Unix epoch seconds under the
// same name, and a number alone cannot always tell them apart.
type ResetUnit uint8

const (
	// ResetAuto, the default, reads a value of at least 1e9 as Unix epoch
	// seconds (no delay is 31 years long, and no epoch is before 2001) and
	// any smaller one as seconds from now. Milliseconds must be asked for.
	ResetAuto ResetUnit = iota
	// ResetSeconds reads seconds from now.
	ResetSeconds
	// ResetMillis reads milliseconds from now.
	ResetMillis
	// ResetEpoch reads Unix epoch seconds.
	ResetEpoch
)

// epochFrom is where ResetAuto starts reading epoch seconds: 2001-09-09.
const epochFrom = 1_000_000_000

// The header names Parse reads.
const (
	HeaderLimit       = "X-RateLimit-Limit"
	HeaderRemaining   = "X-RateLimit-Remaining"
	HeaderReset       = "X-RateLimit-Reset"
	HeaderRetryAfter  = "Retry-After"
	HeaderRateLimit   = "RateLimit"        // IETF: limit=, remaining=, reset= (draft 7) or "name";r=;t= (draft 8 on)
	HeaderPolicy      = "RateLimit-Policy" // IETF: 10;w=1 (draft 7) or "name";q=10;w=1 (draft 8 on)
	HeaderIETFLimit   = "RateLimit-Limit"  // IETF drafts up to 6
	HeaderIETFRemain  = "RateLimit-Remaining"
	HeaderIETFResetIn = "RateLimit-Reset"
)

// Parse reads one HTTP answer: 429 is a denial, 2xx an admit, and any
// other status an error (the request was not decided as far as the client
// can tell). The counts come from the first of the conventions that states
// them: X-RateLimit-Limit, -Remaining and -Reset (Reset read by unit); the
// IETF RateLimit field (limit, remaining, reset, or r and t) with
// RateLimit-Policy for the quota; the IETF drafts' RateLimit-Limit,
// -Remaining and -Reset. Retry-After is whole seconds or an HTTP-date.
// Counts are in µs; a date or an epoch is turned into a wait from the
// answer's Date when it has one (so that the server's clock is read
// against itself), else from at (the client's clock when the answer came),
// rounded up to whole seconds and never below 0; a wait stated as a delay
// is marked in Delta. A header that cannot be read leaves its field
// unknown and is named in Malformed; Parse never fails on a header.
func Parse(status int, h http.Header, at time.Time, unit ResetUnit) (record.Answer, error) {
	var a record.Answer
	switch {
	case status == http.StatusTooManyRequests:
	case status >= 200 && status < 300:
		a.Allowed = true
	default:
		return a, fmt.Errorf("status %d %s: neither an admit (2xx) nor a denial (429)", status, http.StatusText(status))
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		at = d // an instant the server names is read on the server's clock
	}
	p := parser{h: h, a: &a}
	// The quota.
	if v, ok := p.integer(HeaderLimit); ok {
		a.Limit, a.Known = v, a.Known|record.FieldLimit
	}
	ietf := p.members(HeaderRateLimit)
	if !a.Known.Has(record.FieldLimit) {
		if v, ok := p.param(HeaderRateLimit, ietf, "limit"); ok {
			a.Limit, a.Known = v, a.Known|record.FieldLimit
		} else if v, ok := p.integer(HeaderIETFLimit); ok {
			a.Limit, a.Known = v, a.Known|record.FieldLimit
		} else if v, ok := p.policy(); ok {
			a.Limit, a.Known = v, a.Known|record.FieldLimit
		}
	}
	// Remaining.
	if v, ok := p.integer(HeaderRemaining); ok {
		a.Remaining, a.Known = v, a.Known|record.FieldRemaining
	} else if v, ok := p.param(HeaderRateLimit, ietf, "remaining", "r"); ok {
		a.Remaining, a.Known = v, a.Known|record.FieldRemaining
	} else if v, ok := p.integer(HeaderIETFRemain); ok {
		a.Remaining, a.Known = v, a.Known|record.FieldRemaining
	}
	// Reset.
	if v, delta, ok := p.reset(at, unit); ok {
		a.Reset, a.Known = v, a.Known|record.FieldReset
		if delta {
			a.Delta |= record.FieldReset
		}
	} else if v, ok := p.param(HeaderRateLimit, ietf, "reset", "t"); ok {
		a.Reset, a.Known, a.Delta = seconds(v), a.Known|record.FieldReset, a.Delta|record.FieldReset
	} else if v, ok := p.integer(HeaderIETFResetIn); ok {
		a.Reset, a.Known, a.Delta = seconds(v), a.Known|record.FieldReset, a.Delta|record.FieldReset
	}
	// Retry-After.
	if v, delta, ok := p.retryAfter(at); ok {
		a.RetryAfter, a.Known = v, a.Known|record.FieldRetryAfter
		if delta {
			a.Delta |= record.FieldRetryAfter
		}
	}
	return a, nil
}

// parser reads h into a, noting the first unreadable header.
type parser struct {
	h http.Header
	a *record.Answer
}

func (p parser) bad(name, v, why string) {
	if p.a.Malformed == "" {
		p.a.Malformed = fmt.Sprintf("%s: %q %s", name, v, why)
	}
}

// value is the header's first value, trimmed, and whether it is present.
func (p parser) value(name string) (string, bool) {
	vs := p.h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

// integer reads a header holding one integer (a list's first member, as a
// service that sends "10, 10;w=1" means it).
func (p parser) integer(name string) (int64, bool) {
	v, ok := p.value(name)
	if !ok {
		return 0, false
	}
	first, _, _ := strings.Cut(v, ",")
	first, _, _ = strings.Cut(first, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if err != nil {
		p.bad(name, v, "is not an integer")
		return 0, false
	}
	return n, true
}

// member is one list member of a structured field: its bare value (a
// token, a quoted name or a number) and its key=value parameters.
type member struct {
	bare   string
	params map[string]string
}

// members splits a structured-field list: members by ',', parameters by
// ';', each parameter key=value. A draft-7 RateLimit ("limit=10,
// remaining=5, reset=3") is members of one parameter each.
func (p parser) members(name string) []member {
	v, ok := p.value(name)
	if !ok {
		return nil
	}
	var ms []member
	for _, raw := range strings.Split(v, ",") {
		m := member{params: map[string]string{}}
		for i, part := range strings.Split(raw, ";") {
			part = strings.TrimSpace(part)
			if k, val, ok := strings.Cut(part, "="); ok {
				m.params[strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(val), `"`)
			} else if i == 0 {
				m.bare = strings.Trim(part, `"`)
			}
		}
		ms = append(ms, m)
	}
	return ms
}

// param is the first of keys found as an integer parameter in ms (the
// first member that has one), from header name.
func (p parser) param(name string, ms []member, keys ...string) (int64, bool) {
	for _, m := range ms {
		for _, k := range keys {
			v, ok := m.params[k]
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				p.bad(name, v, "is not an integer "+k)
				return 0, false
			}
			return n, true
		}
	}
	return 0, false
}

// policy is the quota of RateLimit-Policy: the first member's q=, or its
// bare integer (draft 7: "10;w=1").
func (p parser) policy() (int64, bool) {
	ms := p.members(HeaderPolicy)
	if len(ms) == 0 {
		return 0, false
	}
	if v, ok := p.param(HeaderPolicy, ms[:1], "q"); ok {
		return v, true
	}
	n, err := strconv.ParseInt(ms[0].bare, 10, 64)
	if err != nil {
		v, _ := p.value(HeaderPolicy)
		p.bad(HeaderPolicy, v, "states no quota (q= or a leading integer)")
		return 0, false
	}
	return n, true
}

// reset reads X-RateLimit-Reset by unit, as µs from at, and whether it
// was stated as a delay (not an epoch).
func (p parser) reset(at time.Time, unit ResetUnit) (wait int64, delta, ok bool) {
	v, ok := p.value(HeaderReset)
	if !ok {
		return 0, false, false
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e12 {
		p.bad(HeaderReset, v, "is not a number of seconds, milliseconds or an epoch")
		return 0, false, false
	}
	switch {
	case unit == ResetMillis:
		return ceilMicros(x * 1000), true, true
	case unit == ResetEpoch || unit == ResetAuto && x >= epochFrom:
		return until(time.UnixMicro(int64(x*1e6)), at), false, true
	case unit == ResetSeconds || unit == ResetAuto:
		return ceilMicros(x * 1e6), true, true
	}
	p.bad(HeaderReset, v, fmt.Sprintf("has an unknown ResetUnit(%d)", unit))
	return 0, false, false
}

// retryAfter reads Retry-After: whole seconds (a delay), or an HTTP-date.
func (p parser) retryAfter(at time.Time) (wait int64, delta, ok bool) {
	v, ok := p.value(HeaderRetryAfter)
	if !ok {
		return 0, false, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n > math.MaxInt64/algos.Second || n < math.MinInt64/algos.Second {
			p.bad(HeaderRetryAfter, v, "is out of range")
			return 0, false, false
		}
		return seconds(n), true, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return until(t, at), false, true
	}
	p.bad(HeaderRetryAfter, v, "is neither whole seconds nor an HTTP-date")
	return 0, false, false
}

// ceilMicros is a count of µs read from a decimal, rounded up: a decimal
// that names whole µs ("2.007" s) is read as exactly those, not a µs more
// for the binary fraction its product carries.
func ceilMicros(f float64) int64 {
	if r := math.Round(f); math.Abs(f-r) < 1e-3 {
		return int64(r)
	}
	return int64(math.Ceil(f))
}

// seconds is whole seconds as µs, saturating.
func seconds(n int64) int64 {
	switch {
	case n > math.MaxInt64/algos.Second:
		return math.MaxInt64
	case n < math.MinInt64/algos.Second:
		return math.MinInt64
	}
	return n * algos.Second
}

// until is the wait from at to t in µs, rounded up to whole seconds (the
// resolution of a date or an epoch) and never below 0.
func until(t, at time.Time) int64 {
	d := t.Sub(at).Microseconds()
	if d <= 0 {
		return 0
	}
	return (d + algos.Second - 1) / algos.Second * algos.Second
}
