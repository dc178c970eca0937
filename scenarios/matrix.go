package scenarios

import (
	"math"

	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// Column is one deployment of the matrix, with the conditions it runs under.
// Each deployment appears once.
type Column struct {
	// Name is the column's heading.
	Name string
	// Deployment is how the algorithm is deployed in this column.
	Deployment model.Deployment
	// Skew between the extreme node clocks, µs.
	Skew int64
	// RestartEvery is the mean µs between a local node's restarts (0: never).
	RestartEvery int64
}

// SeedRun is one limiter, deployment and seed: the five clients' numbers.
type SeedRun struct {
	// Algorithm is the limiter's name.
	Algorithm string
	// Column is the deployment, as an index into Matrix.Columns.
	Column int
	// Seed is the seed of the run's traffic, balancer, legs and restarts.
	Seed uint64
	// Clients holds each client's numbers, indexed by Client.
	Clients [traffic.NumClients]ClientRun
	// FirstError is the first error the limiter answered in this run, or nil.
	FirstError error
	// NotApplicable, when not empty, is why the deployment cannot hold the
	// limiter (model.Applies): the run was not played and Clients is zero.
	NotApplicable string
}

// Matrix is every limiter through every column on every seed: the
// numbers behind overshoot's table. It renders itself as the table with
// WriteTo; Cell and CellSeedRuns give the numbers behind each cell to tests.
type Matrix struct {
	// Options are the conditions the matrix ran under.
	Options Options
	// Algorithms are the limiters' names, in the order they were given.
	Algorithms []string
	// Columns are the deployments, Options.Columns().
	Columns []Column
	// SeedRuns holds run (a, c, s) at index (a·len(Columns) + c)·len(Seeds) + s.
	SeedRuns []SeedRun
	// References are, per algorithm, the name of the reference its Spec
	// names (limiter.Spec.Reference; "" for none), and ReferenceRuns that
	// reference's ideal runs, one per seed (nil for none).
	References    []string
	ReferenceRuns [][]SeedRun
}

// RunMatrix runs every limiter of specs through o.Columns() on every seed
// of o, in parallel on o.Workers goroutines, and returns the matrix. A
// column that cannot hold a limiter (model.Applies) is not run, and its
// cell says why. The matrix, and the bytes it renders, depend on specs and
// o alone (not on the number of workers or CPUs), for limiters that are
// themselves deterministic. Errors name the first bad option, limiter or
// run; an error a limiter answers a request with is counted, not returned.
func RunMatrix(specs []limiter.Spec, o Options) (Matrix, error) {
	if err := o.Validate(); err != nil {
		return Matrix{}, err
	}
	names, err := checkLimiters(specs)
	if err != nil {
		return Matrix{}, err
	}
	r := Matrix{Options: o, Algorithms: names, Columns: o.Columns()}
	nc, ns := len(r.Columns), len(o.Seeds)
	jobs := make([]job, 0, len(specs)*nc)
	for a := range specs {
		for _, col := range r.Columns {
			jobs = append(jobs, job{spec: specs[a], col: col, label: names[a] + ", " + col.Name})
		}
	}
	// Each named reference's ideal run, after the matrix's own jobs.
	r.References, r.ReferenceRuns = make([]string, len(specs)), make([][]SeedRun, len(specs))
	ideal := r.column(model.Ideal)
	var referred []int
	for a, s := range specs {
		if ref := s.Reference; ref.Name != "" && ideal >= 0 {
			r.References[a] = ref.Name
			referred = append(referred, a)
			jobs = append(jobs, job{spec: limiter.FromAlgorithm(ref), col: r.Columns[ideal], label: names[a] + "'s reference " + ref.Name})
		}
	}
	runs, err := o.runJobs(jobs)
	if err != nil {
		return Matrix{}, err
	}
	seedRun := func(i int, name string, col int) SeedRun {
		run := runs[i]
		return SeedRun{Algorithm: name, Column: col, Seed: o.Seeds[i%ns],
			Clients: run.clients, FirstError: run.firstError, NotApplicable: run.notApplicable}
	}
	own := len(specs) * nc * ns
	r.SeedRuns = make([]SeedRun, own)
	for i := range own {
		r.SeedRuns[i] = seedRun(i, names[i/(nc*ns)], i/ns%nc)
	}
	for k, a := range referred {
		for s := range ns {
			r.ReferenceRuns[a] = append(r.ReferenceRuns[a], seedRun(own+k*ns+s, r.References[a], ideal))
		}
	}
	return r, nil
}

// algorithm is the index of the algorithm named name, or -1.
func (r Matrix) algorithm(name string) int {
	for i, n := range r.Algorithms {
		if n == name {
			return i
		}
	}
	return -1
}

// column is the index of deployment d's column, or -1.
func (r Matrix) column(d model.Deployment) int {
	for i, c := range r.Columns {
		if c.Deployment == d {
			return i
		}
	}
	return -1
}

// CellSeedRuns returns the runs of one algorithm and deployment, one per seed
// in the order of Options.Seeds, or nil if the matrix has no such cell.
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
	// PeakX is the same as a multiple of the limit L. PeakSeed and
	// PeakClient are where it was first reached, taking the seeds in order
	// and the clients in the order given.
	Peak       int
	PeakX      float64
	PeakSeed   uint64
	PeakClient traffic.ClientKind
	// Over is the admits beyond the same algorithm's ideal run on the same
	// requests, in % of the ideal's admits: the worst seed and attack client,
	// OverSeed and OverClient (the first to reach it). NaN when no attack
	// client was chosen, or the matrix has no ideal column (a curve's point
	// with NoIdeal); OverSeed and OverClient then say nothing (their zero
	// values: seed 0 and the first client), and the reports leave them out.
	Over       float64
	OverSeed   uint64
	OverClient traffic.ClientKind
	// OverReference is Over measured against the ideal run of the
	// algorithm the limiter names as its reference (limiter.Spec.Reference),
	// worst seed and attack client; NaN when it names none.
	OverReference float64
	// HonestRejected is the share of the honest client's requests that were
	// turned away, in %, worst seed (NaN when Honest was not chosen).
	HonestRejected float64
	// Violations counts the (seed, client) runs whose admits broke the
	// promise, out of Runs.
	Violations, Runs int
	// Errors counts the requests the limiter answered with an error, over
	// every seed and the chosen clients; FirstError is the first of them,
	// taking the seeds in order (it may be of a client not chosen).
	Errors     int
	FirstError error
	// NotApplicable, when not empty, is why the deployment cannot hold the
	// limiter; every number of the cell is then meaningless and zero.
	NotApplicable string
}

// Cell summarizes one limiter and deployment over every seed and the
// given clients (all of the options' if none are given). ok is false if
// the matrix has no such limiter or deployment. Without an ideal column
// to measure it by, the over is not measured (NaN).
func (r Matrix) Cell(algo string, d model.Deployment, clients ...traffic.ClientKind) (cell Cell, ok bool) {
	runs, ideal := r.CellSeedRuns(algo, d), r.CellSeedRuns(algo, model.Ideal)
	if runs == nil {
		return Cell{}, false
	}
	if len(clients) == 0 {
		clients = r.Options.Clients()
	}
	if na := runs[0].NotApplicable; na != "" {
		return Cell{NotApplicable: na}, true
	}
	cell = Cell{Peak: -1, Over: math.NaN(), OverReference: math.NaN(), HonestRejected: math.NaN()}
	var reference []SeedRun
	if a := r.algorithm(algo); a < len(r.ReferenceRuns) {
		reference = r.ReferenceRuns[a]
	}
	for s, run := range runs {
		if cell.FirstError == nil {
			cell.FirstError = run.FirstError
		}
		for _, c := range clients {
			cr := run.Clients[c]
			cell.Runs++
			cell.Errors += cr.Errors
			if cr.Violation != nil {
				cell.Violations++
			}
			if cr.Peak > cell.Peak {
				cell.Peak, cell.PeakSeed, cell.PeakClient = cr.Peak, run.Seed, c
			}
			if c.Attack() {
				if ideal != nil {
					base := ideal[s].Clients[c].Admitted
					if over := percent(cr.Admitted-base, base); math.IsNaN(cell.Over) || over > cell.Over {
						cell.Over, cell.OverSeed, cell.OverClient = over, run.Seed, c
					}
				}
				if reference != nil {
					base := reference[s].Clients[c].Admitted
					if over := percent(cr.Admitted-base, base); math.IsNaN(cell.OverReference) || over > cell.OverReference {
						cell.OverReference = over
					}
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
