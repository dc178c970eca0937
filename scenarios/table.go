package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/model"
)

// Column is one deployment of the table, with the conditions it runs under.
// Each deployment appears once.
type Column struct {
	// Name is the column's heading.
	Name       string
	Deployment model.Deployment
	// Skew between the extreme node clocks, µs.
	Skew int64
	// RestartEvery is the mean µs between a local node's restarts (0: never).
	RestartEvery int64
}

// Columns are the table's deployments under o: the ideal reference, the
// node clock at o.Skew, the store clock, the store wiped at o.WipeAt, the
// local split at o.Skew restarting every o.RestartEvery, and the two
// deployment bugs with clocks in agreement and no restarts, so that the bug
// is all they measure.
func (o Options) Columns() []Column {
	return []Column{
		{Name: "ideal", Deployment: model.Ideal},
		{Name: "node clock " + algos.FormatMicros(o.Skew), Deployment: model.NodeClock, Skew: o.Skew},
		{Name: "store clock", Deployment: model.StoreClock},
		{Name: "store wiped", Deployment: model.StoreWiped},
		{Name: "local split", Deployment: model.LocalSplit, Skew: o.Skew, RestartEvery: o.RestartEvery},
		{Name: "GET, decide, SET", Deployment: model.GetSet},
		{Name: "local, full limit", Deployment: model.LocalFull},
	}
}

// config is the model configuration of one cell and seed.
func (o Options) config(a algos.Algorithm, col Column, seed uint64, arrivals []model.Request) model.Config {
	return model.Config{
		Algorithm:    a,
		Limit:        o.Limit,
		Deployment:   col.Deployment,
		Nodes:        o.Nodes,
		Skew:         col.Skew,
		RTT:          o.RTT,
		Jitter:       o.Jitter,
		WipeAt:       o.WipeAt,
		RestartEvery: col.RestartEvery,
		Seed:         seed,
		Requests:     arrivals,
	}
}

// SeedRun is one algorithm, deployment and seed: the four clients' numbers.
type SeedRun struct {
	Algorithm string
	Column    int // index into Report.Columns
	Seed      uint64
	Clients   [NumClients]ClientRun
}

// Matrix is a table: every algorithm through every column on every seed.
// It renders itself with WriteTo; Cell and CellRuns give the numbers behind
// each cell to tests.
type Matrix struct {
	Options    Options
	Algorithms []string
	Columns    []Column
	// SeedRuns holds run (a, c, s) at index (a·len(Columns) + c)·len(Seeds) + s.
	SeedRuns []SeedRun
}

// RunMatrix runs algs through o.Columns() on every seed of o, in parallel on
// o.Workers goroutines, and returns the report. The report, and the bytes it
// renders, depend on algs and o alone (not on the number of workers or
// CPUs). Errors name the first bad option, algorithm or run.
func RunMatrix(algs []algos.Algorithm, o Options) (Matrix, error) {
	if err := o.Validate(); err != nil {
		return Matrix{}, err
	}
	names, err := checkAlgorithms(algs)
	if err != nil {
		return Matrix{}, err
	}
	traffic, err := o.traffic()
	if err != nil {
		return Matrix{}, err
	}
	r := Matrix{Options: o, Algorithms: names, Columns: o.Columns()}
	nc, ns := len(r.Columns), len(o.Seeds)
	r.SeedRuns = make([]SeedRun, len(algs)*nc*ns)
	err = o.parallel(len(r.SeedRuns), func(i int) error {
		a, c, s := i/(nc*ns), i/ns%nc, i%ns
		clients, err := measure(o.config(algs[a], r.Columns[c], o.Seeds[s], traffic[s]), o.WipeAt)
		if err != nil {
			return fmt.Errorf("scenarios: %s, %s, seed %d: %w", names[a], r.Columns[c].Name, o.Seeds[s], err)
		}
		r.SeedRuns[i] = SeedRun{Algorithm: names[a], Column: c, Seed: o.Seeds[s], Clients: clients}
		return nil
	})
	if err != nil {
		return Matrix{}, err
	}
	return r, nil
}

func (r Matrix) algorithm(name string) int {
	for i, n := range r.Algorithms {
		if n == name {
			return i
		}
	}
	return -1
}

func (r Matrix) column(d model.Deployment) int {
	for i, c := range r.Columns {
		if c.Deployment == d {
			return i
		}
	}
	return -1
}

// CellSeedRuns returns the runs of one algorithm and deployment, one per seed
// in the order of Options.Seeds, or nil if the report has no such cell.
func (r Matrix) CellSeedRuns(algo string, d model.Deployment) []SeedRun {
	a, c := r.algorithm(algo), r.column(d)
	if a < 0 || c < 0 {
		return nil
	}
	ns := len(r.Options.Seeds)
	from := (a*len(r.Columns) + c) * ns
	return r.SeedRuns[from : from+ns : from+ns]
}

// Cell is one algorithm and deployment summarized over the seeds and the
// chosen clients, each number the worst case.
type Cell struct {
	// Peak is the most admits in any window of W, worst seed and client;
	// PeakX is the same as a multiple of the limit L.
	Peak       int
	PeakX      float64
	PeakSeed   uint64
	PeakClient Client
	// Over is the admits beyond the same algorithm's ideal run on the same
	// arrivals, in % of the ideal's admits: the worst seed and attack client.
	// NaN when no attack client was chosen.
	Over       float64
	OverSeed   uint64
	OverClient Client
	// HonestRejected is the share of the honest client's requests that were
	// turned away, in %, worst seed (NaN when Honest was not chosen).
	HonestRejected float64
	// Violations counts the (seed, client) runs whose admits broke the
	// promise, out of Runs.
	Violations, Runs int
}

// Cell summarizes one algorithm and deployment over every seed and the
// given clients (all four if none are given). ok is false if the report has
// no such algorithm or deployment.
func (r Matrix) Cell(algo string, d model.Deployment, clients ...Client) (cell Cell, ok bool) {
	runs, ideal := r.CellSeedRuns(algo, d), r.CellSeedRuns(algo, model.Ideal)
	if runs == nil || ideal == nil {
		return Cell{}, false
	}
	if len(clients) == 0 {
		clients = Clients()
	}
	cell = Cell{Peak: -1, Over: math.NaN(), HonestRejected: math.NaN()}
	for s, run := range runs {
		for _, c := range clients {
			cr := run.Clients[c]
			cell.Runs++
			if cr.Violation != nil {
				cell.Violations++
			}
			if cr.Peak > cell.Peak {
				cell.Peak, cell.PeakSeed, cell.PeakClient = cr.Peak, run.Seed, c
			}
			if c.Attack() {
				base := ideal[s].Clients[c].Admitted
				if over := percent(cr.Admitted-base, base); math.IsNaN(cell.Over) || over > cell.Over {
					cell.Over, cell.OverSeed, cell.OverClient = over, run.Seed, c
				}
			} else if rej := percent(cr.Requests-cr.Admitted, cr.Requests); math.IsNaN(cell.HonestRejected) || rej > cell.HonestRejected {
				cell.HonestRejected = rej
			}
		}
	}
	cell.PeakX = float64(cell.Peak) / float64(r.Options.Limit.Rate)
	return cell, true
}

// percent is 100·part/whole, 0 for 0/0 and +Inf for more than nothing.
func percent(part, whole int) float64 {
	if whole == 0 {
		if part == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return 100 * float64(part) / float64(whole)
}

// WriteTo renders the report as overshoot's table: a header with the
// conditions, the main table, the deployment bugs, and the promise
// violations. The bytes depend on the report alone.
func (r Matrix) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	o := r.Options
	l := o.Limit
	win := algos.FormatMicros(l.Window)
	local := fmt.Sprintf("%d per %s (burst %d)", l.Rate/int64(o.Nodes), win, l.Burst/int64(o.Nodes))
	fmt.Fprintf(&b, "overshoot table\n\n")
	fmt.Fprintf(&b, "Each run: four clients, each on its own key with a limit of %v: a flood at 5x the limit,\n", l)
	fmt.Fprintf(&b, "boundary bursts (%d just before and %d just after a window edge), the flood on %s and off %s,\n",
		l.Rate, l.Rate, algos.FormatMicros(2*l.Window), algos.FormatMicros(3*l.Window))
	fmt.Fprintf(&b, "and an honest client at 90%% of its limit. %s per run, seeds %s, the same requests in every column.\n",
		algos.FormatMicros(o.Duration), seedList(o.Seeds))
	fmt.Fprintf(&b, "%d nodes behind a random load balancer; the store is %s away, round trip, each leg ±%d%%.\n",
		o.Nodes, algos.FormatMicros(o.RTT), o.Jitter)
	fmt.Fprintf(&b, "Node clock: each node tells the store its own time, clocks %s apart. Store clock: the script reads the\n", algos.FormatMicros(o.Skew))
	fmt.Fprintf(&b, "store's time. Store wiped: store clock, every key lost at %s. Local split: no store, each node enforces\n", fmtSeconds(o.WipeAt))
	fmt.Fprintf(&b, "%s on its own clock (%s apart) and restarts every %s on average, losing its state.\n",
		local, algos.FormatMicros(o.Skew), algos.FormatMicros(o.RestartEvery))
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "peak:   most admitted in any %s (by true decision time), as a multiple of the limit.\n", win)
	fmt.Fprintf(&b, "over:   admitted beyond the same algorithm's ideal run (one node, true clock, no latency) on the same\n")
	fmt.Fprintf(&b, "        requests, in %% of the ideal's admits; attack clients only.\n")
	fmt.Fprintf(&b, "honest: share of the honest client's requests turned away.\n")
	fmt.Fprintf(&b, "Every cell is the worst seed and the worst client.\n\n")

	main := []model.Deployment{model.Ideal, model.NodeClock, model.StoreClock, model.StoreWiped, model.LocalSplit}
	var groups []group
	heads := []string{"algorithm"}
	for _, d := range main {
		c := r.column(d)
		if c < 0 {
			continue
		}
		g := group{title: r.Columns[c].Name, cols: 2}
		heads = append(heads, "peak", "over")
		switch d {
		case model.Ideal:
			g.cols = 1
			heads = heads[:len(heads)-1]
		case model.LocalSplit:
			g.cols = 3
			heads = append(heads, "honest")
		}
		groups = append(groups, g)
	}
	rows := make([][]string, 0, len(r.Algorithms))
	for _, name := range r.Algorithms {
		row := []string{name}
		for _, d := range main {
			cell, ok := r.Cell(name, d)
			if !ok {
				continue
			}
			row = append(row, fmtPeak(cell.PeakX))
			if d != model.Ideal {
				row = append(row, fmtOver(cell.Over))
			}
			if d == model.LocalSplit {
				row = append(row, fmtShare(cell.HonestRejected))
			}
		}
		rows = append(rows, row)
	}
	renderGrid(&b, groups, heads, rows)

	fmt.Fprintf(&b, "\nDeployment bugs, clocks in agreement and nothing restarting, so that only the bug shows:\n")
	fmt.Fprintf(&b, "GET, decide, SET: the node reads the state, decides on its copy when the reply arrives, and writes it back.\n")
	fmt.Fprintf(&b, "Local, full limit: no store, and every node enforces the whole %v.\n\n", l)
	bugs := []model.Deployment{model.GetSet, model.LocalFull}
	groups, heads = nil, []string{"algorithm"}
	for _, d := range bugs {
		if c := r.column(d); c >= 0 {
			groups = append(groups, group{title: r.Columns[c].Name, cols: 3})
			heads = append(heads, "peak", "over", "honest")
		}
	}
	rows = rows[:0]
	for _, name := range r.Algorithms {
		row := []string{name}
		for _, d := range bugs {
			if cell, ok := r.Cell(name, d); ok {
				row = append(row, fmtPeak(cell.PeakX), fmtOver(cell.Over), fmtShare(cell.HonestRejected))
			}
		}
		rows = append(rows, row)
	}
	renderGrid(&b, groups, heads, rows)

	fmt.Fprintf(&b, "\nPromise violations: runs (seed × client, %d per cell) whose admits broke the algorithm's own promise\n", len(o.Seeds)*NumClients)
	fmt.Fprintf(&b, "at their true decision times.\n\n")
	groups, heads = nil, []string{"algorithm"}
	for _, c := range r.Columns {
		heads = append(heads, c.Name)
	}
	rows = rows[:0]
	for _, name := range r.Algorithms {
		row := []string{name}
		for _, c := range r.Columns {
			cell, _ := r.Cell(name, c.Deployment)
			row = append(row, fmt.Sprint(cell.Violations))
		}
		rows = append(rows, row)
	}
	renderGrid(&b, groups, heads, rows)

	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// fmtSeconds prints µs as seconds without trailing zeros: 10.5s.
func fmtSeconds(us int64) string {
	return strconv.FormatFloat(float64(us)/float64(algos.Second), 'f', -1, 64) + "s"
}

func fmtPeak(x float64) string { return fmt.Sprintf("%.2fx", x) }

func fmtOver(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

func fmtShare(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// group is a heading over cols consecutive columns (after the first).
type group struct {
	title string
	cols  int
}

// renderGrid writes a plain-text table: the first column left-aligned, the
// others right-aligned, groups separated by " | " under their titles.
func renderGrid(b *bytes.Buffer, groups []group, heads []string, rows [][]string) {
	width := make([]int, len(heads))
	for i, h := range heads {
		width[i] = runeLen(h)
	}
	for _, row := range rows {
		for i, s := range row {
			width[i] = max(width[i], runeLen(s))
		}
	}
	// Which columns start a group (after column 0), and widen the last
	// column of a group whose title is longer than the group.
	starts := make([]bool, len(heads))
	col := 1
	for _, g := range groups {
		starts[col] = true
		span := 0
		for i := col; i < col+g.cols; i++ {
			span += width[i]
		}
		span += 2 * (g.cols - 1)
		if extra := runeLen(g.title) - span; extra > 0 {
			width[col+g.cols-1] += extra
		}
		col += g.cols
	}
	sep := func(i int) string {
		if i == 0 {
			return ""
		}
		if starts[i] {
			return " | "
		}
		return "  "
	}
	line := func(cells []string, left func(i int) bool) {
		var s strings.Builder
		for i, c := range cells {
			s.WriteString(sep(i))
			pad := strings.Repeat(" ", width[i]-runeLen(c))
			if left(i) {
				s.WriteString(c + pad)
			} else {
				s.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(s.String(), " ") + "\n")
	}
	if len(groups) > 0 {
		titles := make([]string, 0, len(groups)+1)
		titles = append(titles, strings.Repeat(" ", width[0]))
		col = 1
		for _, g := range groups {
			span := 0
			for i := col; i < col+g.cols; i++ {
				span += width[i]
			}
			span += 2 * (g.cols - 1)
			titles = append(titles, g.title+strings.Repeat(" ", span-runeLen(g.title)))
			col += g.cols
		}
		var s strings.Builder
		col = 1
		for gi, t := range titles {
			if gi > 0 {
				s.WriteString(" | ")
			}
			s.WriteString(t)
		}
		b.WriteString(strings.TrimRight(s.String(), " ") + "\n")
	}
	line(heads, func(i int) bool { return i == 0 })
	dashes := make([]string, len(heads))
	for i := range heads {
		dashes[i] = strings.Repeat("-", width[i])
	}
	line(dashes, func(int) bool { return true })
	for _, row := range rows {
		line(row, func(i int) bool { return i == 0 })
	}
}

func runeLen(s string) int { return len([]rune(s)) }
