package lua_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/algos/lua"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// myWindow is the Lua half of a user's limiter: a fixed window counting in
// the prelude's three-integer layout (window index, count, unused). It runs
// after the prelude, which has parsed now and the limit and defines load3,
// store3, floordiv and reply.
const myWindow = `
local idx = floordiv(now, window)
local w, count, unused = load3()
if w == nil or w ~= idx then
  w, count, unused = idx, 0, 0
end
local reset = (idx + 1) * window - now
local allowed, retry = false, 0
if count < rate then
  count = count + 1
  allowed = true
else
  retry = reset
end
store3(w, count, unused, reset)
return reply(allowed, rate - count, retry, reset, {w, count, unused})
`

// myWindowTwin is the Go half: the same decision, storing what the script
// replies as stored (State.Stored lists A, B, C). properties.Check(t,
// myWindowTwin) holds it to the algorithm contract.
var myWindowTwin = algos.Algorithm{
	Name:     "my-window",
	StateDoc: "window index, count, unused",
	Promise:  algos.AlignedWindowPromise,
	Decide: func(s *algos.State, now int64, l algos.Limit) algos.Decision {
		if idx := now / l.Window; !s.Set || s.A != idx { // now >= 0: / is the floor
			*s = algos.State{Set: true, A: idx}
		}
		d := algos.Decision{Reset: (s.A+1)*l.Window - now}
		if s.B < l.Rate {
			s.B++
			d.Allowed = true
		} else {
			d.RetryAfter = d.Reset
		}
		d.Remaining = l.Rate - s.B
		return d
	},
}

// A user holds their own script to its Go twin, call for call, as overshoot
// holds its six: in a test, with t.Fatal and t.Error for the errors and
// the report.
func ExampleFromSource() {
	l, err := lua.FromSource(myWindowTwin, myWindow)
	if err != nil {
		panic(err)
	}
	lim := algos.MustLimit(100, algos.Second, 100)
	times, err := lua.DifferentialCalls(1, lim, 1_700_000_000_000_000, 5000)
	if err != nil {
		panic(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	rep, err := lua.Differential(context.Background(), c, l, "mytest:my-window", lim, times)
	if err != nil {
		panic(err) // Redis unreachable, the key already there
	}
	// A Lua error, a reply of the wrong shape, a difference or an expiry
	// out of bound is in the report, and OK is false.
	if !rep.OK() {
		fmt.Println(rep) // the summary, then the first differences in words
	}
	fmt.Println(rep.Summary())
}

// TestLuaExampleAgrees runs ExampleFromSource's script and twin against a
// real Redis, so that the example shown to users is a pair that agrees.
func TestLuaExampleAgrees(t *testing.T) {
	s := redistest.Start(t)
	l, err := lua.FromSource(myWindowTwin, myWindow)
	if err != nil {
		t.Fatal(err)
	}
	lim := algos.MustLimit(7, 3*algos.Second, 7)
	times, err := lua.DifferentialCalls(1, lim, 1_700_000_000_000_000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lua.Differential(context.Background(), s.Client(t), l, s.Prefix(t)+"my-window", lim, times)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Admitted == rep.Calls {
		t.Errorf("the example's script and twin:\n%v", rep)
	}
	t.Log(rep.Summary())
}
