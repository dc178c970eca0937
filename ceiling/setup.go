package ceiling

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// Setup is one deployment of a limiter set up on live HTTP nodes
// (Start(n, s.Node) serves it): Node makes node i's handler, the reference
// middleware in front of a handler that answers 200; Name is the deployment as the table
// and the Artifact name it. Quota is what X-RateLimit-Limit says: one
// fresh key's burst. (The simulator's way of deploying one is
// model.Deployment, a choice; a Setup is the running thing.)
//
// Log, when set, gets every decision the nodes' limiters make, timed by
// the clock the limiter decided by (Clock says which): a rate judged from
// it is the limiter's own, whatever the machine did to the requests.
type Setup struct {
	Name  string
	Quota int64
	Node  func(i int) (http.Handler, error)
	Log   *Log
	Clock string
}

// served is what every node serves behind its limiter.
var served = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusOK)
})

func behind(lim httplimit.Limiter, quota int64) (http.Handler, error) {
	m, err := httplimit.New(lim, httplimit.Options{Quota: quota})
	if err != nil {
		return nil, err
	}
	return m.Wrap(served), nil
}

// SharedScript is algorithm a's Lua script on the store rdb, every node
// sharing each key under prefix and deciding by the store's clock: the
// correct deployment, whose fleet admits the limit however many nodes. Its
// Log has each decision at the Redis TIME the script decided at (what
// httplimit.Script decides, with the time its reply carries).
func SharedScript(rdb redis.Scripter, a algos.Algorithm, prefix string, l algos.Limit) (Setup, error) {
	script, err := lua.New(a.Name)
	if err != nil {
		return Setup{}, fmt.Errorf("ceiling: %w", err)
	}
	quota, err := httplimit.QuotaOf(limiter.FromAlgorithm(a), l)
	if err != nil {
		return Setup{}, fmt.Errorf("ceiling: %w", err)
	}
	if err := l.Validate(); err != nil {
		return Setup{}, fmt.Errorf("ceiling: %w", err)
	}
	log := &Log{}
	return Setup{
		Name:  "shared " + a.Name + " (Lua)",
		Quota: quota,
		Log:   log,
		Clock: "the store's TIME",
		Node: func(i int) (http.Handler, error) {
			if rdb == nil {
				return nil, errors.New("ceiling: SharedScript needs a Redis client")
			}
			lim := httplimit.LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
				reply, err := script.Call(ctx, rdb, prefix+key, l, -1)
				if err == nil {
					log.add(i, reply.RedisTime, reply.Decision)
				}
				return reply.Decision, err
			})
			return behind(lim, quota)
		},
	}, nil
}

// PerInstance is algorithm a held in each node's memory: every node
// enforces the whole limit on its own share of the traffic. Its Log has
// each decision at the time the node's limiter was told (this machine's
// clock, in µs of Unix time).
func PerInstance(a algos.Algorithm, l algos.Limit) (Setup, error) {
	spec := limiter.FromAlgorithm(a)
	quota, err := httplimit.QuotaOf(spec, l)
	if err != nil {
		return Setup{}, fmt.Errorf("ceiling: %w", err)
	}
	log := &Log{}
	return Setup{
		Name:  "per-instance " + a.Name,
		Quota: quota,
		Log:   log,
		Clock: "each node's clock",
		Node: func(i int) (http.Handler, error) {
			// The local limiter reads its clock once per decision, under
			// its lock; told holds that reading until the decision returns,
			// under ours.
			var (
				mu   sync.Mutex
				told int64
			)
			lim, err := httplimit.Local(spec, l, func() int64 { told = time.Now().UnixMicro(); return told })
			if err != nil {
				return nil, err
			}
			return behind(httplimit.LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
				mu.Lock()
				defer mu.Unlock()
				d, err := lim.Allow(ctx, key)
				if err == nil {
					log.add(i, told, d)
				}
				return d, err
			}), quota)
		},
	}, nil
}

// GetThenIncr is the racy fixed window (httplimit.GetThenIncr) on the
// store rdb, shared by every node under prefix. Its Log has each decision
// at the time, on this machine's clock, that the limiter counted it at:
// the one instant between the call and its return that the window's end
// less the decision's Reset can be (a call that took longer than a window,
// which leaves two, is left out and counted in Log.Unplaced).
func GetThenIncr(rdb redis.Cmdable, prefix string, l algos.Limit) Setup {
	log := &Log{}
	return Setup{
		Name:  "shared GET-then-INCR",
		Quota: l.Rate,
		Log:   log,
		Clock: "each node's clock",
		Node: func(i int) (http.Handler, error) {
			lim, err := httplimit.GetThenIncr(rdb, prefix, l)
			if err != nil {
				return nil, err
			}
			return behind(httplimit.LimiterFunc(func(ctx context.Context, key string) (algos.Decision, error) {
				before := time.Now().UnixMicro()
				d, err := lim.Allow(ctx, key)
				after := time.Now().UnixMicro()
				if err == nil {
					// The window ends at now + Reset, a multiple of the
					// window, and now lies in [before, after].
					end := (before + d.Reset + l.Window - 1) / l.Window * l.Window
					if now := end - d.Reset; d.Reset > 0 && now >= before && now <= after {
						log.add(i, now, d)
					} else {
						log.unplaced.Add(1)
					}
				}
				return d, err
			}), l.Rate)
		},
	}
}

// Log is the decisions a Setup's nodes made. It is safe for
// concurrent use.
type Log struct {
	mu       sync.Mutex
	all      []Decided
	unplaced atomic.Int64
}

// Decided is one decision: the node that made it, the time it was told
// (the deployment's Clock when it decided, µs), whether it admitted, and
// its RetryAfter (µs; what a denying token bucket says it holds).
type Decided struct {
	Node       int
	Told       int64
	Allowed    bool
	RetryAfter int64
}

func (g *Log) add(node int, at int64, d algos.Decision) {
	g.mu.Lock()
	g.all = append(g.all, Decided{Node: node, Told: at, Allowed: d.Allowed, RetryAfter: d.RetryAfter})
	g.mu.Unlock()
}

// Decisions returns every decision logged so far, by time; at the same µs,
// admits before denials (one limiter cannot refill within a µs, so a
// request it admits at the µs of a denial was decided before it).
func (g *Log) Decisions() []Decided {
	g.mu.Lock()
	all := slices.Clone(g.all)
	g.mu.Unlock()
	slices.SortStableFunc(all, func(a, b Decided) int {
		if c := cmp.Compare(a.Told, b.Told); c != 0 {
			return c
		}
		switch {
		case a.Allowed == b.Allowed:
			return 0
		case a.Allowed:
			return -1
		}
		return 1
	})
	return all
}

// Unplaced is how many decisions could not be given a time.
func (g *Log) Unplaced() int64 { return g.unplaced.Load() }
