package arith

import "math/bits"

// MaxExact bounds every stored or intermediate magnitude of a decision, so
// that a Lua script, whose numbers are doubles, computes exactly what Go
// computes (2^53 is the first integer a double cannot follow; one bit is
// kept spare).
const MaxExact int64 = 1 << 52

// CeilDiv is ⌈a/b⌉ for a ≥ 0, b > 0. Dividing by 1 is skipped: a limit
// whose window is a multiple of its rate (the usual case) refills one scaled
// token per µs, and a division is the largest cost of a decision.
func CeilDiv(a, b int64) int64 {
	if b == 1 {
		return a
	}
	return (a + b - 1) / b
}

// Covers reports elapsed·rate >= amount for positive elapsed and rate, that
// is elapsed >= ⌈amount/rate⌉, exactly and without a division (the hot
// path's cost): the product is taken in 128 bits, so it cannot overflow.
func Covers(elapsed, rate, amount int64) bool {
	hi, lo := bits.Mul64(uint64(elapsed), uint64(rate))
	return hi != 0 || lo >= uint64(amount)
}

// Refill adds elapsed µs worth of tokens (rate a µs) to level, capped at
// capacity; an elapsed time of zero or less adds nothing. The cap is applied
// to the elapsed time first so that a century idle cannot overflow.
func Refill(level, elapsed, capacity, rate int64) int64 {
	room := capacity - level
	if elapsed <= 0 || room <= 0 {
		return level
	}
	if Covers(elapsed, rate, room) {
		return capacity
	}
	return level + elapsed*rate
}

// Drain removes elapsed µs worth of level (rate a µs), never below zero.
func Drain(level, elapsed, rate int64) int64 {
	if elapsed <= 0 {
		return level
	}
	if Covers(elapsed, rate, level) {
		return 0
	}
	return level - elapsed*rate
}

// GCRAReset is ⌈TAT - now⌉ for a TAT of tat µs and a fraction frac (> 0
// when a part of a µs is left over): the wait until TAT is in the past.
func GCRAReset(tat, frac, now int64) int64 {
	if tat < now {
		return 0
	}
	reset := tat - now
	if frac > 0 {
		reset++
	}
	return reset
}

// InsertSorted inserts t into the sorted live part log[head:] of a sliding
// log, reusing the dead prefix log[:head] when the buffer is full, and
// returns the log and its head.
func InsertSorted(log []int64, head int, t int64) ([]int64, int) {
	if len(log) == cap(log) && head > 0 && head >= len(log)/2 {
		n := copy(log, log[head:])
		log, head = log[:n], 0
	}
	log = append(log, t)
	i := len(log) - 1
	for i > head && log[i-1] > t {
		log[i] = log[i-1]
		i--
	}
	log[i] = t
	return log, head
}
