//go:build !race

package drills_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = false
