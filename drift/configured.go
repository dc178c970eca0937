package drift

import (
	"fmt"
	"net/http"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/limiter"
)

// Route is one limit configured in code: the operation it guards, the
// limiter (Spec) and the limit it enforces. A service's routes are the one
// list both its server (Handler) and its gate (Configured) read, so that
// what the gate checks is what is served.
type Route struct {
	Operation
	Spec  limiter.Spec
	Limit algos.Limit
}

// Configured is the policy each route configures: Limit.Rate per
// Limit.Window, and as its burst the most a fresh key is admitted at once
// under Spec (httplimit.QuotaOf: a bucket's Burst, a window's Rate). Two
// routes of one operation, an invalid limit or a Spec that denies a fresh
// key's first request are errors.
func Configured(routes []Route) (map[Operation]Policy, error) {
	out := make(map[Operation]Policy, len(routes))
	for _, r := range routes {
		if _, dup := out[r.Operation]; dup {
			return nil, fmt.Errorf("drift: %s is configured twice", r.Operation)
		}
		if err := r.Limit.Validate(); err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
		burst, err := httplimit.QuotaOf(r.Spec, r.Limit)
		if err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
		out[r.Operation] = Policy{Quota: r.Limit.Rate, Window: r.Limit.Window, Burst: burst}
	}
	return out, nil
}

// Handler serves routes with the reference middleware: each operation
// ("GET /v1/items/{id}", a net/http ServeMux pattern) behind a
// limiter of its own (httplimit.Local of its Spec and Limit, by this
// machine's clock) advertising its quota (httplimit.QuotaOf), keyed by key
// (nil: the middleware's default, the X-API-Key header, else the client's
// IP). next answers the requests admitted.
func Handler(routes []Route, key httplimit.KeyFunc, next http.Handler) (http.Handler, error) {
	mux := http.NewServeMux()
	seen := map[Operation]bool{}
	for _, r := range routes {
		if seen[r.Operation] {
			return nil, fmt.Errorf("drift: %s is configured twice", r.Operation)
		}
		seen[r.Operation] = true
		quota, err := httplimit.QuotaOf(r.Spec, r.Limit)
		if err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
		lim, err := httplimit.Local(r.Spec, r.Limit, nil)
		if err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
		m, err := httplimit.New(lim, httplimit.Options{Quota: quota, Key: key})
		if err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
		pattern := r.Method + " " + r.Path
		if err := register(mux, pattern, m.Wrap(next)); err != nil {
			return nil, fmt.Errorf("drift: %s: %w", r.Operation, err)
		}
	}
	return mux, nil
}

// register is mux.Handle, its panic on a bad pattern returned as an error.
func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("not a ServeMux pattern: %v", v)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}
