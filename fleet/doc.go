// Package fleet is the cached shared counter of a gateway fleet, as a
// limiter under test: the limiter many API gateways ship, where Nodes
// gateway nodes behind a round-robin load balancer share one counter per
// key in a store, but each node admits against its cached copy of the
// global count plus the units it admitted itself since it last synced, and
// flushes those units and refreshes its copy every Sync µs. Config says how
// big the fleet is and how often it syncs; Config.Spec is its entry point.
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
// # What it owns, and what it must not import
//
// The fleet's model: the store, the nodes' views, the round robin and the
// lazy sync schedule. From this module it imports algos and limiter only:
// no simulator, no Redis. Outside it imports the standard library only.
package fleet
