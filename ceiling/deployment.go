package ceiling

import (
	"fmt"
	"net/http"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/algos/lua"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/redis/go-redis/v9"
)

// Deployment is a limiter as a fleet runs it: Node makes node i's
// handler, the reference middleware in front of a handler that answers
// 200. Quota is what X-RateLimit-Limit says: one fresh key's burst.
type Deployment struct {
	Name  string
	Quota int64
	Node  func(i int) (http.Handler, error)
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
// correct deployment, whose fleet admits the limit however many nodes.
func SharedScript(rdb redis.Scripter, a algos.Algorithm, prefix string, l algos.Limit) (Deployment, error) {
	script, err := lua.New(a.Name)
	if err != nil {
		return Deployment{}, fmt.Errorf("ceiling: %w", err)
	}
	quota, err := httplimit.QuotaOf(limiter.FromAlgorithm(a), l)
	if err != nil {
		return Deployment{}, fmt.Errorf("ceiling: %w", err)
	}
	return Deployment{
		Name:  "shared " + a.Name + " (Lua)",
		Quota: quota,
		Node: func(int) (http.Handler, error) {
			lim, err := httplimit.Script(rdb, script, prefix, l)
			if err != nil {
				return nil, err
			}
			return behind(lim, quota)
		},
	}, nil
}

// PerInstance is algorithm a held in each node's memory: every node
// enforces the whole limit on its own share of the traffic.
func PerInstance(a algos.Algorithm, l algos.Limit) (Deployment, error) {
	spec := limiter.FromAlgorithm(a)
	quota, err := httplimit.QuotaOf(spec, l)
	if err != nil {
		return Deployment{}, fmt.Errorf("ceiling: %w", err)
	}
	return Deployment{
		Name:  "per-instance " + a.Name,
		Quota: quota,
		Node: func(int) (http.Handler, error) {
			lim, err := httplimit.Local(spec, l, nil)
			if err != nil {
				return nil, err
			}
			return behind(lim, quota)
		},
	}, nil
}

// GetThenIncr is the racy fixed window (httplimit.GetThenIncr) on the
// store rdb, shared by every node under prefix.
func GetThenIncr(rdb redis.Cmdable, prefix string, l algos.Limit) Deployment {
	return Deployment{
		Name:  "shared GET-then-INCR",
		Quota: l.Rate,
		Node: func(int) (http.Handler, error) {
			lim, err := httplimit.GetThenIncr(rdb, prefix, l)
			if err != nil {
				return nil, err
			}
			return behind(lim, l.Rate)
		},
	}
}
