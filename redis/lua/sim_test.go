package lua

import (
	"testing"

	"github.com/overshoot-go/overshoot/simredis"
	"github.com/redis/go-redis/v9"
)

// simStore starts a simredis server for the test, with a client that
// reaches it in process: a store whose clock the test sets, so that the
// store-clock path can be told to the µs what TIME answers
// (DiffOptions.Clock), which a real Redis cannot.
func simStore(t testing.TB) (*simredis.Server, *redis.Client) {
	t.Helper()
	s, err := simredis.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := redis.NewClient(&redis.Options{Dialer: s.Dial, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return s, c
}

// SimStore is simStore for the package's external tests.
var SimStore = simStore
