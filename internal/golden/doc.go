// Package golden compares report output with the files under golden/ and,
// with -update, rewrites them.
//
// The flags -update and -golden.out are defined here, so only the test
// packages that import golden take them; `make golden` passes -update to
// exactly those (go list names them). A file is written
// only when its bytes differ, and atomically: a temporary file in the same
// folder, then a rename, so an interrupted run never leaves half a golden.
//
// # What it owns, and what it must not import
//
// The flags -update and -golden.out, the comparison and the atomic write.
// Only tests import it; it imports nothing of this module.
package golden
