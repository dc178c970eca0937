package live

import (
	"testing"

	"github.com/overshoot-go/overshoot/record"
)

// An open loop's records come back in the order their requests were let
// go, also those stamped in one µs and answered in another order; a closed
// loop's, by Sent.
func TestRecordsComeBackInTheOrderTheyWereLetGo(t *testing.T) {
	answered := []record.Record{{Key: "c", Sent: 7}, {Key: "a", Sent: 7}, {Key: "d", Sent: 9}, {Key: "b", Sent: 7}}
	got := inSendOrder(append([]record.Record(nil), answered...), []uint64{2, 0, 3, 1})
	for i, want := range []string{"a", "b", "c", "d"} {
		if got[i].Key != want {
			t.Fatalf("open loop: record %d is %s's, let go %s's: %v", i, got[i].Key, want, got)
		}
	}
	got = inSendOrder(append([]record.Record(nil), answered...), nil)
	for i, want := range []string{"c", "a", "b", "d"} {
		if got[i].Key != want {
			t.Fatalf("closed loop: record %d is %s's, want %s's by Sent (stable): %v", i, got[i].Key, want, got)
		}
	}
}
