package ceiling_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/overshoot-go/overshoot/ceiling"
	"github.com/overshoot-go/overshoot/live"
	"github.com/overshoot-go/overshoot/record"
)

// A ceiling drive is a live.Load of one named key, sent at its Rate or
// back to back: a load that is not one is refused before anything is
// sent, saying why.
func TestADriveIsOfOneNamedKeyAndItsOwnRequests(t *testing.T) {
	target := live.HTTP{Nodes: []string{"http://127.0.0.1:1"}} // never reached
	loop := func() record.Client { return nil }
	for _, c := range []struct {
		name     string
		saturate bool
		ld       live.Load
		workers  int
		says     string
	}{
		{"no key", false, live.Load{Rate: 10, Duration: time.Second}, 0, "one key"},
		{"two keys", false, live.Load{Keys: []string{"a", "b"}, Rate: 10, Duration: time.Second}, 0, "one key"},
		{"a loop of its own", false, live.Load{Keys: []string{"a"}, Loop: loop, Duration: time.Second}, 0, "no Loop or Plan"},
		{"a plan", false, live.Load{Keys: []string{"a"}, Plan: []record.Record{{Key: "a"}}}, 0, "no Loop or Plan"},
		{"saturate, no key", true, live.Load{Duration: time.Second}, 1, "one key"},
		{"saturate, a loop of its own", true, live.Load{Keys: []string{"a"}, Loop: loop, Duration: time.Second}, 1, "no Loop or Plan"},
		{"saturate, no worker", true, live.Load{Keys: []string{"a"}, Duration: time.Second}, 0, "at least one worker"},
		{"saturate, more workers than in flight", true, live.Load{Keys: []string{"a"}, Duration: time.Second, MaxInFlight: 4}, 5, "more than MaxInFlight 4"},
	} {
		var err error
		if c.saturate {
			_, err = ceiling.Saturate(context.Background(), target, c.ld, c.workers)
		} else {
			_, err = ceiling.Drive(context.Background(), target, c.ld)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "ceiling: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %v, want ceiling's saying %q", c.name, err, c.says)
		}
	}
}
