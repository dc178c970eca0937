package algos_test

import (
	"encoding/binary"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
)

// below53 is where a double stops counting every integer; the Lua twins
// store what Go stores, so every stored value stays below it.
const below53 = int64(1) << 53

// FuzzDecide drives one key of each algorithm with a limit built from raw
// numbers and a sequence of times that jumps forwards, backwards, stays put
// or lands anywhere in [0, MaxTime]. Invalid limits must come back as
// errors; valid ones must never panic, never report a negative remaining,
// retry-after or reset, always give a positive retry-after with a denial
// (and none with an admit), and keep every stored value below 2^53.
func FuzzDecide(f *testing.F) {
	ops := func(words ...uint64) []byte {
		var b []byte
		for _, w := range words {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		return b
	}
	// op low 2 bits: 0 same µs, 1 forward, 2 backward, 3 anywhere.
	flood := ops(0, 0, 0, 0, 0)
	jumpy := ops(1|10<<2, 2|10<<2, 1|10<<2, 0, 3|1<<40, 2|1<<62, 1|uint64(algos.Second)<<2)
	for which := range uint8(6) {
		f.Add(which, int64(2), int64(10), int64(2), int64(100), flood)
		f.Add(which, int64(2), int64(10), int64(2), int64(0), jumpy)
		f.Add(which, int64(100), algos.Second, int64(100), algos.MaxTime, jumpy)
		f.Add(which, int64(1_000_000_000), algos.Second, int64(1_000_000_000), algos.MaxTime/2, jumpy)
		f.Add(which, int64(1), algos.MaxTime, int64(1), int64(0), ops(3, ^uint64(0), ^uint64(0)-1, ^uint64(0)-2))
		f.Add(which, int64(3), int64(10), int64(1<<40), int64(7), ops(1, 1, 2, 2, 0, 1|1<<55))
		f.Add(which, int64(0), int64(-1), int64(-1<<63), int64(-5), flood)
	}
	f.Fuzz(func(t *testing.T, which uint8, rate, window, burst, start int64, ops []byte) {
		all := algos.All()
		algo := all[int(which)%len(all)]
		l, err := algos.NewLimit(rate, window, burst)
		if err != nil {
			// Invalid as given (that it errs instead of panicking is the
			// check); fold the numbers into range and try that limit.
			l, err = algos.NewLimit(fold(rate, 1<<32), fold(window, algos.MaxTime), fold(burst, 1<<32))
			if err != nil {
				return
			}
		}
		now := fold(start, algos.MaxTime+1) - 1
		var s algos.State
		for i := 0; len(ops) >= 8 && i < 2000; i++ {
			op := binary.LittleEndian.Uint64(ops)
			ops = ops[8:]
			now = nextTime(now, op)
			d := algo.Decide(&s, now, l)
			checkDecision(t, algo, l, now, d, &s)
		}
	})
}

// fold maps any int64 into [1, n].
func fold(v, n int64) int64 { return int64(uint64(v)%uint64(n)) + 1 }

// nextTime applies one fuzzed op to now, staying within [0, MaxTime].
func nextTime(now int64, op uint64) int64 {
	arg := int64(op >> 2 % uint64(algos.MaxTime+1))
	switch op & 3 {
	case 1:
		return min(algos.MaxTime, now+arg)
	case 2:
		return max(0, now-arg)
	case 3:
		return arg
	}
	return now
}

func checkDecision(t *testing.T, algo algos.Algorithm, l algos.Limit, now int64, d algos.Decision, s *algos.State) {
	t.Helper()
	switch {
	case d.Remaining < 0 || d.RetryAfter < 0 || d.Reset < 0:
		t.Fatalf("%s %v at %d: negative field in %+v", algo.Name, l, now, d)
	case d.Allowed && d.RetryAfter != 0:
		t.Fatalf("%s %v at %d: admitted with a retry-after: %+v", algo.Name, l, now, d)
	case !d.Allowed && d.RetryAfter == 0:
		t.Fatalf("%s %v at %d: denied without a retry-after: %+v", algo.Name, l, now, d)
	case d.RetryAfter >= below53 || d.Reset >= below53:
		t.Fatalf("%s %v at %d: wait beyond 2^53 µs: %+v", algo.Name, l, now, d)
	}
	// Stored always lists the three Ints; those past StateInts must be 0.
	stored := s.Stored()
	for i := algo.StateInts(l); i < int64(len(stored)); i++ {
		if stored[i] != 0 {
			t.Fatalf("%s %v at %d: stores %v, StateInts says at most %d integers", algo.Name, l, now, stored, algo.StateInts(l))
		}
	}
	for _, v := range stored {
		if v >= below53 || v <= -below53 {
			t.Fatalf("%s %v at %d: stored %d, beyond 2^53 (state %v)", algo.Name, l, now, v, stored)
		}
	}
}
