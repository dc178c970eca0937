package ceiling

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/internal/encode"

	"github.com/overshoot-go/overshoot/internal/atomicfile"
)

// ArtifactSchema names the JSON document of a ceiling run and its version:
// its first field, "schema". Within a version a field is never renamed or
// given another meaning, only added; times are integer µs (names ending in
// _us), and a rate that was not judged is null, never 0.
const ArtifactSchema = "overshoot.ceiling/v1"

// Artifact is what one live ceiling run measured, kept from run to run so
// that a drift of the accepted rate ("100/s last quarter, 143/s today") is
// seen (CompareArtifacts) rather than left for someone to connect to rate
// limiting.
type Artifact struct {
	// Run names the run (a CI run's ID, a machine, "local"); When is
	// the time the caller says it ran at. Both are required: they are how
	// a drift names the two runs it lies between.
	Run  string
	When time.Time
	// Limit is the limit every row was deployed under.
	Limit algos.Limit
	// Rows is one deployment on a number of nodes each, in the order run.
	Rows []ArtifactRow
}

// Standing is where an ArtifactRow's judged rate stands against the
// limit: at it, over, under, or too little judged to say. The artifact
// writes it as "verdict" (ArtifactSchema never renames a field).
type Standing string

// The standings of a row (JudgedRow).
const (
	// StandingAtLimit is a fleet whose judged rate is the limit's, within
	// 2%.
	StandingAtLimit Standing = "at_limit"
	// StandingOver is a fleet that let through more than the limit: per
	// instance limiters on N nodes let through N times it.
	StandingOver Standing = "over"
	// StandingUnder is a fleet that let through less than the limit.
	StandingUnder Standing = "under"
	// StandingUnjudged is a row whose log had too little to judge (fewer
	// than 25 admits between denials): the machine starved the drive.
	StandingUnjudged Standing = "unjudged"
)

// ArtifactRow is one deployment on a number of nodes, driven and judged.
type ArtifactRow struct {
	Deployment string // the Setup's Name
	Nodes      int
	// Buckets is how many buckets the fleet's rate is the sum of: 1 for
	// a shared limiter, Nodes for one per node.
	Buckets int
	// OfferedPerSecond is the rate the drive offered; Sent, Accepted and
	// Span are the drive's first round as Result counts them.
	OfferedPerSecond int
	Sent, Accepted   int
	Span             time.Duration
	// AcceptedPerSecond is the fleet's accepted rate judged on the clock
	// its limiters decided by (JudgeBucket), not over the driver's time;
	// NaN when the row could not be judged. It is what CompareArtifacts
	// compares.
	AcceptedPerSecond float64
	// JudgedAdmits and Judged are the admits and the time (summed over
	// the buckets) the rate was judged on.
	JudgedAdmits int
	Judged       time.Duration
	Standing     Standing
}

// standingTolerance and minJudgedAdmits are what JudgedRow reads a
// standing by, as the live finding does: 2% of the limit, and a quarter
// of a second of its rate judged.
const (
	standingTolerance = 0.02
	minJudgedAdmits   = 25
)

// JudgedRow is r as a row of an artifact, its rate judged from
// r.Setup.Log as token buckets under l: one bucket shared by the
// fleet, or, with perNode, one per node (each node's decisions judged on
// their own and the fleet's rate their sum). offered is the rate the drive
// offered. The standing is the fleet's rate against l's: at the limit when
// it is within 2% of it, over or under when beyond, and unjudged when its
// buckets were judged on fewer than 25 admits.
func JudgedRow(r Row, l algos.Limit, offered int, perNode bool) ArtifactRow {
	row := ArtifactRow{
		Deployment: r.Setup.Name, Nodes: r.Nodes, Buckets: 1, OfferedPerSecond: offered,
		Sent: r.Result.Sent, Accepted: r.Result.Accepted, Span: r.Result.Span,
		AcceptedPerSecond: math.NaN(), Standing: StandingUnjudged,
	}
	var decided []Decided
	if r.Setup.Log != nil {
		decided = r.Setup.Log.Decisions()
	}
	buckets := [][]Decided{decided}
	if perNode {
		row.Buckets = max(r.Nodes, 1)
		buckets = make([][]Decided, row.Buckets)
		for _, d := range decided {
			if d.Node >= 0 && d.Node < len(buckets) {
				buckets[d.Node] = append(buckets[d.Node], d)
			}
		}
	}
	var all BucketRate
	for _, b := range buckets {
		all = all.Add(JudgeBucket(b, l))
	}
	row.JudgedAdmits, row.Judged = all.Admitted, all.Judged()
	if all.Admitted < minJudgedAdmits || all.Span <= 0 {
		return row
	}
	lo, hi := all.Bounds(l)
	// Bounds is each bucket's rate as a multiple of l's; the fleet's is
	// the buckets' together.
	n := float64(row.Buckets)
	row.AcceptedPerSecond = n * (lo + hi) / 2 * perSecondOf(l)
	switch {
	case n*lo > 1+standingTolerance:
		row.Standing = StandingOver
	case n*hi < 1-standingTolerance:
		row.Standing = StandingUnder
	default:
		row.Standing = StandingAtLimit
	}
	return row
}

// The JSON of an artifact.
type (
	artifactJSON struct {
		Schema string             `json:"schema"`
		Run    string             `json:"run"`
		When   string             `json:"when"`
		Limit  encode.SchemaLimit `json:"limit"`
		Rows   []rowJSON          `json:"rows"`
	}
	rowJSON struct {
		Deployment        string   `json:"deployment"`
		Nodes             int      `json:"nodes"`
		Buckets           int      `json:"buckets"`
		OfferedPerSecond  int      `json:"offered_per_second"`
		Sent              int      `json:"sent"`
		Accepted          int      `json:"accepted"`
		SpanUS            int64    `json:"span_us"`
		AcceptedPerSecond *float64 `json:"accepted_per_second"`
		JudgedAdmits      int      `json:"judged_admits"`
		JudgedUS          int64    `json:"judged_us"`
		Verdict           Standing `json:"verdict"`
	}
)

// check says what keeps a from being written.
func (a Artifact) check() error {
	switch {
	case strings.TrimSpace(a.Run) == "":
		return errors.New("ceiling: an artifact needs the name of its run")
	case a.When.IsZero():
		return fmt.Errorf("ceiling: artifact of run %q has no time", a.Run)
	}
	if err := a.Limit.Validate(); err != nil {
		return fmt.Errorf("ceiling: artifact of run %q: %w", a.Run, err)
	}
	seen := map[string]bool{}
	for _, r := range a.Rows {
		if seen[r.key()] {
			return fmt.Errorf("ceiling: artifact of run %q has %s twice", a.Run, r.key())
		}
		seen[r.key()] = true
	}
	return nil
}

// key is how CompareArtifacts pairs rows: the deployment and its nodes.
func (r ArtifactRow) key() string {
	if r.Nodes == 1 {
		return r.Deployment + ", 1 node"
	}
	return fmt.Sprintf("%s, %d nodes", r.Deployment, r.Nodes)
}

// marshal is a as the bytes WriteArtifact writes.
func (a Artifact) marshal() ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	doc := artifactJSON{
		Schema: ArtifactSchema, Run: a.Run, When: a.When.Format(time.RFC3339Nano),
		Limit: encode.LimitOf(a.Limit),
		Rows:  []rowJSON{},
	}
	for _, r := range a.Rows {
		j := rowJSON{
			Deployment: r.Deployment, Nodes: r.Nodes, Buckets: r.Buckets, OfferedPerSecond: r.OfferedPerSecond,
			Sent: r.Sent, Accepted: r.Accepted, SpanUS: r.Span.Microseconds(),
			JudgedAdmits: r.JudgedAdmits, JudgedUS: r.Judged.Microseconds(), Verdict: r.Standing,
		}
		if v := r.AcceptedPerSecond; !math.IsNaN(v) && !math.IsInf(v, 0) {
			j.AcceptedPerSecond = &v
		}
		doc.Rows = append(doc.Rows, j)
	}
	var b bytes.Buffer
	if err := encode.JSON(&b, doc); err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	return b.Bytes(), nil
}

// SchemaFields lists the fields of ArtifactSchema as paths
// ("rows[].accepted_per_second"), read from the types that write it, so
// that the documentation can be checked against what is written.
func SchemaFields() []string { return encode.Fields(artifactJSON{}) }

// WriteArtifact writes a as one JSON document of schema ArtifactSchema,
// indented, in one Write: whole or not at all. An artifact without its
// run's name or time, with an invalid limit or with a row twice is not
// written.
func WriteArtifact(w io.Writer, a Artifact) error {
	b, err := a.marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ReadArtifact reads what WriteArtifact wrote. A document of another
// schema, or of this one with fields missing or wrong, is an error; fields
// it does not know (added later within the version) are ignored.
func ReadArtifact(r io.Reader) (Artifact, error) {
	var doc artifactJSON
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return Artifact{}, fmt.Errorf("ceiling: reading an artifact: %w", err)
	}
	if doc.Schema != ArtifactSchema {
		return Artifact{}, fmt.Errorf("ceiling: artifact of schema %q, want %q", doc.Schema, ArtifactSchema)
	}
	when, err := time.Parse(time.RFC3339Nano, doc.When)
	if err != nil {
		return Artifact{}, fmt.Errorf("ceiling: artifact of run %q: its time is not RFC 3339: %w", doc.Run, err)
	}
	l, err := algos.NewLimit(doc.Limit.Rate, doc.Limit.WindowUS, doc.Limit.Burst)
	if err != nil {
		return Artifact{}, fmt.Errorf("ceiling: artifact of run %q: %w", doc.Run, err)
	}
	a := Artifact{Run: doc.Run, When: when, Limit: l}
	for _, j := range doc.Rows {
		r := ArtifactRow{
			Deployment: j.Deployment, Nodes: j.Nodes, Buckets: j.Buckets, OfferedPerSecond: j.OfferedPerSecond,
			Sent: j.Sent, Accepted: j.Accepted, Span: time.Duration(j.SpanUS) * time.Microsecond,
			AcceptedPerSecond: math.NaN(), JudgedAdmits: j.JudgedAdmits,
			Judged: time.Duration(j.JudgedUS) * time.Microsecond, Standing: j.Verdict,
		}
		if j.AcceptedPerSecond != nil {
			r.AcceptedPerSecond = *j.AcceptedPerSecond
		}
		a.Rows = append(a.Rows, r)
	}
	if err := a.check(); err != nil {
		return Artifact{}, err
	}
	return a, nil
}

// SaveArtifact writes a to path whole or not at all (atomicfile.Write):
// path holds the previous artifact or this one, never part of one, and on
// any error it is left as it was.
func SaveArtifact(path string, a Artifact) error {
	b, err := a.marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, b); err != nil {
		return fmt.Errorf("ceiling: saving the artifact of run %q to %s: %w", a.Run, path, err)
	}
	return nil
}

// LoadArtifact reads the artifact saved at path. When there is none, the
// error wraps fs.ErrNotExist.
func LoadArtifact(path string) (Artifact, error) {
	f, err := os.Open(path)
	if err != nil {
		return Artifact{}, fmt.Errorf("ceiling: %w", err)
	}
	defer f.Close()
	a, err := ReadArtifact(f)
	if err != nil {
		return Artifact{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return a, nil
}

// CompareArtifacts is nil when every row of cur has the accepted rate of
// the same deployment on as many nodes in prev, within tol (a share of
// prev's rate: 0.05 is ±5%), under the same limit. Otherwise it is an
// error of one line per difference, each naming both runs: a rate beyond
// tol, a row in one run and not the other, a row judged in one and not the
// other, a changed limit.
func CompareArtifacts(prev, cur Artifact, tol float64) error {
	if math.IsNaN(tol) || tol < 0 || math.IsInf(tol, 0) {
		return fmt.Errorf("ceiling: the tolerance must be a share ≥ 0, got %v", tol)
	}
	a, b := runName(prev), runName(cur)
	var lines []string
	if prev.Limit.Rate != cur.Limit.Rate || prev.Limit.Window != cur.Limit.Window || prev.Limit.Burst != cur.Limit.Burst {
		lines = append(lines, fmt.Sprintf("ceiling drift: the limit changed: %v in %s → %v in %s", prev.Limit, a, cur.Limit, b))
	}
	before := make(map[string]ArtifactRow, len(prev.Rows))
	for _, r := range prev.Rows {
		before[r.key()] = r
	}
	now := make(map[string]bool, len(cur.Rows))
	for _, r := range cur.Rows {
		now[r.key()] = true
		p, ok := before[r.key()]
		x, y := p.AcceptedPerSecond, r.AcceptedPerSecond
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("ceiling drift: %s: in %s but not in %s", r.key(), b, a))
		case math.IsNaN(x) && math.IsNaN(y):
			lines = append(lines, fmt.Sprintf("ceiling drift: %s: not judged in %s nor in %s", r.key(), a, b))
		case math.IsNaN(x) || math.IsNaN(y):
			lines = append(lines, fmt.Sprintf("ceiling drift: %s: %s in %s → %s in %s: judged in one run only", r.key(), perSecond(x), a, perSecond(y), b))
		case x == y:
		case x == 0 || math.Abs(y/x-1) > tol:
			change := "+Inf%"
			if x != 0 {
				change = fmt.Sprintf("%+.1f%%", 100*(y/x-1))
			}
			lines = append(lines, fmt.Sprintf("ceiling drift: %s: %s in %s → %s in %s, %s, beyond ±%s%%",
				r.key(), perSecond(x), a, perSecond(y), b, change, percent(tol)))
		}
	}
	for _, r := range prev.Rows {
		if !now[r.key()] {
			lines = append(lines, fmt.Sprintf("ceiling drift: %s: in %s but not in %s", r.key(), a, b))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// CompareWithPrevious compares cur with the artifact saved at path
// (CompareArtifacts), and says what it compared. No artifact at path is
// not an error: cur is the first run, and the note says so. An artifact
// there that cannot be read is.
func CompareWithPrevious(path string, cur Artifact, tol float64) (note string, err error) {
	prev, err := LoadArtifact(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("no previous ceiling artifact at %s: %s is the first run, nothing to compare", path, runName(cur)), nil
	}
	if err != nil {
		return "", err
	}
	if err := CompareArtifacts(prev, cur, tol); err != nil {
		return "", err
	}
	return fmt.Sprintf("ceiling of %s within ±%s%% of %s on all %d rows", runName(cur), percent(tol), runName(prev), len(cur.Rows)), nil
}

// runName is a run as a drift names it: its name and its time.
func runName(a Artifact) string {
	return fmt.Sprintf("run %s (%s)", a.Run, a.When.Format(time.RFC3339))
}

func perSecond(v float64) string {
	if math.IsNaN(v) {
		return "not judged"
	}
	return fmt.Sprintf("%.1f/s", v)
}

// percent is a share as a percentage, with no more digits than it needs.
func percent(share float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", 100*share), "0"), ".")
}
