package golden

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/overshoot-go/overshoot/internal/atomicfile"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files under golden/ instead of comparing with them")
	out    = flag.String("golden.out", "", "also write this run's bytes for each golden file to `dir`/name, so a caller can print what the code computed rather than what is committed")
)

// Updating reports whether this run rewrites golden files.
func Updating() bool { return *update }

// Path is the absolute path of golden/name in this module.
func Path(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "golden", name), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("golden: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Check fails t with a unified diff when got differs from golden/name, or
// rewrites the file when -update is set. With -golden.out it first writes got
// to that folder, whatever the comparison finds.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path, err := Path(name)
	if err != nil {
		t.Fatal(err)
	}
	if *out != "" {
		if err := WriteAtomic(filepath.Join(*out, name), got); err != nil {
			t.Fatalf("golden: -golden.out: %v", err)
		}
	}
	want, err := os.ReadFile(path)
	if *update {
		if err == nil && bytes.Equal(want, got) {
			return
		}
		if err := WriteAtomic(path, got); err != nil {
			t.Fatal(err)
		}
		t.Logf("golden: rewrote %s", path)
		return
	}
	if err != nil {
		t.Fatalf("golden: %v (run `make golden` to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("golden: %s differs from this run (run `make golden` if the change is intended):\n%s", name, Diff(name, want, got))
	}
}

// CheckWrite is Check on what write writes, failing t at once when write
// fails: a report checked in each of its formats is one line a format.
func CheckWrite(t testing.TB, name string, write func(io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	Check(t, name, b.Bytes())
}

// CheckWriteTo is CheckWrite for a writer shaped as io.WriterTo's WriteTo
// (a report's WriteTo, WriteSVG): the count it returns is not checked.
func CheckWriteTo(t testing.TB, name string, write func(io.Writer) (int64, error)) {
	t.Helper()
	CheckWrite(t, name, func(w io.Writer) error { _, err := write(w); return err })
}

// Diff is a unified diff from want to got.
func Diff(name string, want, got []byte) string {
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(string(want)),
		B:        difflib.SplitLines(string(got)),
		FromFile: "golden/" + name,
		ToFile:   "this run",
		Context:  3,
	})
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	return text
}

// WriteAtomic writes data to path whole or not at all, making its folder
// when missing (atomicfile.WriteAll).
func WriteAtomic(path string, data []byte) error { return atomicfile.WriteAll(path, data) }
