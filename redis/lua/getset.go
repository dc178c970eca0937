package lua

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/redis/go-redis/v9"
)

// GetSet is the deployment bug (the model's GetSet deployment, live): read the key, decide in the node with the
// Go algorithm, write the new state back. Two nodes that read before either
// writes both decide on the same state, and one write is lost. It keeps the
// scripts' layout (a string "a:b:c" of the State's Ints, or the sliding log's sorted set), so its
// keys are interchangeable with theirs.
//
// The read and the write are each a MULTI with TIME (and INCR of the
// SeqKey, when set), so each is timed and ordered by Redis exactly; between
// them lies the round trip in which the race happens.
type GetSet struct {
	algo algos.Algorithm
	// Clock, when set, is the node's clock (µs): Do reads it once the read
	// has come back, to tell the algorithm the time it decides at. Unset,
	// Do tells it Args.Told (or, if negative, the Redis TIME of the read).
	// Set it before the first Do.
	Clock func() int64
}

// NewGetSet returns the read-decide-write client of the algorithm
// registered in algos under name.
func NewGetSet(name string) (*GetSet, error) {
	a, err := algos.ByName(name)
	if err != nil {
		return nil, fmt.Errorf("lua: %w", err)
	}
	return &GetSet{algo: a}, nil
}

// GetSetReply is a GetSet call: Reply describes the write (its
// decision, what it wrote, when Redis ran the write and its Seq), Read the
// values it read, ReadTime and ReadSeq when Redis ran the read, and Told the
// time the algorithm was told.
type GetSetReply struct {
	ScriptReply
	Read     []int64
	ReadTime int64
	ReadSeq  int64
	Told     int64
}

// Do reads r.Key, decides in Go at the time of n.Clock, else r.Told (r.Told <
// 0: at the Redis TIME of the read, the closest a node gets to a store clock
// without a script) and writes the state back with the scripts' TTL. It
// always writes, as the Go decision changes the state on a denial too (the
// token bucket's last).
func (n *GetSet) Do(ctx context.Context, c redis.Cmdable, r Args) (GetSetReply, error) {
	var out GetSetReply
	if err := r.Limit.Validate(); err != nil {
		return out, fmt.Errorf("lua: get-set %s on %q: %w", n.algo.Name, r.Key, err)
	}
	fail := func(step string, err error) (GetSetReply, error) {
		return GetSetReply{}, fmt.Errorf("lua: get-set %s %s on %q: %w", n.algo.Name, step, r.Key, err)
	}
	log := n.algo.Name == algos.SlidingLog.Name

	var (
		clock *redis.TimeCmd
		seq   *redis.IntCmd
		get   *redis.StringCmd
		zget  *redis.ZSliceCmd
	)
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		clock = p.Time(ctx)
		if r.SeqKey != "" {
			seq = p.Incr(ctx, r.SeqKey)
		}
		if log {
			zget = p.ZRangeWithScores(ctx, r.Key, 0, -1)
		} else {
			get = p.Get(ctx, r.Key)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return fail("read", err)
	}
	out.ReadTime = clock.Val().UnixMicro()
	if seq != nil {
		out.ReadSeq = seq.Val()
	}
	var st algos.State
	if log {
		st, err = parseLog(zget.Val())
	} else {
		st, err = parseInts(get)
	}
	if err != nil {
		return fail("read", err)
	}
	out.Read = st.Stored()

	now := r.Told
	switch {
	case n.Clock != nil:
		now = n.Clock()
	case now < 0:
		now = out.ReadTime
	}
	out.Told = now
	d := n.algo.Decide(&st, now, r.Limit)
	stored := st.Stored()
	ttl := TTL(d)

	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		clock = p.Time(ctx)
		seq = nil
		if r.SeqKey != "" {
			seq = p.Incr(ctx, r.SeqKey)
		}
		if log {
			p.Del(ctx, r.Key)
			if len(stored) > 0 {
				p.ZAdd(ctx, r.Key, logMembers(stored)...)
				p.PExpire(ctx, r.Key, ttl)
			}
		} else {
			p.Set(ctx, r.Key, fmt.Sprintf("%d:%d:%d", stored[0], stored[1], stored[2]), ttl)
		}
		return nil
	})
	if err != nil {
		return fail("write", err)
	}
	out.Decision = d
	out.Stored = stored
	out.RedisTime = clock.Val().UnixMicro()
	if seq != nil {
		out.Seq = seq.Val()
	}
	return out, nil
}

func parseInts(get *redis.StringCmd) (algos.State, error) {
	v, err := get.Result()
	if errors.Is(err, redis.Nil) {
		return algos.State{}, nil
	}
	if err != nil {
		return algos.State{}, err
	}
	parts := strings.Split(v, ":")
	if len(parts) != 3 {
		return algos.State{}, fmt.Errorf("value %q is not three integers", v)
	}
	var ints [3]int64
	for i, p := range parts {
		if ints[i], err = strconv.ParseInt(p, 10, 64); err != nil {
			return algos.State{}, fmt.Errorf("value %q is not three integers", v)
		}
	}
	return algos.State{Set: true, Ints: ints}, nil
}

func parseLog(zs []redis.Z) (algos.State, error) {
	if len(zs) == 0 {
		return algos.State{}, nil
	}
	st := algos.State{Set: true, Log: make([]int64, 0, max(16, len(zs)))}
	for _, z := range zs {
		t := int64(z.Score)
		if float64(t) != z.Score {
			return algos.State{}, fmt.Errorf("log score %v is not an integer", z.Score)
		}
		st.Log = append(st.Log, t)
	}
	return st, nil
}

// logMembers names equal times "t:0", "t:1", ... as the sliding-log script
// does, so that either may add to a log the other wrote.
func logMembers(sorted []int64) []redis.Z {
	zs := make([]redis.Z, len(sorted))
	n := 0
	for i, t := range sorted {
		if i > 0 && sorted[i-1] == t {
			n++
		} else {
			n = 0
		}
		zs[i] = redis.Z{Score: float64(t), Member: strconv.FormatInt(t, 10) + ":" + strconv.Itoa(n)}
	}
	return zs
}

// GetThenIncr is a fixed window written the common wrong way: GET the
// window's count, and if it is below the limit, INCR it (setting the
// window's expiry on the first INCR). Every caller that reads before the
// others' INCRs land sees room, so a burst of concurrent callers gets
// through beyond the limit. now is in µs (now < 0: this machine's clock); the
// count lives at key + ":" + the window index. It reports whether the
// request was admitted.
func GetThenIncr(ctx context.Context, c redis.Cmdable, key string, lim algos.Limit, now int64) (bool, error) {
	ok, _, err := GetThenIncrSeen(ctx, c, key, lim, now)
	return ok, err
}

// GetThenIncrSeen is GetThenIncr that also reports the count its GET saw,
// from which a caller can say how much room the window seemed to have.
func GetThenIncrSeen(ctx context.Context, c redis.Cmdable, key string, lim algos.Limit, now int64) (admitted bool, seen int64, err error) {
	if err := lim.Validate(); err != nil {
		return false, 0, fmt.Errorf("lua: get-then-incr on %q: %w", key, err)
	}
	if now < 0 {
		now = time.Now().UnixMicro()
	}
	idx := now / lim.Window
	k := key + ":" + strconv.FormatInt(idx, 10)
	count, err := c.Get(ctx, k).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, 0, fmt.Errorf("lua: get-then-incr GET %q: %w", k, err)
	}
	if count >= lim.Rate {
		return false, count, nil
	}
	n, err := c.Incr(ctx, k).Result()
	if err != nil {
		return false, 0, fmt.Errorf("lua: get-then-incr INCR %q: %w", k, err)
	}
	if n == 1 {
		ttl := time.Duration((idx+1)*lim.Window-now)*time.Microsecond + TTLMargin
		if err := c.PExpire(ctx, k, ttl).Err(); err != nil {
			return false, 0, fmt.Errorf("lua: get-then-incr PEXPIRE %q: %w", k, err)
		}
	}
	return true, count, nil
}
