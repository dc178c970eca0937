//go:build !race

package lua_test

// raceEnabled: this test binary was built with -race, under which a script
// call on simredis (gopher-lua) costs 2 to 5 ms instead of about 30 µs.
const raceEnabled = false
