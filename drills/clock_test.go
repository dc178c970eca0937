package drills_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/redis/lua"
)

// A failover to a replica whose clock is off steps the store's clock, and
// libfaketime steps a real Redis's (the locally built image preloads it;
// Redis TIME and key expiry both follow it). On a store 60 s ahead each
// bucket read by TIME hands a drained key a whole fresh burst, and every
// key a node-clock fleet wrote expires at once (its TTL covers a second
// of idle, not a minute): a fresh burst for node-clock keys too, which the
// simulator, keeping its keys, leaves out. On a store 60 s behind the
// leaky bucket and GCRA answer a drained key with a Retry-After of a
// minute, while the token bucket moves its refill time back and goes on
// refilling (a Retry-After under a second).
//
// Badge: real store clock step
func TestFindingRealStoreClockStep(t *testing.T) {
	t.Parallel() // its own containers, judged on counts, not on how fast the machine is
	start := time.Now()
	ct := redistest.StartWith(t, redistest.Options{
		HostNetwork: true,                 // as every drill's own server: a cheaper start, no userland proxy
		Image:       redistest.LocalImage, // the one image that carries libfaketime
		Env: map[string]string{
			"LD_PRELOAD":              redistest.FaketimePreload,
			"FAKETIME_TIMESTAMP_FILE": "/shared/faketime",
			"FAKETIME_NO_CACHE":       "1",
		},
		// The clock's file in a directory of this machine (with the engine
		// here): a step is a rename, not a copy through the engine, and the
		// server, which reads the file at every clock call, reads it faster.
		SharedDir: "/shared",
		Files:     map[string][]byte{"/shared/faketime": []byte("+0\n")},
	})
	c := ct.Client(t)
	ctx := context.Background()
	t.Logf("started in %v", time.Since(start))
	// step sets the store's clock offset s seconds from true time, and
	// waits until Redis TIME shows it (within half a second).
	step := func(s int) {
		t.Helper()
		if err := ct.CopyFile(ctx, "/shared/faketime", fmt.Appendf(nil, "%+d\n", s)); err != nil {
			t.Fatal(err)
		}
		off := time.Duration(s) * time.Second
		if err := drillWait(ctx, 5*time.Second, 10*time.Millisecond, func(ctx context.Context) (bool, string) {
			rt, err := c.Time(ctx).Result()
			d := time.Until(rt) - off
			return err == nil && d.Abs() < 500*time.Millisecond, fmt.Sprintf("TIME %v off true time (want %v), %v", time.Until(rt), off, err)
		}); err != nil {
			t.Fatalf("the store's clock does not take the step: %v", err)
		}
	}
	l := algos.MustLimit(20, algos.Second, 20)
	buckets := []string{algos.TokenBucket.Name, algos.LeakyBucket.Name, algos.GCRA.Name}
	scripts := map[string]*lua.Script{}
	for _, name := range buckets {
		s, err := lua.New(name)
		if err != nil {
			t.Fatal(err)
		}
		scripts[name] = s
	}
	// burst calls key n times at the store's time (now < 0) or the given
	// node time, back to back (one pipeline: the faked server, which reads
	// its clock's file at every clock call, is slow at each command), and
	// returns the admits and the last answer.
	burst := func(name, key string, n int, now int64) (int, algos.Decision) {
		t.Helper()
		calls := make([]lua.Args, n)
		for i := range calls {
			calls[i] = lua.Args{Key: key, Limit: l, Told: now}
		}
		replies, err := scripts[name].DoAll(ctx, c, calls)
		if err != nil {
			t.Fatal(err)
		}
		admitted, last := 0, algos.Decision{}
		for _, r := range replies {
			if last = r.Decision; last.Allowed {
				admitted++
			}
		}
		return admitted, last
	}
	nodeNow := func() int64 { return time.Now().UnixMicro() }
	var report strings.Builder
	fmt.Fprintf(&report, "real store clock step, %s with libfaketime, limit %v; each key drained first (25 calls at once)\n", ct.Source, l)

	// 60 s ahead.
	const nodeKeys = 20
	for _, name := range buckets {
		burst(name, "ahead:"+name, 25, -1)
	}
	for k := range nodeKeys {
		burst(algos.TokenBucket.Name, fmt.Sprintf("node:%d", k), 25, nodeNow())
	}
	step(60)
	fresh := map[string]int{}
	for _, name := range buckets {
		fresh[name], _ = burst(name, "ahead:"+name, 25, -1)
		fmt.Fprintf(&report, "  store 60 s ahead, %-13s read by TIME: %2d of 25 admitted at once (burst %d)\n", name, fresh[name], l.Burst)
		if fresh[name] < int(l.Burst)-1 {
			t.Errorf("%s: a store 60 s ahead gave a drained key %d at once, not a fresh burst of %d", name, fresh[name], l.Burst)
		}
	}
	gone := 0
	for k := range nodeKeys {
		n, err := c.Exists(ctx, fmt.Sprintf("node:%d", k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		gone += int(1 - n)
	}
	nodeFresh, _ := burst(algos.TokenBucket.Name, "node:0", 25, nodeNow())
	fmt.Fprintf(&report, "  store 60 s ahead, node-clock token-bucket keys: %d of %d expired at the step; key 0 then admitted %d of 25 at once\n", gone, nodeKeys, nodeFresh)
	if gone != nodeKeys || nodeFresh < int(l.Burst)-1 {
		t.Errorf("a store 60 s ahead expired %d of %d node-clock keys and then admitted %d at once; want all expired and a fresh burst", gone, nodeKeys, nodeFresh)
	}

	// 60 s behind: back to true time first, drain, then step back.
	step(0)
	for _, name := range buckets {
		burst(name, "behind:"+name, 25, -1)
	}
	step(-60)
	time.Sleep(200 * time.Millisecond)
	var lockout time.Duration
	for _, name := range buckets {
		got, last := burst(name, "behind:"+name, 1, -1)
		wait := time.Duration(last.RetryAfter) * time.Microsecond
		fmt.Fprintf(&report, "  store 60 s behind, %-13s one call 200 ms later: %d admitted, Retry-After %v\n", name, got, wait.Round(time.Millisecond))
		if name == algos.TokenBucket.Name {
			// It moves its refill time back to the store's and refills from there.
			if wait > time.Second {
				t.Errorf("token bucket: a store 60 s behind said Retry-After %v; it should go on refilling at its rate", wait)
			}
			continue
		}
		lockout = max(lockout, wait)
		if got != 0 || wait < 59*time.Second {
			t.Errorf("%s: a store 60 s behind admitted %d and said Retry-After %v; want a lockout of about a minute", name, got, wait)
		}
	}
	t.Log("\n" + report.String())
	t.Logf("measured: store 60 s ahead: fresh burst %d/%d, %d/%d node-clock keys expired; 60 s behind: Retry-After %.0f s",
		fresh[algos.TokenBucket.Name], l.Burst, gone, nodeKeys, lockout.Seconds())
}
