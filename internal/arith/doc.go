// Package arith is the exact integer arithmetic of the decisions, shared
// by package algos and the planted bugs (internal/planted), which must
// compute as the algorithms do without being part of algos' public API. Its
// functions take plain integers, never a Limit or a State, so that it sits
// below algos.
//
// # What it owns, and what it must not import
//
// Ceiling division, the overflow-free refill test, refill and drain, GCRA's
// reset, the sliding log's insertion, and the bound that keeps every number
// exact in a double. It imports nothing of this module.
package arith
