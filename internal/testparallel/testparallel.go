package testparallel

import (
	"flag"
	"strconv"
)

// Set has the binary run n parallel tests at once (the testing package's
// -test.parallel), unless the command line sets -test.parallel itself.
// Call it from TestMain, before m.Run.
func Set(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
