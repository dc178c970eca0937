package adversary

import (
	"bufio"
	"fmt"
	"io"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// Write prints the report as text: a header (the limiter, its limit and
// promise, the deployment and its conditions, the attacker's bounds, the
// search's seed and tries), then the minimal attack and the strongest (unless
// it is no stronger than the minimal one), each with what it achieves in words and one line per request: its number, its
// node, the true time it was sent, what its node's clock read then, the
// true time it was decided, and the decision. The same SearchReport always
// prints the same bytes.
func (r SearchReport) Write(w io.Writer) error {
	b := bufio.NewWriter(w)
	cfg, l := r.Config, r.Config.Limit
	fmt.Fprintf(b, "adversary: %s deployed %s\n", cfg.Limiter.Name, cfg.Deployment)
	fmt.Fprintf(b, "limit:     %v\n", l)
	fmt.Fprintf(b, "promise:   %s\n", cfg.Limiter.Promise(l).Text)
	fmt.Fprintf(b, "deployed:  %s\n", deploymentText(cfg))
	if cfg.Deployment != model.Ideal && cfg.Nodes > 1 && cfg.Skew > 0 {
		fmt.Fprintf(b, "clocks:   ")
		for i := range cfg.Nodes {
			fmt.Fprintf(b, " node %d %s", i, signed(record.Offset(i, cfg.Nodes, cfg.Skew)))
			if i < cfg.Nodes-1 {
				b.WriteString(",")
			}
		}
		b.WriteString("\n")
	}
	who := "each sent to the node the attacker picks"
	switch {
	case cfg.Deployment == model.Ideal || cfg.Nodes == 1:
		who = "all to the one node"
	case !cfg.Pinned:
		who = "each sent to the node the random balancer picks"
	}
	fmt.Fprintf(b, "attacker:  one key, at most %d requests from 0 to %s, at most %d in any %s, %s\n",
		r.Bounds.MaxRequests, algos.FormatTime(r.Bounds.Duration), min(int64(r.Bounds.MaxRequests), r.Bounds.MaxRate*l.Rate),
		algos.FormatMicros(l.Window), who)
	fmt.Fprintf(b, "search:    seed %d, %d rounds of rapid, %d simulated runs\n", r.Seed, r.Rounds, r.Tries)

	b.WriteString("\n")
	if r.Minimal == nil {
		fmt.Fprintf(b, "No attack found in %d tries: every attack within the bounds kept the promise.\n", r.Tries)
	} else {
		a := r.Minimal
		fmt.Fprintf(b, "Minimal attack: the fewest requests that break the promise: %d.\n", len(a.Requests))
		fmt.Fprintf(b, "Without any one of them, the promise holds.\n")
		writeAttack(b, r, *a)
	}

	b.WriteString("\n")
	a := r.Strongest
	if m := r.Minimal; m != nil && a.Excess <= m.Excess && len(a.Requests) >= len(m.Requests) {
		fmt.Fprintf(b, "Strongest attack: none stronger found; the most admits beyond the promise, %d, is the minimal attack's.\n", m.Excess)
		return b.Flush()
	}
	if a.Excess > 0 {
		fmt.Fprintf(b, "Strongest attack: the most admits beyond the promise found, %d, with the fewest requests: %d.\n", a.Excess, len(a.Requests))
	} else {
		fmt.Fprintf(b, "Closest attack: the promise held; the highest peak found, %d in any %s, with the fewest requests: %d.\n",
			a.Peak, algos.FormatMicros(l.Window), len(a.Requests))
	}
	writeAttack(b, r, a)
	return b.Flush()
}

// writeAttack prints what a achieves and its trace.
func writeAttack(b *bufio.Writer, r SearchReport, a Attack) {
	l := r.Config.Limit
	if v := a.Violation; v != nil {
		fmt.Fprintf(b, "  first violation: %s\n", v.Reason)
	}
	fmt.Fprintf(b, "  %d of %d admitted; excess %d (admits a limiter keeping the promise would have refused);\n",
		a.Admitted, len(a.Requests), a.Excess)
	fmt.Fprintf(b, "  peak %d in any %s (%s the rate)\n", a.Peak, algos.FormatMicros(l.Window), multiple(int64(a.Peak), l.Rate))
	fmt.Fprintf(b, "  %4s  %4s  %11s  %11s  %11s  %s\n", "#", "node", "sent", "node clock", "decided", "decision")
	for i, f := range a.Fates {
		decision := "denied"
		switch {
		case f.Failed:
			decision = "error"
		case f.Admitted:
			decision = "admitted"
		}
		fmt.Fprintf(b, "  %4d  %4d  %11s  %11s  %11s  %s\n", i+1, f.Node,
			algos.FormatTime(f.Sent), algos.FormatTime(f.Clock), algos.FormatTime(f.Decided), decision)
	}
}

// deploymentText says how cfg deploys its limiter, with the conditions
// that deployment reads.
func deploymentText(cfg model.Config) string {
	store := ""
	if legs := cfg.Legs; legs != (model.Legs{}) {
		store = fmt.Sprintf("the store's legs %s out, %s back, %s to SET", algos.FormatMicros(legs.Out), algos.FormatMicros(legs.Back), algos.FormatMicros(legs.Set))
	} else {
		store = fmt.Sprintf("the store %s away (round trip)", algos.FormatMicros(cfg.RTT))
	}
	store += fmt.Sprintf(", each leg ±%d%%", cfg.Jitter)
	nodes := fmt.Sprintf("%d nodes", cfg.Nodes)
	if cfg.Nodes == 1 {
		nodes = "1 node"
	}
	clocks := "clocks in agreement"
	if cfg.Skew > 0 && cfg.Nodes > 1 {
		clocks = "clocks " + algos.FormatMicros(cfg.Skew) + " apart"
	}
	restarts := "never restarting"
	if cfg.RestartEvery > 0 {
		restarts = "each restarting every " + algos.FormatMicros(cfg.RestartEvery) + " on average, losing its state"
	}
	seed := fmt.Sprintf("; model seed %d", cfg.Seed)
	switch cfg.Deployment {
	case model.Ideal:
		return "one node with a true clock, each request decided when it is sent"
	case model.NodeClock:
		return fmt.Sprintf("%s, %s, one atomic script per request told its node's clock; %s%s", nodes, clocks, store, seed)
	case model.StoreClock:
		return fmt.Sprintf("%s, one atomic script per request reading the store's clock; %s%s", nodes, store, seed)
	case model.StoreWiped:
		return fmt.Sprintf("%s, one atomic script per request reading the store's clock, every key lost at %s; %s%s",
			nodes, algos.FormatTime(cfg.WipeAt), store, seed)
	case model.LocalSplit:
		share := fmt.Sprintf("%d per %s (burst %d)", cfg.Limit.Rate/int64(cfg.Nodes), algos.FormatMicros(cfg.Limit.Window), cfg.Limit.Burst/int64(cfg.Nodes))
		return fmt.Sprintf("%s, no store: each enforces its share, %s, on its own clock, %s, %s%s", nodes, share, clocks, restarts, seed)
	case model.GetSet:
		return fmt.Sprintf("%s, %s, each GETs the state, decides on its copy with its own clock when the reply arrives and SETs it back; %s%s",
			nodes, clocks, store, seed)
	case model.LocalFull:
		return fmt.Sprintf("%s, no store: each enforces the whole limit on its own clock, %s, %s%s", nodes, clocks, restarts, seed)
	}
	return cfg.Deployment.String()
}

// signed prints an offset in µs with its sign.
func signed(us int64) string {
	if us < 0 {
		return "-" + algos.FormatMicros(-us)
	}
	return "+" + algos.FormatMicros(us)
}

// multiple prints n/d with two decimals and an x, rounded down.
func multiple(n, d int64) string {
	h := n * 100 / d
	return fmt.Sprintf("%d.%02dx", h/100, h%100)
}
