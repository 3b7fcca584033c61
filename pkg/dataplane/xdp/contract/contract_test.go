package contract

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// The committed header is what the contract renders today: a change to
// pkg/pipeline, pkg/wire or the outcome codes must regenerate it.
func TestCommittedHeaderIsCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, Header()) {
		t.Fatalf("%s differs from contract.Header(): run go generate ./pkg/dataplane/xdp/contract", Path)
	}
}

func TestActionCodes(t *testing.T) {
	for _, tb := range pipeline.Schema().Tables {
		seen := map[uint8]bool{}
		for _, a := range tb.Actions {
			c, ok := ActionCode(tb, a)
			if !ok || c == 0 || seen[c] {
				t.Errorf("table %s action %s: code %d (ok %v): want a distinct code ≥ 1", tb.Name, a, c, ok)
			}
			seen[c] = true
		}
		if _, ok := ActionCode(tb, "nope"); ok {
			t.Errorf("table %s: an unknown action has a code", tb.Name)
		}
		if _, ok := TableCode(tb.Name); !ok {
			t.Errorf("table %s has no table code", tb.Name)
		}
	}
}
