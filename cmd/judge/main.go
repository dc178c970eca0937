package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/overshoot-go/overshoot/algos"
	"github.com/overshoot-go/overshoot/judge"
	"github.com/overshoot-go/overshoot/record"
)

// errNotClean is the error of a run judged and found breaking its promise.
var errNotClean = errors.New("judge: the run is not clean")

func main() {
	err := run(os.Args[1:], os.Stdin, os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, errNotClean):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// promises are the promise names -promise takes.
var promises = map[string]func(algos.Limit) algos.Promise{
	"bucket":   algos.BucketPromise,
	"sliding":  algos.SlidingWindowPromise,
	"aligned":  algos.AlignedWindowPromise,
	"anchored": algos.AnchoredWindowPromise,
}

// run judges the file args name (or "-", in) and writes the verdict to w.
func run(args []string, in io.Reader, w io.Writer) error {
	fs := flag.NewFlagSet("judge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	rate := fs.Int64("rate", 0, "requests allowed per `window` (L)")
	window := fs.Duration("window", time.Second, "the limit's window (W)")
	burst := fs.Int64("burst", 0, "the bucket's capacity (B; 0: the rate)")
	promise := fs.String("promise", "bucket", "the promise to judge: bucket, sliding, aligned or anchored")
	format := fs.String("format", "", "jsonl or csv (default: by the file's extension; jsonl for -)")
	asJSON := fs.Bool("json", false, "write the verdict as JSON (overshoot.live/v1)")
	exact := fs.Bool("exact", false, "hold the service to its promise as a floor too: a request the promise certainly allowed must be admitted (honest turned away)")
	perNode := fs.Bool("per-node", false, "judge each node's answers as a limiter of their own (for nodes that each keep their own state)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("judge: want one file of records (or - for standard input), got %d arguments", fs.NArg())
	}
	if *window%time.Microsecond != 0 {
		return fmt.Errorf("judge: the window %v is not a whole number of µs", *window)
	}
	if *burst == 0 {
		*burst = *rate
	}
	l, err := algos.NewLimit(*rate, window.Microseconds(), *burst)
	if err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	makePromise, ok := promises[*promise]
	if !ok {
		return fmt.Errorf("judge: unknown promise %q: bucket, sliding, aligned or anchored", *promise)
	}
	name := fs.Arg(0)
	src := in
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("judge: %w", err)
		}
		defer f.Close()
		src = f
	}
	if *format == "" {
		*format = "jsonl"
		if strings.EqualFold(filepath.Ext(name), ".csv") {
			*format = "csv"
		}
	}
	var recs []record.Record
	switch *format {
	case "jsonl":
		recs, err = record.ReadJSONL(src)
	case "csv":
		recs, err = record.ReadCSV(src)
	default:
		return fmt.Errorf("judge: unknown format %q: jsonl or csv", *format)
	}
	if err != nil {
		return fmt.Errorf("judge: %s: %w", name, err)
	}
	var opts []judge.Option
	if *exact {
		opts = append(opts, judge.Exact())
	}
	if *perNode {
		opts = append(opts, judge.PerNode())
	}
	v := judge.Records(recs, makePromise(l), l, opts...)
	if *asJSON {
		err = v.WriteJSON(w)
	} else {
		_, err = io.WriteString(w, v.String())
	}
	if err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	if !v.Clean() {
		return errNotClean
	}
	return nil
}
