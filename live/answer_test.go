package live

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/record"
)

// Every convention reads to the same answer, in µs, and a header that
// cannot be read leaves its field unknown and is named, never a panic.
func TestParseConventions(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := algos.Second
	type want struct {
		allowed                        bool
		limit, remaining, reset, retry int64
		known                          record.Fields
		malformed                      string // a word of it
	}
	for _, c := range []struct {
		name   string
		status int
		unit   ResetUnit
		h      map[string]string
		want   want
	}{
		{"x-ratelimit, reset in seconds", 200, ResetAuto,
			map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "2"},
			want{true, 10, 3, 2 * s, 0, record.FieldLimit | record.FieldRemaining | record.FieldReset, ""}},
		{"denial with retry-after seconds", 429, ResetAuto,
			map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1", "Retry-After": "1"},
			want{false, 10, 0, s, s, record.FieldsAll, ""}},
		{"reset as a fraction of seconds", 200, ResetSeconds,
			map[string]string{"X-RateLimit-Reset": "0.25"}, want{true, 0, 0, s / 4, 0, record.FieldReset, ""}},
		{"reset in milliseconds", 200, ResetMillis,
			map[string]string{"X-RateLimit-Reset": "1500"}, want{true, 0, 0, 1500 * 1000, 0, record.FieldReset, ""}},
		{"reset as an epoch, told apart by size", 200, ResetAuto,
			map[string]string{"X-RateLimit-Reset": "1767323047"}, want{true, 0, 0, 2 * s, 0, record.FieldReset, ""}},
		{"reset as an epoch, asked for", 200, ResetEpoch,
			map[string]string{"X-RateLimit-Reset": "1767323046"}, want{true, 0, 0, s, 0, record.FieldReset, ""}},
		{"an epoch in the past is no wait", 200, ResetEpoch,
			map[string]string{"X-RateLimit-Reset": "1767323000"}, want{true, 0, 0, 0, 0, record.FieldReset, ""}},
		{"retry-after as an HTTP-date", 429, ResetAuto,
			map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:04:08 GMT"}, want{false, 0, 0, 0, 3 * s, record.FieldRetryAfter, ""}},
		{"IETF draft 7", 200, ResetAuto,
			map[string]string{"RateLimit": "limit=100, remaining=42, reset=7", "RateLimit-Policy": "100;w=60"},
			want{true, 100, 42, 7 * s, 0, record.FieldLimit | record.FieldRemaining | record.FieldReset, ""}},
		{"IETF draft 8 on, quota from the policy", 429, ResetAuto,
			map[string]string{"RateLimit": `"default";r=0;t=30`, "RateLimit-Policy": `"default";q=100;w=60`, "Retry-After": "30"},
			want{false, 100, 0, 30 * s, 30 * s, record.FieldsAll, ""}},
		{"IETF draft 7 policy list", 200, ResetAuto,
			map[string]string{"RateLimit-Policy": "10, 10;w=1, 1000;w=3600"}, want{true, 10, 0, 0, 0, record.FieldLimit, ""}},
		{"IETF drafts up to 6", 200, ResetAuto,
			map[string]string{"RateLimit-Limit": "5", "RateLimit-Remaining": "4", "RateLimit-Reset": "9"},
			want{true, 5, 4, 9 * s, 0, record.FieldLimit | record.FieldRemaining | record.FieldReset, ""}},
		{"x-ratelimit wins over IETF", 200, ResetAuto,
			map[string]string{"X-RateLimit-Remaining": "1", "RateLimit": "remaining=9"}, want{true, 0, 1, 0, 0, record.FieldRemaining, ""}},
		{"negative values are read, for the judge", 200, ResetAuto,
			map[string]string{"X-RateLimit-Remaining": "-2", "Retry-After": "-1"}, want{true, 0, -2, 0, -s, record.FieldRemaining | record.FieldRetryAfter, ""}},
		{"nothing stated", 204, ResetAuto, nil, want{true, 0, 0, 0, 0, 0, ""}},
		// Malformed: the field is unknown, the header named.
		{"remaining not a number", 200, ResetAuto,
			map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "lots"}, want{true, 10, 0, 0, 0, record.FieldLimit, "X-RateLimit-Remaining"}},
		{"remaining falls back to IETF when unreadable", 200, ResetAuto,
			map[string]string{"X-RateLimit-Remaining": "", "RateLimit": "remaining=3"}, want{true, 0, 3, 0, 0, record.FieldRemaining, "X-RateLimit-Remaining"}},
		{"reset not a number", 200, ResetAuto,
			map[string]string{"X-RateLimit-Reset": "soon"}, want{true, 0, 0, 0, 0, 0, "X-RateLimit-Reset"}},
		{"reset NaN", 200, ResetAuto, map[string]string{"X-RateLimit-Reset": "NaN"}, want{true, 0, 0, 0, 0, 0, "X-RateLimit-Reset"}},
		{"reset huge", 200, ResetAuto, map[string]string{"X-RateLimit-Reset": "1e300"}, want{true, 0, 0, 0, 0, 0, "X-RateLimit-Reset"}},
		{"limit overflows", 200, ResetAuto,
			map[string]string{"X-RateLimit-Limit": "99999999999999999999"}, want{true, 0, 0, 0, 0, 0, "X-RateLimit-Limit"}},
		{"retry-after garbage", 429, ResetAuto, map[string]string{"Retry-After": "tomorrow"}, want{false, 0, 0, 0, 0, 0, "Retry-After"}},
		{"retry-after overflows", 429, ResetAuto, map[string]string{"Retry-After": "9223372036854775807"}, want{false, 0, 0, 0, 0, 0, "Retry-After"}},
		{"IETF garbage", 200, ResetAuto,
			map[string]string{"RateLimit": "limit=ten,,;;=;remaining"}, want{true, 0, 0, 0, 0, 0, "RateLimit"}},
		{"IETF empty", 200, ResetAuto, map[string]string{"RateLimit": "", "RateLimit-Policy": ";;"}, want{true, 0, 0, 0, 0, 0, "RateLimit-Policy"}},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		a, err := Parse(c.status, h, at, c.unit)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := want{a.Allowed, a.Limit, a.Remaining, a.Reset, a.RetryAfter, a.Known, ""}
		w := c.want
		w.malformed = ""
		if got != w {
			t.Errorf("%s: got %+v, want %+v", c.name, got, w)
		}
		switch {
		case c.want.malformed == "" && a.Malformed != "":
			t.Errorf("%s: malformed %q", c.name, a.Malformed)
		case !strings.Contains(a.Malformed, c.want.malformed) || c.want.malformed != "" && a.Malformed == "":
			t.Errorf("%s: malformed %q, want it to name %q", c.name, a.Malformed, c.want.malformed)
		}
	}
}

// Only 2xx and 429 are decisions; every other status is an error that
// names it.
func TestParseStatuses(t *testing.T) {
	for _, status := range []int{0, 100, 301, 400, 404, 500, 503} {
		if _, err := Parse(status, http.Header{}, time.Now(), ResetAuto); err == nil || !strings.Contains(err.Error(), "status") {
			t.Errorf("status %d: %v", status, err)
		}
	}
}

// Arbitrary header values never panic the parser.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"10", "limit=1, remaining=2, reset=3", `"a";r=1;t=2`, "Fri, 02 Jan 2026 03:04:08 GMT", "1e9", "-0", ";;=,"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, v string, unit uint8) {
		h := http.Header{}
		for _, name := range []string{HeaderLimit, HeaderRemaining, HeaderReset, HeaderRetryAfter, HeaderRateLimit, HeaderPolicy, HeaderIETFLimit, HeaderIETFRemain, HeaderIETFResetIn} {
			h.Set(name, v)
		}
		Parse(429, h, time.Now(), ResetUnit(unit%5))
	})
}

// A Reset written in decimal seconds or milliseconds is read as exactly
// the µs it names: a binary fraction never adds one, which would make an
// honest Reset look a µs past the idle time.
func TestParseReadsDecimalsExactly(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for ms := int64(0); ms < 100_000; ms += 7 {
		for _, c := range []struct {
			text string
			unit ResetUnit
		}{{fmt.Sprintf("%d.%03d", ms/1000, ms%1000), ResetSeconds}, {fmt.Sprint(ms), ResetMillis}} {
			a, err := Parse(200, http.Header{"X-Ratelimit-Reset": {c.text}}, at, c.unit)
			if err != nil || a.Reset != ms*1000 || !a.Known.Has(record.FieldReset) || !a.Delta.Has(record.FieldReset) {
				t.Fatalf("%q read as %d µs (%v), want %d", c.text, a.Reset, err, ms*1000)
			}
		}
	}
}

// An instant the server names (an epoch Reset, an HTTP-date Retry-After)
// is read against the answer's own Date, so that a client whose clock is
// off reads the wait the server meant; a delay is marked as one.
func TestParseReadsInstantsAgainstTheServersDate(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clientAhead := date.Add(10 * time.Second)
	h := http.Header{"Date": {date.Format(http.TimeFormat)}, "X-Ratelimit-Reset": {fmt.Sprint(date.Unix() + 3)},
		"Retry-After": {date.Add(2 * time.Second).Format(http.TimeFormat)}}
	a, err := Parse(429, h, clientAhead, ResetAuto)
	if err != nil || a.Reset != 3*algos.Second || a.RetryAfter != 2*algos.Second || a.Delta != 0 {
		t.Errorf("read Reset %d, Retry-After %d, Delta %v (%v), want 3 s and 2 s from the Date, neither a delay", a.Reset, a.RetryAfter, a.Delta, err)
	}
	h = http.Header{"X-Ratelimit-Reset": {"3"}, "Retry-After": {"2"}}
	if a, _ := Parse(429, h, clientAhead, ResetAuto); a.Delta != record.FieldReset|record.FieldRetryAfter {
		t.Errorf("delays read with Delta %v", a.Delta)
	}
}
