// Package atomicfile writes a file whole or not at all: a reader sees the
// old content or the new, never a part, and a failed write leaves the old
// file as it was.
//
// # What it owns, and what it must not import
//
// The one atomic write of the module: the goldens (internal/golden), the
// ceiling's artifact and the files a test shares with a container
// (internal/redistest) are written through it. It imports nothing of this
// module.
package atomicfile
