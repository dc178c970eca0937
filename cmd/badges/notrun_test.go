package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/overshoot-go/overshoot/internal/findings"
)

// A step that failed before the tests (-not-run) makes every finding's
// badge red and names the step, whatever a record or an earlier badge says:
// no badge keeps a green the run did not earn.
func TestNotRunBadgesAreRedNameTheStepAndCoverEveryFinding(t *testing.T) {
	root := writeModule(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "notrun_test.go"), []byte(notRun), 0o644); err != nil {
		t.Fatal(err)
	}
	// A green record and a green badge, both from an earlier run.
	record := filepath.Join(root, "run.json")
	if err := os.WriteFile(record, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "badges")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "TestFindingA.json"), []byte(`{"schemaVersion":1,"label":"a holds","message":"holds","color":"brightgreen"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jsonPath := range []string{record, filepath.Join(root, "never-written.json")} {
		var out bytes.Buffer
		if err := run(jsonPath, dir, root, false, "go mod download", &out); err != nil {
			t.Fatalf("-not-run with record %s: %v", filepath.Base(jsonPath), err)
		}
		checkBadges(t, dir, map[string]Badge{
			"TestFindingA": {1, "a holds", "not run: go mod download", "red"},
			"TestFindingB": {1, "b breaks", "not run: go mod download", "red"},
			"TestFindingC": {1, "c hangs", "not run: go mod download", "red"},
			"TestFindingD": {1, "d never ran", "not run: go mod download", "red"},
		})
	}
}

var readmeBadge = regexp.MustCompile(`overshoot/badges/(TestFinding\w+)\.json`)

// On this module, -not-run writes a red badge for every finding the README
// shows a badge of, and for no other: the set comes from the test files,
// not from a run that never happened.
func TestNotRunCoversEveryFindingTheReadmeLists(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Badge{}
	for _, m := range readmeBadge.FindAllSubmatch(readme, -1) {
		want[string(m[1])] = Badge{}
	}
	if len(want) < 10 {
		t.Fatalf("README.md shows %d finding badges; the pattern %s no longer reads its table", len(want), readmeBadge)
	}
	dir := t.TempDir()
	if err := run("-", dir, root, false, "lint", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkNotRun(t, dir, want, "lint")
}

// checkNotRun fails unless dir holds exactly one badge per name in want,
// each red and saying "not run: <step>".
func checkNotRun(t *testing.T, dir string, want map[string]Badge, step string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Badge{}
	for _, e := range entries {
		got[strings.TrimSuffix(e.Name(), ".json")] = Badge{}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("no badge written for %s", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("a badge written for %s, which is not expected", name)
		}
	}
	for _, e := range entries {
		b := readBadge(t, filepath.Join(dir, e.Name()))
		if b.Color != "red" || b.Message != "not run: "+step || b.Label == "" || b.SchemaVersion != 1 {
			t.Errorf("%s: %+v, want a red %q with its label", e.Name(), b, "not run: "+step)
		}
	}
}

// A record that lacks a finding gives that finding a red badge that says
// why it did not run, as far as the record tells: its package did not build
// (go test's JSON build events, or its plain-text line), or its test binary
// stopped before it. The findings that ran keep their own badges: green
// stays green.
func TestARecordMissingAFindingGivesItARedBadge(t *testing.T) {
	root := writeModule(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "notrun_test.go"), []byte(notRun), 0o644); err != nil {
		t.Fatal(err)
	}
	module := findings.Module
	sub := module + "/sub"
	rootPart := `{"Action":"start","Package":"` + module + `"}
{"Action":"run","Package":"` + module + `","Test":"TestFindingA"}
{"Action":"output","Package":"` + module + `","Test":"TestFindingA","Output":"    findings_test.go:10: measured: peak 5.79x at 50 ms\n"}
{"Action":"pass","Package":"` + module + `","Test":"TestFindingA"}
{"Action":"pass","Package":"` + module + `"}
`
	for _, tc := range []struct {
		name, sub, why string
	}{
		{"build events", `{"ImportPath":"` + sub + ` [` + sub + `.test]","Action":"build-output","Output":"sub/findings_test.go:6:1: undefined: x\n"}
{"ImportPath":"` + sub + ` [` + sub + `.test]","Action":"build-fail"}
{"Action":"start","Package":"` + sub + `"}
{"Action":"output","Package":"` + sub + `","Output":"FAIL\t` + sub + ` [build failed]\n"}
{"Action":"fail","Package":"` + sub + `","Elapsed":0,"FailedBuild":"` + sub + ` [` + sub + `.test]"}
`, findings.NotRunBuild},
		{"plain-text build failure", "# " + sub + "\nsub/findings_test.go:6:1: undefined: x\nFAIL\t" + sub + " [build failed]\n", findings.NotRunBuild},
		{"a panic before them", `{"Action":"start","Package":"` + sub + `"}
{"Action":"run","Package":"` + sub + `","Test":"TestSubPanics"}
{"Action":"output","Package":"` + sub + `","Test":"TestSubPanics","Output":"panic: boom\n"}
{"Action":"fail","Package":"` + sub + `","Test":"TestSubPanics"}
{"Action":"output","Package":"` + sub + `","Output":"FAIL\t` + sub + `\t0.006s\n"}
{"Action":"fail","Package":"` + sub + `","Elapsed":0.006}
`, findings.NotRunStopped},
		{"a package left out", "", findings.NotRunAbsent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "run.json")
			if err := os.WriteFile(record, []byte(rootPart+tc.sub), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := run(record, dir, root, false, "", &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			checkBadges(t, dir, map[string]Badge{
				"TestFindingA": {1, "a holds", "holds: peak 5.79x at 50 ms", "brightgreen"},
				"TestFindingB": {1, "b breaks", "not run: " + findings.NotRunAbsent, "red"},
				"TestFindingC": {1, "c hangs", "not run: " + tc.why, "red"},
				"TestFindingD": {1, "d never ran", "not run: " + tc.why, "red"},
			})
		})
	}
	// A record in which every package failed to build, so that no finding
	// ran at all, still gives every finding its red badge.
	record := filepath.Join(t.TempDir(), "run.json")
	allBroken := `{"Action":"fail","Package":"` + module + `","FailedBuild":"` + module + `"}
{"Action":"fail","Package":"` + sub + `","FailedBuild":"` + module + `"}
`
	if err := os.WriteFile(record, []byte(allBroken), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := run(record, dir, root, false, "", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkNotRun(t, dir, map[string]Badge{"TestFindingA": {}, "TestFindingB": {}, "TestFindingC": {}, "TestFindingD": {}}, findings.NotRunBuild)
}

// .ci/steps.sh, which .ci/run sources: when a step fails, the script exits
// with that step's status (CI still fails) after `make badges` has written
// every finding of this module red, "not run: <step>"; the exit commands run
// either way; a run that succeeds, or that has written its badges from the
// record, gets no not-run badge.
func TestCIStepsWriteNotRunBadgesWhenAStepFails(t *testing.T) {
	for _, tool := range []string{"bash", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := findings.Declared(root)
	if err != nil {
		t.Fatal(err)
	}
	every := map[string]Badge{}
	for _, f := range fs {
		every[f.Name] = Badge{}
	}
	for _, tc := range []struct {
		name, body string
		status     int
		step       string // "" when no badge is to be written
	}{
		{"a command fails", `ci_step "fake step"; false; echo "ci: set -e did not stop the script"; exit 0`, 1, "fake step"},
		{"a step exits 7", `ci_step lint; true; ci_step "tamper check"; (exit 7)`, 7, "tamper check"},
		{"a pipeline fails", `ci_step "go mod download"; false | cat`, 1, "go mod download"},
		{"every step passes", `ci_step lint; true; ci_step test; true`, 0, ""},
		{"badges written from the record", `ci_step test; ci_badges_written=1; exit 1`, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "badges")
			marker := filepath.Join(tmp, "cleaned-up")
			script := "set -euo pipefail\n. .ci/steps.sh\nci_at_exit \"touch '" + marker + "'\"\n" + tc.body + "\n"
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = root
			cmd.Env = append(cleanEnv(), "BADGES_DIR="+dir)
			out, err := cmd.CombinedOutput()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tc.status {
				t.Errorf("exit status %d, want %d; output:\n%s", status, tc.status, out)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the exit command did not run: %v; output:\n%s", err, out)
			}
			if tc.step == "" {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("badges written to %s, want none; output:\n%s", dir, out)
				}
				return
			}
			if !strings.Contains(string(out), `"not run: `+tc.step+`"`) {
				t.Errorf("the output does not name the step %q:\n%s", tc.step, out)
			}
			checkNotRun(t, dir, every, tc.step)
		})
	}
}

// .ci/run sources .ci/steps.sh before any step, sets no EXIT trap of its
// own (which would replace the one that writes the not-run badges), and
// names a step before each command that can fail ahead of the tests.
func TestCIRunNamesEveryStepBeforeTheTests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	source := -1
	for i, l := range lines {
		if l == ". .ci/steps.sh" || l == "source .ci/steps.sh" {
			source = i
			break
		}
		if strings.HasPrefix(l, "trap") {
			t.Errorf(".ci/run sets a trap before it sources .ci/steps.sh: %s", l)
		}
	}
	if source < 0 {
		t.Fatal(".ci/run does not source .ci/steps.sh")
	}
	for _, l := range lines[source+1:] {
		if strings.HasPrefix(l, "trap") {
			t.Errorf(".ci/run sets a trap of its own, which replaces .ci/steps.sh's (use ci_at_exit): %s", l)
		}
	}
	stepLine := regexp.MustCompile(`^ci_step (?:"([^"]+)"|(\S+))$`)
	for _, c := range []struct{ command, step string }{
		{"apt-get install", "apt-get"},
		{"go mod download", "go mod download"},
		{"redis-server --port", "redis"},
		{".ci/redis-preflight.sh", "redis preflight"},
		{"make lint", "lint"},
		{".ci/table-tamper.sh", "tamper check"},
		{"make test", "test"},
	} {
		at := -1
		for i := source + 1; i < len(lines); i++ {
			if strings.Contains(lines[i], c.command) && !strings.HasPrefix(lines[i], "ci_step") {
				at = i
				break
			}
		}
		if at < 0 {
			t.Errorf(".ci/run no longer runs %q: update this test", c.command)
			continue
		}
		step := ""
		for i := at - 1; i > source && step == ""; i-- {
			if m := stepLine.FindStringSubmatch(lines[i]); m != nil {
				step = m[1] + m[2]
			}
		}
		if step != c.step {
			t.Errorf(".ci/run runs %q in step %q, want %q", c.command, step, c.step)
		}
	}
}

// cleanEnv is this process's environment without what an enclosing make,
// or a caller's badges settings, would pass to the make under test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BADGES_DIR", "BADGES_NOT_RUN", "TEST_JSON":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func readBadge(t *testing.T, p string) Badge {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var b Badge
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return b
}
