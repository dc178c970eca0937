package traffic

// Purposes of every random stream this package draws from, each seeded
// from (seed, purpose): no two share draws, so changing one never moves
// another's requests.
//
// A Spec's six (from Spec.Seed): arrival times, thinning, the herd's storm,
// keys, costs and service times, so that changing how keys are chosen
// leaves every time where it was, and a longer run only adds requests at
// the end. The simulator's clients' (from a run's seed): one per open-loop
// client, the edge prober's phase and the clock faults' flood, so that
// changing one client never changes another. A purpose's value seeds its
// stream, so it stays when its constant is renamed: purposeClockFaults
// keeps the "clockdr1" of the clock drill it once was, so that the clock
// faults' requests stay the same bytes. The study's live trials' (from a
// plan's seed): the caller-clock workers' phases and the random release's
// start offsets, whose values are the ones package study seeded them with
// before their traffic moved here ("skew" right-aligned, "overshot"), so
// that its plans stay the same. The Lua differential's calls (from the
// differential's seed) keep the value redis/lua drew them with before they
// moved here, so that every script meets the same calls; the adapters'
// call sequences keep the 0x0e5 their tests drew them with.
const (
	purposeArrive  uint64 = 0x742d617272697665 // "t-arrive"
	purposeThin    uint64 = 0x742d7468696e0000 // "t-thin"
	purposeStorm   uint64 = 0x742d73746f726d00 // "t-storm"
	purposeKeys    uint64 = 0x742d6b6579730000 // "t-keys"
	purposeCost    uint64 = 0x742d636f73740000 // "t-cost"
	purposeService uint64 = 0x742d736572766963 // "t-servic"

	purposeFlood       uint64 = 0x666c6f6f64000000 // "flood"
	purposeBoundary    uint64 = 0x626f756e64617279 // "boundary"
	purposeOnOff       uint64 = 0x6f6e2d6f66660000 // "on-off"
	purposeHonest      uint64 = 0x686f6e6573740000 // "honest"
	purposeFirstHit    uint64 = 0x66697273742d6869 // "first-hi"
	purposeEdge        uint64 = 0x656467652d70726f // "edge-pro"
	purposeClockFaults uint64 = 0x636c6f636b647231 // "clockdr1"

	purposeSkewPhases     uint64 = 0x736b6577         // "skew"
	purposeReleaseOffsets uint64 = 0x6f76657273686f74 // "overshot"

	purposeDifferentialCalls uint64 = 0x6f7665727368 // "oversh"
	purposeCallSequence      uint64 = 0x0e5
)
