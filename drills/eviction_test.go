package drills_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// evictionLimit: 10 a minute with a burst of 10. A drained key gets one
// request back every 6 s, so over the drill's seconds the limit allows a
// drained key nothing more, or one.
var evictionLimit = algos.MustLimit(10, 60*algos.Second, 10)

const (
	evictionMaxMemory = 4 << 20 // the store's maxmemory, in bytes
	evictionValue     = 1 << 10 // one cache value, in bytes
	// evictionFill is how many times maxmemory the fill writes: enough to
	// push out everything the policy lets go, several times over.
	evictionFill = 3
	// evictionOOMs stops a fill that the store refuses this many times.
	evictionOOMs = 256
)

// evictionKeys is how many limiter keys each phase drains.
func evictionKeys() int {
	if *drillsFull {
		return 1000
	}
	return 100
}

// evictionPhase is what one policy did to the limiter's keys.
type evictionPhase struct {
	name, policy string
	fill         bool // the cache keys were written
	keys         int
	keyBytes     int64 // MEMORY USAGE of one drained limiter key
	baseMemory   int64 // used_memory of the empty store

	cacheSets, cacheOOM int    // cache writes accepted, refused with OOM
	firstOOM            string // the first refusal
	absentAfterFill     int    // limiter keys gone once the fill ended
	fresh               int    // keys whose first probe call found a full bucket
	kept                int    // keys whose first decided probe call refused: still drained
	extra               []int  // per key: the probe's admits beyond the limit
	probeErrs           int
	probeErr            string // the first probe error
	evictedKeys         int64  // INFO stats evicted_keys
	usedMemory          int64  // used_memory after the probe
}

func (p evictionPhase) totalExtra() (total, most int) {
	for _, e := range p.extra {
		total += e
		most = max(most, e)
	}
	return total, most
}

func (p evictionPhase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %s: %d limiter keys drained (%d of %d admitted each, %d B a key)", p.policy, p.name, p.keys, evictionLimit.Burst, evictionLimit.Burst+1, p.keyBytes)
	if p.fill {
		fmt.Fprintf(&b, "; then %d cache SETs of %d B without TTL accepted, %d refused", p.cacheSets, evictionValue, p.cacheOOM)
		if p.firstOOM != "" {
			fmt.Fprintf(&b, " (%q)", p.firstOOM)
		}
	}
	total, most := p.totalExtra()
	fmt.Fprintf(&b, "\n%13s limiter keys evicted by then: %d of %d (INFO evicted_keys %d, used_memory %d B)", "", p.absentAfterFill, p.keys, p.evictedKeys, p.usedMemory)
	fmt.Fprintf(&b, "\n%13s probe, %d calls a key: %d keys still drained, %d fresh buckets, %d admits beyond the limit (at most %d a key), %d errors",
		"", evictionLimit.Burst+1, p.kept, p.fresh, total, most, p.probeErrs)
	if p.probeErr != "" {
		fmt.Fprintf(&b, " (%q)", p.probeErr)
	}
	return b.String()
}

// A limiter whose keys share a store with a cache loses them to the
// cache's eviction, and each lost key that had spent its burst hands it
// out again. On a Redis with maxmemory 4 MB, 100 token-bucket keys
// (10 a minute, burst 10) are drained, 1 KiB cache values without a TTL are
// written to three times maxmemory, and each limiter key is then called 11
// times; the calls' admits are compared with what the same calls at the
// same Redis TIME get from the Go twin on a store that forgets nothing.
//
// Under allkeys-lru the fill evicts limiter keys (asserted: more than none;
// measured: 93 to 100 of the 100, the drained keys being among the least
// recently used), every key found gone admits a fresh burst (asserted: 9
// or 10 beyond the limit, the twin having refilled at most one; measured:
// 10 each), and every key that survived admits nothing beyond it. Under
// volatile-ttl the limiter's keys, which the scripts write with a TTL (PX),
// are the only ones the store may evict: the fill evicts every one of them
// (asserted) and is then refused with OOM, and no key is left drained
// (asserted): the limiter fails or forgets. Measured with 100 keys: every
// one of the 1,100 calls failed with OOM (the script's SET is a write), so
// what happens is the caller's fail-open or fail-closed policy. With 1,000
// keys (-drills.full) both have been seen: every call failed, or, memory
// hovering at the limit, some calls ran and the keys they wrote were
// evicted again by later writes (volatile-ttl takes the shortest TTL, a
// fresh key's): in one run 8,468 calls failed and 2,329 were admitted
// beyond the limit, up to 11 in 11 calls on one key. A store
// kept for the limiter alone, same maxmemory and allkeys-lru, evicts
// nothing, keeps every key drained and admits nothing beyond the limit
// (asserted); a drained key takes 104 B (MEMORY USAGE), so 4 MB holds some
// 31,000.
//
// Badge: evicted limiter keys
func TestFindingEvictionHandsOutFreshBursts(t *testing.T) {
	t.Parallel() // its own containers, judged on counts, not on how fast the machine is
	// On the host network (listening on 127.0.0.1 only), as every drill's
	// own server: no port to map, so a cheaper start and no userland proxy
	// between the drill and the store.
	ct := redistest.StartWith(t, redistest.Options{HostNetwork: true, Args: []string{"--maxmemory", fmt.Sprint(evictionMaxMemory)}})
	c := ct.Client(t)
	script := drillTokenBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()

	var phases []evictionPhase
	for _, ph := range []struct {
		name, policy string
		fill         bool
	}{
		{"shared with a cache", "allkeys-lru", true},
		{"shared with a cache", "volatile-ttl", true},
		{"dedicated", "allkeys-lru", false},
	} {
		p, err := evictionRun(ctx, c, script, ph.name, ph.policy, ph.fill)
		if err != nil {
			t.Fatalf("%s, %s: %v", ph.policy, ph.name, err)
		}
		phases = append(phases, p)
	}
	var lines []string
	for _, p := range phases {
		lines = append(lines, p.String())
	}
	t.Logf("eviction drill, %s, maxmemory %d B, limit %d per %s, burst %d, %v in all:\n%s",
		ct.Source, evictionMaxMemory, evictionLimit.Rate, algos.FormatMicros(evictionLimit.Window), evictionLimit.Burst,
		time.Since(start).Round(time.Millisecond), strings.Join(lines, "\n"))

	lru, ttl, dedicated := phases[0], phases[1], phases[2]
	b := int(evictionLimit.Burst)

	// allkeys-lru: keys evicted, each a fresh burst, the others untouched.
	if lru.absentAfterFill == 0 {
		t.Errorf("allkeys-lru: the fill evicted no limiter key")
	}
	if lru.cacheOOM != 0 || lru.probeErrs != 0 {
		t.Errorf("allkeys-lru: %d cache writes and %d limiter calls refused; want none", lru.cacheOOM, lru.probeErrs)
	}
	if lru.fresh < lru.absentAfterFill || lru.fresh+lru.kept != lru.keys {
		t.Errorf("allkeys-lru: %d keys were gone after the fill; the probe found %d fresh and %d still drained, of %d", lru.absentAfterFill, lru.fresh, lru.kept, lru.keys)
	}
	for k, e := range lru.extra {
		if e != 0 && e < b-1 || e > b {
			t.Errorf("allkeys-lru: key %d admitted %d beyond the limit; want 0 (kept) or %d-%d (a fresh burst)", k, e, b-1, b)
		}
	}
	if total, _ := lru.totalExtra(); total < lru.fresh*(b-1) {
		t.Errorf("allkeys-lru: %d fresh buckets admitted %d beyond the limit; want at least %d", lru.fresh, total, lru.fresh*(b-1))
	}

	// volatile-ttl: the limiter's keys are the only ones to go, and go all.
	if ttl.absentAfterFill != ttl.keys {
		t.Errorf("volatile-ttl: %d of %d limiter keys evicted; want every one (they alone carry a TTL)", ttl.absentAfterFill, ttl.keys)
	}
	if ttl.cacheOOM == 0 || !strings.HasPrefix(ttl.firstOOM, "OOM") {
		t.Errorf("volatile-ttl: the fill was never refused (%d refusals, first %q); want OOM once nothing volatile is left", ttl.cacheOOM, ttl.firstOOM)
	}
	if total, _ := ttl.totalExtra(); ttl.kept != 0 || ttl.probeErrs+total == 0 {
		t.Errorf("volatile-ttl: %d keys still drained; %d calls failed, %d admits beyond the limit: want none still drained, and failures or admits", ttl.kept, ttl.probeErrs, total)
	}

	// dedicated: nothing evicted, nothing beyond the limit.
	if total, _ := dedicated.totalExtra(); dedicated.absentAfterFill != 0 || dedicated.kept != dedicated.keys || total != 0 || dedicated.evictedKeys != 0 || dedicated.probeErrs != 0 {
		t.Errorf("dedicated: %d keys gone, %d of %d still drained, %d admits beyond the limit, evicted_keys %d, %d errors; want every key drained and the rest 0",
			dedicated.absentAfterFill, dedicated.kept, dedicated.keys, total, dedicated.evictedKeys, dedicated.probeErrs)
	}

	lruTotal, _ := lru.totalExtra()
	ttlTotal, _ := ttl.totalExtra()
	dedTotal, _ := dedicated.totalExtra()
	capacity := (evictionMaxMemory - dedicated.baseMemory) / max(dedicated.keyBytes, 1)
	t.Logf("measured: allkeys-lru evicted %d/%d drained keys, +%d admits; volatile-ttl evicted %d/%d then OOM (%d/%d calls failed, +%d); dedicated 0 evicted, +%d (room for ~%d keys)",
		lru.absentAfterFill, lru.keys, lruTotal, ttl.absentAfterFill, ttl.keys, ttl.probeErrs, ttl.keys*(b+1), ttlTotal, dedTotal, capacity)
}

// evictionRun empties the store, sets policy, drains evictionKeys keys,
// writes the cache if fill, and probes every key.
func evictionRun(ctx context.Context, c *redis.Client, script *lua.Script, name, policy string, fill bool) (evictionPhase, error) {
	p := evictionPhase{name: name, policy: policy, fill: fill, keys: evictionKeys()}
	if err := c.FlushAll(ctx).Err(); err != nil {
		return p, err
	}
	if err := c.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
		return p, err
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return p, err
	}
	var err error
	if p.baseMemory, err = drillInfoInt(ctx, c, "memory", "used_memory"); err != nil {
		return p, err
	}
	lim := evictionLimit
	keys := make([]string, p.keys)
	for k := range keys {
		keys[k] = fmt.Sprintf("overshoot:drill:eviction:lim:%d", k)
	}

	// Drain: burst+1 calls a key, in one pipeline, by Redis TIME. The twin
	// decides the same calls at the same times.
	var calls []lua.Args
	for _, key := range keys {
		for range lim.Burst + 1 {
			calls = append(calls, lua.Args{Key: key, Limit: lim, Told: -1})
		}
	}
	replies, err := script.DoAll(ctx, c, calls)
	if err != nil {
		return p, fmt.Errorf("drain: %w", err)
	}
	twins := make([]algos.State, p.keys)
	for i, r := range replies {
		k := i / int(lim.Burst+1)
		want := algos.TokenBucket.Decide(&twins[k], r.RedisTime, lim)
		if want.Allowed != r.Decision.Allowed {
			return p, fmt.Errorf("drain: call %d of %s: Redis says allowed=%v, the twin %v", i%int(lim.Burst+1), keys[k], r.Decision.Allowed, want.Allowed)
		}
	}
	if p.keyBytes, err = c.MemoryUsage(ctx, keys[0]).Result(); err != nil {
		return p, err
	}

	if fill {
		if err := evictionFillCache(ctx, c, &p); err != nil {
			return p, fmt.Errorf("fill: %w", err)
		}
	}

	// Which limiter keys are gone (EXISTS does not touch a key's LRU clock).
	pipe := c.Pipeline()
	exists := make([]*redis.IntCmd, p.keys)
	for k, key := range keys {
		exists[k] = pipe.Exists(ctx, key)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return p, err
	}
	for _, e := range exists {
		if e.Val() == 0 {
			p.absentAfterFill++
		}
	}

	// Probe: burst+1 calls a key, one at a time, each checked against the
	// twin. The first call decided tells the key's state: refused, it is
	// still drained; admitted with burst-1 remaining, the store had lost
	// it (a drained key keeps 0 remaining, even with a request refilled).
	p.extra = make([]int, p.keys)
	for k, key := range keys {
		decided := false
		for range lim.Burst + 1 {
			r, err := script.Call(ctx, c, key, lim, -1)
			if err != nil {
				if ctx.Err() != nil {
					return p, err
				}
				p.probeErrs++
				if p.probeErr == "" {
					p.probeErr = evictionErrText(err)
				}
				continue
			}
			if !decided {
				decided = true
				switch {
				case !r.Decision.Allowed:
					p.kept++
				case r.Decision.Remaining == lim.Burst-1:
					p.fresh++
				}
			}
			want := algos.TokenBucket.Decide(&twins[k], r.RedisTime, lim)
			if r.Decision.Allowed && !want.Allowed {
				p.extra[k]++
			} else if !r.Decision.Allowed && want.Allowed {
				p.extra[k]--
			}
		}
	}
	if p.evictedKeys, err = drillInfoInt(ctx, c, "stats", "evicted_keys"); err != nil {
		return p, err
	}
	if p.usedMemory, err = drillInfoInt(ctx, c, "memory", "used_memory"); err != nil {
		return p, err
	}
	return p, nil
}

// evictionFillCache writes evictionValue-byte values without a TTL until
// evictionFill times maxmemory has been written or the store has refused
// evictionOOMs writes.
func evictionFillCache(ctx context.Context, c *redis.Client, p *evictionPhase) error {
	value := strings.Repeat("c", evictionValue)
	const batch = 64
	for n := 0; n*evictionValue < evictionFill*evictionMaxMemory && p.cacheOOM < evictionOOMs; n += batch {
		pipe := c.Pipeline()
		sets := make([]*redis.StatusCmd, batch)
		for i := range sets {
			sets[i] = pipe.Set(ctx, fmt.Sprintf("overshoot:drill:eviction:cache:%d", n+i), value, 0)
		}
		_, err := pipe.Exec(ctx)
		if err != nil && ctx.Err() != nil {
			return err
		}
		for _, s := range sets {
			switch err := s.Err(); {
			case err == nil:
				p.cacheSets++
			case strings.HasPrefix(err.Error(), "OOM"):
				p.cacheOOM++
				if p.firstOOM == "" {
					p.firstOOM = evictionErrText(err)
				}
			default:
				return err
			}
		}
	}
	return nil
}

// evictionErrText is an error's text without the script's name and key.
func evictionErrText(err error) string {
	s := err.Error()
	if i := strings.Index(s, "OOM"); i >= 0 {
		s = s[i:]
	}
	return s
}
