package compiler

import (
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Op is a P4Runtime update type.
type Op string

// Update types.
const (
	Insert Op = "INSERT"
	Modify Op = "MODIFY"
	Delete Op = "DELETE"
)

// Update is one write: an operation on an entry. A DELETE carries the entry
// as the switch holds it; a MODIFY the new action.
type Update struct {
	Op    Op    `json:"op"`
	Entry Entry `json:"entry"`
}

// Changes is the difference between two states, each list sorted (Compare).
type Changes struct {
	Insert []Entry `json:"insert,omitempty"`
	Modify []Entry `json:"modify,omitempty"`
	Delete []Entry `json:"delete,omitempty"`
}

// Len is the number of writes.
func (c Changes) Len() int { return len(c.Insert) + len(c.Modify) + len(c.Delete) }

// Empty reports whether there is nothing to write.
func (c Changes) Empty() bool { return c.Len() == 0 }

// Updates returns the writes in a safe order: inserts, then modifies, then
// deletes. A packet that meets the switch halfway sees entries of the old or
// the new state, never a gap: new entries exist before old ones go, and an
// overlapping old/new pair (e.g. a feasibility interval that moved) matches
// one or the other.
func (c Changes) Updates() []Update {
	out := make([]Update, 0, c.Len())
	for _, e := range c.Insert {
		out = append(out, Update{Insert, e})
	}
	for _, e := range c.Modify {
		out = append(out, Update{Modify, e})
	}
	for _, e := range c.Delete {
		out = append(out, Update{Delete, e})
	}
	return out
}

// Diff returns the writes that turn old into new. Entries are matched by Key;
// same key with a different action or parameters is a MODIFY. Default-action
// entries are only ever modified (P4Runtime cannot insert or delete them): a
// default present in old and absent from new is reset to the table's initial
// default (pipeline.Schema). old may be nil (an empty switch).
func Diff(old, new *State) Changes {
	var c Changes
	var oe, ne []Entry
	if old != nil {
		oe = old.Entries
	}
	if new != nil {
		ne = new.Entries
	}
	have := make(map[string]int, len(oe))
	for i := range oe {
		have[oe[i].Key()] = i
	}
	seen := make([]bool, len(oe))
	for i := range ne {
		e := &ne[i]
		j, ok := have[e.Key()]
		switch {
		case !ok && e.Default:
			c.Modify = append(c.Modify, *e)
		case !ok:
			c.Insert = append(c.Insert, *e)
		default:
			seen[j] = true
			if !sameAction(&oe[j], e) {
				c.Modify = append(c.Modify, *e)
			}
		}
	}
	for j := range oe {
		if seen[j] {
			continue
		}
		if oe[j].Default {
			if d, ok := initialDefault(oe[j].Table); ok && !sameAction(&oe[j], &d) {
				c.Modify = append(c.Modify, d)
			}
			continue
		}
		c.Delete = append(c.Delete, oe[j])
	}
	return c
}

// initialDefault returns the program's initial default entry of a table.
func initialDefault(table string) (Entry, bool) {
	prog := pipeline.Schema()
	t, ok := prog.Table(table)
	if !ok {
		return Entry{}, false
	}
	e := Entry{Table: table, Default: true, Action: t.DefaultAction}
	if a, ok := prog.Action(t.DefaultAction); ok {
		for i, p := range a.Params {
			var v uint64
			if i < len(t.DefaultParams) {
				v = t.DefaultParams[i]
			}
			e.Params = append(e.Params, Param{p.Name, v})
		}
	}
	return e, true
}
