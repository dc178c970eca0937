package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/breach"
	"github.com/overshoot-go/overshoot/internal/encode"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/traffic"
)

// A run split across machines by seed. Every run of a matrix, a curve
// (the skew sweep's too) or a hunt depends on its own seed alone, so a
// machine that plays some of the seeds plays them exactly as one machine
// playing all of them would. Each shard writes what it played, run by run,
// as a document of ShardSchema; the merge reads every shard's document
// back, checks that they are the shards of one run, each once, and puts
// the runs where one machine's run would have them, so that the result,
// and every byte it renders, is one machine's.

// Shard is part Index of Count (1 ≤ Index ≤ Count) of a run split by seed:
// the seed at position j (from 0) of Options.Seeds is shard j mod Count +
// 1's, so that the shards' sizes differ by one seed at most. Its methods
// run the shard's seeds of a run and write them as a shard document;
// MergeMatrix, MergeCurve and MergeHunt merge the documents of every shard
// into the run's result. A document knows the limiters and suspects by
// name: the merge checks the names, the conditions and the seeds, and that
// one name is one limiter on every machine (the same build) is the
// caller's to keep.
type Shard struct {
	Index, Count int
}

// ParseShard reads a shard as "i/n" (the String form): shard i of n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.ParseUint(is, 10, 31)
	n, err2 := strconv.ParseUint(ns, 10, 31)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("scenarios: shard %q is not i/n, shard i of n shards (2/3, say)", s)
	}
	sh := Shard{Index: int(i), Count: int(n)}
	return sh, sh.Validate()
}

// String is the shard as "i/n".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Validate reports why s is no shard: no shards at all, or an index
// outside 1 to Count.
func (s Shard) Validate() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("scenarios: shard %v: a run is split into one shard or more", s)
	case s.Index < 1 || s.Index > s.Count:
		return fmt.Errorf("scenarios: shard %v: the shards of a run split in %d are 1/%d to %d/%d", s, s.Count, s.Count, s.Count, s.Count)
	}
	return nil
}

// Seeds are the shard's seeds of all, in their order; none for an invalid
// shard.
func (s Shard) Seeds(all []uint64) []uint64 {
	if s.Validate() != nil {
		return nil
	}
	var out []uint64
	for j := s.Index - 1; j < len(all); j += s.Count {
		out = append(out, all[j])
	}
	return out
}

// options are o with the shard's seeds alone, or why the shard cannot be
// run: a bad shard or bad options, or a shard left without a seed.
func (s Shard) options(o Options) (Options, error) {
	if err := s.Validate(); err != nil {
		return o, err
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	all := o.Seeds
	if o.Seeds = s.Seeds(all); len(o.Seeds) == 0 {
		return o, fmt.Errorf("scenarios: shard %v has no seed: the run has %d", s, len(all))
	}
	return o, nil
}

// The kinds of run a shard document holds.
const (
	kindMatrix = "matrix"
	kindCurve  = "curve"
	kindHunt   = "hunt"
)

// document is the start of the shard's document of a run of kind under o.
func (s Shard) document(kind string, o Options, seeds []uint64) shardJSON {
	return shardJSON{Schema: ShardSchema, Kind: kind, Shard: s.String(), Conditions: conditions(o), ShardSeeds: seeds}
}

// RunMatrix runs the shard's seeds of RunMatrix(specs, o) and writes them
// to w, in one Write, as a shard document for MergeMatrix.
func (s Shard) RunMatrix(w io.Writer, specs []limiter.Spec, o Options) error {
	so, err := s.options(o)
	if err != nil {
		return err
	}
	m, err := RunMatrix(specs, so)
	if err != nil {
		return err
	}
	doc := s.document(kindMatrix, o, so.Seeds)
	doc.Algorithms, doc.References = m.Algorithms, m.References
	doc.Runs = seedRunsJSON(so.Clients(), 0, m.SeedRuns)
	for _, runs := range m.ReferenceRuns {
		doc.ReferenceRuns = append(doc.ReferenceRuns, seedRunsJSON(so.Clients(), 0, runs)...)
	}
	return encode.JSON(w, doc)
}

// RunCurve runs the shard's seeds of RunCurve(specs, o, c) and writes them
// to w, in one Write, as a shard document for MergeCurve.
func (s Shard) RunCurve(w io.Writer, specs []limiter.Spec, o Options, c CurveOf) error {
	so, err := s.options(o)
	if err != nil {
		return err
	}
	r, err := RunCurve(specs, so, c)
	if err != nil {
		return err
	}
	doc := s.document(kindCurve, o, so.Seeds)
	doc.Algorithms, doc.Curve = r.Algorithms, shardCurveOf(c)
	for k, p := range r.Points {
		doc.Runs = append(doc.Runs, seedRunsJSON(so.Clients(), k, p.SeedRuns)...)
	}
	return encode.JSON(w, doc)
}

// Hunt hunts suspects on the shard's seeds of o, as Hunt(suspects, o)
// does, and writes each suspect's verdict on each seed to w, in one Write,
// as a shard document for MergeHunt.
func (s Shard) Hunt(w io.Writer, suspects []Suspect, o Options) error {
	so, err := s.options(o)
	if err != nil {
		return err
	}
	seeds, err := huntSeeds(suspects, so)
	if err != nil {
		return err
	}
	doc := s.document(kindHunt, o, so.Seeds)
	for i, sus := range suspects {
		doc.Suspects = append(doc.Suspects, sus.label())
		for j, v := range seeds[i] {
			doc.Verdicts = append(doc.Verdicts, seedVerdictOf(so.Seeds[j], v))
		}
	}
	return encode.JSON(w, doc)
}

// ShardFile is one shard document to merge, and the name (its path, say)
// that the merge's errors call it by.
type ShardFile struct {
	Name string
	Data []byte
}

// MergeMatrix is the matrix whose every shard's document (Shard.RunMatrix)
// is in files, one file a shard, in any order: the same matrix, rendering
// the same bytes, as RunMatrix of the whole run. An error names the file at
// fault: one that is not a matrix's shard document, shards of another run
// or another split, a shard twice, or a shard missing.
func MergeMatrix(files []ShardFile) (Matrix, error) {
	sh, err := readShards(kindMatrix, files)
	if err != nil {
		return Matrix{}, err
	}
	doc, o := sh.docs[0], sh.o
	if len(doc.References) != len(doc.Algorithms) {
		return Matrix{}, fmt.Errorf("scenarios: %s names %d references for %d limiters", sh.names[0], len(doc.References), len(doc.Algorithms))
	}
	m := Matrix{Options: o, Algorithms: doc.Algorithms, Columns: o.Columns(), References: doc.References,
		ReferenceRuns: make([][]SeedRun, len(doc.Algorithms))}
	var own, refs []runKey
	var referred []int
	ideal := m.column(model.Ideal)
	for a, name := range m.Algorithms {
		for c := range m.Columns {
			own = append(own, runKey{algorithm: name, column: c})
		}
		if ref := m.References[a]; ref != "" {
			refs, referred = append(refs, runKey{algorithm: ref, column: ideal}), append(referred, a)
		}
	}
	if m.SeedRuns, err = sh.place(own, func(d *shardJSON) []seedRunJSON { return d.Runs }, "runs"); err != nil {
		return Matrix{}, err
	}
	refRuns, err := sh.place(refs, func(d *shardJSON) []seedRunJSON { return d.ReferenceRuns }, "reference_runs")
	if err != nil {
		return Matrix{}, err
	}
	ns := len(o.Seeds)
	for k, a := range referred {
		m.ReferenceRuns[a] = refRuns[k*ns : (k+1)*ns : (k+1)*ns]
	}
	return m, nil
}

// MergeCurve is the curve c whose every shard's document (Shard.RunCurve
// with c) is in files: the same curve as RunCurve of the whole run. c gives
// what a document does not hold (the model, the plot, the note); what it
// varies, and whether it runs the ideal, must be the documents'. Its
// errors are MergeMatrix's.
func MergeCurve(files []ShardFile, c CurveOf) (Curve, error) {
	sh, err := readShards(kindCurve, files)
	if err != nil {
		return Curve{}, err
	}
	doc, o := sh.docs[0], sh.o
	if want := shardCurveOf(c); !reflect.DeepEqual(doc.Curve, want) {
		return Curve{}, fmt.Errorf("scenarios: %s is a curve of %s, not of %s", sh.names[0], curveWords(doc.Curve), curveWords(want))
	}
	r := Curve{CurveOf: c, Options: o, Algorithms: doc.Algorithms, Points: make([]Matrix, len(c.Values))}
	r.Values, r.Clients = slices.Clone(c.Values), slices.Clone(c.Clients)
	nc := len(c.columns(o))
	var keys []runKey
	for k := range r.Values {
		for _, name := range r.Algorithms {
			for col := range nc {
				keys = append(keys, runKey{algorithm: name, point: k, column: col})
			}
		}
	}
	runs, err := sh.place(keys, func(d *shardJSON) []seedRunJSON { return d.Runs }, "runs")
	if err != nil {
		return Curve{}, err
	}
	per := nc * len(r.Algorithms) * len(o.Seeds)
	for k, v := range r.Values {
		po, err := c.Param.set(o, v)
		if err != nil {
			return Curve{}, err
		}
		r.Points[k] = Matrix{Options: po, Algorithms: r.Algorithms, Columns: c.columns(po),
			SeedRuns: runs[k*per : (k+1)*per : (k+1)*per]}
	}
	return r, nil
}

// MergeHunt is the hunt whose every shard's document (Shard.Hunt) is in
// files: its options and the same verdicts as Hunt of the whole run. Its
// errors are MergeMatrix's.
func MergeHunt(files []ShardFile) (Options, []Verdict, error) {
	sh, err := readShards(kindHunt, files)
	if err != nil {
		return Options{}, nil, err
	}
	o, suspects, n := sh.o, sh.docs[0].Suspects, len(sh.docs)
	seeds := make([][]Verdict, len(suspects))
	for i := range seeds {
		seeds[i] = make([]Verdict, len(o.Seeds))
	}
	for d := range sh.docs {
		doc := &sh.docs[d]
		ns := len(doc.ShardSeeds)
		if want := len(suspects) * ns; len(doc.Verdicts) != want {
			return Options{}, nil, fmt.Errorf("scenarios: %s holds %d verdicts, want %d (%d suspects × %d seeds)", sh.names[d], len(doc.Verdicts), want, len(suspects), ns)
		}
		for i, j := range doc.Verdicts {
			sus, s := i/ns, i%ns
			if j.Suspect != suspects[sus] || j.Seed != doc.ShardSeeds[s] {
				return Options{}, nil, fmt.Errorf("scenarios: %s: verdict %d is %q on seed %d, want %q on seed %d", sh.names[d], i, j.Suspect, j.Seed, suspects[sus], doc.ShardSeeds[s])
			}
			v, err := j.verdict(o.Clients())
			if err != nil {
				return Options{}, nil, fmt.Errorf("scenarios: %s: verdict %d: %w", sh.names[d], i, err)
			}
			seeds[sus][d+s*n] = v
		}
	}
	verdicts := make([]Verdict, len(suspects))
	for i, label := range suspects {
		verdicts[i] = foldVerdicts(label, seeds[i])
	}
	return o, verdicts, nil
}

// shards are every shard of one run, read back and checked: the run's
// options, and each shard's document and file name, in shard order.
type shards struct {
	o     Options
	docs  []shardJSON
	names []string
}

// readShards reads files as the documents of every shard of one run of
// kind, each once, or says which file is not.
func readShards(kind string, files []ShardFile) (shards, error) {
	if len(files) == 0 {
		return shards{}, fmt.Errorf("scenarios: no shard documents to merge into a %s", kind)
	}
	var sh shards
	var first shardJSON
	for i, f := range files {
		doc, s, err := readShard(kind, f)
		if err != nil {
			return shards{}, err
		}
		if i == 0 {
			first, sh.docs, sh.names = doc, make([]shardJSON, s.Count), make([]string, s.Count)
		} else if len(sh.docs) != s.Count {
			return shards{}, fmt.Errorf("scenarios: %s is shard %v, and %s one of %d: not the same split", f.Name, s, files[0].Name, len(sh.docs))
		} else if err := sameRun(&first, &doc); err != nil {
			return shards{}, fmt.Errorf("scenarios: %s is not of the run of %s: %w", f.Name, files[0].Name, err)
		}
		if other := sh.names[s.Index-1]; other != "" {
			return shards{}, fmt.Errorf("scenarios: %s and %s are both shard %v", other, f.Name, s)
		}
		sh.docs[s.Index-1], sh.names[s.Index-1] = doc, f.Name
	}
	var missing []string
	for i, name := range sh.names {
		if name == "" {
			missing = append(missing, Shard{Index: i + 1, Count: len(sh.names)}.String())
		}
	}
	if len(missing) > 0 {
		return shards{}, fmt.Errorf("scenarios: shard %s of the run of %s is missing", strings.Join(missing, ", "), files[0].Name)
	}
	o, err := optionsOf(sh.docs[0].Conditions)
	if err != nil {
		return shards{}, fmt.Errorf("scenarios: %s: %w", sh.names[0], err)
	}
	if len(sh.docs[0].Algorithms)+len(sh.docs[0].Suspects) == 0 {
		return shards{}, fmt.Errorf("scenarios: %s names no limiter and no suspect", sh.names[0])
	}
	sh.o = o
	return sh, nil
}

// readShard decodes f as a shard document of kind, and the shard it is.
func readShard(kind string, f ShardFile) (shardJSON, Shard, error) {
	var head struct {
		Schema string `json:"schema"`
		Kind   string `json:"kind"`
	}
	if err := json.Unmarshal(f.Data, &head); err != nil {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s is not a shard document: %v", f.Name, err)
	}
	if head.Schema != ShardSchema {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s is of schema %q, not %s", f.Name, head.Schema, ShardSchema)
	}
	if head.Kind != kind {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s is a shard of a %s, not of a %s", f.Name, head.Kind, kind)
	}
	var doc shardJSON
	dec := json.NewDecoder(bytes.NewReader(f.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s: %v", f.Name, err)
	}
	if dec.More() {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s holds more than one document", f.Name)
	}
	s, err := ParseShard(doc.Shard)
	if err != nil {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s: %w", f.Name, err)
	}
	if want := s.Seeds(doc.Conditions.Seeds); !slices.Equal(doc.ShardSeeds, want) {
		return shardJSON{}, Shard{}, fmt.Errorf("scenarios: %s: shard %v holds seeds %v, where the run's seeds give it %v", f.Name, s, doc.ShardSeeds, want)
	}
	return doc, s, nil
}

// sameRun says how b is not of a's run: its conditions, or what it runs.
func sameRun(a, b *shardJSON) error {
	for _, part := range []struct {
		name string
		a, b any
	}{
		{"conditions", a.Conditions, b.Conditions},
		{"limiters", a.Algorithms, b.Algorithms},
		{"references", a.References, b.References},
		{"suspects", a.Suspects, b.Suspects},
		{"curve", a.Curve, b.Curve},
	} {
		if !reflect.DeepEqual(part.a, part.b) {
			return fmt.Errorf("its %s differ", part.name)
		}
	}
	return nil
}

// optionsOf are the options the conditions c were written from (the
// clients say Loop and Edge), or why none are.
func optionsOf(c ConditionsDoc) (Options, error) {
	l, err := algos.NewLimit(c.Limit.Rate, c.Limit.WindowUS, c.Limit.Burst)
	if err != nil {
		return Options{}, fmt.Errorf("scenarios: conditions: %w", err)
	}
	o := Options{Limit: l, Duration: c.DurationUS, Seeds: c.Seeds, Nodes: c.Nodes, RTT: c.RTTUS, Jitter: c.JitterPct,
		Skew: c.SkewUS, WipeAt: c.WipeAtUS, RestartEvery: c.RestartEvery,
		Loop: slices.Contains(c.Clients, traffic.RetryAfter.String()), Edge: slices.Contains(c.Clients, traffic.Edge.String())}
	if !reflect.DeepEqual(conditions(o), c) {
		return Options{}, fmt.Errorf("scenarios: conditions: no options run the clients %v", c.Clients)
	}
	return o, o.Validate()
}

// runKey is where a run belongs: its limiter, the curve's point (0
// otherwise) and its column.
type runKey struct {
	algorithm     string
	point, column int
}

// place reads the runs list gives of every shard's document, each keys
// then seeds in order (list names them in errors), into the whole run's
// order: keys, then every seed of the run.
func (sh shards) place(keys []runKey, list func(*shardJSON) []seedRunJSON, name string) ([]SeedRun, error) {
	ns, n := len(sh.o.Seeds), len(sh.docs)
	out := make([]SeedRun, len(keys)*ns)
	clients := sh.o.Clients()
	for d := range sh.docs {
		runs, seeds := list(&sh.docs[d]), sh.docs[d].ShardSeeds
		if want := len(keys) * len(seeds); len(runs) != want {
			return nil, fmt.Errorf("scenarios: %s holds %d %s, want %d (%d × %d seeds)", sh.names[d], len(runs), name, want, len(keys), len(seeds))
		}
		for i, r := range runs {
			k, s := keys[i/len(seeds)], i%len(seeds)
			if got := (runKey{r.Algorithm, r.Point, r.Column}); got != k || r.Seed != seeds[s] {
				return nil, fmt.Errorf("scenarios: %s: %s[%d] is %s, point %d, column %d, seed %d; want %s, point %d, column %d, seed %d",
					sh.names[d], name, i, got.algorithm, got.point, got.column, r.Seed, k.algorithm, k.point, k.column, seeds[s])
			}
			run, err := r.seedRun(clients)
			if err != nil {
				return nil, fmt.Errorf("scenarios: %s: %s[%d]: %w", sh.names[d], name, i, err)
			}
			// Seed s of shard d+1 is the run's seed d + s·n.
			out[i/len(seeds)*ns+d+s*n] = run
		}
	}
	return out, nil
}

// seedRunsJSON are runs, each of the clients given, at point.
func seedRunsJSON(clients []traffic.ClientKind, point int, runs []SeedRun) []seedRunJSON {
	out := make([]seedRunJSON, len(runs))
	for i, r := range runs {
		j := seedRunJSON{Algorithm: r.Algorithm, Point: point, Column: r.Column, Seed: r.Seed, NotApplicable: r.NotApplicable,
			Clients: make([]clientRunJSON, len(clients)), FirstError: errorText(r.FirstError)}
		for k, c := range clients {
			cr := r.Clients[c]
			j.Clients[k] = clientRunJSON{Client: c.String(), Requests: cr.Requests, Admitted: cr.Admitted, Peak: cr.Peak,
				AfterWipe: cr.AfterWipe, Errors: cr.Errors, Violation: violationOf(cr.Violation)}
		}
		out[i] = j
	}
	return out
}

// seedRun is the SeedRun r was written from, with the clients given.
func (r seedRunJSON) seedRun(clients []traffic.ClientKind) (SeedRun, error) {
	run := SeedRun{Algorithm: r.Algorithm, Column: r.Column, Seed: r.Seed, NotApplicable: r.NotApplicable, FirstError: textError(r.FirstError)}
	if len(r.Clients) != len(clients) {
		return SeedRun{}, fmt.Errorf("%d clients, want the run's %d", len(r.Clients), len(clients))
	}
	for k, c := range clients {
		j := r.Clients[k]
		if j.Client != c.String() {
			return SeedRun{}, fmt.Errorf("client %d is %q, want %q", k, j.Client, c)
		}
		run.Clients[c] = ClientRun{Requests: j.Requests, Admitted: j.Admitted, Peak: j.Peak, AfterWipe: j.AfterWipe,
			Errors: j.Errors, Violation: j.Violation.violation()}
	}
	return run, nil
}

// seedVerdictOf is v, the verdict on seed alone (seedVerdict).
func seedVerdictOf(seed uint64, v Verdict) seedVerdictJSON {
	j := seedVerdictJSON{Suspect: v.Suspect, Seed: seed, Breaches: []seedBreachJSON{}, Requests: v.Requests,
		Errors: v.Errors, FirstError: errorText(v.FirstError)}
	if v.Caught {
		j.FirstBreach = v.FirstBreach.String()
	}
	for _, b := range Breaches() {
		if e := v.FirstBy[b]; e != nil {
			j.Breaches = append(j.Breaches, seedBreachJSON{Kind: b.String(), Client: e.Client.String(), Violation: violationOf(e.Violation), Trace: e.Trace})
		}
	}
	return j
}

// verdict is the Verdict on one seed j was written from, with the clients
// given.
func (j seedVerdictJSON) verdict(clients []traffic.ClientKind) (Verdict, error) {
	v := Verdict{Suspect: j.Suspect, Seeds: 1, Requests: j.Requests, Errors: j.Errors, FirstError: textError(j.FirstError)}
	for _, b := range j.Breaches {
		kind := breachNamed(b.Kind)
		c := slices.IndexFunc(clients, func(c traffic.ClientKind) bool { return c.String() == b.Client })
		switch {
		case kind == 0:
			return Verdict{}, fmt.Errorf("no breach is named %q", b.Kind)
		case c < 0:
			return Verdict{}, fmt.Errorf("no client of the run is named %q", b.Client)
		case v.FirstBy[kind] != nil:
			return Verdict{}, fmt.Errorf("breach %q twice", b.Kind)
		}
		v.SeedsBy[kind] = 1
		v.FirstBy[kind] = &Example{Seed: j.Seed, Client: clients[c], Violation: b.Violation.violation(), Trace: b.Trace}
	}
	if j.FirstBreach == "" {
		if len(j.Breaches) > 0 {
			return Verdict{}, errors.New("breaches, but no first breach")
		}
		return v, nil
	}
	kind := breachNamed(j.FirstBreach)
	e := v.FirstBy[kind]
	if kind == 0 || e == nil {
		return Verdict{}, fmt.Errorf("the first breach %q is none of its breaches", j.FirstBreach)
	}
	v.Caught, v.SeedsCaught = true, 1
	v.FirstSeed, v.FirstClient, v.FirstBreach, v.First, v.Trace = j.Seed, e.Client, kind, e.Violation, e.Trace
	return v, nil
}

// breachNamed is the breach of that name, or 0 for none.
func breachNamed(name string) breach.Kind {
	for _, b := range Breaches() {
		if b.String() == name {
			return b
		}
	}
	return 0
}

// curveOf is what c varies, as a curve's report and a shard document say
// it.
func curveOf(c CurveOf) *curveOfJSON {
	j := &curveOfJSON{Deployment: c.Deployment.String(), Param: paramKeys[c.Param], Values: c.Values, Clients: []string{}}
	for _, cl := range c.Clients {
		j.Clients = append(j.Clients, cl.String())
	}
	return j
}

// shardCurveOf is what c varies and whether it runs the ideal, as a shard
// document says it: the runs it holds at each point.
func shardCurveOf(c CurveOf) *shardCurveJSON {
	return &shardCurveJSON{curveOfJSON: *curveOf(c), NoIdeal: c.NoIdeal}
}

// curveWords is c in words, for errors.
func curveWords(c *shardCurveJSON) string {
	if c == nil {
		return "nothing"
	}
	ideal := ""
	if c.NoIdeal {
		ideal = ", no ideal run"
	}
	return fmt.Sprintf("the %s at %s %v (clients %v%s)", c.Deployment, c.Param, c.Values, c.Clients, ideal)
}

func violationOf(v *algos.Violation) *violationJSON {
	if v == nil {
		return nil
	}
	return &violationJSON{FromUS: v.From, ToUS: v.To, Admits: v.Admits, Allowed: v.Allowed, Reason: v.Reason}
}

func (j *violationJSON) violation() *algos.Violation {
	if j == nil {
		return nil
	}
	return &algos.Violation{From: j.FromUS, To: j.ToUS, Admits: j.Admits, Allowed: j.Allowed, Reason: j.Reason}
}

// errorText is err's text, nil for none; textError is the error back,
// which prints as err did.
func errorText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

func textError(s *string) error {
	if s == nil {
		return nil
	}
	return errors.New(*s)
}
