package properties

import (
	"flag"
	"fmt"
	"strconv"
	"sync"
	"time"

	"pgregory.net/rapid"
)

// rapidFlags guards rapid's command-line flags, which are the whole test
// binary's: every rapid.Check of this package reads them under the read
// lock, so parallel tests check at once, and FailsWithSeed changes the
// seed under the write lock, so no Check reads it half-written or runs on
// a seed that was not its own.
var rapidFlags sync.RWMutex

// withRapidFlags runs check with rapid's flags held unchanged.
func withRapidFlags(check func()) {
	rapidFlags.RLock()
	defer rapidFlags.RUnlock()
	check()
}

// FailsWithSeed is Fails with rapid's first seed set to seed (a seed of 0
// is refused): the same property, count and seed report the same shrunk
// counterexample on every run and machine, whatever -rapid.seed says, so
// a report of it can be a golden file. It waits until no other Check or
// Fails of the process is running, and holds them off while it runs. It
// panics, as Fails does, on a count below 1 and on a seed of 0.
func FailsWithSeed(prop func(*rapid.T), checks int, seed uint64) (failed bool, report string) {
	if checks < 1 || seed == 0 {
		panic(fmt.Sprintf("properties: FailsWithSeed(prop, %d, %d): a property needs at least 1 case and a seed above 0", checks, seed))
	}
	rapidFlags.Lock()
	defer rapidFlags.Unlock()
	f := flag.Lookup("rapid.seed")
	if f == nil {
		panic("properties: rapid defines no -rapid.seed flag")
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.FormatUint(seed, 10)); err != nil {
		panic(fmt.Sprintf("properties: -rapid.seed=%d: %v", seed, err))
	}
	defer f.Value.Set(old)
	return failsHeld(prop, checks, defaultShrinkBound())
}

// fails is Fails with the shrinking bound given.
func fails(prop func(*rapid.T), checks int, bound time.Duration) (failed bool, report string) {
	withRapidFlags(func() { failed, report = failsHeld(prop, checks, bound) })
	return failed, report
}
