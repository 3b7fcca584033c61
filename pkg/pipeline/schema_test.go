package pipeline

import (
	"reflect"
	"strings"
	"testing"
)

// The schema must be internally consistent: every table's actions exist,
// its default action is one of them with the right number of arguments,
// names are unique, widths are positive and fit P4Runtime's bytestrings.
func TestSchemaConsistent(t *testing.T) {
	p := Schema()
	seen := map[string]bool{}
	unique := func(kind, name string) {
		if seen[name] {
			t.Errorf("%s %q declared twice", kind, name)
		}
		seen[name] = true
	}
	for _, a := range p.Actions {
		unique("action", a.Name)
		for _, prm := range a.Params {
			if prm.Width <= 0 || prm.Width > 64 {
				t.Errorf("action %s param %s width %d", a.Name, prm.Name, prm.Width)
			}
		}
	}
	for _, tb := range p.Tables {
		unique("table", tb.Name)
		if tb.Size <= 0 {
			t.Errorf("table %s size %d", tb.Name, tb.Size)
		}
		for _, k := range tb.Keys {
			if k.Width <= 0 || k.Width > 64 {
				t.Errorf("table %s key %s width %d", tb.Name, k.Name, k.Width)
			}
		}
		hasDefault := false
		for _, an := range tb.Actions {
			if _, ok := p.Action(an); !ok {
				t.Errorf("table %s uses undeclared action %s", tb.Name, an)
			}
			hasDefault = hasDefault || an == tb.DefaultAction
		}
		if !hasDefault {
			t.Errorf("table %s default %s not among its actions", tb.Name, tb.DefaultAction)
		}
		if a, _ := p.Action(tb.DefaultAction); len(a.Params) != len(tb.DefaultParams) {
			t.Errorf("table %s default %s: %d args for %d params", tb.Name, a.Name, len(tb.DefaultParams), len(a.Params))
		}
	}
	for _, r := range p.Registers {
		unique("register", r.Name)
	}
	for _, c := range p.Counters {
		unique("counter", c.Name)
	}
	for _, l := range Lanes() {
		c, ok := counter(p, l.Counter())
		if !ok {
			t.Errorf("lane %d: no counter %s", l, l.Counter())
		} else if c.Size < len(Events()) {
			t.Errorf("%s too small for the event codes: %+v", c.Name, c)
		}
	}
	// Every event has a name and a lane; the four lanes are distinct counters.
	for _, e := range Events() {
		if strings.HasPrefix(e.String(), "event(") {
			t.Errorf("event %d has no name", e)
		}
	}
	// The TNA program has the same contract but server_work_us.
	tna := SchemaFor(TNA)
	if len(tna.Registers) != len(p.Registers)-1 {
		t.Errorf("TNA registers %v", tna.Registers)
	}
	for _, r := range tna.Registers {
		if r.Name == RegisterServerWork {
			t.Error("TNA declares server_work_us")
		}
	}
}

func TestPolicyNames(t *testing.T) {
	for p := PolicyRandom; p <= PolicyJIQ; p++ {
		got, ok := ParsePolicy(p.String())
		if !ok || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p.String(), got, ok)
		}
	}
	if _, ok := ParsePolicy("nope"); ok {
		t.Error("ParsePolicy accepted nope")
	}
	if EventReplyRejected.String() != "reply-rejected" || Event(99).String() != "event(99)" {
		t.Error("event names")
	}
}

func counter(p Program, name string) (Counter, bool) {
	for _, c := range p.Counters {
		if c.Name == name {
			return c, true
		}
	}
	return Counter{}, false
}

func TestArchSupports(t *testing.T) {
	for p := range Policy(PolicyCodes) {
		if err := V1Model.Supports(p); err != nil {
			t.Errorf("v1model refuses %s: %v", p, err)
		}
		err := TNA.Supports(p)
		if (p == PolicyP2C || p == PolicyP2CWork) != (err != nil) {
			t.Errorf("TNA and %s: %v", p, err)
		}
	}
	for _, s := range []string{"", "v1model", "tna"} {
		if _, err := ParseArch(s); err != nil {
			t.Errorf("ParseArch(%q): %v", s, err)
		}
	}
	if _, err := ParseArch("psa"); err == nil {
		t.Error("psa accepted")
	}
}

// The name index answers as the schema does, for every table and action,
// and knows nothing else.
func TestLookupMatchesSchema(t *testing.T) {
	p := Schema()
	for _, want := range p.Tables {
		got, ok := LookupTable(want.Name)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("LookupTable(%s) = %+v, %v; schema %+v", want.Name, got, ok, want)
		}
	}
	for _, want := range p.Actions {
		got, ok := LookupAction(want.Name)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("LookupAction(%s) = %+v, %v; schema %+v", want.Name, got, ok, want)
		}
	}
	if _, ok := LookupTable("P4ctlIngress.nowhere"); ok {
		t.Error("an unknown table was found")
	}
	if _, ok := LookupAction("P4ctlIngress.nothing"); ok {
		t.Error("an unknown action was found")
	}
}
