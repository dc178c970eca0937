package replay_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/redistest"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
	"github.com/overshoot-go/overshoot/replay"
	"github.com/overshoot-go/overshoot/traffic"
	"github.com/redis/go-redis/v9"
)

// oneAtATime is a limit that admits one request per second, so that the
// order two requests are decided in decides which one is admitted.
var oneAtATime = algos.MustLimit(1, algos.Second, 1)

// getSetRecording is two GET/SET requests on one key, told 0 and 10 µs,
// in the order Redis ran their operations (Seq and SetSeq).
func getSetRecording(getA, setA, getB, setB int64, admittedB bool) *replay.Recording {
	return &replay.Recording{
		Case: replay.Case{Algorithm: algos.TokenBucket, Limit: oneAtATime, Deployment: model.GetSet, Nodes: 2},
		Played: []replay.Played{
			{Plan: model.Planned{Key: 0, Node: 0}, Told: 0, Seq: getA, SetSeq: setA, Decided: 0, Admitted: true},
			{Plan: model.Planned{Key: 0, Node: 1}, Told: 10, Seq: getB, SetSeq: setB, Decided: 10, Admitted: admittedB},
		},
	}
}

// The replay applies each operation where Redis ran it, not where it was
// sent: two GETs before either SET both see an empty bucket and both admit
// (the race), while a GET after the other's SET sees it spent.
func TestReplayFollowsRedisOrder(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		getA, setA, getB, setB int64
		admittedB              bool
		want                   replay.Tally
	}{
		{"both GETs before either SET", 1, 3, 2, 4, true, replay.Tally{Admitted: 2, Peak: 2}},
		{"second GET after the first SET", 1, 2, 3, 4, false, replay.Tally{Admitted: 1, Peak: 1}},
	} {
		rec := getSetRecording(tc.getA, tc.setA, tc.getB, tc.setB, tc.admittedB)
		got, differ, err := rec.Replay()
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want || differ != 0 {
			t.Errorf("%s: replay %+v with %d differences, want %+v and none", tc.name, got, differ, tc.want)
		}
		if redis := rec.Redis(); redis != tc.want {
			t.Errorf("%s: Redis's tally %+v, want %+v", tc.name, redis, tc.want)
		}
	}
}

// A recorded decision the model cannot reproduce is counted, not hidden:
// the race's second admit recorded where Redis ran the GET after the SET.
func TestReplayCountsADecisionItCannotReproduce(t *testing.T) {
	rec := getSetRecording(1, 2, 3, 4, true)
	got, differ, err := rec.Replay()
	if err != nil {
		t.Fatal(err)
	}
	if differ != 1 || got.Admitted != 1 {
		t.Errorf("replay %+v with %d differences, want 1 admitted and 1 difference", got, differ)
	}
}

// The atomic scripts are replayed at the time each was told, in Redis's
// order: a node clock a second ahead makes room that the true time has not.
func TestReplayTellsTheAlgorithmWhatRedisWasTold(t *testing.T) {
	rec := &replay.Recording{
		Case: replay.Case{Algorithm: algos.TokenBucket, Limit: oneAtATime, Deployment: model.NodeClock, Nodes: 2, Skew: algos.Second},
		Played: []replay.Played{
			{Plan: model.Planned{Key: 0, Node: 0}, Told: 0, Seq: 1, Decided: 0, Admitted: true},
			{Plan: model.Planned{Key: 0, Node: 1}, Told: algos.Second, Seq: 2, Decided: 10, Admitted: true},
		},
	}
	got, differ, err := rec.Replay()
	if err != nil {
		t.Fatal(err)
	}
	if want := (replay.Tally{Admitted: 2, Peak: 2}); got != want || differ != 0 {
		t.Errorf("replay %+v with %d differences, want %+v and none", got, differ, want)
	}
}

func TestPlayRefusesWhatItCannotPlay(t *testing.T) {
	t.Parallel() // errors only, on no clock
	requests := []record.Request{{Key: 0, Sent: 0}}
	base := replay.Case{Name: "bad", Algorithm: algos.TokenBucket, Limit: oneAtATime, Nodes: 1, Requests: requests}
	for _, tc := range []struct {
		name string
		edit func(*replay.Case)
		addr string
		want string
	}{
		{"ideal", func(c *replay.Case) { c.Deployment = model.Ideal }, "127.0.0.1:1", "not played live"},
		{"local split", func(c *replay.Case) { c.Deployment = model.LocalSplit }, "127.0.0.1:1", "not played live"},
		{"no requests", func(c *replay.Case) { c.Deployment, c.Requests = model.StoreClock, nil }, "127.0.0.1:1", "no requests"},
		{"no nodes", func(c *replay.Case) { c.Deployment, c.Nodes = model.StoreClock, 0 }, "127.0.0.1:1", "at least one"},
		{"unreachable Redis", func(c *replay.Case) { c.Deployment = model.StoreClock }, "127.0.0.1:1", "127.0.0.1:1"},
	} {
		c := base
		tc.edit(&c)
		rec, err := replay.Play(context.Background(), &redis.Options{Addr: tc.addr}, "replay-test:", c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Play = %v, %v; want an error saying %q", tc.name, rec, err, tc.want)
		}
	}
}

// Played live for one second against a real Redis, every decision Redis
// made is reproduced by the model's store, for an atomic script and for
// the GET/SET client; and only the GET/SET client has legs back and to SET
// (held as their sum, the time from its GET to its SET on Redis's own
// clock: where between them the node decided is read off the synced
// clock, whose error on a loaded machine can outgrow a loopback leg).
// The two play at once, on keys of their own: the sequence key orders each
// exactly, however the machine delays the nodes.
func TestPlayThenReplayReproducesEveryDecision(t *testing.T) {
	t.Parallel() // it mostly waits for real time; the sequence key is exact under load
	s := redistest.Start(t)
	limit := algos.MustLimit(100, algos.Second, 100)
	requests, err := traffic.OpenLoop(2, limit, algos.Second)
	if err != nil {
		t.Fatal(err)
	}
	prefix := s.Prefix(t)
	var wg sync.WaitGroup
	for i, d := range []model.Deployment{model.StoreClock, model.GetSet} {
		wg.Go(func() {
			c := replay.Case{Name: d.String(), Algorithm: algos.TokenBucket, Limit: limit, Deployment: d, Nodes: 2, Seed: 2, Requests: requests}
			rec, err := replay.Play(context.Background(), s.Options(), prefix+"replay:"+string(rune('a'+i))+":", c)
			if err != nil {
				t.Error(err)
				return
			}
			got, differ, err := rec.Replay()
			if err != nil {
				t.Error(err)
				return
			}
			redis := rec.Redis()
			if differ != 0 || got != redis {
				t.Errorf("%s: the replay %+v differs from Redis %+v in %d decisions", d, got, redis, differ)
			}
			legs := rec.MeanDelays()
			if back := legs.Back+legs.Set > 0; back != (d == model.GetSet) || legs.Out < 1 {
				t.Errorf("%s: mean legs %+v µs, want a leg out, and legs back and to the SET only for GET/SET", d, legs)
			}
			t.Logf("%s: %d requests, Redis admitted %d (peak %.2fx), the replay the same; mean legs %+v µs", d, len(requests), redis.Admitted, redis.Peak, legs)
		})
	}
	wg.Wait()
}
