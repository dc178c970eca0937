package algos_test

import (
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

func TestNewLimitRejects(t *testing.T) {
	for _, tc := range []struct {
		name                string
		rate, window, burst int64
		want                string // a piece of the error message
	}{
		{"zero rate", 0, algos.Second, 1, "rate must be positive, got 0"},
		{"negative rate", -3, algos.Second, 1, "rate must be positive, got -3"},
		{"zero window", 1, 0, 1, "window must be a positive number of µs, got 0"},
		{"negative window", 1, -algos.Second, 1, "window must be a positive number of µs, got -1000000"},
		{"zero burst", 1, algos.Second, 0, "burst must be positive, got 0"},
		{"negative burst", 1, algos.Second, -1, "burst must be positive, got -1"},
		{"window past MaxTime", 1, algos.MaxTime + 1, 1, "longer than 100 years"},
		{"rate × window = 2^52", 1 << 26, 1 << 26, 1, "rate × window must stay below 2^52"},
		{"rate × window past 2^63", 1 << 40, 1 << 40, 1, "rate × window must stay below 2^52"},
		{"burst × unit = 2^52", 1, 1 << 26, 1 << 26, "burst × window/gcd(rate, window) must stay below 2^52"},
		{"burst × unit past 2^63", 1, algos.Second, 1 << 50, "burst × window/gcd(rate, window) must stay below 2^52"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := algos.NewLimit(tc.rate, tc.window, tc.burst)
			if err == nil {
				t.Fatalf("NewLimit(%d, %d, %d) = %v, want an error", tc.rate, tc.window, tc.burst, l)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewLimit(%d, %d, %d): error %q, want it to say %q", tc.rate, tc.window, tc.burst, err, tc.want)
			}
			if l != (algos.Limit{}) {
				t.Errorf("NewLimit returned %+v alongside an error, want the zero Limit", l)
			}
		})
	}
}

func TestNewLimitAccepts(t *testing.T) {
	for _, tc := range []struct {
		name                string
		rate, window, burst int64
		unit, refill        int64
	}{
		{"100 per second", 100, algos.Second, 100, 10_000, 1},
		{"10^9 per second", 1_000_000_000, algos.Second, 1_000_000_000, 1, 1000},
		{"3 per 10 µs", 3, 10, 3, 10, 3},
		{"1 per century", 1, algos.MaxTime, 1, algos.MaxTime, 1},
		{"rate × window just below 2^52", 1<<26 - 1, 1 << 26, 1, 1 << 26, 1<<26 - 1},
		{"burst × unit just below 2^52", 1, 1 << 26, 1<<26 - 1, 1 << 26, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := algos.NewLimit(tc.rate, tc.window, tc.burst)
			if err != nil {
				t.Fatal(err)
			}
			if l.Unit != tc.unit || l.Refill != tc.refill {
				t.Errorf("%v: Unit %d, Refill %d; want %d, %d", l, l.Unit, l.Refill, tc.unit, tc.refill)
			}
			if err := l.Validate(); err != nil {
				t.Errorf("Validate on a NewLimit result: %v", err)
			}
		})
	}
}

func TestPerSecondAndMustLimit(t *testing.T) {
	l, err := algos.PerSecond(100)
	if err != nil {
		t.Fatal(err)
	}
	if want := algos.MustLimit(100, algos.Second, 100); l != want {
		t.Errorf("PerSecond(100) = %+v, want %+v", l, want)
	}
	if got, want := l.String(), "100 per 1s (burst 100)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustLimit(0, 1, 1) did not panic")
		}
	}()
	algos.MustLimit(0, 1, 1)
}

func TestValidateRejectsHandMadeLimits(t *testing.T) {
	if err := (algos.Limit{}).Validate(); err == nil {
		t.Error("the zero Limit validated")
	}
	l := algos.MustLimit(100, algos.Second, 100)
	l.Burst = 50 // derived fields still match, and it is still a valid limit
	if err := l.Validate(); err != nil {
		t.Errorf("a changed burst with matching derived fields: %v", err)
	}
	l.Unit = 1
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "build limits with NewLimit") {
		t.Errorf("wrong Unit: got %v, want the NewLimit hint", err)
	}
}

func TestFormatMicros(t *testing.T) {
	for us, want := range map[int64]string{0: "0µs", 7: "7µs", 3000: "3ms", algos.Second: "1s", 1500: "1500µs"} {
		if got := algos.FormatMicros(us); got != want {
			t.Errorf("FormatMicros(%d) = %q, want %q", us, got, want)
		}
	}
	if got, want := algos.FormatTime(-1_500_000), "-1.500000s"; got != want {
		t.Errorf("FormatTime(-1.5 s) = %q, want %q", got, want)
	}
}
