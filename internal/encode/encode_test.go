package encode

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

type limitDoc struct {
	Rate int64 `json:"rate"`
}

type cellDoc struct {
	Name  string    `json:"name"`
	Over  *float64  `json:"over_pct"`
	Limit *limitDoc `json:"limit"`
}

type commonDoc struct {
	Schema string `json:"schema"`
}

type doc struct {
	commonDoc
	Limit   limitDoc  `json:"limit"`
	Cells   []cellDoc `json:"cells"`
	Seeds   []uint64  `json:"seeds"`
	Skipped int       `json:"-"`
	hidden  int
}

func TestFieldsArePathsInDeclarationOrder(t *testing.T) {
	got := Fields(doc{})
	want := []string{"schema", "limit.rate", "cells", "cells[].name", "cells[].over_pct", "cells[].limit", "cells[].limit.rate", "seeds"}
	if !slices.Equal(got, want) {
		t.Errorf("Fields = %v, want %v", got, want)
	}
	if p := Fields(&doc{}); !slices.Equal(p, want) {
		t.Errorf("Fields of a pointer = %v, want %v", p, want)
	}
	if f := Fields(3); f != nil {
		t.Errorf("Fields of an int = %v, want none", f)
	}
}

func TestJSONIsOneIndentedDocumentWithHTMLAsItIs(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, map[string]string{"reason": "a < b & c"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"reason\": \"a < b & c\"\n}\n"; b.String() != want {
		t.Errorf("JSON wrote %q, want %q", b.String(), want)
	}
}

type failingWriter struct{ writes int }

func (f *failingWriter) Write(p []byte) (int, error) { f.writes++; return 0, errors.New("disk full") }

func TestJSONNamesWhatCannotBeWritten(t *testing.T) {
	if err := JSON(&bytes.Buffer{}, math.NaN()); err == nil {
		t.Error("a NaN was written as JSON")
	}
	f := &failingWriter{}
	if err := JSON(f, 1); err == nil || f.writes != 1 {
		t.Errorf("JSON to a failing writer: %v after %d writes, want its error after one", err, f.writes)
	}
}
