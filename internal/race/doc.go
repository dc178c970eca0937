// Package race says whether the binary was built with -race, for the tests
// whose claims the race detector changes: a timing it slows where no meter
// sees it (the blackhole drill's latencies), a script on simredis that it
// makes a hundred times slower, an allocation count it alters on purpose.
// Such a test judges the claim only without it, and says so with it.
//
// # What it owns, and what it must not import
//
// The one constant Enabled, set by the race build tag. It imports nothing;
// tests alone import it.
package race
