package pipeline

import "testing"

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
	if c := p.Counters[len(p.Counters)-1]; c.Name != CounterDispatchEvents || c.Size < int(EventUnreachable)+1 {
		t.Errorf("dispatch_events too small for the event codes: %+v", c)
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
