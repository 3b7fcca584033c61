package controller_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
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

// PlanUpdate puts feasibility changes where every mixture of old and new
// contents routes as one of the plans: before the flip when moving to the
// safe policy A, after it when coming back (the crash test checks the
// result on the switch at every write).
func TestPlanUpdateOrdersFeasibilityAroundTheFlip(t *testing.T) {
	cfg := loadConfig(t)
	ps := plans(t, cfg, start, 3, func(h int) bool { return h == 1 })
	if ps[0].Effective != regions.PolicyC || ps[1].Effective != controller.SafePolicy || ps[2].Effective != regions.PolicyC {
		t.Fatalf("policies %s %s %s", ps[0].Effective, ps[1].Effective, ps[2].Effective)
	}
	c0, _ := ps[0].Compile(1)
	a1, _ := ps[1].Compile(2)
	u, err := controller.PlanUpdate(c0, a1)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Before) == 0 || len(u.After) != 0 || !u.Hitless || len(u.Flip) != 1 {
		t.Fatalf("C → A: before %d, after %d, hitless %v", len(u.Before), len(u.After), u.Hitless)
	}
	c2, _ := ps[2].Compile(3)
	u, err = controller.PlanUpdate(a1, c2)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.After) == 0 || len(u.Before) != 0 || !u.Hitless {
		t.Fatalf("A → C: before %d, after %d, hitless %v", len(u.Before), len(u.After), u.Hitless)
	}
	// A carbon-only hour touches no non-versioned table: 2R+1 writes.
	next := plans(t, cfg, start.Add(time.Hour), 1, nil)[0]
	c1, _ := next.Compile(2)
	u, err = controller.PlanUpdate(c0, c1)
	if err != nil {
		t.Fatal(err)
	}
	if u.Unchanged || len(u.Before)+len(u.After) != 0 || u.Writes() != 2*len(cfg.Regions)+1 {
		t.Fatalf("carbon hour: %d writes (before %d, after %d), want %d", u.Writes(), len(u.Before), len(u.After), 2*len(cfg.Regions)+1)
	}
}
