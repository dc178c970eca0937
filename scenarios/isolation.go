package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// Keys must not share state: a key's answers may depend on its own
// requests and on time, never on which other keys are in use. A limiter
// that indexes a table by a key's number (a fixed array of buckets, a hash
// reduced modulo a power of two, a slot) can fold two keys into one state,
// and so can one that stores keys as strings and cuts them short (a
// fixed-size key buffer, string.sub in a script), mangles their non-ASCII
// bytes or hashes them into a few slots (Redis Cluster's CRC16): every other
// check, which judges each key alone, passes it. So the judge plays each
// run a second time with the clients' keys moved onto keys that fold
// together in such tables and stores (collidingKey), and holds every client
// to answering exactly as it did. The model's own store keeps one state per
// key, so a pure algorithm (limiter.FromAlgorithm) is isolated by
// construction and not played again.

// collidingKey is where the key of client k moves for the second run: the
// clients in threes, each three on i, i+1024 and i+65536, which fall in one
// slot of a table of 1024 entries (and the last two of one of 65536). A
// limiter that names its keys (limiter.KeyName, which adapters/redislib
// hands a library) sees i as its short name, "overshoot:i", and the two
// moved keys as names of over 256 bytes that both collide with it: each
// has i's CRC16, so all three share a Redis Cluster slot (CRC16 mod 16384)
// and a slot of any CRC16 table of up to 65536, and each is i's name
// followed by non-ASCII text only, so dropping non-ASCII bytes leaves i's
// name. The two moved names collide with each other too: they share their
// first limiter.KeyNameShared (256) bytes (a store key cut to 16, 32, 64 or
// 250 bytes folds them) and have one length, differing in non-ASCII bytes
// only (a sanitizer that replaces such bytes folds them).
func collidingKey(k int) int {
	return k - k%3 + [3]int{0, 1024, 65536}[k%3]
}

// isolation plays plain (a judged run's Config, without the judge's
// recorders; res is its run) again on the same requests with the limiter
// seeing every client's key moved by collidingKey (movedKeys), and gives
// each client whose answers changed a breach.KeysShareState finding at its first
// difference. The model's keys stay the clients' own, so the second run
// costs what the first did.
func (sc *runScratch) isolation(plain model.Config, res *model.Result, out *[traffic.NumClients]judge.Kinds) error {
	moved := plain
	inner := plain.Limiter
	moved.Limiter.New = func(l algos.Limit) (limiter.Limiter, error) {
		lim, err := inner.Open(l)
		if err != nil {
			return nil, err
		}
		return movedKeys{lim}, nil
	}
	var keys []string
	for c := range traffic.NumClients {
		keys = append(keys, fmt.Sprint(collidingKey(c)))
	}
	return sc.answeredAlike(plain, res, moved, playedAgain{
		kind: breach.KeysShareState,
		what: "the clients' keys moved",
		why: fmt.Sprintf("when the clients' keys moved from 0-%d to %s, which fall together in tables of 1024 and 65536 slots: its answers depend on other keys",
			traffic.NumClients-1, strings.Join(keys, ", ")),
		first: fmt.Sprintf("keys 0-%d", traffic.NumClients-1), second: "keys moved",
	}, out)
}

// movedKeys is a limiter that asks the one it wraps about a client's key
// moved by collidingKey (other keys as they are).
type movedKeys struct{ limiter.Limiter }

// Allow decides key's request as the wrapped limiter decides its moved key's.
func (m movedKeys) Allow(ctx context.Context, key int, now int64) (algos.Decision, error) {
	if key >= 0 && key < traffic.NumClients {
		key = collidingKey(key)
	}
	return m.Limiter.Allow(ctx, key, now)
}

// AllowInto is Allow, into *out (limiter.Into), by the wrapped limiter's
// AllowInto where it has one; a panic is the caller's to catch, as in Allow.
func (m movedKeys) AllowInto(ctx context.Context, key int, now int64, out *algos.Decision) error {
	if key >= 0 && key < traffic.NumClients {
		key = collidingKey(key)
	}
	if into, ok := m.Limiter.(limiter.Into); ok {
		return into.AllowInto(ctx, key, now, out)
	}
	d, err := m.Limiter.Allow(ctx, key, now)
	out.Allowed, out.Remaining, out.RetryAfter, out.Reset, out.Delay = d.Allowed, d.Remaining, d.RetryAfter, d.Reset, d.Delay
	return err
}

// Close closes the wrapped limiter.
func (m movedKeys) Close() error { return limiter.Close(m.Limiter) }
