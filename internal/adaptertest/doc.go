// Package adaptertest is the shared shape of the library adapters' tests
// (adapters/xtimerate, adapters/redisrate): decisions worked out by hand as
// steps, and the seeded stream of request times they compare a library
// with its algos twin on.
//
// # What it owns, and what it must not import
//
// Step and its constructors, and Sequence. It imports algos only (for
// Decision and Limit); tests alone import it.
package adaptertest
