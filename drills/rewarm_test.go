package drills_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/httplimit"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The rewarm check's settings: every reply from the store held
// rewarmLatency, each call given rewarmBudget. A call on a connection that
// has done its handshake waits one reply (250 ms), and has 230 ms to spare
// for a busy machine; a call on a fresh one waits two (HELLO, then the
// script: 500 ms), past its budget. The spare time is what a loaded raced
// run needs: at 100 ms and a budget of 150, make test -p 4 with both cores
// busy once decided none of 22 calls, and at 200 ms and a budget of 300 a
// loaded make test decided none of 44.
const (
	rewarmLatency = 250 * time.Millisecond
	rewarmBudget  = 480 * time.Millisecond
	rewarmPace    = 50 * time.Millisecond
	rewarmSpan    = 4 * time.Second
)

// A store that answers again, but slowly, after its connections broke:
// go-redis does a fresh connection's handshake within the first call on
// it, so when a handshake and a call do not fit one call's budget, every
// call on a fresh connection fails, its connection is dropped, and the next
// call starts afresh. httplimit.Script then pings the store in the
// background, with a budget of its own, and the pool keeps the connection
// the ping made: the next call waits one reply, within its budget, and the
// store decides. The control, the same script on a client that cannot
// ping, dials for every call and stays refused, with one way out: a
// deadline is a timer, and a process starved at that moment can run it
// after a reply that came late, so a call that took two replies gets
// through and leaves its connection warm for the calls after it (seen
// when a loaded make test decided 3 of 62, and whenever the process is
// stopped for 40 ms in every 100). So the control is judged by each call's
// recorded time: its first decided call took two replies or more.
func TestScriptReachesASlowStoreThatAHandshakeCannotReachInOneBudget(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	proxy := drillProxy(t, "redis-slow", s.Addr)
	spec := fmt.Sprintf(`{"name":"slow","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":%d}}`, rewarmLatency.Milliseconds())
	if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
		t.Fatalf("adding the latency: %v", err)
	}
	script := drillTokenBucket(t)
	if err := script.Load(ctx, s.Client(t)); err != nil {
		t.Fatal(err)
	}
	limit := algos.MustLimit(1000, algos.Second, 1000) // never the reason a call is refused
	open := func(name string, wrap func(*redis.Client) redis.Scripter) (httplimit.Limiter, *redis.Client) {
		// Room for every call in flight (ten: a budget's worth of the pace)
		// and a ping, so that no call waits for a connection and spends its
		// budget on the wait.
		c := redis.NewClient(&redis.Options{Addr: proxy.Listen, Password: s.Password, DisableIdentity: true,
			ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 16})
		t.Cleanup(func() { c.Close() })
		lim, err := httplimit.Script(wrap(c), script, s.Prefix(t)+name+":", limit)
		if err != nil {
			t.Fatal(err)
		}
		return lim, c
	}
	pingingLimiter, _ := open("pinging", func(c *redis.Client) redis.Scripter { return c })
	controlLimiter, controlClient := open("control", func(c *redis.Client) redis.Scripter { return cannotPing{c} })
	limiters := []httplimit.Limiter{pingingLimiter, controlLimiter}
	// A call's time runs from before Allow to after it: never shorter than
	// the replies it waited for, whatever the machine did meanwhile.
	type tally struct {
		calls, decided, timedOut int
		first, firstTook         time.Duration // the first decided call: when it ended, how long it took
		oneReply                 int           // decided in less than two replies' time
		errs                     []string
	}
	tallies := make([]tally, len(limiters))
	start := time.Now()
	var wg sync.WaitGroup
	for i, lim := range limiters {
		wg.Go(func() {
			tl := &tallies[i]
			var calls sync.WaitGroup
			var mu sync.Mutex
			for time.Since(start) < rewarmSpan {
				calls.Go(func() {
					cctx, cancel := context.WithTimeout(ctx, rewarmBudget)
					defer cancel()
					called := time.Now()
					_, err := lim.Allow(cctx, "k")
					took := time.Since(called)
					mu.Lock()
					defer mu.Unlock()
					tl.calls++
					if err != nil {
						if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
							tl.timedOut++
						}
						if len(tl.errs) < 2 {
							tl.errs = append(tl.errs, err.Error())
						}
						return
					}
					if tl.decided++; tl.decided == 1 {
						tl.first, tl.firstTook = time.Since(start), took
					}
					if took < 2*rewarmLatency {
						tl.oneReply++
					}
				})
				time.Sleep(rewarmPace)
			}
			calls.Wait()
		})
	}
	wg.Wait()
	pinging, control := tallies[0], tallies[1]
	t.Logf("replies held %v, a call's budget %v, one call every %v for %v: pinging decided %d of %d calls (%d in one reply's time), the first %v in; control %d of %d (%d in one reply's time, the first in %v), %d out of budget (its first errors: %v)",
		rewarmLatency, rewarmBudget, rewarmPace, rewarmSpan, pinging.decided, pinging.calls, pinging.oneReply, pinging.first.Round(time.Millisecond),
		control.decided, control.calls, control.oneReply, control.firstTook.Round(time.Millisecond), control.timedOut, control.errs)
	if control.decided != 0 && control.firstTook < 2*rewarmLatency {
		// Only a connection whose handshake was done before the call can
		// answer in one reply; the pool's counts tell whether one was found.
		st := controlClient.PoolStats()
		t.Errorf("control: its first decided call took %v, less than the two replies (%v) a fresh connection's handshake and call take, though it cannot ping and no call of its own had got through before (its pool: %d hits, %d misses, %d timeouts, %d stale, %d connections open)",
			control.firstTook.Round(time.Millisecond), 2*rewarmLatency, st.Hits, st.Misses, st.Timeouts, st.StaleConns, st.TotalConns)
	}
	if control.timedOut == 0 {
		t.Errorf("control: none of %d calls ran out of its budget %v, though each on a fresh connection needs two replies (%v): the budget is not being kept; its first errors: %v",
			control.calls, rewarmBudget, 2*rewarmLatency, control.errs)
	}
	if pinging.oneReply == 0 {
		t.Errorf("Script's limiter decided none of %d calls in one reply's time (%d decided in all), though a connection that has done its handshake answers in one reply (%v, within %v); its first errors: %v",
			pinging.calls, pinging.decided, rewarmLatency, rewarmBudget, pinging.errs)
	}
}

// cannotPing is a Redis client with only the calls a script needs: what
// httplimit.Script is given by a caller whose client cannot ping.
type cannotPing struct{ redis.Scripter }
