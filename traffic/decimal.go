package traffic

import "strconv"

// Numbers in the files are decimal seconds (timestamp, duration) or whole
// units (cost). They are parsed here from their digits, never through a
// float64: 1700000000.000001 has 16 significant digits, one more than a
// double holds, and a µs lost to rounding moves a request across a window
// edge.

// numStatus is why a number did not parse.
type numStatus uint8

const (
	numOK       numStatus = iota
	numSyntax             // not a decimal number
	numNegative           // a well-formed number with a minus sign
	numTooLarge           // beyond the limit
)

// maxExp is where an exponent saturates: far beyond any line's digits, so
// a saturated exponent still makes the value 0 or too large, as it should.
const maxExp = 1 << 30

// parseDecimal reads s, a decimal number (digits with at most one point,
// at least one digit, then an optional exponent e or E with an optional
// sign; the grammar of a JSON number, with leading zeros and a bare point
// side also accepted), as a count of 10^-scale units: scale 6 turns seconds
// into µs. Digits past the last unit are rounded half up (on the decimal
// digits, exactly), and exact says whether any nonzero digit was dropped.
// A minus sign is numNegative even for zero: no time, cost or duration here
// is signed. It allocates nothing.
func parseDecimal(s string, scale int, limit int64) (v int64, exact bool, st numStatus) {
	if v, ok := plainDecimal(s, scale, limit); ok {
		return v, true, numOK
	}
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intEnd, fracStart, fracEnd := i, i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracEnd = i
	}
	nInt, nFrac := intEnd-intStart, fracEnd-fracStart
	if nInt+nFrac == 0 {
		return 0, false, numSyntax
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg, i = s[i] == '-', i+1
		}
		if i == len(s) || !isDigit(s[i]) {
			return 0, false, numSyntax
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp < maxExp {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false, numSyntax
	}
	if neg {
		return 0, false, numNegative
	}

	// The digits are s[intStart:intEnd] then s[fracStart:fracEnd]; digit(j)
	// reads the j-th without copying them.
	n := nInt + nFrac
	digit := func(j int) byte {
		if j < nInt {
			return s[intStart+j]
		}
		return s[fracStart+j-nInt]
	}
	lead := 0
	for lead < n && digit(lead) == '0' {
		lead++
	}
	if lead == n {
		return 0, true, numOK
	}
	// k is how many of the significant digits, from digit(lead) on, are in
	// the integer count of units; digit(lead) is not 0, so k > 19 overflows.
	k := nInt + exp + scale - lead
	if k > 19 {
		return 0, false, numTooLarge
	}
	var u uint64
	for j := 0; j < k; j++ {
		d := uint64(0)
		if lead+j < n {
			d = uint64(digit(lead+j) - '0')
		}
		u = u*10 + d // at most 19 digits: below 10^19 < 2^64
	}
	exact = true
	if k < 0 {
		exact = false // every significant digit is dropped; the first dropped is a 0
	} else if lead+k < n {
		if digit(lead+k) >= '5' {
			u++
		}
		for j := lead + k; j < n; j++ {
			if digit(j) != '0' {
				exact = false
				break
			}
		}
	}
	if u > uint64(limit) {
		return 0, false, numTooLarge
	}
	return int64(u), exact, numOK
}

// plainDecimal is parseDecimal's fast path, for what the writers write and
// most files hold: digits, then at most scale decimals, no exponent, at
// most 18 digits in all after scaling, within limit. ok is false for
// anything else, which the general path then reads.
func plainDecimal(s string, scale int, limit int64) (int64, bool) {
	i, u := 0, uint64(0)
	for i < len(s) && isDigit(s[i]) {
		u = u*10 + uint64(s[i]-'0')
		i++
	}
	whole, frac := i, 0
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) && frac < scale {
			u = u*10 + uint64(s[i]-'0')
			i, frac = i+1, frac+1
		}
	}
	if i != len(s) || whole+frac == 0 || whole+scale > 18 {
		return 0, false
	}
	for ; frac < scale; frac++ {
		u *= 10
	}
	if u > uint64(limit) {
		return 0, false
	}
	return int64(u), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// appendSeconds appends us (≥ 0) as decimal seconds, exactly and as short
// as possible: 1700000000000001 is "1700000000.000001", 12000 is "0.012",
// 3000000 is "3". parseDecimal(…, 6, …) reads it back to the same µs.
func appendSeconds(dst []byte, us int64) []byte {
	dst = strconv.AppendInt(dst, us/perSecond, 10)
	frac := us % perSecond
	if frac == 0 {
		return dst
	}
	var buf [7]byte
	buf[0] = '.'
	for i := 6; i >= 1; i-- {
		buf[i] = byte('0' + frac%10)
		frac /= 10
	}
	end := 7
	for buf[end-1] == '0' {
		end--
	}
	return append(dst, buf[:end]...)
}
