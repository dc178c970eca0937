package encode

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/overshoot-go/overshoot/algos"
)

// JSON writes v as one JSON document, indented by two spaces, with a final
// newline, in a single Write: a document is either written whole or the
// error says why not. HTML characters are written as they are (a reason
// may hold "<" or "&"), so the bytes depend on v alone.
func JSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Fields lists the fields of the document type of doc (a struct value or
// pointer) as paths, in declaration order: "cells[].peak" for a field of
// the objects of an array, "conditions.limit.rate" for a nested object. An
// object that may be null (a pointer) is a field itself as well as its
// fields; an embedded struct's fields are its own; a field tagged "-" is
// left out.
func Fields(doc any) []string {
	t := reflect.TypeOf(doc)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft, prefix)
				continue
			}
			if name == "" {
				name = f.Name
			}
			path := prefix + name
			switch {
			case ft.Kind() == reflect.Struct:
				if f.Type.Kind() == reflect.Pointer {
					out = append(out, path)
				}
				walk(ft, path+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				out = append(out, path)
				walk(ft.Elem(), path+"[].")
			default:
				out = append(out, path)
			}
		}
	}
	walk(t, "")
	return out
}

// JSONLine writes v as one line of JSON Lines: compact, HTML characters as
// they are, ending in a newline, in a single Write.
func JSONLine(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// CSV writes a header and rows as CSV, in a single Write: a report is
// either written whole or the error says why not.
func CSV(w io.Writer, header []string, rows [][]string) error {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(header)
	for _, row := range rows {
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// SchemaLimit is a limit as every schema writes it.
type SchemaLimit struct {
	Rate     int64 `json:"rate"`
	WindowUS int64 `json:"window_us"`
	Burst    int64 `json:"burst"`
}

// LimitOf is l as every schema writes it.
func LimitOf(l algos.Limit) SchemaLimit {
	return SchemaLimit{Rate: l.Rate, WindowUS: l.Window, Burst: l.Burst}
}
