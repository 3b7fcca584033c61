package compiler

import (
	"testing"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// TestNormalizeCompiled: every compiled entry is already normal, and
// dropping its don't-care fields (as P4Runtime does on the wire) and
// normalizing gives it back.
func TestNormalizeCompiled(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	for _, p := range statelessPolicies {
		st := compile(t, input(t, cfg, p, snapshot(t, cfg, testHour), 1))
		for _, e := range st.Entries {
			n, err := Normalize(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			if Compare(&n, &e) != 0 || !sameAction(&n, &e) {
				t.Fatalf("normalize changed %s into %s", e, n)
			}
			wire := e
			wire.Match = nil
			for _, m := range e.Match {
				dontCare := (m.Kind == pipeline.Ternary && m.Mask == 0) || (m.Kind == pipeline.LPM && m.PrefixLen == 0) ||
					(m.Kind == pipeline.Range && m.Value == 0 && m.High == 1<<16-1)
				if !dontCare {
					wire.Match = append([]Match{m}, wire.Match...) // reversed order too
				}
			}
			back, err := Normalize(wire)
			if err != nil {
				t.Fatalf("%s: %v", wire, err)
			}
			if back.Key() != e.Key() {
				t.Fatalf("read-back key %s, want %s", back.Key(), e.Key())
			}
		}
	}
}

func TestNormalizeRejects(t *testing.T) {
	bad := []Entry{
		{Table: "nope", Action: pipeline.ActionDrop},
		{Table: pipeline.TableServerEndpoint, Action: pipeline.ActionSetServerEndpoint, Params: []Param{{"port", 1}, {"dmac", 1}, {"addr", 1}}},
		{Table: pipeline.TableServerEndpoint, Match: []Match{{Field: "server", Kind: pipeline.Exact, Value: 1 << 16}}, Action: pipeline.ActionSetServerEndpoint, Params: []Param{{"port", 1}, {"dmac", 1}, {"addr", 1}}},
		{Table: pipeline.TableServerEndpoint, Match: []Match{{Field: "server", Kind: pipeline.Exact, Value: 1}}, Action: pipeline.ActionSetServerEndpoint, Params: []Param{{"port", 512}, {"dmac", 1}, {"addr", 1}}},
		{Table: pipeline.TableServerEndpoint, Match: []Match{{Field: "server", Kind: pipeline.Exact, Value: 1}}, Action: pipeline.ActionSetServerEndpoint, Params: []Param{{"port", 1}}},
		{Table: pipeline.TableServerEndpoint, Match: []Match{{Field: "server", Kind: pipeline.Ternary, Value: 1}}, Action: pipeline.ActionDrop},
		{Table: pipeline.TableActiveEpoch, Default: true, Priority: 3, Action: pipeline.ActionSetActiveEpoch, Params: []Param{{"epoch", 1}}},
	}
	for _, e := range bad {
		if _, err := Normalize(e); err == nil {
			t.Errorf("accepted %s", e)
		}
	}
}
