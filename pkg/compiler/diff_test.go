package compiler

import (
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

func TestDiff(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	in := input(t, cfg, regions.PolicyC, snapshot(t, cfg, testHour), 1)
	a := compile(t, in)

	// From an empty switch: every entry inserted, the default modified.
	d := Diff(nil, a)
	if len(d.Insert) != len(a.Entries)-1 || len(d.Modify) != 1 || len(d.Delete) != 0 {
		t.Fatalf("from empty: %d/%d/%d", len(d.Insert), len(d.Modify), len(d.Delete))
	}
	empty := &State{}
	got, err := Apply(empty, d.Updates())
	if err != nil {
		t.Fatal(err)
	}
	if !Diff(got, a).Empty() {
		t.Fatal("apply(diff(empty, a)) != a")
	}
	if !Diff(a, a).Empty() {
		t.Fatal("diff(a, a) not empty")
	}

	// A changed profile and policy: modify some, insert/delete others.
	in.Policy = regions.PolicyCPlus
	in.Carbon = snapshot(t, cfg, testHour.Add(6*time.Hour))
	b := compile(t, in)
	d = Diff(a, b)
	if d.Empty() {
		t.Fatal("no difference between C and C+")
	}
	got, err = Apply(a, d.Updates())
	if err != nil {
		t.Fatal(err)
	}
	if !Diff(got, b).Empty() {
		t.Fatal("apply(diff(a, b)) != b")
	}
	for _, e := range d.Delete {
		if e.Default {
			t.Fatalf("deleting a default entry: %v", e)
		}
	}

	// Back to nothing: entries deleted, active_epoch reset to its initial default.
	d = Diff(a, nil)
	if len(d.Modify) != 1 || d.Modify[0].Table != pipeline.TableActiveEpoch {
		t.Fatalf("reset: %+v", d.Modify)
	}
	if v, _ := d.Modify[0].Param("epoch"); v != 0 {
		t.Fatalf("reset to epoch %d", v)
	}
}

func TestApplyRejects(t *testing.T) {
	e := Entry{Table: pipeline.TableExecClassCost, Match: []Match{{Field: "exec_class", Kind: pipeline.Exact, Value: 1}},
		Action: pipeline.ActionSetExecCost, Params: []Param{{"cost_us", 5}, {"is_long", 0}}}
	s, err := NewState([]Entry{e})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		u    Update
		want string
	}{
		{Update{Insert, e}, "already exists"},
		{Update{Delete, Entry{Table: e.Table, Match: []Match{{Field: "exec_class", Kind: pipeline.Exact, Value: 2}}}}, "not found"},
		{Update{Insert, Entry{Table: pipeline.TableActiveEpoch, Default: true, Action: pipeline.ActionSetActiveEpoch}}, "default entries can only be modified"},
	}
	for _, c := range cases {
		if _, err := Apply(s, []Update{c.u}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.u.Op, err, c.want)
		}
	}
	if _, err := NewState([]Entry{e, e}); err == nil {
		t.Error("NewState accepted a duplicate")
	}
}

func TestDeterministic(t *testing.T) {
	cfg := generated(t, 12, 32, 6, "D", 8)
	in := input(t, cfg, regions.PolicyD, snapshot(t, cfg, testHour), 2)
	a, b := compile(t, in), compile(t, in)
	var sa, sb strings.Builder
	if err := a.WriteText(&sa); err != nil {
		t.Fatal(err)
	}
	_ = b.WriteText(&sb)
	if sa.String() != sb.String() {
		t.Fatal("two compilations differ")
	}
	c := a.Clone()
	c.Entries[0].Match[0].Value++
	if a.Entries[0].Match[0].Value == c.Entries[0].Match[0].Value {
		t.Fatal("Clone shares match slices")
	}
}
