package traffic

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/overshoot-go/overshoot/record"
)

// The problems a reader reports, each wrapped in a *record.ParseError
// that says where; test for them with errors.Is.
var (
	// ErrEmpty: the input holds no request (nothing at all, or a header only).
	ErrEmpty = errors.New("no requests")
	// ErrMissingColumn: the CSV header lacks timestamp or key.
	ErrMissingColumn = errors.New("missing required column")
	// ErrDuplicateColumn: the CSV header names a column twice.
	ErrDuplicateColumn = errors.New("column named twice")
	// ErrFieldCount: a CSV row has more or fewer fields than the header.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrSyntax: a line is not CSV or not a JSON object, or is too long.
	ErrSyntax = errors.New("malformed line")
	// ErrMissing: a JSON line lacks timestamp or key, or a CSV row leaves
	// the timestamp empty.
	ErrMissing = errors.New("missing")
	// ErrNotNumber: a timestamp, cost or duration is not a decimal number.
	ErrNotNumber = errors.New("not a number")
	// ErrNegative: a timestamp, cost or duration has a minus sign.
	ErrNegative = errors.New("negative")
	// ErrTooLarge: a time beyond MaxTime or a cost beyond MaxCost.
	ErrTooLarge = errors.New("too large")
	// ErrNotWhole: a cost with a fraction.
	ErrNotWhole = errors.New("not a whole number")
	// ErrCostBelowOne: a cost of 0; every request costs at least 1.
	ErrCostBelowOne = errors.New("below 1")
	// ErrEmptyKey: a key that is the empty string.
	ErrEmptyKey = errors.New("empty key")
	// ErrKey: a key that is not UTF-8, holds a control character, or is
	// longer than MaxKeyLen.
	ErrKey = errors.New("invalid key")
)

// lineError is what ReadCSV and ReadJSONL return for bad input: a
// *record.ParseError (the one error of a line that cannot be read, a
// record file's or a trace's) saying where, by line and, when one is at
// fault, by column ("timestamp", "key", "cost", "duration"), and the
// problem, one of the Err values above, wrapped. Its message is
// "traffic: line N, column C: problem", and "traffic: input: problem" for
// line 0, an empty input.
func lineError(line int, column string, err error) *record.ParseError {
	return &record.ParseError{Reader: "traffic", Line: line, Column: column, Err: err}
}

// Info is what a reader noticed about its input beyond the Trace.
type Info struct {
	// Reordered is true when the input was not in time order; the Trace
	// holds its requests stably sorted by time (equal times in input order)
	// all the same. A caller planning on it may want to say so.
	Reordered bool
	// FirstOutOfOrder is the line of the first request earlier than the one
	// before it in the input; 0 when Reordered is false.
	FirstOutOfOrder int
}

// The column names, in the order the writers write them.
const (
	colTimestamp = "timestamp"
	colKey       = "key"
	colCost      = "cost"
	colDuration  = "duration"
)

// maxLine bounds one JSON line, so a file without newlines is an error
// rather than all of memory.
const maxLine = 1 << 20

// ReadCSV reads a trace from CSV (RFC 4180: quoted fields may hold commas,
// quotes and newlines). The first record is the header; it must name the
// columns timestamp and key and may name cost and duration, in any order
// and case, and any other column, which is ignored. Every row has as many
// fields as the header. Blank lines are skipped.
//
//   - timestamp: seconds, a decimal number (1700000000.123456; an exponent
//     is allowed), kept as absolute µs, never shifted. More than six
//     decimals are rounded half up to the µs (…0000005 rounds up).
//   - key: any non-empty UTF-8 text without control characters, at most
//     MaxKeyLen bytes.
//   - cost: a whole number ≥ 1 (2 and 2.0 are both 2); empty means 1.
//   - duration: seconds ≥ 0, as timestamp, becoming Service in µs; empty
//     means 0, unknown.
//
// Input out of time order is not an error: the Trace comes back stably
// sorted, and Info says it was not. Any problem is a *record.ParseError
// with its line and column; input without requests is ErrEmpty.
func ReadCSV(r io.Reader) (Trace, Info, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 64<<10))
	cr.ReuseRecord = true // one string per row instead of one per field
	header, err := cr.Read()
	if err == io.EOF {
		return Trace{}, Info{}, lineError(0, "", fmt.Errorf("%w: the input is empty, not even a header", ErrEmpty))
	}
	if err != nil {
		return Trace{}, Info{}, csvError(err, 0, 0)
	}
	headerLine, _ := cr.FieldPos(0)
	fields := len(header)
	col := map[string]int{colTimestamp: -1, colKey: -1, colCost: -1, colDuration: -1}
	for i, name := range header {
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a byte-order mark, as spreadsheets write
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if j, known := col[name]; known {
			if j >= 0 {
				return Trace{}, Info{}, lineError(headerLine, name, ErrDuplicateColumn)
			}
			col[name] = i
		}
	}
	for _, name := range []string{colTimestamp, colKey} {
		if col[name] < 0 {
			return Trace{}, Info{}, lineError(headerLine, name,
				fmt.Errorf("%w (the header is %.200q)", ErrMissingColumn, strings.Join(header, ",")))
		}
	}
	ts, key, cost, dur := col[colTimestamp], col[colKey], col[colCost], col[colDuration]

	var b builder
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, Info{}, csvError(err, len(rec), fields)
		}
		// fail names the line and column of a bad field; FieldPos is only
		// asked on the way out, so a good row costs nothing for it.
		fail := func(c int, name string, err error) (Trace, Info, error) {
			line, _ := cr.FieldPos(c)
			return Trace{}, Info{}, lineError(line, name, err)
		}
		var req TraceRequest
		if req.Sent, err = parseTime(rec[ts]); err != nil {
			return fail(ts, colTimestamp, err)
		}
		if req.Key, err = b.key(rec[key]); err != nil {
			return fail(key, colKey, err)
		}
		req.Cost = 1
		if cost >= 0 {
			if req.Cost, err = parseCost(rec[cost]); err != nil {
				return fail(cost, colCost, err)
			}
		}
		if dur >= 0 {
			if req.Service, err = parseDuration(rec[dur]); err != nil {
				return fail(dur, colDuration, err)
			}
		}
		if b.add(req) {
			b.info.FirstOutOfOrder, _ = cr.FieldPos(ts)
		}
	}
	if b.n == 0 {
		return Trace{}, Info{}, lineError(headerLine, "", fmt.Errorf("%w after the header", ErrEmpty))
	}
	t := b.finish()
	return t, b.info, nil
}

// csvError turns encoding/csv's error into a lineError; a row of the
// wrong length has got fields where the header has want.
func csvError(err error, got, want int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err // the reader's own error: not the input's fault
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return lineError(pe.StartLine, "", fmt.Errorf("%w: %d where the header has %d", ErrFieldCount, got, want))
	}
	return lineError(pe.Line, "", fmt.Errorf("%w: %v at character %d", ErrSyntax, pe.Err, pe.Column))
}

// ReadJSONL reads a trace from JSON lines: one object per line,
//
//	{"timestamp": 1700000000.123456, "key": "alice", "cost": 2, "duration": 0.25}
//
// timestamp (seconds, a JSON number) and key (a string, or a number taken
// as its text) are required; cost and duration are optional (null is
// absent) and mean what they mean in ReadCSV, as do the rules for each
// value. Other fields are ignored, and so are blank lines. Numbers are
// read from their digits, so no µs is lost to a double. Out-of-order input
// is sorted and reported in Info, as by ReadCSV.
func ReadJSONL(r io.Reader) (Trace, Info, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var b builder
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		req, col, err := b.jsonRequest(text)
		if err != nil {
			return Trace{}, Info{}, lineError(line, col, err)
		}
		if b.add(req) {
			b.info.FirstOutOfOrder = line
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Trace{}, Info{}, lineError(line+1, "", fmt.Errorf("%w: longer than %d bytes", ErrSyntax, maxLine))
		}
		return Trace{}, Info{}, err
	}
	if b.n == 0 {
		return Trace{}, Info{}, lineError(line, "", fmt.Errorf("%w: no JSON object in the input", ErrEmpty))
	}
	return b.finish(), b.info, nil
}

// jsonLine is one line's fields, kept raw so each number is read from its
// own digits.
type jsonLine struct {
	Timestamp json.RawMessage `json:"timestamp"`
	Key       json.RawMessage `json:"key"`
	Cost      json.RawMessage `json:"cost"`
	Duration  json.RawMessage `json:"duration"`
}

// jsonRequest reads one JSON line; on error it names the field at fault.
func (b *builder) jsonRequest(text []byte) (TraceRequest, string, error) {
	var l jsonLine
	if err := json.Unmarshal(text, &l); err != nil {
		return TraceRequest{}, "", fmt.Errorf("%w: not a JSON object: %v", ErrSyntax, err)
	}
	var req TraceRequest
	var err error
	num, present, err := jsonNumber(l.Timestamp)
	if err == nil && !present {
		err = ErrMissing
	}
	if err == nil {
		req.Sent, err = parseTime(num)
	}
	if err != nil {
		return TraceRequest{}, colTimestamp, err
	}
	if req.Key, err = b.jsonKey(l.Key); err != nil {
		return TraceRequest{}, colKey, err
	}
	req.Cost = 1
	if num, present, err = jsonNumber(l.Cost); err == nil && present {
		req.Cost, err = parseCost(num)
	}
	if err != nil {
		return TraceRequest{}, colCost, err
	}
	if num, present, err = jsonNumber(l.Duration); err == nil && present {
		req.Service, err = parseDuration(num)
	}
	if err != nil {
		return TraceRequest{}, colDuration, err
	}
	return req, "", nil
}

// jsonNumber is the text of a JSON number; absent (or null) is not an
// error, a value of another type is.
func jsonNumber(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false, nil
	case raw[0] == '-' || isDigit(raw[0]):
		return string(raw), true, nil
	case raw[0] == '"':
		return "", false, fmt.Errorf("%w: %s is a string", ErrNotNumber, raw)
	}
	return "", false, fmt.Errorf("%w: %.40s", ErrNotNumber, raw)
}

// jsonKey interns the key of a JSON line: a string, or a number as its text.
func (b *builder) jsonKey(raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0, ErrMissing
	case raw[0] == '-' || isDigit(raw[0]):
		return b.key(string(raw))
	case raw[0] != '"':
		return 0, fmt.Errorf("%w: %.40s is not a string", ErrKey, raw)
	}
	// The raw bytes are checked before decoding: a decoder would replace
	// bad UTF-8 by U+FFFD, and the key would not be the key in the file.
	if !utf8.Valid(raw) {
		return 0, fmt.Errorf("%w: not valid UTF-8", ErrKey)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return b.keyBytes(raw[1 : len(raw)-1])
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return b.key(s)
}

// parseTime reads a timestamp in seconds as µs.
func parseTime(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ErrMissing
	}
	return parseSeconds(s, "beyond the year 9999: milliseconds, not seconds?")
}

// parseDuration reads a duration in seconds as µs; empty is 0, unknown.
func parseDuration(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	return parseSeconds(s, "longer than MaxTime")
}

// parseSeconds reads seconds as µs, up to MaxTime: timestamps and
// durations alike; tooLarge is the error's words for a number past it.
func parseSeconds(s, tooLarge string) (int64, error) {
	v, _, st := parseDecimal(s, 6, MaxTime)
	return v, numError(s, st, "seconds", tooLarge)
}

// parseCost reads a whole cost ≥ 1; empty is 1.
func parseCost(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 1, nil
	}
	v, exact, st := parseDecimal(s, 0, MaxCost)
	if err := numError(s, st, "units", "beyond MaxCost (2^53)"); err != nil {
		return 0, err
	}
	switch {
	case !exact:
		return 0, fmt.Errorf("%q is %w", s, ErrNotWhole)
	case v < 1:
		return 0, fmt.Errorf("cost %q is %w", s, ErrCostBelowOne)
	}
	return v, nil
}

// numError words a parseDecimal status.
func numError(s string, st numStatus, unit, tooLarge string) error {
	switch st {
	case numSyntax:
		return fmt.Errorf("%.40q is %w of %s", s, ErrNotNumber, unit)
	case numNegative:
		return fmt.Errorf("%.40q is %w", s, ErrNegative)
	case numTooLarge:
		return fmt.Errorf("%.40q is %w: %s", s, ErrTooLarge, tooLarge)
	}
	return nil
}

// builder collects the requests of a reader: keys interned in order of
// first appearance, requests in chunks that grow to 1 MiB, so that a large
// file is neither copied at every doubling nor held twice at its peak but
// once, at the end.
type builder struct {
	keys   []string
	index  map[string]int
	chunks [][]TraceRequest
	cur    []TraceRequest
	n      int
	prev   int64
	info   Info
}

const maxChunk = 1 << 15 // requests: 1 MiB

// key interns a key name, checking it only the first time it is seen.
func (b *builder) key(name string) (int, error) {
	if i, ok := b.index[name]; ok {
		return i, nil
	}
	return b.newKey(name)
}

// keyBytes is key without making a string of a key already seen.
func (b *builder) keyBytes(name []byte) (int, error) {
	if i, ok := b.index[string(name)]; ok { // no allocation: the compiler looks up the bytes
		return i, nil
	}
	return b.newKey(string(name))
}

func (b *builder) newKey(name string) (int, error) {
	if err := checkKey(name); err != nil {
		return 0, err
	}
	if b.index == nil {
		b.index = map[string]int{}
	}
	name = strings.Clone(name) // the reader's row buffer must not stay alive for it
	b.index[name] = len(b.keys)
	b.keys = append(b.keys, name)
	return len(b.keys) - 1, nil
}

// add appends req and reports whether it is the first out of time order.
func (b *builder) add(req TraceRequest) (firstOutOfOrder bool) {
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.chunks = append(b.chunks, b.cur)
		}
		b.cur = make([]TraceRequest, 0, min(maxChunk, max(256, 2*cap(b.cur))))
	}
	b.cur = append(b.cur, req)
	outOfOrder := b.n > 0 && req.Sent < b.prev
	b.n++
	b.prev = req.Sent
	if outOfOrder && !b.info.Reordered {
		b.info.Reordered = true
		return true
	}
	return false
}

// finish is the canonical Trace of what was read.
func (b *builder) finish() Trace {
	reqs := make([]TraceRequest, 0, b.n)
	for _, c := range b.chunks {
		reqs = append(reqs, c...)
	}
	reqs = append(reqs, b.cur...)
	b.chunks, b.cur = nil, nil
	if !b.info.Reordered {
		// In order already, and keys were numbered by first appearance.
		return Trace{Keys: b.keys, Requests: reqs}
	}
	sortStable(reqs)
	return renumber(b.keys, reqs)
}

// ReadFile reads a recorded trace from a file: JSON lines when its name ends
// in .jsonl or .ndjson, CSV otherwise. An error names the file (and, for a
// *record.ParseError, still unwraps to it).
func ReadFile(path string) (Trace, Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Trace{}, Info{}, fmt.Errorf("traffic: %w", err)
	}
	defer f.Close()
	read := ReadCSV
	if ext := filepath.Ext(path); ext == ".jsonl" || ext == ".ndjson" {
		read = ReadJSONL
	}
	tr, info, err := read(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return Trace{}, Info{}, fmt.Errorf("%s: %w", path, err)
	}
	return tr, info, nil
}
