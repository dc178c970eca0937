package breach

import (
	"strings"
	"testing"
)

// Every report prints a kind by its name, and the hunt's shards read it
// back by that name: each kind has one, and no two share one.
func TestEveryKindHasItsOwnName(t *testing.T) {
	seen := map[string]Kind{}
	for k := Kind(1); k < NumKinds; k++ {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "breach.Kind(") {
			t.Errorf("kind %d has no name", k)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("kinds %d and %d are both %q", other, k, name)
		}
		seen[name] = k
	}
	for _, k := range []Kind{0, NumKinds, 255} {
		if got, want := k.String(), "breach.Kind("; !strings.HasPrefix(got, want) {
			t.Errorf("Kind(%d) is %q, want a name that says it is none of the kinds", k, got)
		}
	}
}
