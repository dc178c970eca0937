package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/limiter"
	"github.com/overshoot-go/overshoot/model"
	"github.com/overshoot-go/overshoot/record"
)

// records writes the records of a simulated token bucket, 10 a second with
// bursts of 10, offered 40 a second on two keys for 3 s, deployed dep on 3
// nodes, as a file of the given format, and returns its path.
func records(t *testing.T, dep model.Deployment, format string) string {
	t.Helper()
	var reqs []record.Request
	for i := range 240 {
		reqs = append(reqs, record.Request{Key: i % 2, Sent: int64(i) * 12_500})
	}
	cfg := model.Config{Limiter: limiter.FromAlgorithm(algos.TokenBucket), Limit: algos.MustLimit(10, algos.Second, 10), Deployment: dep,
		Nodes: 3, RTT: 1_000, Seed: 1, Requests: reqs}
	res, err := model.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := res.Records(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if format == "csv" {
		err = record.WriteCSV(&b, recs)
	} else {
		err = record.WriteJSONL(&b, recs)
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run."+format)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file of records is judged as a live run is: the shared store's run is
// clean, a bucket on each of three nodes is caught over-admitting, from
// JSON lines and from CSV alike, and the exit status says which; judged
// per node, each node's bucket is clean.
func TestJudgeAFileOfRecords(t *testing.T) {
	for _, format := range []string{"jsonl", "csv"} {
		var out bytes.Buffer
		if err := run([]string{"-rate", "10", "-burst", "10", "-window", "1s", records(t, model.StoreClock, format)}, nil, &out); err != nil {
			t.Errorf("%s, a shared store: %v\n%s", format, err, out.String())
		}
		if !strings.Contains(out.String(), "clean") {
			t.Errorf("%s, a shared store:\n%s", format, out.String())
		}
		out.Reset()
		err := run([]string{"-rate", "10", records(t, model.LocalFull, format)}, nil, &out)
		if !errors.Is(err, errNotClean) || !strings.Contains(out.String(), "caught: over-admission") {
			t.Errorf("%s, a bucket per node: %v\n%s", format, err, out.String())
		}
		if format == "jsonl" {
			t.Logf("a bucket per node, judged from its file:\n%s", out.String())
		}
	}
	// Each node's bucket, judged on its own, keeps the promise: the
	// deployment broke it.
	var perNode bytes.Buffer
	if err := run([]string{"-rate", "10", "-per-node", records(t, model.LocalFull, "jsonl")}, nil, &perNode); err != nil || !strings.Contains(perNode.String(), "clean") {
		t.Errorf("a bucket per node, -per-node: %v\n%s", err, perNode.String())
	}
	var out bytes.Buffer
	f, err := os.Open(records(t, model.LocalFull, "jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := run([]string{"-rate", "10", "-json", "-"}, f, &out); !errors.Is(err, errNotClean) || !strings.Contains(out.String(), `"schema": "overshoot.live/v1"`) {
		t.Errorf("from standard input, as JSON: %v\n%s", err, out.String())
	}
}

// With -exact the service is held to its promise as a floor too: the
// token bucket behind one store admits all the promise allows and stays
// clean, and the same bucket split over three nodes, each with a third of
// the limit, turns away what the promise allows, which only -exact judges.
func TestJudgeExactHoldsThePromiseAsAFloor(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-rate", "10", "-exact", records(t, model.StoreClock, "jsonl")}, nil, &out); err != nil || !strings.Contains(out.String(), "clean") {
		t.Errorf("a shared store, -exact: %v\n%s", err, out.String())
	}
	split := records(t, model.LocalSplit, "jsonl")
	out.Reset()
	if err := run([]string{"-rate", "10", split}, nil, &out); strings.Contains(out.String(), "honest turned away") {
		t.Errorf("a split bucket judged for honesty without -exact: %v\n%s", err, out.String())
	}
	out.Reset()
	err := run([]string{"-rate", "10", "-exact", split}, nil, &out)
	if !errors.Is(err, errNotClean) || !strings.Contains(out.String(), "honest turned away") {
		t.Errorf("a split bucket, -exact: %v\n%s", err, out.String())
	}
	t.Logf("a bucket split over three nodes, -exact:\n%s", out.String())
}

// Bad input is a clear error, never a verdict.
func TestJudgeRefusesBadInput(t *testing.T) {
	good := records(t, model.StoreClock, "jsonl")
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"schema":"overshoot.record/v1"}`+"\n"+`{"key":"a","node":0,"sent_us":5,"answered_us":1,"allowed":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "10"}, "want one file"},
		{[]string{"-rate", "0", good}, "judge: "},
		{[]string{"-rate", "10", "-window", "-1s", good}, "judge: "},
		{[]string{"-rate", "10", "-window", "1500ns", good}, "not a whole number of µs"},
		{[]string{"-rate", "10", "-promise", "leaky", good}, `unknown promise "leaky"`},
		{[]string{"-rate", "10", "-format", "xml", good}, `unknown format "xml"`},
		{[]string{"-rate", "10", filepath.Join(t.TempDir(), "none.jsonl")}, "no such file"},
		{[]string{"-rate", "10", bad}, "line 2: answered_us 1 is before sent_us 5"},
		{[]string{"-rate", "10", "-format", "csv", good}, "record: line 1: "},
		{[]string{"-rat", "10", good}, "flag provided but not defined"},
	} {
		var out bytes.Buffer
		err := run(c.args, nil, &out)
		if err == nil || errors.Is(err, errNotClean) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.args, err, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: a verdict was written with the error:\n%s", c.args, out.String())
		}
	}
}

// The judge reads how a file says each wait was stated: a Reset of 2 s
// for a bucket of 10 that refills in 1 s, stated as a delay in whole
// seconds (reset_is_delay), was longer than 1 s whatever its rounding, and
// is caught, from JSON lines and from CSV alike. The same file without
// the column (an older one) may hold an epoch read late by up to 2 s, and
// is clean: looser, never wrong.
func TestJudgeReadsHowEachWaitWasStated(t *testing.T) {
	files := map[string]func(said bool) string{
		"jsonl": func(said bool) string {
			mark := ""
			if said {
				mark = `,"reset_is_delay":true`
			}
			return `{"schema":"overshoot.record/v1"}` + "\n" + `{"key":"a","node":0,"sent_us":0,"answered_us":1000,"allowed":true,"remaining":9,"reset_us":2000000` + mark + "}\n"
		},
		"csv": func(said bool) string {
			if said {
				return "key,sent_us,answered_us,allowed,remaining,reset_us,reset_is_delay\na,0,1000,true,9,2000000,true\n"
			}
			return "key,sent_us,answered_us,allowed,remaining,reset_us\na,0,1000,true,9,2000000\n"
		},
	}
	for _, format := range []string{"jsonl", "csv"} {
		for _, said := range []bool{true, false} {
			text := files[format](said)
			path := filepath.Join(t.TempDir(), "run."+format)
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := run([]string{"-rate", "10", "-burst", "10", "-window", "1s", path}, nil, &out)
			caught := errors.Is(err, errNotClean) && strings.Contains(out.String(), "caught: reset past idle 1") &&
				strings.Contains(out.String(), "more than 1.000s whatever its rounding")
			if said && !caught || !said && (err != nil || !strings.Contains(out.String(), "clean")) {
				t.Errorf("%s, the delay said %v:\n%s\njudged: %v\n%s", format, said, text, err, out.String())
			}
		}
	}
}
