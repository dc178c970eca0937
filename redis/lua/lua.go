package lua

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/planted"
	"github.com/redis/go-redis/v9"
)

//go:embed *.lua
var sources embed.FS

// TTLMargin is what every script adds to a key's expiry beyond the time the
// key needs to become idle again. Forgetting an idle key changes nothing, as
// long as the callers' clocks disagree by less than this. Differential does
// not demand it of a script (it demands that the key last until its state is
// idle), but it also keeps a key from expiring in Redis while a differential
// runs: the told times stand still while Redis's clock runs on.
const TTLMargin = time.Second

// TTL is the expiry every script (and GetSet) sets after a decision d:
// d.Reset rounded up to the millisecond, plus TTLMargin (the largest
// Duration when that would overflow). d.Reset is, per algorithm, the time to
// refill or drain fully, until TAT, or until the windows the key can still
// affect have passed: the time until the key's state is idle.
func TTL(d algos.Decision) time.Duration {
	reset := max(d.Reset, 0)
	ms := reset / 1000
	if reset%1000 != 0 {
		ms++
	}
	if ms > (math.MaxInt64-int64(TTLMargin))/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(ms)*time.Millisecond + TTLMargin
}

// Script is one algorithm's script. It is safe for concurrent use.
type Script struct {
	algo   algos.Algorithm
	source string
	script *redis.Script
}

// New returns the script of the algorithm registered in algos under name:
// FromSource with that algorithm and its embedded file. A planted bug of
// algos.Planted that has a Lua twin (planted-token-bucket-negative-refill)
// is found the same way, and so is a bug planted in a script alone
// (planted-token-bucket-whole-seconds, see scriptPlants), for the tests
// that show a check catches it.
func New(name string) (*Script, error) {
	a, err := algos.ByName(name)
	if err != nil {
		i := slices.IndexFunc(planted.All(), func(p algos.Algorithm) bool { return p.Name == name })
		switch twin, ok := scriptPlants[name]; {
		case i >= 0:
			a = planted.All()[i]
		case ok:
			a = twin
			a.Name = name
		default:
			return nil, fmt.Errorf("lua: %w", err)
		}
	}
	body, err := sources.ReadFile(name + ".lua")
	if err != nil {
		return nil, fmt.Errorf("lua: no script for %q", name)
	}
	return FromSource(a, string(body))
}

// scriptPlants are the bugs planted in a script alone, by file name (less
// .lua): the Go twin is the correct algorithm named here, which New gives
// the plant's name, since the bug is in no arithmetic of algos but in how
// the script learns the time. planted-token-bucket-whole-seconds keeps
// only the whole seconds of TIME on the store-clock path, and is the token
// bucket when told the time.
var scriptPlants = map[string]algos.Algorithm{
	"planted-token-bucket-whole-seconds": algos.TokenBucket,
}

// preludeEnd is the prelude's last line; a body that contains it already
// holds the prelude.
const preludeEnd = "-- end of prelude"

// FromSource returns a Script that runs body, a user's own limiter script,
// after the shared prelude, and whose Go twin is algo: Differential holds
// the two to the same call-for-call comparison as the six built-in scripts,
// and properties.Check(t, limiter.FromAlgorithm(algo)) holds the twin to
// the contract.
//
// It fails when algo has no Name or no Decide, when body is empty or blank,
// or when body already contains the prelude. It cannot check the Lua itself:
// a syntax error is Redis's error on the first call, and its line numbers
// count the whole script, the prelude first (see Script.Source).
//
// The prelude runs first, in the same chunk, so its locals are in scope in
// body. It gives the body:
//
//   - KEY, which is KEYS[1]: the one key the limiter keeps its state in.
//     KEYS[2] is the prelude's (an optional counter it INCRs, Request.SeqKey);
//     the body must not touch it.
//   - now: the time of the decision in µs, an integer, from ARGV[1], or
//     Redis TIME when the caller passed a negative time. The body decides at
//     now and never reads TIME itself. redis_time is TIME, for the reply.
//     Differential runs the body both ways and holds each to the twin: told
//     the time, and reading TIME, where the twin decides at redis_time.
//   - rate, window, burst, unit, refill: the fields of the algos.Limit
//     (ARGV[2..6]; a Script only sends limits that pass Limit.Validate).
//     The prelude returns an error reply, before the body runs, when one is
//     missing or below 1.
//   - floordiv(a, b) = ⌊a/b⌋, quo(a, b) and rem(a, b) = Go's a/b and a%b
//     (truncated), ceildiv(a, b) = Go's (a+b-1)/b, all exact for b > 0 and
//     integers below 2^53. Lua numbers are doubles: + - * of integers are
//     exact while the results stay below 2^53, plain / is not, so divide
//     only through these.
//   - fmt(x): an integer as a decimal string without exponent, for writing
//     numbers into Redis (tostring switches to exponent form past 14 digits).
//   - ttl(reset): the key's expiry in ms (a string, as PX and PEXPIRE take
//     it) for a decision whose reset is reset µs: lua.TTL of that decision.
//   - load3() returns the three integers stored at KEY as "a:b:c", or nil
//     when KEY is absent (anything else is a script error); store3(a, b, c, reset) writes them with the expiry
//     ttl(reset). A body may keep any layout instead (a hash, a sorted set).
//   - reply(allowed, remaining, retry_after, reset, stored): the reply.
//
// The body must end by returning reply(...) with the decision (allowed a
// boolean; remaining, retry_after and reset integers, in requests and µs, as
// algos.Decision has them) and stored, a Lua list of what KEY holds after
// the call in exactly the order algos.State.Stored lists the twin's state:
// its three Ints (all three, even those it leaves 0), or the sliding log's
// times. An absent key is an empty list. To pass Differential's TTL check,
// after every call KEY must expire no sooner than the twin's state is idle
// and no later than DiffOptions.MaxTTL (an hour by default) or TTLMargin
// past idle, whichever is later: setting its expiry to ttl(reset) of the
// decision on every call does it (store3 does). KEY must be absent exactly
// when stored is empty.
func FromSource(algo algos.Algorithm, body string) (*Script, error) {
	switch {
	case algo.Name == "":
		return nil, errors.New("lua: the Go twin has no Name")
	case algo.Decide == nil:
		return nil, fmt.Errorf("lua: the Go twin %q has no Decide", algo.Name)
	case strings.TrimSpace(body) == "":
		return nil, fmt.Errorf("lua: %s: the script body is empty", algo.Name)
	case strings.Contains(body, preludeEnd):
		return nil, fmt.Errorf("lua: %s: the script body already contains the prelude; pass only what follows it", algo.Name)
	}
	prelude, err := sources.ReadFile("prelude.lua")
	if err != nil {
		return nil, fmt.Errorf("lua: %w", err)
	}
	src := string(prelude) + body
	return &Script{algo: algo, source: src, script: redis.NewScript(src)}, nil
}

// Source is the full text Redis runs for the named algorithm: the shared
// prelude followed by the algorithm's own script.
func Source(name string) (string, error) {
	prelude, err := sources.ReadFile("prelude.lua")
	if err != nil {
		return "", fmt.Errorf("lua: %w", err)
	}
	body, err := sources.ReadFile(name + ".lua")
	if err != nil {
		return "", fmt.Errorf("lua: no script for %q", name)
	}
	return string(prelude) + string(body), nil
}

// Source is the full text this Script sends to Redis, the prelude followed
// by the body, so that a line number in a Redis error can be looked up.
func (s *Script) Source() string { return s.source }

// Algorithm is the Go twin this script must agree with.
func (s *Script) Algorithm() algos.Algorithm { return s.algo }

// Name is the Go twin's name: for New, the algorithm's registered name.
func (s *Script) Name() string { return s.algo.Name }

// SHA is the script's SHA-1, the argument of EVALSHA.
func (s *Script) SHA() string { return s.script.Hash() }

// Load puts the script in c's script cache (SCRIPT LOAD). Call does not
// need it; DoAll does it itself.
func (s *Script) Load(ctx context.Context, c redis.Scripter) error {
	if err := s.script.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("lua: loading %s: %w", s.algo.Name, err)
	}
	return nil
}

// Args is one call: the key, the limit, and the time the caller tells
// the script (Told < 0: the script reads Redis TIME instead). SeqKey, when
// set, names a counter the script INCRs, so Reply.Seq orders every call
// sharing it exactly as Redis ran them.
type Args struct {
	Key    string
	SeqKey string
	Limit  algos.Limit
	Told   int64
}

// ScriptReply is what a script answers.
type ScriptReply struct {
	Decision algos.Decision
	// Stored is what the key holds after the call, in the order
	// algos.State.Stored lists it: the three Ints for all but the sliding log,
	// the admitted times for the sliding log.
	Stored []int64
	// RedisTime is Redis TIME, in µs, when the script ran.
	RedisTime int64
	// Seq is the SeqKey counter after this call, 0 without a SeqKey.
	Seq int64
}

// Call decides one request for key at now (µs; now < 0 reads Redis TIME)
// under lim, atomically in Redis. An invalid limit, an unreachable Redis or a
// reply of the wrong shape is an error.
func (s *Script) Call(ctx context.Context, c redis.Scripter, key string, lim algos.Limit, now int64) (ScriptReply, error) {
	return s.Do(ctx, c, Args{Key: key, Limit: lim, Told: now})
}

// Do is Call for a Request, which may carry a SeqKey.
func (s *Script) Do(ctx context.Context, c redis.Scripter, r Args) (ScriptReply, error) {
	keys, args, err := s.prepare(r)
	if err != nil {
		return ScriptReply{}, err
	}
	v, err := s.script.Run(ctx, c, keys, args...).Result()
	if err != nil {
		return ScriptReply{}, fmt.Errorf("lua: %s on %q: %w", s.algo.Name, r.Key, err)
	}
	return s.parse(r.Key, v)
}

// DoAll sends the requests in one pipeline, in order, and returns a reply
// for each. It loads the script first, since a pipeline cannot fall back
// from EVALSHA to EVAL. It fails as a whole on the first failed request.
func (s *Script) DoAll(ctx context.Context, c redis.Cmdable, rs []Args) ([]ScriptReply, error) {
	if err := s.Load(ctx, c); err != nil {
		return nil, err
	}
	cmds := make([]*redis.Cmd, len(rs))
	pipe := c.Pipeline()
	for i, r := range rs {
		keys, args, err := s.prepare(r)
		if err != nil {
			return nil, err
		}
		cmds[i] = s.script.EvalSha(ctx, pipe, keys, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		// Exec reports the first failed command; find which.
		for i, cmd := range cmds {
			if cmd.Err() != nil {
				return nil, fmt.Errorf("lua: %s request %d on %q: %w", s.algo.Name, i, rs[i].Key, cmd.Err())
			}
		}
		return nil, fmt.Errorf("lua: %s pipeline: %w", s.algo.Name, err)
	}
	out := make([]ScriptReply, len(rs))
	for i, cmd := range cmds {
		rep, err := s.parse(rs[i].Key, cmd.Val())
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
		out[i] = rep
	}
	return out, nil
}

func (s *Script) prepare(r Args) (keys []string, args []any, err error) {
	if err := r.Limit.Validate(); err != nil {
		// A zero limit would divide by zero in Lua, which is not an error there.
		return nil, nil, fmt.Errorf("lua: %s on %q: %w", s.algo.Name, r.Key, err)
	}
	if r.Key == "" {
		return nil, nil, fmt.Errorf("lua: %s: empty key", s.algo.Name)
	}
	keys = []string{r.Key}
	if r.SeqKey != "" {
		keys = append(keys, r.SeqKey)
	}
	now := r.Told
	if now < 0 {
		now = -1
	}
	lim := r.Limit
	return keys, []any{now, lim.Rate, lim.Window, lim.Burst, lim.Unit, lim.Refill}, nil
}

// replyHead is how many integers precede the stored values in a reply.
const replyHead = 6

func (s *Script) parse(key string, v any) (ScriptReply, error) {
	r, err := readReply(v)
	if err != nil {
		return ScriptReply{}, fmt.Errorf("lua: %s on %q: %w", s.algo.Name, key, err)
	}
	return r, nil
}

// readReply reads a script's reply, or says what is wrong with its shape.
func readReply(v any) (ScriptReply, error) {
	bad := func(format string, a ...any) (ScriptReply, error) {
		return ScriptReply{}, fmt.Errorf("bad reply: %s", fmt.Sprintf(format, a...))
	}
	vals, ok := v.([]any)
	if !ok {
		return bad("want an array, got %T %v", v, v)
	}
	if len(vals) < replyHead {
		return bad("want at least %d integers (allowed, remaining, retry-after, reset, Redis TIME, seq), got %d: %v", replyHead, len(vals), vals)
	}
	ints := make([]int64, len(vals))
	for i, e := range vals {
		n, ok := e.(int64)
		if !ok {
			return bad("element %d is %T %v, not an integer", i, e, e)
		}
		ints[i] = n
	}
	if ints[0] != 0 && ints[0] != 1 {
		return bad("allowed is %d, not 0 or 1", ints[0])
	}
	return ScriptReply{
		Decision: algos.Decision{
			Allowed:    ints[0] == 1,
			Remaining:  ints[1],
			RetryAfter: ints[2],
			Reset:      ints[3],
		},
		RedisTime: ints[4],
		Seq:       ints[5],
		Stored:    ints[replyHead:],
	}, nil
}
