package judge

import (
	"io"

	"github.com/overshoot-go/overshoot/internal/encode"
	"github.com/overshoot-go/overshoot/record"
)

// Schema is the schema of a run judged from its records, as JSON (Verdict.WriteJSON):
// the row a table prints, each breach with its first record (a line of
// record.Schema), in the conventions of overshoot's other reports (times
// in integer µs, names ending in _us; a number not measured is null).
// Within a version a field is only ever added.
const Schema = "overshoot.live/v1" // named for the live runs it was first written for; a schema keeps its name

type verdictJSON struct {
	Schema   string             `json:"schema"`
	Promise  string             `json:"promise"`
	Limit    encode.SchemaLimit `json:"limit"`
	Keys     int                `json:"keys"`
	Offered  int                `json:"offered"`
	Admitted int                `json:"admitted"`
	Denied   int                `json:"denied"`
	Failed   int                `json:"failed"`
	Most     int64              `json:"most"`
	Allowed  int64              `json:"allowed"`
	Clean    bool               `json:"clean"`
	Unjudged string             `json:"unjudged,omitempty"`
	Breaches []BreachJSON       `json:"breaches"`
}

// BreachJSON is one kind of breach as the JSON reports of a verdict
// write it (this package's and httpcheck's): its kind, how many requests
// showed it, why, and its first record, a line of record.Schema.
type BreachJSON struct {
	Kind  string      `json:"kind"`
	Count int64       `json:"count"`
	Why   string      `json:"why"`
	First record.Line `json:"first"`
}

// BreachesJSON returns v's breaches as BreachJSON, in v's order; an empty
// list, never nil, for a clean verdict.
func (v Verdict) BreachesJSON() []BreachJSON {
	out := []BreachJSON{}
	for _, b := range v.Breaches {
		out = append(out, BreachJSON{Kind: b.Kind.String(), Count: b.Count, Why: b.Why, First: record.LineOf(b.First)})
	}
	return out
}

// WriteJSON writes the verdict as one JSON document of schema Schema: the
// numbers Row prints, whether the run was clean, and every breach with its
// count, why, and its first record (the fields the target did not state
// are null).
func (v Verdict) WriteJSON(w io.Writer) error {
	doc := verdictJSON{Schema: Schema, Promise: v.Promise, Limit: encode.LimitOf(v.Limit), Keys: v.Keys, Offered: v.Offered,
		Admitted: v.Admitted, Denied: v.Denied, Failed: v.Failed, Most: v.Most, Allowed: v.Allowed, Clean: v.Clean(),
		Unjudged: v.Unjudged, Breaches: v.BreachesJSON()}
	return encode.JSON(w, doc)
}

// SchemaFields lists the fields of Schema as paths, read from the types
// that write it, so that the documentation can be checked against what is
// written (record.SchemaFields lists the record's).
func SchemaFields() []string { return encode.Fields(verdictJSON{}) }
