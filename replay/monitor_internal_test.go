package replay

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/model"
)

func TestParseMonitorLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		at   int64
		addr string
		ok   bool
	}{
		{`+1796130842.757976 [0 172.17.0.1:42786] "evalsha" "0123" "0"` + "\r\n", 1796130842757976, "172.17.0.1:42786", true},
		{`+1796130842.000001 [0 lua] "TIME"` + "\r\n", 1796130842000001, "lua", true},
		{`+1796130842.5 [0 lua] "TIME"`, 0, "", false}, // not µs
		{`+1796130842.757976 "evalsha"`, 0, "", false},
		{`-ERR something`, 0, "", false},
	} {
		at, addr, ok := parseMonitorLine(tc.line)
		if at != tc.at || addr != tc.addr || ok != tc.ok {
			t.Errorf("%q: %d %q %v; want %d %q %v", tc.line, at, addr, ok, tc.at, tc.addr, tc.ok)
		}
	}
	if !isTime(`+1.000001 [0 lua] "time"`+"\r\n") || isTime(`+1.000001 [0 lua] "TIME" "x"`) {
		t.Error("isTime")
	}
}

// When a node's MONITOR lines do not add up to the commands its calls sent,
// or it dialled again, no call is given a place: the recording says why,
// and the replay falls back to the estimate.
func TestOrderFallsBackToTheEstimate(t *testing.T) {
	rec := &LiveRecording{Origin: 1000, Calls: []Call{
		{Plan: model.Planned{Node: 0}, Commands: 1},
		{Plan: model.Planned{Node: 1}, Commands: 2},
	}}
	lines := []monitored{{at: 1005, seq: 1, addr: "a"}, {at: 1006, seq: 2, addr: "b"}, {at: 1007, seq: 3, addr: "b", clock: 1010}}
	counters := []*commandCounter{{}, {}}
	if got := rec.order(lines, []string{"a", "b"}, counters); got != "MONITOR" || rec.Calls[0].Seq != 1 || rec.Calls[0].Ran != 5 ||
		rec.Calls[1].Seq != 3 || rec.Calls[1].Ran != 10 {
		t.Fatalf("order = %q, calls %+v; want MONITOR, the first at seq 1 ran 5, the second at its last command, seq 3, TIME 10", got, rec.Calls)
	}
	rec.Calls[0].Seq, rec.Calls[1].Seq = 0, 0
	if got := rec.order(lines[:2], []string{"a", "b"}, counters); !strings.Contains(got, "node 1 sent 2 commands and MONITOR showed 1") {
		t.Errorf("order = %q; want it to say node 1's lines are short", got)
	}
	counters[0].dials.Add(1)
	if got := rec.order(lines, []string{"a", "b"}, counters); !strings.Contains(got, "node 0 dialled 1") {
		t.Errorf("order = %q; want it to say node 0 dialled", got)
	}
	if rec.Calls[0].Seq != 0 || rec.Calls[1].Seq != 0 {
		t.Errorf("an unordered recording placed calls: %+v", rec.Calls)
	}
}

// Redis 7 shows a script's own commands after the script's line, and a
// live run learns so even while other clients' scripts run on the same
// store (a shared test Redis, a busy production one): their commands come
// between MONITOR's start and the probe's, and only the probe's own lines,
// which carry its tag, may answer. Taken the other way, every node's TIME
// would be given to the call after its own.
func TestMonitorLearnsTheOrderBesideOtherScripts(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	probe, neighbour := s.Client(t), s.Client(t)
	busy, stop := context.WithCancel(ctx)
	var others atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for busy.Err() == nil {
			if neighbour.Eval(busy, "return redis.call('TIME')", nil).Err() == nil {
				others.Add(1)
			}
		}
	})
	const probes = 20
	for i := range probes {
		m, err := startMonitor(ctx, s.Options(), nil, probe)
		if err != nil {
			t.Fatal(err)
		}
		m.conn.Close()
		if !m.innerAfter {
			t.Errorf("probe %d of %d: the monitor took a script's commands to come before its line", i+1, probes)
		}
	}
	stop()
	wg.Wait()
	// The neighbour must have run beside the probes for the claim to be tested.
	if n := others.Load(); n < probes {
		t.Errorf("the neighbour ran %d scripts beside %d probes: too few to come between", n, probes)
	} else {
		t.Logf("%d probes beside %d scripts of a neighbour", probes, n)
	}
}
