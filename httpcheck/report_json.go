package httpcheck

import (
	"io"
	"time"

	"github.com/overshoot-go/overshoot/internal/encode"
	"github.com/overshoot-go/overshoot/judge"
)

// Schema is the schema of a check's report as JSON (Report.WriteJSON), in
// the conventions of overshoot's other reports: durations in integer µs
// (names ending in _us) from the check's start, headers as the server sent
// them ("" when absent), and the live judge's verdict of the exchanges
// (live), each breach's first record a line of record.Schema. Within a
// version a field is only ever added.
const Schema = "overshoot.httpcheck/v1"

type reportJSON struct {
	Schema    string         `json:"schema"`
	Method    string         `json:"method"`
	URL       string         `json:"url"`
	Nodes     []string       `json:"nodes"`
	Header    string         `json:"header"`
	Key       string         `json:"key"`
	Limit     int64          `json:"limit"`
	WindowUS  int64          `json:"window_us"`
	Start     string         `json:"start"`
	Burst     int            `json:"burst"`
	BurstUS   int64          `json:"burst_us"`
	Admitted  int            `json:"admitted"`
	Denied    int            `json:"denied"`
	OK        bool           `json:"ok"`
	Broken    []string       `json:"broken"`
	Breaches  []breachJSON   `json:"breaches"`
	Unjudged  string         `json:"unjudged,omitempty"`
	Exchanges []exchangeJSON `json:"exchanges"`
	Live      liveJSON       `json:"live"`
}

// liveJSON is Report.Live: the promise judged, the most admits certainly
// within one window against what it allows there, whether the exchanges
// were judged and clean, and each breach with its first record, in the
// record schema's one encoding (record.Line).
type liveJSON struct {
	Promise  string             `json:"promise"`
	Most     int64              `json:"most"`
	Allowed  int64              `json:"allowed"`
	Clean    bool               `json:"clean"`
	Unjudged string             `json:"unjudged,omitempty"`
	Breaches []judge.BreachJSON `json:"breaches"`
}

// breachJSON names its exchange, and the one it was compared with (null
// for a rule that compares none), by their N.
type breachJSON struct {
	Rule     string `json:"rule"`
	Why      string `json:"why"`
	Exchange int    `json:"exchange"`
	Previous *int   `json:"previous"`
}

type exchangeJSON struct {
	N          int    `json:"n"`
	Method     string `json:"method"`
	URL        string `json:"url"`
	Key        string `json:"key"`
	SentUS     int64  `json:"sent_us"`
	ReceivedUS int64  `json:"received_us"`
	Status     int    `json:"status"`
	Limit      string `json:"limit"`
	Remaining  string `json:"remaining"`
	Reset      string `json:"reset"`
	RetryAfter string `json:"retry_after"`
	Date       string `json:"date"`
}

// WriteJSON writes the report as one JSON document of schema Schema: what
// was sent where, the burst's counts, the verdict (ok, the broken rules in
// report order), every breach by rule with the exchanges that showed it,
// every exchange with its headers as sent, and the live judge's verdict
// with each breach's first record.
func (r *Report) WriteJSON(w io.Writer) error {
	doc := reportJSON{Schema: Schema, Method: r.Method, URL: r.URL, Nodes: r.Nodes, Header: r.Header, Key: r.Key,
		Limit: r.Limit, WindowUS: r.Window.Microseconds(), Start: r.Start.UTC().Format(time.RFC3339Nano), Burst: r.Burst,
		BurstUS: r.BurstTime.Microseconds(), Admitted: r.Admitted, Denied: r.Denied, OK: r.OK(), Broken: []string{}, Unjudged: r.Unjudged,
		Breaches: []breachJSON{}, Exchanges: []exchangeJSON{}}
	if doc.Nodes == nil {
		doc.Nodes = []string{}
	}
	for _, ru := range r.Broken() {
		doc.Broken = append(doc.Broken, string(ru))
	}
	for _, b := range r.Breaches {
		j := breachJSON{Rule: string(b.Rule), Why: b.Why, Exchange: b.Exchange.N}
		if b.Previous != nil {
			j.Previous = &b.Previous.N
		}
		doc.Breaches = append(doc.Breaches, j)
	}
	for _, e := range r.Exchanges {
		doc.Exchanges = append(doc.Exchanges, exchangeJSON{N: e.N, Method: e.Method, URL: e.URL, Key: e.Key,
			SentUS: e.Sent.Microseconds(), ReceivedUS: e.Received.Microseconds(), Status: e.Status, Limit: e.Limit,
			Remaining: e.Remaining, Reset: e.Reset, RetryAfter: e.RetryAfter, Date: e.Date})
	}
	doc.Live = liveJSON{Promise: r.Live.Promise, Most: r.Live.Most, Allowed: r.Live.Allowed, Clean: r.Live.Clean(),
		Unjudged: r.Live.Unjudged, Breaches: r.Live.BreachesJSON()}
	return encode.JSON(w, doc)
}

// SchemaFields lists the fields of Schema as paths ("exchanges[].status"),
// read from the types that write it, so that the documentation can be
// checked against what is written.
func SchemaFields() []string { return encode.Fields(reportJSON{}) }
