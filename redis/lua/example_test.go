package lua_test

import (
	"context"
	_ "embed" // the user's script
	"fmt"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/redis/go-redis/v9"
)

// userScript is the Lua half of a user's own limiter, as a user passes it
// to lua.FromSource: a body that runs after the shared prelude.
//
//go:embed testdata/user-fixed-window.lua
var userScript string

// userFixedWindow is a user's own limiter's Go twin: the Go half of
// testdata/user-fixed-window.lua (userScript), a fixed window that never
// goes back (a clock behind is counted in the stored, later window).
// properties.Check(t, limiter.FromAlgorithm(userFixedWindow)) would hold
// it to the contract.
var userFixedWindow = algos.Algorithm{
	Name:       "user-fixed-window",
	Decide:     decideUserFixedWindow,
	Promise:    algos.AlignedWindowPromise,
	StateDoc:   "window index, count, 0",
	StateInts:  func(algos.Limit) int64 { return 3 },
	ExactRetry: true,
}

// decideUserFixedWindow is written for times of 0 or more, as the
// differential's are, so its / is the floor.
func decideUserFixedWindow(s *algos.State, now int64, l algos.Limit) algos.Decision {
	win := s.Window()
	if idx := now / l.Window; !s.Set || win.Index < idx {
		win = algos.WindowState{Index: idx}
	}
	end := (win.Index+1)*l.Window - now
	d := algos.Decision{Reset: end}
	if win.Count < l.Rate {
		win.Count++
		d.Allowed = true
	} else {
		d.RetryAfter = end
	}
	*s = win.State()
	d.Remaining = l.Rate - win.Count
	return d
}

// A user holds their own script to its Go twin, call for call, as overshoot
// holds its six: lua.Suite runs the differential on the five keys of
// lua.SuiteKeys, told the time and reading TIME (on a simredis.Server, set
// Suite.Clock to it, and the store-clock path reads the calls' times). In a
// test, use t.Fatal and t.Error for the errors and the report
// (TestUserScriptDifferential does).
func ExampleFromSource() {
	l, err := lua.FromSource(userFixedWindow, userScript)
	if err != nil {
		panic(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	rep, err := lua.Suite{Calls: 5000, Seed: 1}.Run(context.Background(), c, l, "mytest:user-fixed-window")
	if err != nil {
		panic(err) // Redis unreachable, a key already there
	}
	// A Lua error, a reply of the wrong shape, a difference, an expiry out
	// of bound or a limit never reached is in the report, and OK is false.
	if !rep.OK() {
		fmt.Println(rep) // the summary, then every key's differences in words
	}
	fmt.Println(rep.Summary())
}
