// Package planted holds the planted bugs: copies of the six decisions with
// one line changed, as a real author gets it wrong, so that the properties,
// the hunt and the Lua differential can show they catch such a bug. It is
// internal: tests, the mutants and the study reach it; a user of algos
// never sees it.
//
// # What it owns, and what it must not import
//
// The planted algorithms and their list (All). It imports algos and
// internal/arith, the arithmetic it shares with algos, and nothing else.
package planted
