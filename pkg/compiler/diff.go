package compiler

import (
	"fmt"

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
	return c.appendUpdates(make([]Update, 0, c.Len()))
}

// appendUpdates appends c's updates to dst in the order of Updates.
func (c Changes) appendUpdates(dst []Update) []Update {
	dst = appendUpdates(dst, Insert, c.Insert)
	dst = appendUpdates(dst, Modify, c.Modify)
	return appendUpdates(dst, Delete, c.Delete)
}

// Diff returns the writes that turn old into new. Entries are matched by Key;
// same key with a different action or parameters is a MODIFY. Default-action
// entries are only ever modified (P4Runtime cannot insert or delete them): a
// default present in old and absent from new is reset to the table's initial
// default (pipeline.Schema). old may be nil (an empty switch).
func Diff(old, new *State) Changes {
	return diff(sorted(old), sorted(new), nil)
}

// diff merges two sorted entry lists, skipping the tables in skip.
func diff(oe, ne []Entry, skip map[string]bool) Changes {
	var c Changes
	i, j := 0, 0
	for i < len(oe) || j < len(ne) {
		if i < len(oe) && skip[oe[i].Table] {
			i++
			continue
		}
		if j < len(ne) && skip[ne[j].Table] {
			j++
			continue
		}
		var k int
		switch {
		case i == len(oe):
			k = 1
		case j == len(ne):
			k = -1
		default:
			k = compareKey(&oe[i], &ne[j])
		}
		switch {
		case k < 0: // only in old
			e := &oe[i]
			i++
			if !e.Default {
				c.Delete = append(c.Delete, *e)
			} else if d, ok := initialDefault(e.Table); ok && !sameAction(e, &d) {
				c.Modify = append(c.Modify, d)
			}
		case k > 0: // only in new
			e := &ne[j]
			j++
			if e.Default {
				c.Modify = append(c.Modify, *e)
			} else {
				c.Insert = append(c.Insert, *e)
			}
		default:
			if !sameAction(&oe[i], &ne[j]) {
				c.Modify = append(c.Modify, ne[j])
			}
			i++
			j++
		}
	}
	return c
}

// initialDefault returns the program's initial default entry of a table.
func initialDefault(table string) (Entry, bool) {
	t, ok := pipeline.LookupTable(table)
	if !ok {
		return Entry{}, false
	}
	e := Entry{Table: table, Default: true, Action: t.DefaultAction}
	if a, ok := pipeline.LookupAction(t.DefaultAction); ok {
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

// Apply returns the state s becomes after the updates, with P4Runtime's
// rules: INSERT of an existing key, MODIFY or DELETE of a missing one, and
// INSERT or DELETE of a default entry are errors (the first one is
// returned, naming the update). s is not modified. It models a switch for
// dry runs and tests.
func Apply(s *State, us []Update) (*State, error) {
	m := make(map[string]Entry, len(s.Entries)+len(us))
	for _, e := range s.Entries {
		m[e.Key()] = e
	}
	for i, u := range us {
		k := u.Entry.Key()
		_, have := m[k]
		switch {
		case u.Entry.Default && u.Op != Modify:
			return nil, fmt.Errorf("update %d (%s %s): default entries can only be modified", i, u.Op, u.Entry)
		case u.Op == Insert && have:
			return nil, fmt.Errorf("update %d (%s %s): already exists", i, u.Op, u.Entry)
		case u.Op == Modify && !have && !u.Entry.Default, u.Op == Delete && !have:
			return nil, fmt.Errorf("update %d (%s %s): not found", i, u.Op, u.Entry)
		}
		switch u.Op {
		case Insert, Modify:
			m[k] = u.Entry
		case Delete:
			delete(m, k)
		default:
			return nil, fmt.Errorf("update %d: unknown operation %q", i, u.Op)
		}
	}
	out := &State{Meta: s.Meta.clone(), Entries: make([]Entry, 0, len(m))}
	for _, e := range m {
		out.Entries = append(out.Entries, e)
	}
	out.sort()
	return out, nil
}
