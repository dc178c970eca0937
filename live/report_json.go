package live

import (
	"bufio"
	"io"

	"github.com/overshoot-go/overshoot/internal/encode"
)

// Schema is the schema of a live run judged, as JSON (Verdict.WriteJSON):
// the row a table prints, each breach with its first record, in the
// conventions of overshoot's other reports (times in integer µs, names
// ending in _us; a number not measured is null). RecordSchema is one
// record per line of a run (WriteRecords). Within a version a field is
// only ever added.
const (
	Schema       = "overshoot.live/v1"
	RecordSchema = "overshoot.record/v1"
)

type verdictJSON struct {
	Schema   string       `json:"schema"`
	Promise  string       `json:"promise"`
	Limit    encode.Limit `json:"limit"`
	Keys     int          `json:"keys"`
	Offered  int          `json:"offered"`
	Admitted int          `json:"admitted"`
	Denied   int          `json:"denied"`
	Failed   int          `json:"failed"`
	Most     int64        `json:"most"`
	Allowed  int64        `json:"allowed"`
	Clean    bool         `json:"clean"`
	Unjudged string       `json:"unjudged,omitempty"`
	Breaches []breachJSON `json:"breaches"`
}

type breachJSON struct {
	Kind  string     `json:"kind"`
	Count int64      `json:"count"`
	Why   string     `json:"why"`
	First recordJSON `json:"first"`
}

// recordJSON is one Record: a count the answer did not state is null.
type recordJSON struct {
	Key        string `json:"key"`
	Node       int    `json:"node"`
	SentUS     int64  `json:"sent_us"`
	AnsweredUS int64  `json:"answered_us"`
	Status     int    `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`
	Allowed    *bool  `json:"allowed"`
	Limit      *int64 `json:"limit"`
	Remaining  *int64 `json:"remaining"`
	ResetUS    *int64 `json:"reset_us"`
	RetryUS    *int64 `json:"retry_after_us"`
	Malformed  string `json:"malformed,omitempty"`
}

func recordOf(r Record) recordJSON {
	j := recordJSON{Key: r.Key, Node: r.Node, SentUS: r.Sent, AnsweredUS: r.Answered, Status: r.Status}
	if r.Err != nil {
		j.Error = r.Err.Error()
		return j
	}
	j.Allowed, j.Malformed = &r.Allowed, r.Malformed
	if r.Known.Has(FieldLimit) {
		j.Limit = &r.Limit
	}
	if r.Known.Has(FieldRemaining) {
		j.Remaining = &r.Remaining
	}
	if r.Known.Has(FieldReset) {
		j.ResetUS = &r.Reset
	}
	if r.Known.Has(FieldRetryAfter) {
		j.RetryUS = &r.RetryAfter
	}
	return j
}

// WriteJSON writes the verdict as one JSON document of schema Schema: the
// numbers Row prints, whether the run was clean, and every breach with its
// count, why, and its first record (the fields the target did not state
// are null).
func (v Verdict) WriteJSON(w io.Writer) error {
	doc := verdictJSON{Schema: Schema, Promise: v.Promise, Limit: encode.LimitOf(v.Limit), Keys: v.Keys, Offered: v.Offered,
		Admitted: v.Admitted, Denied: v.Denied, Failed: v.Failed, Most: v.Most, Allowed: v.Allowed, Clean: v.Clean(),
		Unjudged: v.Unjudged, Breaches: []breachJSON{}}
	for _, b := range v.Breaches {
		doc.Breaches = append(doc.Breaches, breachJSON{Kind: b.Kind.String(), Count: b.Count, Why: b.Why, First: recordOf(b.First)})
	}
	return encode.JSON(w, doc)
}

// WriteRecords writes every record of a run as JSON Lines: a first line
// naming the schema ({"schema":"overshoot.record/v1"}), then one object
// per record, in the order given: what a client saw, for another tool to
// read or to judge again.
func WriteRecords(w io.Writer, records []Record) error {
	bw := bufio.NewWriter(w)
	if err := encode.JSONLine(bw, struct {
		Schema string `json:"schema"`
	}{RecordSchema}); err != nil {
		return err
	}
	for _, r := range records {
		if err := encode.JSONLine(bw, recordOf(r)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SchemaFields lists the fields of schema (Schema or RecordSchema) as
// paths, read from the types that write it, so that the documentation can
// be checked against what is written; nil for another schema.
func SchemaFields(schema string) []string {
	switch schema {
	case Schema:
		return encode.Fields(verdictJSON{})
	case RecordSchema:
		// "schema" is the first line's, each record's fields the rest.
		return append([]string{"schema"}, encode.Fields(recordJSON{})...)
	}
	return nil
}
