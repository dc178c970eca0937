package drills_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/redis/lua"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// clusterLimit: 10 a second with a burst of 5, so that a short sequence
// of calls is admitted, refused, and refilled.
var clusterLimit = algos.MustLimit(10, algos.Second, 5)

// The replay's keys, as replay.Play names them: prefix+"key0" and
// prefix+"seq" in one call.
const (
	clusterUntagged = "overshoot:drill:cluster:"
	clusterTagged   = "overshoot:{drill}:cluster:"
)

// On Redis Cluster a call that names two keys must name keys of one hash
// slot, and overshoot's scripts name two when the caller passes a sequence
// key (lua.Args.SeqKey, which the live replay always does). On a one-node
// cluster (all 16384 slots, cluster_state:ok), through go-redis's
// ClusterClient: the two-key call on "tenant1:key" and "tenant1:seq"
// (two slots) is refused with CROSSSLOT, every time, and never decides;
// on "{tenant1}:key" and "{tenant1}:seq" (one slot, by the hash tag) it
// decides, and stores, exactly as the Go twin on the same told times,
// call for call (40 calls: a burst, refusals, refills), with the sequence
// key counting 1 to 40. A one-key call needs no tag. The live replay
// (replay.Play, store clock, 2 nodes, 1 s of the scenarios' traffic) fails
// with CROSSSLOT under a prefix without a hash tag and runs under
// "overshoot:{drill}:", where the model's replay reproduces every decision
// the cluster made (0 differ, equal tallies: the bound of the replay's
// own live test).
//
// Badge: cluster hash tags
func TestFindingClusterNeedsHashTags(t *testing.T) {
	t.Parallel() // its own containers, judged on counts, not on how fast the machine is
	ct := redistest.StartWith(t, redistest.Options{
		HostNetwork: true,
		Args: []string{"--cluster-enabled", "yes", "--cluster-config-file", "/tmp/nodes.conf",
			"--cluster-announce-ip", "127.0.0.1"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	node := ct.Client(t)
	if err := node.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
	}
	if err := drillWait(ctx, 10*time.Second, 20*time.Millisecond, func(ctx context.Context) (bool, string) {
		info, err := node.ClusterInfo(ctx).Result()
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(info, "cluster_state:ok"), info
	}); err != nil {
		t.Fatalf("the cluster is not ok: %v", err)
	}
	ready := time.Since(start)

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{ct.Addr}, Password: ct.Password, DisableIdentity: true, MaxRedirects: 1})
	t.Cleanup(func() { cc.Close() })
	script := drillTokenBucket(t)
	slot := func(key string) int64 {
		t.Helper()
		n, err := node.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Two slots: refused, on every call.
	untagged := lua.Args{Key: "tenant1:key", SeqKey: "tenant1:seq", Limit: clusterLimit}
	if a, b := slot(untagged.Key), slot(untagged.SeqKey); a == b {
		t.Fatalf("%s and %s share slot %d: pick other names", untagged.Key, untagged.SeqKey, a)
	}
	now := time.Now().UnixMicro()
	refused, firstErr := 0, ""
	for i := range 5 {
		untagged.Told = now + int64(i)
		_, err := script.Do(ctx, cc, untagged)
		if err != nil && strings.Contains(err.Error(), "CROSSSLOT") {
			refused++
			if firstErr == "" {
				firstErr = err.Error()
			}
		} else {
			t.Errorf("two keys in two slots, call %d: err %v; want CROSSSLOT", i, err)
		}
	}
	for _, key := range []string{untagged.Key, untagged.SeqKey} {
		if n, err := cc.Exists(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("after the refused calls, EXISTS %s = %d, %v; want 0", key, n, err)
		}
	}

	// One slot, by the hash tag: the script against the Go twin.
	tagged := lua.Args{Key: "{tenant1}:key", SeqKey: "{tenant1}:seq", Limit: clusterLimit}
	var twin algos.State
	times := clusterTimes(now)
	admitted, differ := 0, 0
	for i, at := range times {
		tagged.Told = at
		r, err := script.Do(ctx, cc, tagged)
		if err != nil {
			t.Fatalf("hash-tagged call %d: %v", i, err)
		}
		want := algos.TokenBucket.Decide(&twin, at, clusterLimit)
		if r.Decision != want || !slices.Equal(r.Stored, twin.Stored()) || r.Seq != int64(i+1) {
			differ++
			t.Errorf("hash-tagged call %d at +%s: Redis %+v stored %v seq %d; the twin %+v stored %v seq %d",
				i, algos.FormatMicros(at-now), r.Decision, r.Stored, r.Seq, want, twin.Stored(), i+1)
		}
		if r.Decision.Allowed {
			admitted++
		}
	}
	// One key: no tag needed.
	if _, err := script.Call(ctx, cc, "tenant2:key", clusterLimit, -1); err != nil {
		t.Errorf("a one-key call: %v", err)
	}

	// The live replay.
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(2, limit, algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	deployments := []model.Deployment{model.StoreClock}
	if *drillsFull {
		deployments = append(deployments, model.GetSet)
	}
	if a, b := slot(clusterUntagged+"key0"), slot(clusterUntagged+"seq"); a == b {
		t.Fatalf("the untagged prefix's key0 and seq share slot %d", a)
	}
	var rows []string
	replayDiffer := 0
	for _, d := range deployments {
		c := replay.Case{Name: d.String(), Algorithm: algos.TokenBucket, Limit: limit, Deployment: d, Nodes: 2, Seed: 2, Requests: requests}
		// The two replays at once: each waits for the next edge of a window
		// to start, and the untagged one fails at its first call, on keys
		// the tagged one never names.
		untagged := make(chan error, 1)
		go func() {
			_, err := replay.Play(ctx, ct.Options(), clusterUntagged+d.String()+":", c)
			untagged <- err
		}()
		rec, err := replay.Play(ctx, ct.Options(), clusterTagged+d.String()+":", c)
		untaggedErr := <-untagged
		if untaggedErr == nil || !strings.Contains(untaggedErr.Error(), "CROSSSLOT") {
			t.Errorf("%s: the replay under an untagged prefix: %v; want CROSSSLOT", d, untaggedErr)
		} else {
			rows = append(rows, fmt.Sprintf("replay %s under %q: %s", d, clusterUntagged, clusterShort(untaggedErr)))
		}
		if err != nil {
			t.Fatalf("%s: the replay under %q: %v", d, clusterTagged, err)
		}
		got, differ, err := rec.Replay()
		if err != nil {
			t.Fatal(err)
		}
		redis := rec.Redis()
		replayDiffer += differ
		if differ != 0 || got != redis {
			t.Errorf("%s: the model's replay %+v differs from the cluster's %+v in %d decisions", d, got, redis, differ)
		}
		rows = append(rows, fmt.Sprintf("replay %s under %q: %d requests, the cluster admitted %d (peak %.2fx), the model's replay %d (peak %.2fx), %d decisions differ",
			d, clusterTagged, len(requests), redis.Admitted, redis.Peak, got.Admitted, got.Peak, differ))
	}

	t.Logf("cluster drill, one node of %s at %s, all 16384 slots, cluster_state:ok after %v; limit %d per %s, burst %d; %v in all\n"+
		"two keys in two slots (%s, %s) through ClusterClient: %d of 5 calls refused: %s\n"+
		"two keys in one slot (%s, %s): %d calls, %d admitted, %d differ from the Go twin\n%s",
		ct.Image, ct.Addr, ready.Round(time.Millisecond), clusterLimit.Rate, algos.FormatMicros(clusterLimit.Window), clusterLimit.Burst, time.Since(start).Round(time.Millisecond),
		untagged.Key, untagged.SeqKey, refused, clusterShort(fmt.Errorf("%s", firstErr)),
		tagged.Key, tagged.SeqKey, len(times), admitted, differ, strings.Join(rows, "\n"))
	t.Logf("measured: untagged two-key calls %d/5 CROSSSLOT, tagged %d/%d match the twin; replay untagged CROSSSLOT, tagged %d differ",
		refused, len(times)-differ, len(times), replayDiffer)
}

// clusterTimes is 40 told times from now: a burst of 8 at one instant
// (5 admitted), calls 30 ms apart (some refilled, some not), a second's
// pause (full again), and another burst.
func clusterTimes(now int64) []int64 {
	var ts []int64
	at := now
	for range 8 {
		ts = append(ts, at)
	}
	for range 20 {
		at += 30_000
		ts = append(ts, at)
	}
	at += algos.Second
	for range 12 {
		ts = append(ts, at)
		at += 1_000
	}
	return ts
}

// clusterShort is the first line of an error's text, from CROSSSLOT on
// if it says so.
func clusterShort(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.Index(s, "CROSSSLOT"); i >= 0 {
		return s[i:]
	}
	return s
}
