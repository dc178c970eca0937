package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path (mode 0644) through a temporary file in the
// same folder, which must exist, synced, then renamed over path. On an
// error the temporary file is removed and path is left as it was.
// WriteAll makes the folder first.
func Write(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteAll is Write after making path's folder, and its parents, when they
// are missing.
func WriteAll(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return Write(path, data)
}
