package study

import "testing"

// The closed form c·⌈L/c⌉ − L is what rounds of c simultaneous reads and
// c increments produce, for every c and L.
func TestLockstepOverIsWhatLockstepRoundsAdmit(t *testing.T) {
	for c := 1; c <= 70; c++ {
		for l := 0; l <= 300; l++ {
			count := 0
			for count < l { // one round: all c read count < l, all c INCR
				count += c
			}
			if got, want := LockstepOver(c, l), count-l; got != want {
				t.Fatalf("LockstepOver(%d, %d) = %d, rounds admit %d over", c, l, got, want)
			}
		}
	}
}
