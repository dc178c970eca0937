// Package fleet is the two shapes a fleet of rate-limiting nodes has, each
// as a deterministic limiter under test: the cached shared counter
// (CachedCounter) and the owner fleet (OwnerConfig, "The owner shape"
// below). Replay plays either on what a recorded run did (Occurrence): its
// requests on the nodes that decided them, its syncs or broadcasts when
// its timers really fired.
//
// Which real designs each shape models (as documented by each project; no
// numbers of theirs are assumed here):
//
//   - The cached counter: gateway plugins that count locally and push to,
//     and read back from, a shared store on a sync interval, such as Kong's
//     Rate Limiting Advanced plugin with a sync_rate above 0 (0 is its
//     synchronous mode, as Sync 0 is here). No node is special: each
//     flushes and refreshes on its own timer.
//   - The owner fleet: peer-to-peer limiters that hash each key to an
//     owning peer, such as gubernator's GLOBAL behavior: a peer answers
//     from its cached copy, its hits go to the owner (gubernator batches
//     them: Batched), the owner totals them and updates every peer with
//     the key's status. The owner decides on the authoritative count.
//
// The cached shared counter is the limiter many API gateways ship, where Nodes
// gateway nodes behind a round-robin load balancer share one counter per
// key in a store, but each node admits against its cached copy of the
// global count plus the units it admitted itself since it last synced, and
// flushes those units and refreshes its copy every Sync µs. CachedCounter
// says how big the fleet is and how often it syncs; CachedCounter.Spec is
// its entry point.
//
// It promises what the fleet is meant to enforce, the fixed window's "at
// most Rate units in each aligned window" (algos.AlignedWindowPromise), and
// breaks it by design whenever Nodes > 1 and Sync > 0: the overshoot is
// what overshoot measures. The bound it keeps instead is stated below and
// held by a property.
//
// # The model
//
// Time is integer µs on the caller's clock, within ±algos.MaxTime; windows
// are aligned to the epoch, W = Limit.Window, and a time t is in window FloorDiv(t, W). The
// limit is Limit.Rate units per window per key; Burst is not used.
//
//   - Round robin. The i-th decided call (0-based, counting every Allow and
//     AllowWeighed over all keys; a call that fails its input checks never
//     reaches a node and is not counted) goes to node i mod Nodes.
//   - The store holds, per key, a window and a count. Each node that has
//     handled a key holds its view of it: a cached window, the cached
//     global count G of that window, and its local delta D (units it
//     admitted in that window and has not flushed).
//   - A node admits a request of cost c when G + D + c ≤ Rate, and then
//     D += c. Otherwise it denies: RetryAfter and Reset are the µs to the
//     end of the current window (when the count starts over), and
//     Remaining is max(0, Rate − G − D) after the decision.
//   - A node asked about a window other than its cached one starts its view
//     over in that window: G = 0, D = 0. It does not know what the others
//     admitted there until it syncs. A node handling a key for the first
//     time starts the same way: it never reads the store between syncs.
//     The unflushed D is discarded, not flushed: with calls in time order
//     the other window is always a later one, and D's window is over, so
//     no decision could use it. A caller whose clock is behind can send a
//     node back to an earlier window, where it starts over at 0 as well,
//     forgetting its unflushed units of the later one.
//   - Sync. Node j syncs at the times k·Sync + j·Sync/Nodes (integer
//     division) for every integer k, on the same clock as the calls:
//     staggered phases, aligned to the epoch. A sync of a node holding the key flushes D into the store for
//     D's window: added to the count if the store is in that window,
//     starting the store over in that window if it is in an earlier one (or
//     empty), and dropped if the store is already in a later one. D becomes
//     0. Then, if the sync instant is in a later window than the node's
//     cached one, the node's view moves to the sync instant's window; and G
//     becomes the store's count for the node's window (0 if the store is in
//     another window). Syncs of a node that has not handled the key do
//     nothing for it.
//   - A sync at the same µs as a request happens before it; syncs at the
//     same µs happen in node order. Syncs are not events anyone calls: when
//     a request for a key arrives at t, every sync instant of every node in
//     (the latest time already told for that key, t] is applied first, in
//     time order. Keys are independent, so doing this per key on demand is
//     exact. It is cheap after any idle gap: once no node holds a delta for
//     the key the store cannot change, so each node needs only its latest
//     sync instant ≤ t; at most about 2·Nodes syncs are applied per request.
//     A call told a time earlier than one already told for its key (a
//     skewed caller) applies no syncs: they have happened.
//   - Sync = 0 is synchronous: every decision reads the store's count for
//     the request's window (0 if the store holds another window), decides
//     on it and, when it admits, writes the window and the new count back,
//     exactly what algos.FixedWindow does to its state (limiter.Memory for
//     a cost above 1). The fleet is then the fixed
//     window, call for call, with any number of nodes and any order of
//     times, and the nodes hold nothing. With one node and any Sync, the
//     node knows every unit admitted and the fleet is again the fixed window
//     (for calls in time order).
//
// # The overshoot bound
//
// For calls in time order, take one key and one aligned window w. Call a
// run of node j the units it admits in w within one of its sync periods
// [k·Sync + off_j, (k+1)·Sync + off_j), off_j = j·Sync/Nodes; let m_j be
// node j's largest run in w, and M the largest m_j. Then
//
//	admitted in w ≤ Rate + Σ_{j ≠ j'} m_j ≤ Rate + (Nodes − 1)·M ≤ Nodes·Rate
//
// for some node j' that handled the key before w ended; with Sync = 0 or
// one node, admitted in w ≤ Rate.
//
// Proof. Only syncs in w add units of w to the store's count C, and a run
// is flushed when it ends. A run that begins at a sync in w of a node
// holding the key reads G = C and admits at most Rate − C; any other run
// (begun before w, or by a node that did not hold the key yet) at most
// Rate. (a) If C reaches Rate, first at the sync τ (in the order syncs are
// applied), every run begun at a later sync of a node holding the key
// admits nothing: each node adds, besides what C held just before τ (C⁻),
// only the run it was in at τ or, if it did not hold the key then, the run
// of its first request. Let j' be the node holding the key whose run at τ
// began at the latest sync: no run ended between that sync and τ (its node
// would have begun a later one), so j' read C⁻ and its run is at most Rate
// − C⁻. (b) If C stays below Rate, the units of w are the final C plus
// each node's last run, and the node j' whose last run began at the latest
// sync in w read the final C. Either way C and the run of j' come to at
// most Rate, and every other node adds one run. (With no sync in w of a
// node holding the key, C = 0 and j' is any node that handled it.)
//
// Nodes·Rate is reached: Nodes·Rate requests at one instant with no sync
// between them are admitted, Rate by each node.
//
// Limiter also answers limiter.Weighed (a request's cost is its units;
// its service time is ignored) and limiter.Sized (3 cells per node and key
// it has handled, 2 per key the store holds).
//
// # The owner shape
//
// OwnerConfig{Nodes, Sync, Batched} on the same clock, windows and round
// robin as above; OwnerConfig.Spec is its entry point.
//
//   - Key k is owned by node k mod Nodes. The owner holds the key's
//     record: a window and a count, the authoritative state. Every other
//     node (a peer) holds a copy: a window, the count G it was told, and
//     D, the units it admitted since.
//   - The owner decides on its record, as the fixed window does (a denial
//     writes nothing); the record's count may exceed Rate (peers' hits).
//   - A peer admits a request of cost c when G + D + c ≤ Rate, and then
//     D += c; asked about another window than its copy's, it starts over
//     there at G = D = 0. Its hit reaches the owner the same µs, added to
//     the record after the decision (a later window starts the record
//     over, an earlier one is dropped); Batched, it is queued instead.
//   - Broadcast. The owner of k broadcasts it at k'·Sync + Offset(owner)
//     for every integer k' (owners staggered as the syncs above are), before
//     the requests of the same µs: Batched, every peer's queue (its D) is
//     added to the record first; then every peer's copy becomes (the
//     instant's window, the record's count of it or 0, D = 0). Broadcasts
//     are applied lazily per key, when a request for it arrives; only the
//     latest instant since the last request matters, since none between
//     can change the record.
//   - Sync = 0: every peer asks the owner: the fixed window, call for call,
//     any nodes, any order of times, cells included. One node: it owns
//     every key, and it is the fixed window again, with any Sync.
//
// It promises algos.AlignedWindowPromise, and keeps this bound for calls in
// time order. For one key and one aligned window w, let m_j be node j's
// largest run in w: the units it admits in w between two broadcasts of the
// key (within one period [k'·Sync + off, (k'+1)·Sync + off) of its owner).
//
//	hits at once:  admitted in w ≤ Rate + Σ_{j ≠ owner} m_j
//	batched:       admitted in w ≤ Rate + Σ_j m_j − max_j m_j
//
// both ≤ Rate + (Nodes − 1)·max_j m_j ≤ Nodes·Rate; with Sync = 0 or one
// node, ≤ Rate.
//
// Proof. Let C be the record's count of w. At w's start and at each
// broadcast in w (the refresh points) every copy of w is (G = C, D = 0),
// and C is every unit of w admitted before it: at once because each hit
// lands as it is admitted, batched because the broadcast takes every
// queue first (a copy started over inside w started at C = 0, at w's
// start). Let b be the last refresh point with C < Rate (w's start is
// one). At every later broadcast C ≥ Rate, and from then on no peer (G ≥
// Rate) and not the owner (its count includes C) admits in w. So every
// unit after b is admitted before the next broadcast: node j adds D_j ≤
// m_j, and each peer's D_j ≤ Rate − C(b). Batched, the owner's count is
// C(b) plus its own D, so its D ≤ Rate − C(b) as well: admitted = C(b) +
// Σ_j D_j ≤ Rate + Σ_{j ≠ j1} D_j for any j1; take j1 with the largest m.
// At once, if the owner admits after b, its last admit leaves the count ≤
// Rate and only peers admit after it, at most D_j each; if it does not,
// admitted = C(b) + Σ_peers D_j ≤ Rate + the other peers' D_j. Nodes·Rate
// is reached: at one instant the owner admits Rate, then each peer Rate on
// its copy of 0.
//
// # What it owns, and what it must not import
//
// The fleets' models: the store, the owner's records, the nodes' views,
// the round robin, the lazy sync and broadcast schedules, and Replay. From this module it imports algos and limiter only:
// no simulator, no Redis. Outside it imports the standard library only.
package fleet
