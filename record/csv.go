package record

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSVColumns are the columns WriteCSV writes, in order: the record
// schema's fields, an empty cell where the JSON has null (or leaves a
// field out). The last three, reset_is_delay, retry_after_is_delay and
// order, were added within the schema's v1: a file without them reads as
// it did (no wait known to be a delay, decisions of one µs in no known
// order), and a ReadCSV older than them refuses them by name, as it
// refuses any column it does not know (without them it reads the file,
// as loosely).
var CSVColumns = []string{"key", "node", "sent_us", "answered_us", "decided_us", "told_us", "cost", "status", "error",
	"allowed", "limit", "remaining", "reset_us", "retry_after_us", "malformed", "reset_is_delay", "retry_after_is_delay", "order"}

// WriteCSV writes records as CSV under a header of CSVColumns, one row per
// record in the order given: the same record as WriteJSONL, for a
// spreadsheet or a log pipeline.
func WriteCSV(w io.Writer, records []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	num := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	flag := func(b bool) string {
		if !b {
			return "" // as the JSON leaves it out
		}
		return "true"
	}
	for _, r := range records {
		j := LineOf(r)
		allowed := ""
		if j.Allowed != nil {
			allowed = strconv.FormatBool(*j.Allowed)
		}
		status := ""
		if j.Status != 0 {
			status = strconv.Itoa(j.Status)
		}
		if err := cw.Write([]string{j.Key, strconv.Itoa(j.Node), num(&j.SentUS), num(&j.AnsweredUS), num(j.DecidedUS), num(j.ToldUS),
			num(j.Cost), status, j.Error, allowed, num(j.Limit), num(j.Remaining), num(j.ResetUS), num(j.RetryUS), j.Malformed,
			flag(j.ResetIsDelay), flag(j.RetryIsDelay), num(j.Order)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads records from CSV with a header row naming its columns,
// in any order, by CSVColumns' names; a column it does not know is an
// error (a misspelt "remainig" must not pass as unstated). key, sent_us,
// answered_us and one of allowed or error are needed; an empty cell is
// not stated (a count), not seen (a time) or not known (a wait's delay),
// and allowed, reset_is_delay and retry_after_is_delay read true or
// false. The rules are ReadJSONL's; the first row that breaks one is a
// *ParseError naming its line, and nothing is returned with it.
func ReadCSV(r io.Reader) ([]Record, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, lineError(1, errors.New("empty: the first row must name the columns"))
	}
	if err != nil {
		return nil, lineError(1, err)
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.TrimSpace(name)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a spreadsheet's byte order mark
		}
		known := false
		for _, c := range CSVColumns {
			known = known || c == name
		}
		if !known {
			return nil, lineError(1, fmt.Errorf("column %q is not one of %s", name, strings.Join(CSVColumns, ", ")))
		}
		if _, dup := col[name]; dup {
			return nil, lineError(1, fmt.Errorf("column %q twice", name))
		}
		col[name] = i
	}
	for _, need := range []string{"key", "sent_us", "answered_us"} {
		if _, ok := col[need]; !ok {
			return nil, lineError(1, fmt.Errorf("no %s column", need))
		}
	}
	var out []Record
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, lineError(line, err)
		}
		rec, err := parseRow(row, col)
		if err != nil {
			return nil, lineError(line, err)
		}
		out = append(out, rec)
	}
}

// parseRow reads one row as the line of JSON it stands for, so that both
// readers hold a record to the same rules.
func parseRow(row []string, col map[string]int) (Record, error) {
	cell := func(name string) (string, bool) {
		i, ok := col[name]
		if !ok || strings.TrimSpace(row[i]) == "" {
			return "", false
		}
		return strings.TrimSpace(row[i]), true
	}
	var j lineJSON
	var err error
	integer := func(name string) *int64 {
		v, ok := cell(name)
		if !ok || err != nil {
			return nil
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = fmt.Errorf("%s %q is not an integer", name, v)
			return nil
		}
		return &n
	}
	key := row[col["key"]] // as it is: a key's spaces are the key's
	j.Key = &key
	node := int(0)
	if n := integer("node"); n != nil {
		node = int(*n)
	}
	j.Node = &node
	j.SentUS, j.AnsweredUS, j.DecidedUS, j.ToldUS, j.Cost = integer("sent_us"), integer("answered_us"), integer("decided_us"), integer("told_us"), integer("cost")
	j.Limit, j.Remaining, j.ResetUS, j.RetryUS = integer("limit"), integer("remaining"), integer("reset_us"), integer("retry_after_us")
	j.Order = integer("order")
	if s := integer("status"); s != nil {
		j.Status = int(*s)
	}
	if err != nil {
		return Record{}, err
	}
	boolean := func(name string) (*bool, error) {
		v, ok := cell(name)
		if !ok {
			return nil, nil
		}
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			return nil, fmt.Errorf("%s %q is neither true nor false", name, v)
		}
		return &b, nil
	}
	if j.Allowed, err = boolean("allowed"); err != nil {
		return Record{}, err
	}
	if j.ResetIsDelay, err = boolean("reset_is_delay"); err != nil {
		return Record{}, err
	}
	if j.RetryIsDelay, err = boolean("retry_after_is_delay"); err != nil {
		return Record{}, err
	}
	j.Error, _ = cell("error")
	j.Malformed, _ = cell("malformed")
	return j.record()
}
