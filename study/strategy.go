package study

import (
	"context"
	"errors"
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Atomicity sorts the strategies by how they decide: whether a request's
// read, decision and write are one step in Redis, which is what the
// findings are about.
type Atomicity int

const (
	// Racy strategies read and write in separate commands with the decision
	// in between, in the client: concurrent callers decide on stale reads.
	Racy Atomicity = iota + 1
	// Atomic strategies decide in one Redis command (an INCR or a script),
	// so Redis orders every decision and none is taken on a stale read.
	Atomic
	// Optimistic strategies read, decide, and commit only if nothing changed
	// in between (WATCH/MULTI/EXEC), retrying a bounded number of times.
	Optimistic
)

var atomicityNames = [...]string{Racy: "racy", Atomic: "atomic", Optimistic: "optimistic"}

// String names the atomicity as the report prints it ("racy", "atomic",
// "optimistic"), or Atomicity(n) for a value that is none of them.
func (a Atomicity) String() string { return enumName(atomicityNames[:], int(a), "Atomicity") }

// enumName is names[v] when v has a name there, else typ(v).
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// Refusal says why a request was refused.
type Refusal int

const (
	// NotRefused: the request was admitted.
	NotRefused Refusal = iota
	// AtLimit: the strategy saw the limit reached (a count of L or more, an
	// empty bucket, a full log) and refused, as it should.
	AtLimit
	// Exhausted: an optimistic strategy ran out of retries while the last
	// count it read was below L. The limit had room for this request; the
	// strategy refused it anyway. This is the optimistic strategies' refusal
	// within the limit.
	Exhausted
)

// Ruling is what a strategy decided for one request, with what the harness
// needs to judge it: how it decided, and where Redis placed it.
type Ruling struct {
	Allowed bool    // the request was admitted
	Refusal Refusal // NotRefused exactly when Allowed
	// Attempts is how many times the strategy tried: 1 for all but the
	// optimistic ones, which count each WATCH…EXEC they ran.
	Attempts int
	// Seq is the request's place in the order Redis decided the trial's
	// requests, counted from 1, for the scripts (which INCR a counter in the
	// same atomic step); 0 when the strategy does not know it.
	Seq int64
	// RedisTime is Redis TIME in µs when a script decided; 0 otherwise.
	RedisTime int64
	// Read is the count a racy strategy read before it decided (the GET of
	// check-then-act); 0 for the others.
	Read int64
}

// Destination is where a strategy sends one request: the connection to
// use, the limited key and its limit, and a counter key that strategies
// able to report Redis's order of decisions may INCR atomically with them
// (Ruling.Seq).
type Destination struct {
	Client *redis.Client // the worker's own connection
	Key    string        // the limited key
	SeqKey string        // the order counter; "" for none
	Limit  algos.Limit   // the limit the request is decided under
}

// Strategy is one way of enforcing "at most Limit.Rate requests" on a key
// shared through Redis. Allow decides one request; it is safe for concurrent
// use by several workers as long as each passes its own Client (the
// optimistic strategies hold the connection across WATCH…EXEC). An error is
// a failure of Redis or of the connection, never a refusal.
type Strategy interface {
	// Name is the strategy's name in the report.
	Name() string
	// Atomicity is how the strategy decides.
	Atomicity() Atomicity
	// Allow decides one request sent to t.
	Allow(ctx context.Context, t Destination) (Ruling, error)
}

// preparer is a strategy with work to do once before a trial (a script to
// load, so that no worker's first call pays EVALSHA's NOSCRIPT round trip).
type preparer interface {
	prepare(ctx context.Context, c *redis.Client) error
}

// Strategies returns the eight strategies of the study, in the report's
// order. It fails only if the Lua scripts cannot be loaded from redis/lua.
func Strategies() ([]Strategy, error) {
	out := []Strategy{CheckThenAct{}, IncrThenCheck{}, Watch{Budget: 3}, Watch{Budget: 10}}
	for _, name := range LuaAlgorithms {
		s, err := NewLuaScript(name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// StrategyByName finds one of Strategies by its Name, and fails for a name
// none has.
func StrategyByName(name string) (Strategy, error) {
	all, err := Strategies()
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("study: no strategy named %q", name)
}

// CheckThenAct reads the count (GET), compares it with the limit in the
// client, and counts the request (INCR) if it was below. Between the GET and
// the INCR lies a round trip in which every other worker may read the same
// count, which is the race the study measures.
//
// It refuses only after reading a count of L or more, and the count is
// exactly the number admitted so far (only admits INCR it), so it never
// refuses a request within the limit.
type CheckThenAct struct{}

// Name is "check-then-act".
func (CheckThenAct) Name() string { return "check-then-act" }

// Atomicity is Racy.
func (CheckThenAct) Atomicity() Atomicity { return Racy }

// Allow runs GET, compare, INCR.
func (CheckThenAct) Allow(ctx context.Context, t Destination) (Ruling, error) {
	n, err := readCount(ctx, t.Client, t.Key)
	if err != nil {
		return Ruling{}, err
	}
	if n >= t.Limit.Rate {
		return Ruling{Refusal: AtLimit, Attempts: 1, Read: n}, nil
	}
	if err := t.Client.Incr(ctx, t.Key).Err(); err != nil {
		return Ruling{}, fmt.Errorf("check-then-act INCR: %w", err)
	}
	return Ruling{Allowed: true, Attempts: 1, Read: n}, nil
}

// IncrThenCheck counts every request first (INCR) and admits it when the
// new count is at most L. INCR is atomic, so the first L requests Redis runs
// get 1…L and are admitted, and every later one gets more than L, which
// means L admits are already in: it never over-admits and never refuses
// within the limit. (Its count keeps growing with refusals, which is why it
// only suits a window that expires.)
type IncrThenCheck struct{}

// Name is "incr-then-check".
func (IncrThenCheck) Name() string { return "incr-then-check" }

// Atomicity is Atomic.
func (IncrThenCheck) Atomicity() Atomicity { return Atomic }

// Allow runs INCR, compare.
func (IncrThenCheck) Allow(ctx context.Context, t Destination) (Ruling, error) {
	n, err := t.Client.Incr(ctx, t.Key).Result()
	if err != nil {
		return Ruling{}, fmt.Errorf("incr-then-check INCR: %w", err)
	}
	if n > t.Limit.Rate {
		return Ruling{Refusal: AtLimit, Attempts: 1, Seq: n}, nil
	}
	return Ruling{Allowed: true, Attempts: 1, Seq: n}, nil
}

// Watch is check-then-act made safe optimistically: WATCH the key, GET it,
// and if the count is below L, INCR it inside MULTI/EXEC, which Redis runs
// only if nobody changed the key since the WATCH. A failed EXEC is retried
// up to Budget more times; a request whose budget runs out is refused
// (Ruling.Refusal == Exhausted) although the count it last read was below
// L. It never over-admits.
//
// One attempt is three round trips on the worker's own connection (WATCH;
// GET; MULTI INCR EXEC in one pipeline), and a refusal at the limit is three
// as well (WATCH; GET; UNWATCH).
type Watch struct {
	Budget int // retries after the first attempt
}

// Name is "watch-multi-<budget>".
func (w Watch) Name() string { return fmt.Sprintf("watch-multi-%d", w.Budget) }

// Atomicity is Optimistic.
func (Watch) Atomicity() Atomicity { return Optimistic }

// Allow tries up to 1+Budget times.
func (w Watch) Allow(ctx context.Context, t Destination) (Ruling, error) {
	for attempt := 1; attempt <= 1+w.Budget; attempt++ {
		var atLimit bool
		err := t.Client.Watch(ctx, func(tx *redis.Tx) error {
			n, err := readCount(ctx, tx, t.Key)
			if err != nil {
				return err
			}
			if n >= t.Limit.Rate {
				atLimit = true
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, t.Key)
				return nil
			})
			return err
		}, t.Key)
		switch {
		case errors.Is(err, redis.TxFailedErr):
			continue // someone wrote the key after our WATCH: read again
		case err != nil:
			return Ruling{}, fmt.Errorf("%s: %w", w.Name(), err)
		case atLimit:
			return Ruling{Refusal: AtLimit, Attempts: attempt}, nil
		default:
			return Ruling{Allowed: true, Attempts: attempt}, nil
		}
	}
	return Ruling{Refusal: Exhausted, Attempts: 1 + w.Budget}, nil
}

// LuaScript is a Lua limiter script from redis/lua (one of its six, or the
// planted bucket's twin, under its Go twin's name), deciding at Redis TIME
// unless told a time: the read, the decision and the write are one atomic
// step in Redis.
type LuaScript struct {
	script *lua.Script
}

// NewLuaScript returns the script of the algorithm registered in algos under
// name (or of a planted algorithm with a Lua twin, as lua.New finds it),
// and fails for a name redis/lua has no script for.
func NewLuaScript(name string) (LuaScript, error) {
	l, err := lua.New(name)
	if err != nil {
		return LuaScript{}, fmt.Errorf("study: %w", err)
	}
	return LuaScript{script: l}, nil
}

// Name is "lua-<algorithm>".
func (s LuaScript) Name() string { return "lua-" + s.script.Name() }

// Algorithm is the algorithm the script runs.
func (s LuaScript) Algorithm() algos.Algorithm { return s.script.Algorithm() }

// Atomicity is Atomic.
func (LuaScript) Atomicity() Atomicity { return Atomic }

// prepare loads the script into Redis.
func (s LuaScript) prepare(ctx context.Context, c *redis.Client) error { return s.script.Load(ctx, c) }

// Allow runs the script once with now < 0, so that it reads Redis TIME, and
// INCRs t.SeqKey in the same step when set.
func (s LuaScript) Allow(ctx context.Context, t Destination) (Ruling, error) {
	return s.AllowAt(ctx, t, -1)
}

// AllowAt runs the script once with the caller's own time now (µs) instead
// of Redis TIME, the deployment in which each caller's clock decides (a
// negative now reads Redis TIME, as Allow does), and INCRs t.SeqKey in the
// same step when set.
func (s LuaScript) AllowAt(ctx context.Context, t Destination, now int64) (Ruling, error) {
	r, err := s.script.Do(ctx, t.Client, lua.Args{Key: t.Key, SeqKey: t.SeqKey, Limit: t.Limit, Told: now})
	if err != nil {
		return Ruling{}, err
	}
	return fromReply(r), nil
}

// fromReply is a script's reply as a Ruling.
func fromReply(r lua.ScriptReply) Ruling {
	a := Ruling{Allowed: r.Decision.Allowed, Attempts: 1, Seq: r.Seq, RedisTime: r.RedisTime}
	if !a.Allowed {
		a.Refusal = AtLimit
	}
	return a
}

// readCount is GET as an integer, 0 for an absent key.
func readCount(ctx context.Context, c redis.Cmdable, key string) (int64, error) {
	n, err := c.Get(ctx, key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", key, err)
	}
	return n, nil
}
