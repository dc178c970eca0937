package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/overshoot-go/overshoot/internal/encode"
)

// Schema names the record's file format: JSON Lines, a first line naming
// the schema ({"schema":"overshoot.record/v1"}), then one object per
// record, in µs, with a count the answer did not state and a time the
// producer could not see as null. Within a version a field is only ever
// added; a reader ignores fields it does not know. So reset_is_delay and
// retry_after_is_delay, added within v1, change no reading: a file
// without them (an older one, or a tool's that does not know) reads with
// no wait marked a delay, the looser reading every judge allows for, and
// a reader that does not know them judges a newer file so.
const Schema = "overshoot.record/v1"

// Line is one Record as a line of the file, and as every other report
// (a live verdict's first breach, say) writes a record.
type Line struct {
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
	DecidedUS  *int64 `json:"decided_us"`
	ToldUS     *int64 `json:"told_us"`
	Cost       *int64 `json:"cost"`
	// ResetIsDelay and RetryIsDelay are Answer.Delta: true when the wait
	// was stated as a delay from the answer (delay-seconds, milliseconds)
	// rather than as an instant (an epoch, an HTTP-date), which a judge
	// reads more tightly; left out when it was not, or is not known to
	// have been, and for a wait not stated.
	ResetIsDelay bool `json:"reset_is_delay,omitempty"`
	RetryIsDelay bool `json:"retry_after_is_delay,omitempty"`
	// Order is Record.Order, left out when the producer did not see the
	// order of its decisions (added within v1: a reader that does not
	// know it orders decisions of one µs by nothing, as before).
	Order *int64 `json:"order,omitempty"`
}

// LineOf is r as the record schema writes it: the counts r did not
// state, and the times its producer did not see, null; a wait marked a
// delay (Answer.Delta) only when r states it.
func LineOf(r Record) Line {
	j := Line{Key: r.Key, Node: r.Node, SentUS: r.Sent, AnsweredUS: r.Answered, Status: r.Status}
	if r.Seen.Has(SeenDecided) {
		j.DecidedUS = &r.Decided
	}
	if r.Seen.Has(SeenTold) {
		j.ToldUS = &r.Told
	}
	if r.Seen.Has(SeenOrder | SeenDecided) {
		j.Order = &r.Order
	}
	if r.Cost != 0 {
		j.Cost = &r.Cost
	}
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
		j.ResetUS, j.ResetIsDelay = &r.Reset, r.Delta.Has(FieldReset)
	}
	if r.Known.Has(FieldRetryAfter) {
		j.RetryUS, j.RetryIsDelay = &r.RetryAfter, r.Delta.Has(FieldRetryAfter)
	}
	return j
}

// WriteJSONL writes records as the record schema's JSON Lines, in the
// order given: what each client saw, for another tool to read or for
// ReadJSONL to judge again.
func WriteJSONL(w io.Writer, records []Record) error {
	bw := bufio.NewWriter(w)
	if err := encode.JSONLine(bw, struct {
		Schema string `json:"schema"`
	}{Schema}); err != nil {
		return err
	}
	for _, r := range records {
		if err := encode.JSONLine(bw, LineOf(r)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ParseError is a line of a file that could not be read, whichever reader
// refused it: this package's, of a record file, or package traffic's, of
// a trace. One type for both, so that a caller of either asks errors.As
// once, and a line of input that cannot be read reads alike in both.
type ParseError struct {
	// Reader names the package whose reader refused the input, "record"
	// (a record file) or "traffic" (a trace): the kind of file, and the
	// message's first word, as for every other error of that package.
	Reader string
	// Line is the 1-based line of the input; 0 when the input is empty
	// (a trace's reader says so; a record file's empty input is line 1).
	Line int
	// Column is the column or field at fault, as the file names it
	// ("timestamp", "key", …); "" when it is the whole line, as it always
	// is for a record file.
	Column string
	// Err is why; a trace's reader wraps one of traffic's Err values.
	Err error
}

// Error is "reader: line N, column C: why", without the column when none
// is named, and with "input" for line 0.
func (e *ParseError) Error() string {
	where := "input"
	if e.Line > 0 {
		where = fmt.Sprintf("line %d", e.Line)
	}
	if e.Column != "" {
		where += ", column " + e.Column
	}
	return fmt.Sprintf("%s: %s: %v", e.Reader, where, e.Err)
}

// Unwrap is why, for errors.Is against a reader's own errors.
func (e *ParseError) Unwrap() error { return e.Err }

// lineError is line of a record file refused for err.
func lineError(line int, err error) *ParseError {
	return &ParseError{Reader: "record", Line: line, Err: err}
}

// maxLine bounds one line of a record file: a record is a few hundred
// bytes, and a file that is not one must fail, not fill memory.
const maxLine = 1 << 20

// ReadJSONL reads a file WriteJSONL wrote, or one a user's own tool wrote
// in its schema: the schema line first, then one record per line (blank
// lines are skipped). A record needs key, node, sent_us and answered_us,
// with answered_us ≥ sent_us, and either error or allowed; a count left
// out or null is not stated, a time left out or null was not seen, and a
// decided_us outside [sent_us, answered_us] is an error. reset_is_delay
// and retry_after_is_delay (Answer.Delta) may be true only beside the
// wait they mark; left out, null or false, the wait is not known to be a
// delay (the looser reading). The first line
// that breaks a rule is a *ParseError naming it; nothing is returned with
// it.
func ReadJSONL(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Record
	line, schema := 0, false
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if !schema {
			var head struct {
				Schema *string `json:"schema"`
			}
			if err := json.Unmarshal(text, &head); err != nil || head.Schema == nil {
				return nil, lineError(line, fmt.Errorf("the first line must name the schema, {\"schema\":%q}", Schema))
			}
			if *head.Schema != Schema {
				return nil, lineError(line, fmt.Errorf("schema %q, want %q", *head.Schema, Schema))
			}
			schema = true
			continue
		}
		rec, err := parseLine(text)
		if err != nil {
			return nil, lineError(line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, lineError(line+1, fmt.Errorf("a line longer than %d bytes", maxLine))
		}
		return nil, fmt.Errorf("record: %w", err)
	}
	if !schema {
		return nil, lineError(1, fmt.Errorf("empty: the first line must name the schema, {\"schema\":%q}", Schema))
	}
	return out, nil
}

// lineJSON is Line as read: every field may be missing.
type lineJSON struct {
	Key          *string `json:"key"`
	Node         *int    `json:"node"`
	SentUS       *int64  `json:"sent_us"`
	AnsweredUS   *int64  `json:"answered_us"`
	Status       int     `json:"status"`
	Error        string  `json:"error"`
	Allowed      *bool   `json:"allowed"`
	Limit        *int64  `json:"limit"`
	Remaining    *int64  `json:"remaining"`
	ResetUS      *int64  `json:"reset_us"`
	RetryUS      *int64  `json:"retry_after_us"`
	Malformed    string  `json:"malformed"`
	DecidedUS    *int64  `json:"decided_us"`
	ToldUS       *int64  `json:"told_us"`
	Cost         *int64  `json:"cost"`
	ResetIsDelay *bool   `json:"reset_is_delay"`
	RetryIsDelay *bool   `json:"retry_after_is_delay"`
	Order        *int64  `json:"order"`
}

func parseLine(text []byte) (Record, error) {
	var j lineJSON
	if err := json.Unmarshal(text, &j); err != nil {
		return Record{}, err
	}
	return j.record()
}

// record is the Record j stands for, or why it stands for none.
func (j *lineJSON) record() (Record, error) {
	switch {
	case j.Key == nil || *j.Key == "":
		return Record{}, errors.New("no key")
	case j.Node == nil || *j.Node < 0:
		return Record{}, errors.New("no node, or a negative one")
	case j.SentUS == nil || j.AnsweredUS == nil:
		return Record{}, errors.New("sent_us and answered_us are both needed")
	case *j.AnsweredUS < *j.SentUS:
		return Record{}, fmt.Errorf("answered_us %d is before sent_us %d", *j.AnsweredUS, *j.SentUS)
	case j.Error == "" && j.Allowed == nil:
		return Record{}, errors.New("neither allowed nor error: a record is a decision or an error")
	case j.Error != "" && j.Allowed != nil:
		return Record{}, errors.New("both allowed and error")
	case j.Cost != nil && *j.Cost < 1:
		return Record{}, fmt.Errorf("cost %d: a request asks for at least 1", *j.Cost)
	}
	r := Record{Key: *j.Key, Node: *j.Node, Sent: *j.SentUS, Answered: *j.AnsweredUS, Status: j.Status}
	if j.DecidedUS != nil {
		if d := *j.DecidedUS; d < r.Sent || d > r.Answered {
			return Record{}, fmt.Errorf("decided_us %d is outside [sent_us %d, answered_us %d]", d, r.Sent, r.Answered)
		}
		r.Decided, r.Seen = *j.DecidedUS, r.Seen|SeenDecided
	}
	if j.ToldUS != nil {
		r.Told, r.Seen = *j.ToldUS, r.Seen|SeenTold
	}
	if j.Order != nil {
		switch {
		case *j.Order < 1:
			return Record{}, fmt.Errorf("order %d: decisions are numbered from 1", *j.Order)
		case j.DecidedUS == nil:
			// An order ranks decisions within their µs: with no µs it says nothing.
			return Record{}, errors.New("order is given but decided_us is not")
		}
		r.Order, r.Seen = *j.Order, r.Seen|SeenOrder
	}
	if j.Cost != nil {
		r.Cost = *j.Cost
	}
	if j.Error != "" {
		r.Err = errors.New(j.Error)
		return r, nil
	}
	r.Allowed, r.Malformed = *j.Allowed, j.Malformed
	for _, f := range []struct {
		v     *int64
		to    *int64
		field Fields
	}{{j.Limit, &r.Limit, FieldLimit}, {j.Remaining, &r.Remaining, FieldRemaining}, {j.ResetUS, &r.Reset, FieldReset}, {j.RetryUS, &r.RetryAfter, FieldRetryAfter}} {
		if f.v != nil {
			*f.to, r.Known = *f.v, r.Known|f.field
		}
	}
	for _, f := range []struct {
		delay      *bool
		name, wait string
		field      Fields
	}{{j.ResetIsDelay, "reset_is_delay", "reset_us", FieldReset}, {j.RetryIsDelay, "retry_after_is_delay", "retry_after_us", FieldRetryAfter}} {
		if f.delay == nil || !*f.delay {
			continue
		}
		if !r.Known.Has(f.field) {
			// A delay claims how a stated wait was rounded: with no wait
			// it is a producer's mistake, not a reading to guess.
			return Record{}, fmt.Errorf("%s is true but %s is not stated", f.name, f.wait)
		}
		r.Delta |= f.field
	}
	return r, nil
}

// SchemaFields lists the fields of the record schema as paths, read from
// the type that writes it ("schema" is the first line's, the rest each
// record's), so that the documentation can be checked against what is
// written.
func SchemaFields() []string {
	return append([]string{"schema"}, encode.Fields(Line{})...)
}
