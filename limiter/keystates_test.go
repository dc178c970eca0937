package limiter_test

import (
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
)

// KeyStates keeps its promises: room made on first use, a key written at
// c with TTL t held but absent at c+t (dropped by At, kept by Held), the
// in-place path only without a TTL, and a wipe that keeps the room.
func TestKeyStatesExpireAndKeepRoom(t *testing.T) {
	l := algos.MustLimit(1, algos.Second, 1)
	ttl := func(algos.Decision, algos.Limit) int64 { return 5 }
	k := limiter.NewKeyStates(ttl, 1)
	if k.Len() != 1 || k.Fast(0) != nil {
		t.Fatalf("Len %d, Fast %v: want 1 key and no in-place path with a TTL", k.Len(), k.Fast(0))
	}
	st := k.At(3, 10)
	if k.Len() != 4 || st.Set {
		t.Fatalf("key 3 at 10: Len %d, state %+v; want room for 4 keys and an absent key", k.Len(), *st)
	}
	st.Set, st.Ints[0] = true, 7
	k.Written(3, 10, algos.Decision{}, l) // gone from 15 on
	if st := k.At(3, 14); !st.Set || st.Ints[0] != 7 {
		t.Errorf("1 µs before its expiry the key was gone: %+v", *st)
	}
	if st := k.Held(3); !st.Set {
		t.Error("Held dropped a key: only At may")
	}
	if st := k.At(3, 15); st.Set {
		t.Errorf("at its expiry the key was still there: %+v", *st)
	}
	k.At(3, 16).Set = true // written without Written: no TTL runs
	if st := k.At(3, 1<<40); !st.Set {
		t.Error("a key whose TTL was dropped with it expired again")
	}
	k.Wipe()
	if k.Len() != 4 || k.Held(3).Set {
		t.Errorf("after Wipe: Len %d, key 3 %+v; want the room kept and every key absent", k.Len(), *k.Held(3))
	}

	plain := limiter.NewKeyStates(nil, 2)
	if plain.Fast(2) != nil || plain.Fast(-1) != nil {
		t.Error("Fast gave a state for a key there is no room for")
	}
	plain.Fast(1).Set = true
	plain.Written(1, 0, algos.Decision{}, l)
	if st := plain.At(1, algos.MaxTime); !st.Set || st != plain.Fast(1) {
		t.Error("without a KeyTTL a key expired, or Fast is not At's state")
	}
}
