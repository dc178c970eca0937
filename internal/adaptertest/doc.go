// Package adaptertest is the shared shape of the library adapters' tests
// (adapters/xtimerate, adapters/redisrate): decisions worked out by hand as
// steps, and the limits they compare a library with its algos twin on. The
// times of the calls they compare it on are traffic's (CallSequence), as
// every other stream of requests is.
//
// # What it owns, and what it must not import
//
// Expected (a step) and its constructors, and Limits. It imports algos only (for
// Decision and Limit); tests alone import it.
package adaptertest
