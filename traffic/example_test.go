package traffic_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/traffic"
)

// Ten seconds of Poisson traffic at 1 a second over three keys of Zipf
// popularity, starting at an epoch time: the same seed prints the same
// lines on every machine of the same architecture.
func Example() {
	tr, err := traffic.TraceSpec{
		Profile:  traffic.Poisson{Rate: 1},
		Duration: 10 * algos.Second,
		Start:    1_700_000_000 * algos.Second,
		Keys:     traffic.Zipf(3, 1).Named("alice", "bob", "carol"),
		Cost:     traffic.Around(2, 1),
		Seed:     1,
	}.Generate()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := traffic.WriteCSV(os.Stdout, tr); err != nil {
		fmt.Println(err)
	}
	// Output:
	// timestamp,key,cost,duration
	// 1700000001.254368,carol,1,0
	// 1700000002.484382,alice,3,0
	// 1700000002.500445,bob,3,0
	// 1700000004.970256,alice,2,0
	// 1700000007.769575,alice,3,0
	// 1700000008.236685,alice,1,0
	// 1700000008.56138,bob,2,0
	// 1700000009.424543,alice,1,0
}

// A recorded trace keeps its epoch timestamps to the µs; Rebase by a day
// brings it within the simulator's range without moving any second,
// minute or hour window edge relative to its requests.
func ExampleReadCSV() {
	in := "timestamp,key,cost\n" +
		"1700000060.000001,alice,1\n" +
		"1700000059.999999,bob,2\n"
	tr, info, err := traffic.ReadCSV(strings.NewReader(in))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tr.Requests[0].Sent, tr.Keys[tr.Requests[0].Key], "reordered:", info.Reordered, "from line", info.FirstOutOfOrder)
	day, shift, _ := tr.Rebase(86_400 * algos.Second)
	fmt.Println(day.Model()[0].Sent, "after moving back", shift/(86_400*algos.Second), "days")
	// Output:
	// 1700000059999999 bob reordered: true from line 3
	// 80059999999 after moving back 19675 days
}
