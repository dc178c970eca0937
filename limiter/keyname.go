package limiter

import (
	"strconv"
	"strings"
	"sync"
)

// KeyPrefix starts the name of every key (KeyName): key 7 is "overshoot:7".
const KeyPrefix = "overshoot:"

// KeyNameShared is how many leading bytes, at least, the names of two keys
// at or above 1024 that are equal modulo 1024 have in common (KeyName): a
// store key cut to its first 16, 32, 64 or even 250 bytes (a fixed-size key
// buffer, memcached's limit, string.sub in a script) folds them into one.
const KeyNameShared = 256

// KeyName is the string a key number is stored under by a limiter that
// names its keys (adapters/redislib hands it to the library as the Redis
// key). It is deterministic, distinct for distinct keys, and valid UTF-8.
//
// A key below 1024 (a negative one too) is KeyPrefix and its decimal
// number, "overshoot:7", as it always was, so every run on such keys stores
// the same names it did before KeyName existed.
//
// A key k at or above 1024 is named in the family of k%1024, the key below
// 1024 it falls on in a table of 1024 (or 65536) slots, so that the
// string keys of the isolation checks (scenarios' collidingKey, properties'
// KeysIsolated: i, i+1024 and i+65536) collide in the ways string keys
// collide in the libraries that store them. Its name is KeyPrefix, k%1024
// in decimal, then only non-ASCII text:
//
//   - a pad of é, 鍵 and 🔑 (2-, 3- and 4-byte UTF-8) up to at least
//     KeyNameShared bytes, the same for the whole family: so the names of
//     two keys of one family share their first KeyNameShared bytes (a
//     truncated key folds them) and are over 256 bytes long (a key-length
//     limit or a fixed-size buffer meets them);
//   - k/1024 in 9 base-64 digits, each a Cyrillic letter U+0400-U+043F
//     (2 bytes): the names of one family have one length in bytes and in
//     runes and differ in non-ASCII bytes only, so a library that drops,
//     replaces or mangles such bytes (a sanitizer, a Latin-1 or 3-byte
//     "utf8" column, a byte-to-rune slip) folds them, and one that drops
//     them folds each onto its family's key below 1024 ("overshoot:7");
//   - three more letters of that range, chosen (from a table computed once)
//     so that the name's CRC16 (XMODEM, the checksum Redis Cluster hashes a
//     key by) equals that of the family's key below 1024: every name of a
//     family falls in one Redis Cluster slot (CRC16 mod 16384; no name
//     holds a '{', so no hash tag applies) and in one slot of any table of
//     up to 65536 slots indexed by CRC16's low bits.
func KeyName(key int) string {
	if key < keyFamilies {
		return KeyPrefix + strconv.Itoa(key)
	}
	short := KeyPrefix + strconv.Itoa(key%keyFamilies)
	var b strings.Builder
	b.Grow(KeyNameShared + len(keyPad) + 2*(keyDigits+3))
	b.WriteString(short)
	for b.Len() < KeyNameShared {
		b.WriteString(keyPad)
	}
	q := uint64(key / keyFamilies) // below 2^53: 9 base-64 digits hold it
	for i := keyDigits - 1; i >= 0; i-- {
		writeLetter(&b, byte(q>>(6*i))&63)
	}
	// CRC16 is linear over the bytes (no initial value, no final xor):
	// crc(body‖fix) = crc(body‖0⁶) ^ crc(fix), so the fix whose own CRC
	// is crc(short) ^ crc(body‖0⁶) brings the name's CRC to crc(short).
	fix := keyFixes()[crc16Update(0, short)^crc16Update(crc16Update(0, b.String()), "\x00\x00\x00\x00\x00\x00")]
	for _, d := range fix {
		writeLetter(&b, d)
	}
	return b.String()
}

const (
	// keyFamilies is the table size the names fold onto: keys equal modulo
	// it share a family (and 65536, a multiple, folds them too).
	keyFamilies = 1024
	// keyPad is the non-ASCII pad: é, 鍵 (key) and 🔑, one of each UTF-8 length past one byte.
	keyPad = "é鍵🔑"
	// keyDigits base-64 digits hold any int/1024 (below 2^53).
	keyDigits = 9
)

// writeLetter writes d (0-63) as the 2-byte letter U+0400+d: 0xD0, 0x80|d.
func writeLetter(b *strings.Builder, d byte) {
	b.WriteByte(0xD0)
	b.WriteByte(0x80 | d)
}

// crc16Table is CRC16-XMODEM's (polynomial 0x1021) per-byte table.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16Update continues CRC16-XMODEM's register crc over s (start at 0):
// Redis Cluster's key hash, before its mod 16384.
func crc16Update[S string | []byte](crc uint16, s S) uint16 {
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// keyFixes is, for every CRC16 value, three letters (as KeyName writes
// them: 6 bytes) whose CRC16 it is: the first found in counting order over
// the 64³ triples, which reach all 65536 values (checked by the tests), so
// the table is the same on every run. It is built on first use (a few ms).
var keyFixes = sync.OnceValue(func() *[1 << 16][3]byte {
	var fixes [1 << 16][3]byte
	var seen [1 << 16]bool
	buf := make([]byte, 0, 6)
	for n := range 64 * 64 * 64 {
		d := [3]byte{byte(n >> 12), byte(n >> 6 & 63), byte(n & 63)}
		buf = append(buf[:0], 0xD0, 0x80|d[0], 0xD0, 0x80|d[1], 0xD0, 0x80|d[2])
		if c := crc16Update(0, buf); !seen[c] {
			seen[c], fixes[c] = true, d
		}
	}
	return &fixes
})
