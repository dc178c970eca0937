package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteAll makes the folder, and a write leaves no temporary file and
// replaces the old content whole; Write into a missing folder and a write
// that cannot rename fail, leaving everything as it was.
func TestWriteReplacesWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "f.json")
	for _, content := range []string{"old\n", "new, and longer\n"} {
		if err := WriteAll(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q (%v), want %q", got, err, content)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if err := Write(filepath.Join(dir, "missing", "f.json"), []byte("x")); err == nil {
		t.Error("Write made a missing folder")
	}
	// A folder where the file should be: the rename fails.
	blocked := filepath.Join(dir, "sub", "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(blocked, []byte("x")); err == nil {
		t.Error("a write over a non-empty folder succeeded")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want f.json and blocked only: %v", len(entries), entries)
	}
}
