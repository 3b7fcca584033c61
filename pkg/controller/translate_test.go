package controller_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// The translator encodes every compiled entry exactly as p4rt's
// EntryBuilder does (canonical bytes, don't-care fields omitted), and
// decoding it back gives the compiled entry again — for every table the
// compiler fills, under every policy.
func TestTranslatorMatchesEntryBuilder(t *testing.T) {
	cfg := loadConfig(t)
	idx := p4rt.MustIndex(dataplane.DefaultP4Info())
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, pol := range []string{"A", "B", "C", "C+", "D"} {
		cfg.Policy.Name = pol
		p := plans(t, cfg, start, 1, nil)[0]
		st, err := p.Compile(3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range st.Entries {
			e := &st.Entries[i]
			seen[e.Table] = true
			got, err := tr.TableEntry(e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			want, err := build(idx, e)
			if err != nil {
				t.Fatalf("%s: EntryBuilder: %v", e, err)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("%s:\n translator   %v\n EntryBuilder %v", e, got, want)
			}
			back, err := tr.Entry(got)
			if err != nil {
				t.Fatal(err)
			}
			if compiler.Compare(&back, e) != 0 || back.String() != e.String() {
				t.Fatalf("round trip: %s → %s", e, back.String())
			}
		}
	}
	for _, tb := range []string{pipeline.TableClientSite, pipeline.TableSLAFeasibility, pipeline.TableActiveEpoch, pipeline.TableCarbonRank,
		pipeline.TableRegionNextHop, pipeline.TableServerPool, pipeline.TableExecClassCost, pipeline.TableServerEndpoint,
		pipeline.TableL3Forward, pipeline.TableL2Forward} {
		if !seen[tb] {
			t.Errorf("no compiled entry of %s was checked", tb)
		}
	}
	// Values that do not fit are refused, not truncated.
	bad := compiler.Entry{Table: pipeline.TableRegionNextHop, Match: []compiler.Match{{Field: pipeline.FieldRegion, Kind: pipeline.Exact, Value: 256}},
		Action: pipeline.ActionDispatchLocal, Params: []compiler.Param{{Name: "capacity", Value: 0}}}
	if _, err := tr.TableEntry(&bad); err == nil {
		t.Fatal("region 256 accepted in an 8-bit field")
	}
}

// build encodes e with p4rt's EntryBuilder, call for call.
func build(idx *p4rt.Index, e *compiler.Entry) (proto.Message, error) {
	b := idx.TableEntry(e.Table)
	if e.Default {
		b.Default()
	}
	for _, m := range e.Match {
		switch m.Kind {
		case pipeline.Exact:
			b.Exact(m.Field, m.Value)
		case pipeline.LPM:
			b.LPM(m.Field, m.Value, m.PrefixLen)
		case pipeline.Ternary:
			b.Ternary(m.Field, m.Value, m.Mask)
		case pipeline.Range:
			b.Range(m.Field, m.Value, m.High)
		}
	}
	if e.Priority != 0 {
		b.Priority(e.Priority)
	}
	var ps []p4rt.ActionParam
	for _, p := range e.Params {
		ps = append(ps, p4rt.Param(p.Name, p.Value))
	}
	return b.Action(e.Action, ps...).Build()
}
