//go:build race

package model_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = true
