package traffic

import (
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/record"
)

func TestParseDecimal(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		v     int64
		exact bool
		st    numStatus
	}{
		{"1700000000.000001", 6, 1_700_000_000_000_001, true, numOK},
		{"1700000000.0000015", 6, 1_700_000_000_000_002, false, numOK},
		{"1700000000.00000149", 6, 1_700_000_000_000_001, false, numOK},
		{"0.0000005", 6, 1, false, numOK},
		{"0.00000049999999999999", 6, 0, false, numOK},
		{"5e-7", 6, 1, false, numOK},
		{"1e-300", 6, 0, false, numOK},
		{"0e999999999999", 6, 0, true, numOK},
		{"1e999999999999", 6, 0, false, numTooLarge},
		{"000000000000000000000000001.5", 0, 2, false, numOK},
		{".5", 6, 500_000, true, numOK},
		{"5.", 6, 5_000_000, true, numOK},
		{"2.000", 0, 2, true, numOK},
		{"1.7E+9", 6, 1_700_000_000_000_000, true, numOK},
		{"9223372036854.775807", 6, 1<<63 - 1, true, numOK},
		{"9223372036854.775808", 6, 0, false, numTooLarge},
		{"99999999999999999999", 0, 0, false, numTooLarge},
		{"-0", 6, 0, false, numNegative},
		{"-1e3", 6, 0, false, numNegative},
		{"-x", 6, 0, false, numSyntax},
		{"", 6, 0, false, numSyntax},
		{".", 6, 0, false, numSyntax},
		{"1e", 6, 0, false, numSyntax},
		{"1e+", 6, 0, false, numSyntax},
		{"1.2.3", 6, 0, false, numSyntax},
		{"+1", 6, 0, false, numSyntax},
		{"0x10", 6, 0, false, numSyntax},
		{"NaN", 6, 0, false, numSyntax},
		{"Inf", 6, 0, false, numSyntax},
		{"1 ", 6, 0, false, numSyntax},
	} {
		v, exact, st := parseDecimal(c.in, c.scale, 1<<63-1)
		if v != c.v || exact != c.exact || st != c.st {
			t.Errorf("parseDecimal(%q, %d) = %d, %v, %d; want %d, %v, %d", c.in, c.scale, v, exact, st, c.v, c.exact, c.st)
		}
	}
}

// parseDecimal agrees with exact rational arithmetic, rounding half up, on
// random decimals around the µs: digits either side of the point and an
// exponent that moves it.
func TestParseDecimalAgreesWithBigRat(t *testing.T) {
	s := record.NewStream(1, 2)
	million := big.NewRat(1_000_000, 1)
	half := big.NewRat(1, 2)
	for range 20_000 {
		var b strings.Builder
		for range s.Below(12) {
			b.WriteByte(byte('0' + s.Below(10)))
		}
		if s.Below(4) > 0 {
			b.WriteByte('.')
			for range s.Below(12) {
				b.WriteByte(byte('0' + s.Below(10)))
			}
		}
		if s.Below(3) == 0 {
			b.WriteString("e" + strconv.Itoa(int(s.Below(21))-10))
		}
		in := b.String()
		got, exact, st := parseDecimal(in, 6, MaxTime)
		r, ok := new(big.Rat).SetString(in)
		if !ok {
			if st != numSyntax {
				t.Fatalf("%q: big.Rat refuses it, parseDecimal says %d", in, st)
			}
			continue
		}
		r.Mul(r, million)
		want := new(big.Int).Quo(new(big.Rat).Add(r, half).Num(), new(big.Rat).Add(r, half).Denom())
		switch {
		case want.Cmp(big.NewInt(MaxTime)) > 0:
			if st != numTooLarge {
				t.Fatalf("%q: %v µs is past MaxTime, parseDecimal says %d, %d", in, want, got, st)
			}
		case st != numOK || got != want.Int64() || exact != r.IsInt():
			t.Fatalf("%q: parseDecimal = %d, exact %v, status %d; want %v, exact %v", in, got, exact, st, want, r.IsInt())
		}
	}
}

func TestAppendSecondsReadsBack(t *testing.T) {
	for _, c := range []struct {
		us   int64
		want string
	}{
		{0, "0"}, {1, "0.000001"}, {12_000, "0.012"}, {3_000_000, "3"},
		{1_700_000_000_000_001, "1700000000.000001"}, {1_700_000_000_100_000, "1700000000.1"},
		{MaxTime, "253402300800"},
	} {
		if got := string(appendSeconds(nil, c.us)); got != c.want {
			t.Errorf("appendSeconds(%d) = %q, want %q", c.us, got, c.want)
		}
	}
	s := record.NewStream(3, 4)
	for range 100_000 {
		us := int64(s.Below(uint64(MaxTime) + 1))
		if v, exact, st := parseDecimal(string(appendSeconds(nil, us)), 6, MaxTime); v != us || !exact || st != numOK {
			t.Fatalf("%d µs reads back as %d (%v, %d)", us, v, exact, st)
		}
	}
}
