package limiter

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// redisSlot is Redis Cluster's HASH_SLOT, written from its spec apart from
// KeyName's table-driven CRC: CRC16-XMODEM bit by bit of the key (or of a
// non-empty {hash tag}), mod 16384.
func redisSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16Bitwise(key) % 16384)
}

func crc16Bitwise(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// The test's CRC16 is Redis's: the standard check value, and the slots
// Redis documents (CLUSTER KEYSLOT, redis-cli's redirections).
func TestRedisSlotIsRedisOwn(t *testing.T) {
	if got := crc16Bitwise("123456789"); got != 0x31C3 {
		t.Errorf("CRC16-XMODEM(123456789) = %#04x; want 0x31c3", got)
	}
	for key, want := range map[string]int{"foo": 12182, "bar": 5061, "hello": 866, "somekey": 11058, "{user1000}.following": redisSlot("user1000")} {
		if got := redisSlot(key); got != want {
			t.Errorf("slot of %q = %d; want %d", key, got, want)
		}
	}
}

// familyKeys are keys at or above 1024 of the family of key i: the
// isolation checks' i+1024 and i+65536, and others up to the largest int.
func familyKeys(i int) []int {
	out := []int{i + 1024, i + 65536, i + 2*1024, i + 1023*1024, i + 1<<20}
	if top := math.MaxInt - math.MaxInt%1024 + i; top > 0 {
		out = append(out, top)
	}
	return out
}

// The names below 1024 are the ones redislib always stored.
func TestKeyNameOfALowKeyIsItsNumber(t *testing.T) {
	for k := -3; k < 1024; k++ {
		if got, want := KeyName(k), "overshoot:"+strconv.Itoa(k); got != want {
			t.Fatalf("KeyName(%d) = %q; want %q", k, got, want)
		}
	}
}

// Every name of a family (keys equal modulo 1024) collides with the
// others, and with the family's key below 1024, in each way KeyName's doc
// says, and is still valid UTF-8.
func TestKeyNameCollidesAsDocumented(t *testing.T) {
	for _, i := range []int{0, 1, 2, 3, 7, 8, 9, 99, 100, 511, 1000, 1023} {
		low := KeyName(i)
		var names []string
		for _, k := range familyKeys(i) {
			n := KeyName(k)
			names = append(names, n)
			if !utf8.ValidString(n) {
				t.Errorf("KeyName(%d) is not valid UTF-8: %q", k, n)
			}
			if !strings.HasPrefix(n, KeyPrefix) {
				t.Errorf("KeyName(%d) does not start with %q", k, KeyPrefix)
			}
			if len(n) <= 256 {
				t.Errorf("KeyName(%d) is %d bytes; want over 256", k, len(n))
			}
			if strings.ContainsAny(n, "{}") {
				t.Errorf("KeyName(%d) holds a brace: a hash tag would pick its slot", k)
			}
			if got, want := redisSlot(n), redisSlot(low); got != want {
				t.Errorf("KeyName(%d) is in Redis Cluster slot %d; key %d (%q) in %d", k, got, i, low, want)
			}
			if got, want := crc16Bitwise(n), crc16Bitwise(low); got != want {
				t.Errorf("KeyName(%d)'s CRC16 is %#04x; key %d's %#04x", k, got, i, want)
			}
			ascii, nonASCII := asciiOnly(n)
			if ascii != low {
				t.Errorf("KeyName(%d) without its non-ASCII bytes is %q; want key %d's name %q", k, ascii, i, low)
			}
			if nonASCII < 200 {
				t.Errorf("KeyName(%d) has %d non-ASCII bytes; want most of it", k, nonASCII)
			}
		}
		for a := range names {
			for b := a + 1; b < len(names); b++ {
				x, y := names[a], names[b]
				if x == y {
					t.Errorf("keys %d and %d share the name %q", familyKeys(i)[a], familyKeys(i)[b], x)
				}
				if p := commonPrefix(x, y); p < KeyNameShared {
					t.Errorf("keys %d and %d share their first %d bytes; want at least %d", familyKeys(i)[a], familyKeys(i)[b], p, KeyNameShared)
				}
				if len(x) != len(y) || utf8.RuneCountInString(x) != utf8.RuneCountInString(y) {
					t.Errorf("keys %d and %d: %d and %d bytes, %d and %d runes; want one length", familyKeys(i)[a], familyKeys(i)[b],
						len(x), len(y), utf8.RuneCountInString(x), utf8.RuneCountInString(y))
				}
				if masked(x) != masked(y) {
					t.Errorf("keys %d and %d differ in ASCII bytes; want in non-ASCII ones only", familyKeys(i)[a], familyKeys(i)[b])
				}
			}
		}
	}
}

// asciiOnly is s without its non-ASCII bytes, and how many it dropped.
func asciiOnly(s string) (string, int) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			b.WriteByte(s[i])
		}
	}
	return b.String(), len(s) - b.Len()
}

// masked is s with each non-ASCII rune replaced by '?', as a sanitizer
// does.
func masked(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= utf8.RuneSelf {
			return '?'
		}
		return r
	}, s)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// Distinct keys have distinct names: every key up to 70000 (the isolation
// checks' keys and all of their families up to i+65536), the largest ones,
// and negative ones.
func TestKeyNamesAreDistinct(t *testing.T) {
	seen := map[string]int{}
	add := func(k int) {
		n := KeyName(k)
		if other, ok := seen[n]; ok {
			t.Fatalf("keys %d and %d share the name %q", other, k, n)
		}
		seen[n] = k
	}
	for k := -100; k <= 70000; k++ {
		add(k)
	}
	for k := math.MaxInt - 5000; k > 0; k++ { // up to the largest int, then it wraps
		add(k)
	}
	if len(seen) != 70101+5001 {
		t.Errorf("named %d keys; want %d", len(seen), 70101+5001)
	}
}

// The names are the same on every call and every run: pinned here by
// their hash, so a change to them (which would move every stored name)
// is a decision, not an accident.
func TestKeyNameIsDeterministic(t *testing.T) {
	h := sha256.New()
	for _, k := range []int{0, 7, 1023, 1024, 1027, 65536, 65539, 1 << 40, math.MaxInt} {
		a, b := KeyName(k), KeyName(k)
		if a != b {
			t.Fatalf("KeyName(%d) gave %q, then %q", k, a, b)
		}
		fmt.Fprintf(h, "%d=%s\n", k, a)
	}
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "063dd673275b6606ee208f6f6917133d65a10832c9d9f0012ffbe9b3a24ceb7d"; got != want {
		t.Errorf("the names' hash is %s; want %s", got, want)
	}
}

// The fix table reaches every CRC16 value, so every family's slot can be
// matched, and each entry's CRC is its index.
func TestKeyFixesReachEveryCRC16(t *testing.T) {
	fixes := keyFixes()
	for c := range fixes {
		var b strings.Builder
		for _, d := range fixes[c] {
			writeLetter(&b, d)
		}
		if got := crc16Bitwise(b.String()); got != uint16(c) {
			t.Fatalf("the fix for CRC16 %#04x has CRC16 %#04x", c, got)
		}
	}
}

// KeyName costs about a µs past the first call's table: less than a
// round trip to any store.
func BenchmarkKeyName(b *testing.B) {
	KeyName(1024)
	for i := range b.N {
		_ = KeyName(1024 + i%70000)
	}
}
