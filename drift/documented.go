package drift

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/overshoot-go/overshoot/algos"
)

// Operation is one operation of an API: its method, upper case, and its
// path template as the OpenAPI description writes it ("/v1/items/{id}"),
// which is also the pattern net/http's ServeMux takes.
type Operation struct {
	Method, Path string
}

// String is the operation as "GET /v1/items/{id}".
func (o Operation) String() string { return o.Method + " " + o.Path }

// Policy is one rate limit as the gate compares it: Quota requests per
// Window, and Burst, the most a fresh key is admitted at one instant.
type Policy struct {
	Quota  int64 // requests per Window
	Window int64 // µs
	Burst  int64 // the most a fresh key is admitted at once
}

// String is the policy as the table prints it: "100/1m", and ", burst B"
// when the burst is not the quota.
func (p Policy) String() string {
	s := fmt.Sprintf("%d/%s", p.Quota, formatWindow(p.Window))
	if p.Burst != p.Quota {
		s += fmt.Sprintf(", burst %d", p.Burst)
	}
	return s
}

// formatWindow is µs in the largest of h, m, s that divides it.
func formatWindow(us int64) string {
	const minute, hour = 60 * algos.Second, 3600 * algos.Second
	switch {
	case us > 0 && us%hour == 0:
		return fmt.Sprintf("%dh", us/hour)
	case us > 0 && us%minute == 0:
		return fmt.Sprintf("%dm", us/minute)
	}
	return algos.FormatMicros(us)
}

// The names Documented reads a limit from.
const (
	// ExtPolicy is an operation's extension holding the whole policy as an
	// object: {limit: 100, window: 1m, burst: 100}. limit is required,
	// window is required, burst defaults to limit.
	ExtPolicy = "x-ratelimit"
	// ExtLimit, ExtWindow and ExtBurst are the same three fields as
	// operation extensions of their own (x-ratelimit-limit: 100, ...), for
	// descriptions that keep them flat. An operation uses one form or the
	// other, not both.
	ExtLimit  = "x-ratelimit-limit"
	ExtWindow = "x-ratelimit-window"
	ExtBurst  = "x-ratelimit-burst"
	// HeaderPolicy is the IETF RateLimit-Policy response header: its
	// example, in any response of the operation, is read as the policy
	// (burst = quota, the field has none).
	HeaderPolicy = "RateLimit-Policy"
)

// LocationError is a malformed description or a malformed limit in one:
// where it is (the file, the line and column when the loader recorded
// them, and a JSON pointer into the description) and what is wrong.
type LocationError struct {
	File         string
	Line, Column int    // 0 when unknown
	Pointer      string // a JSON pointer ("/paths/~1v1~1search/get/x-ratelimit/window"); "" for the whole file
	Err          error
}

// Error is "file:line:col: pointer: what is wrong".
func (e *LocationError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if e.Pointer != "" {
		b.WriteString(": " + e.Pointer)
	}
	return b.String() + ": " + e.Err.Error()
}

// Unwrap is the error it locates.
func (e *LocationError) Unwrap() error { return e.Err }

// DocumentedFile is Documented of the file at path. References to other
// files are not followed.
func DocumentedFile(path string) (map[Operation]Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	return Documented(path, data)
}

// Documented reads the limits an OpenAPI 3 description documents, per
// operation. name is the description's file name, used in errors. The
// description is loaded and validated with kin-openapi; each operation's
// limit is read from
//
//   - the extension x-ratelimit: {limit: L, window: W, burst: B}, or the
//     flat x-ratelimit-limit, x-ratelimit-window and x-ratelimit-burst:
//     L and B positive integers (B defaults to L), W a positive duration,
//     either a Go duration string ("1s", "1m", "90s") or a whole number
//     of seconds;
//   - the example of a RateLimit-Policy header of any of its responses
//     (the header's example or examples, or its schema's example), in the
//     IETF syntax of draft 7 ("100;w=60") or of draft 8 on
//     ("default";q=100;w=60): one policy, w in seconds.
//
// An operation may state both forms, and must then state the same quota
// and window. An operation that states neither is left out of the map. A
// description that does not load or validate is a *LocationError naming
// its file and, where the YAML parser or kin-openapi recorded it, the
// line; a limit that does not parse is a *LocationError naming its file,
// line and JSON pointer (several are joined, in the order of their lines).
func Documented(name string, data []byte) (map[Operation]Policy, error) {
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: name})
	if err != nil {
		return nil, located(name, fmt.Errorf("not a loadable OpenAPI description: %w", err))
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, located(name, fmt.Errorf("not a valid OpenAPI 3 description: %w", err))
	}
	out := map[Operation]Policy{}
	var errs []*LocationError
	if doc.Paths == nil {
		return out, nil
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			o := Operation{Method: strings.ToUpper(method), Path: path}
			at := locator{file: name, pointer: "/paths/" + escape(path) + "/" + strings.ToLower(method)}
			p, ok, err := operationPolicy(op, at)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				out[o] = p
			}
		}
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b *LocationError) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Pointer, b.Pointer))
		})
		all := make([]error, len(errs))
		for i, e := range errs {
			all[i] = e
		}
		return nil, errors.Join(all...)
	}
	return out, nil
}

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// located is err, from loading or validating the description, at the line
// kin-openapi recorded for it (the Origin of the element it reports on) or
// the YAML parser named in its message.
func located(file string, err error) *LocationError {
	e := &LocationError{File: file, Err: err}
	if o := originOf(err); o != nil && o.Key != nil {
		e.Line, e.Column = o.Key.Line, o.Key.Column
		if o.Key.File != "" {
			e.File = o.Key.File
		}
	} else if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
	}
	return e
}

var originType = reflect.TypeFor[*openapi3.Origin]()

// originOf is the Origin of the first error in err's tree whose struct
// carries one (kin-openapi's validation errors do, when the loader
// recorded origins), or nil.
func originOf(err error) *openapi3.Origin {
	if err == nil {
		return nil
	}
	v := reflect.ValueOf(err)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			break
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("Origin"); f.IsValid() && f.Type() == originType && !f.IsNil() {
			return f.Interface().(*openapi3.Origin)
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return originOf(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if o := originOf(e); o != nil {
				return o
			}
		}
	}
	return nil
}

// locator builds LocationErrors under one JSON pointer.
type locator struct {
	file, pointer string
}

func (l locator) at(field string) locator {
	return locator{file: l.file, pointer: l.pointer + "/" + escape(field)}
}

// errorf is a LocationError at l, on the line origin records for field
// (or for the collection itself when field is "" or not recorded).
func (l locator) errorf(origin *openapi3.Origin, field string, format string, args ...any) *LocationError {
	e := &LocationError{File: l.file, Pointer: l.pointer, Err: fmt.Errorf(format, args...)}
	if origin != nil {
		loc, ok := origin.Fields.Lookup(field)
		if (!ok || field == "") && origin.Key != nil {
			loc, ok = *origin.Key, true
		}
		if ok {
			e.Line, e.Column = loc.Line, loc.Column
			if loc.File != "" {
				e.File = loc.File
			}
		}
	}
	return e
}

// escape is s as one JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// operationPolicy reads op's limit from its extensions and its responses'
// RateLimit-Policy examples, and checks that they agree.
func operationPolicy(op *openapi3.Operation, at locator) (Policy, bool, *LocationError) {
	ext, hasExt, err := extensionPolicy(op, at)
	if err != nil {
		return Policy{}, false, err
	}
	hdr, hdrAt, hdrOrigin, hasHdr, err := headerPolicy(op, at)
	if err != nil {
		return Policy{}, false, err
	}
	switch {
	case hasExt && hasHdr:
		if ext.Quota != hdr.Quota || ext.Window != hdr.Window {
			return Policy{}, false, hdrAt.errorf(hdrOrigin, "example",
				"the %s example says %s but the operation's %s says %s", HeaderPolicy, hdr, ExtPolicy, ext)
		}
		return ext, true, nil
	case hasExt:
		return ext, true, nil
	case hasHdr:
		return hdr, true, nil
	}
	return Policy{}, false, nil
}

// extensionPolicy reads x-ratelimit or the flat x-ratelimit-* extensions.
func extensionPolicy(op *openapi3.Operation, at locator) (Policy, bool, *LocationError) {
	obj, hasObj := op.Extensions[ExtPolicy]
	var flat []string
	for _, k := range []string{ExtLimit, ExtWindow, ExtBurst} {
		if _, ok := op.Extensions[k]; ok {
			flat = append(flat, k)
		}
	}
	switch {
	case hasObj && len(flat) > 0:
		return Policy{}, false, at.errorf(op.Origin, flat[0], "both %s and %s: state the limit one way", ExtPolicy, flat[0])
	case hasObj:
		m, ok := obj.(map[string]any)
		if !ok {
			return Policy{}, false, at.at(ExtPolicy).errorf(op.Origin, ExtPolicy, "%s must be an object {limit, window, burst}, got %s", ExtPolicy, describe(obj))
		}
		for k := range m {
			if k != "limit" && k != "window" && k != "burst" {
				return Policy{}, false, at.at(ExtPolicy).at(k).errorf(op.Origin, ExtPolicy, "unknown field %q (limit, window and burst are read)", k)
			}
		}
		p, err := policyFields(m["limit"], m["window"], m["burst"], func(field string) (locator, string) {
			return at.at(ExtPolicy).at(field), ExtPolicy
		}, op.Origin)
		return p, err == nil, err
	case len(flat) > 0:
		names := map[string]string{"limit": ExtLimit, "window": ExtWindow, "burst": ExtBurst}
		p, err := policyFields(op.Extensions[ExtLimit], op.Extensions[ExtWindow], op.Extensions[ExtBurst], func(field string) (locator, string) {
			line := names[field]
			if _, ok := op.Extensions[line]; !ok {
				line = flat[0] // a missing field: the line of the ones stated
			}
			return at.at(names[field]), line
		}, op.Origin)
		return p, err == nil, err
	}
	return Policy{}, false, nil
}

// policyFields builds a Policy of the three fields' values. where gives
// each field's location and the field of origin whose line it is on.
func policyFields(limit, window, burst any, where func(string) (locator, string), origin *openapi3.Origin) (Policy, *LocationError) {
	fieldErr := func(field, format string, args ...any) *LocationError {
		at, line := where(field)
		return at.errorf(origin, line, format, args...)
	}
	if limit == nil {
		return Policy{}, fieldErr("limit", "no limit: the requests allowed per window are required")
	}
	q, err := count(limit)
	if err != nil {
		return Policy{}, fieldErr("limit", "limit: %v", err)
	}
	if window == nil {
		return Policy{}, fieldErr("window", "no window: the limit's window is required")
	}
	w, err := duration(window)
	if err != nil {
		return Policy{}, fieldErr("window", "window: %v", err)
	}
	b := q
	if burst != nil {
		if b, err = count(burst); err != nil {
			return Policy{}, fieldErr("burst", "burst: %v", err)
		}
	}
	if _, err := algos.NewLimit(q, w, b); err != nil {
		return Policy{}, fieldErr("limit", "%v", err)
	}
	return Policy{Quota: q, Window: w, Burst: b}, nil
}

// count reads a positive whole number from a YAML or JSON value.
func count(v any) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d is too large", x)
		}
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("%v is not a whole number", x)
		}
		n = int64(x)
	case json.Number:
		var err error
		if n, err = strconv.ParseInt(string(x), 10, 64); err != nil {
			return 0, fmt.Errorf("%s is not a whole number", x)
		}
	default:
		return 0, fmt.Errorf("want a whole number, got %s", describe(v))
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be positive, got %d", n)
	}
	return n, nil
}

// duration reads a window: a Go duration string or whole seconds, in µs.
func duration(v any) (int64, error) {
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (write 1s, 1m, 90s, or a number of seconds)", s)
		}
		if d <= 0 || d%time.Microsecond != 0 {
			return 0, fmt.Errorf("%q must be a positive whole number of µs", s)
		}
		return d.Microseconds(), nil
	}
	s, err := count(v)
	if err != nil {
		return 0, err
	}
	if s > algos.MaxTime/algos.Second {
		return 0, fmt.Errorf("%d seconds is too long", s)
	}
	return s * algos.Second, nil
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// headerPolicy reads the RateLimit-Policy examples of op's responses; all
// that are stated must agree. It returns the first one's location, for an
// error about it.
func headerPolicy(op *openapi3.Operation, at locator) (Policy, locator, *openapi3.Origin, bool, *LocationError) {
	var (
		first       Policy
		firstAt     locator
		firstOrigin *openapi3.Origin
		found       bool
	)
	if op.Responses == nil {
		return first, firstAt, nil, false, nil
	}
	codes := slices.Sorted(func(yield func(string) bool) {
		for c := range op.Responses.Map() {
			if !yield(c) {
				return
			}
		}
	})
	for _, code := range codes {
		ref := op.Responses.Value(code)
		if ref == nil || ref.Value == nil {
			continue
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range ref.Value.Headers {
				if !yield(n) {
					return
				}
			}
		})
		for _, name := range names {
			if !strings.EqualFold(name, HeaderPolicy) {
				continue
			}
			h := ref.Value.Headers[name]
			if h == nil || h.Value == nil {
				continue
			}
			hAt := at.at("responses").at(code).at("headers").at(name)
			for _, ex := range headerExamples(h.Value, hAt) {
				s, ok := ex.value.(string)
				if !ok {
					return first, firstAt, nil, false, ex.at.errorf(ex.origin, ex.field, "a %s example must be a string such as \"100;w=60\", got %s", HeaderPolicy, describe(ex.value))
				}
				p, err := parsePolicyField(s)
				if err != nil {
					return first, firstAt, nil, false, ex.at.errorf(ex.origin, ex.field, "%s example %q: %v", HeaderPolicy, s, err)
				}
				if !found {
					first, firstAt, firstOrigin, found = p, ex.at, ex.origin, true
					continue
				}
				if p != first {
					return first, firstAt, nil, false, ex.at.errorf(ex.origin, ex.field, "%s example says %s but %s says %s", HeaderPolicy, p, firstAt.pointer, first)
				}
			}
		}
	}
	return first, firstAt, firstOrigin, found, nil
}

type example struct {
	value  any
	at     locator
	origin *openapi3.Origin
	field  string // the origin field whose line locates it
}

// headerExamples are h's example, its examples' values and its schema's
// example, each with its location.
func headerExamples(h *openapi3.Header, at locator) []example {
	var out []example
	if h.Example != nil {
		out = append(out, example{h.Example, at.at("example"), h.Origin, "example"})
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range h.Examples {
			if !yield(n) {
				return
			}
		}
	}) {
		ex := h.Examples[name]
		if ex == nil || ex.Value == nil || ex.Value.Value == nil {
			continue
		}
		out = append(out, example{ex.Value.Value, at.at("examples").at(name).at("value"), ex.Value.Origin, "value"})
	}
	if h.Schema != nil && h.Schema.Value != nil && h.Schema.Value.Example != nil {
		out = append(out, example{h.Schema.Value.Example, at.at("schema").at("example"), h.Schema.Value.Origin, "example"})
	}
	return out
}

// parsePolicyField reads one IETF RateLimit-Policy: draft 7's "100;w=60"
// or draft 8's "name";q=100;w=60. w is required, in whole seconds.
func parsePolicyField(s string) (Policy, error) {
	if strings.Contains(s, ",") {
		return Policy{}, errors.New("more than one policy: document one per operation")
	}
	parts := strings.Split(s, ";")
	var (
		q, w int64
		hasQ bool
		head = strings.TrimSpace(parts[0])
	)
	if n, err := strconv.ParseInt(head, 10, 64); err == nil {
		if n <= 0 {
			return Policy{}, fmt.Errorf("the quota must be positive, got %d", n)
		}
		q, hasQ = n, true
	} else if head == "" {
		return Policy{}, errors.New("empty")
	} // else draft 8: the policy's name; q= carries the quota.
	for _, param := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(param), "=")
		if !ok {
			return Policy{}, fmt.Errorf("parameter %q has no value", param)
		}
		switch k {
		case "q", "w":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return Policy{}, fmt.Errorf("%s=%s: want a positive whole number", k, v)
			}
			if k == "q" {
				if hasQ {
					return Policy{}, errors.New("the quota is stated twice")
				}
				q, hasQ = n, true
			} else {
				if n > algos.MaxTime/algos.Second {
					return Policy{}, fmt.Errorf("w=%d is too long", n)
				}
				w = n * algos.Second
			}
		}
	}
	switch {
	case !hasQ:
		return Policy{}, errors.New("no quota (100;w=60, or \"name\";q=100;w=60)")
	case w == 0:
		return Policy{}, errors.New("no window (w=, in seconds)")
	}
	if _, err := algos.NewLimit(q, w, q); err != nil {
		return Policy{}, err
	}
	return Policy{Quota: q, Window: w, Burst: q}, nil
}
