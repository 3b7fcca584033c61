package controller

import (
	"fmt"
	"io"
	"slices"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Update is the hitless change from what a switch holds to the next state,
// as the ordered phases the controller writes (docs/ARCHITECTURE.md,
// "Controller runtime"):
//
//  1. Stage: the new carbon_rank generation under the inactive epoch, and
//     removal of leftovers of interrupted attempts (compiler.PlanGeneration).
//  2. Before: changes to non-versioned tables (feasibility, next hops, …)
//     that are safe while the old generation is active.
//  3. Flip: the one MODIFY of active_epoch.
//  4. After: non-versioned changes that are only safe once the new
//     generation is active.
//  5. Cleanup, after a grace period: the old generation.
//
// Non-versioned tables change in place, so a packet may meet their old or
// new contents together with the old or new ranking. Carbon-only hours never
// touch them; a policy change (e.g. to the safe policy while carbon data is
// stale, and back) changes feasibility and ranking together. PlanUpdate
// therefore evaluates the mixed states with compiler.Router at every SLA
// boundary of every site and puts the non-versioned changes on the side of
// the flip where every mixture routes each request as the old or the new
// plan does. Hitless is false when neither side is safe (then they go
// before the flip, and the caller logs it).
type Update struct {
	From      uint8             `json:"from_epoch"`
	To        uint8             `json:"to_epoch"`
	Unchanged bool              `json:"unchanged,omitempty"` // same ranking: no flip
	Hitless   bool              `json:"hitless"`
	Stage     []compiler.Update `json:"stage,omitempty"`
	Before    []compiler.Update `json:"before,omitempty"`
	Flip      []compiler.Update `json:"flip,omitempty"`
	After     []compiler.Update `json:"after,omitempty"`
	Cleanup   []compiler.Update `json:"cleanup,omitempty"`
}

// Writes is the total number of updates.
func (u *Update) Writes() int {
	return len(u.Stage) + len(u.Before) + len(u.Flip) + len(u.After) + len(u.Cleanup)
}

// Empty reports whether the switch already holds the state.
func (u *Update) Empty() bool { return u.Writes() == 0 }

// Phases returns the phases in write order with their names; the grace
// period goes between "after" and "cleanup".
func (u *Update) Phases() []Phase {
	return []Phase{{"stage", u.Stage}, {"before", u.Before}, {"flip", u.Flip}, {"after", u.After}, {"cleanup", u.Cleanup}}
}

// All returns every update in write order.
func (u *Update) All() []compiler.Update {
	var out []compiler.Update
	for _, p := range u.Phases() {
		out = append(out, p.Updates...)
	}
	return out
}

// Phase is a named list of updates.
type Phase struct {
	Name    string
	Updates []compiler.Update
}

// WriteText prints the update phase by phase.
func (u *Update) WriteText(w io.Writer) error {
	flip := fmt.Sprintf("epoch %d → %d", u.From, u.To)
	if u.Unchanged {
		flip = fmt.Sprintf("epoch %d kept (same ranking)", u.From)
	}
	if _, err := fmt.Fprintf(w, "# %s, %d writes\n", flip, u.Writes()); err != nil {
		return err
	}
	for _, p := range u.Phases() {
		if len(p.Updates) == 0 {
			continue
		}
		fmt.Fprintf(w, "## %s (%d)\n", p.Name, len(p.Updates))
		for _, x := range p.Updates {
			if _, err := fmt.Fprintf(w, "%-6s %s\n", x.Op, x.Entry.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// isVersioned reports whether e belongs to the epoch-versioned part of the
// program: carbon_rank entries (not its default action, which is
// NoAction whatever the epoch) and active_epoch.
func isVersioned(e *compiler.Entry) bool {
	return (e.Table == pipeline.TableCarbonRank && !e.Default) || e.Table == pipeline.TableActiveEpoch
}

// split returns the versioned (carbon_rank, active_epoch) and non-versioned
// parts of s.
func split(s *compiler.State) (v, nv *compiler.State) {
	nver := 0
	for i := range s.Entries {
		if isVersioned(&s.Entries[i]) {
			nver++
		}
	}
	v = &compiler.State{Meta: s.Meta, Entries: make([]compiler.Entry, 0, nver)}
	nv = &compiler.State{Meta: s.Meta, Entries: make([]compiler.Entry, 0, len(s.Entries)-nver)}
	for _, e := range s.Entries {
		if isVersioned(&e) {
			v.Entries = append(v.Entries, e)
		} else {
			nv.Entries = append(nv.Entries, e)
		}
	}
	return v, nv
}

func join(a, b *compiler.State) *compiler.State {
	s, _ := compiler.NewState(append(slices.Clone(a.Entries), b.Entries...))
	return s
}

// PlanUpdate plans the change from installed (read back from the switch, or
// the state last written) to next, which must be compiled for
// compiler.NextEpoch(installed.ActiveEpoch()).
func PlanUpdate(installed, next *compiler.State) (*Update, error) {
	iv, nv := versionedPart(installed), versionedPart(next)
	g, err := compiler.PlanGeneration(iv, nv)
	if err != nil {
		return nil, err
	}
	u := &Update{From: g.From, To: g.To, Unchanged: g.Unchanged, Hitless: true,
		Stage: g.Install, Flip: g.Flip, Cleanup: g.Cleanup}
	rest := diffByTable(installed, next)
	if len(rest) == 0 {
		return u, nil
	}
	if g.Unchanged || !touchesRouting(rest) || len(withEpoch(iv, g.From)) == 0 {
		// The active ranking is already the new one (new feasibility with
		// it is the new plan itself); or no table that selects the region
		// changes (any mix routes as one of the plans); or the switch has no
		// active ranking (nothing routes yet: there is no old plan to keep).
		u.Before = rest
		return u, nil
	}
	_, inv := split(installed)
	_, nnv := split(next)
	oldR, newR := newRouter(installed), newRouter(next)
	switch {
	case consistent(join(nnv, iv), installed, next, oldR, newR):
		u.Before = rest
	case consistent(join(inv, nv), installed, next, oldR, newR):
		u.After = rest
	default:
		u.Before, u.Hitless = rest, false
	}
	return u, nil
}

// versionedPart returns the versioned entries of s (a small state).
func versionedPart(s *compiler.State) *compiler.State {
	v := &compiler.State{Meta: s.Meta}
	for i := range s.Entries {
		if isVersioned(&s.Entries[i]) {
			v.Entries = append(v.Entries, s.Entries[i])
		}
	}
	return v
}

// diffByTable returns the non-versioned part of compiler.Diff(old,
// new).Updates() (everything but carbon_rank entries and active_epoch),
// computed table by table: a table of which old holds no entries is all
// inserts, without comparisons, so a full reconcile into an empty switch
// costs one copy. Both states are sorted (tables in schema order).
func diffByTable(old, new *compiler.State) []compiler.Update {
	out := make([]compiler.Update, 0, len(new.Entries))
	var mod, del []compiler.Update
	add := func(ch compiler.Changes) {
		for _, e := range ch.Insert {
			out = append(out, compiler.Update{Op: compiler.Insert, Entry: e})
		}
		for _, e := range ch.Modify {
			mod = append(mod, compiler.Update{Op: compiler.Modify, Entry: e})
		}
		for _, e := range ch.Delete {
			del = append(del, compiler.Update{Op: compiler.Delete, Entry: e})
		}
	}
	oe, ne := old.Entries, new.Entries
	for _, t := range pipeline.Schema().Tables {
		o, n := tableRun(&oe, t.Name), tableRun(&ne, t.Name)
		od, o := defaults(o)
		nd, n := defaults(n)
		if len(od)+len(nd) > 0 && t.Name != pipeline.TableActiveEpoch {
			add(compiler.Diff(&compiler.State{Entries: od}, &compiler.State{Entries: nd}))
		}
		if t.Name == pipeline.TableCarbonRank || t.Name == pipeline.TableActiveEpoch {
			continue // versioned: PlanGeneration's
		}
		if len(o) == 0 {
			for i := range n {
				out = append(out, compiler.Update{Op: compiler.Insert, Entry: n[i]})
			}
			continue
		}
		add(compiler.Diff(&compiler.State{Entries: o}, &compiler.State{Entries: n}))
	}
	return append(append(out, mod...), del...)
}

// tableRun cuts the leading run of table's entries off *es (sorted states
// keep a table's entries together, in schema order).
func tableRun(es *[]compiler.Entry, table string) []compiler.Entry {
	s := *es
	i := 0
	for i < len(s) && s[i].Table == table {
		i++
	}
	*es = s[i:]
	return s[:i:i]
}

// defaults splits a table's sorted run into its leading default entry (if
// any) and the rest.
func defaults(run []compiler.Entry) (def, rest []compiler.Entry) {
	i := 0
	for i < len(run) && run[i].Default {
		i++
	}
	return run[:i:i], run[i:]
}

// touchesRouting reports whether us change a table that region selection
// reads besides the versioned ones.
func touchesRouting(us []compiler.Update) bool {
	for i := range us {
		if t := us[i].Entry.Table; t == pipeline.TableSLAFeasibility || t == pipeline.TableClientSite {
			return true
		}
	}
	return false
}

// withEpoch returns the carbon_rank entries of epoch in a versioned state.
func withEpoch(v *compiler.State, epoch uint8) []compiler.Entry {
	var out []compiler.Entry
	for _, e := range v.Table(pipeline.TableCarbonRank) {
		if m, ok := e.Field(pipeline.FieldEpoch); ok && uint8(m.Value) == epoch && !e.Default {
			out = append(out, e)
		}
	}
	return out
}

// consistent reports whether every request (site, SLA) is routed by mix as
// by old or by new. Decisions are piecewise constant in the SLA between the
// feasibility boundaries of the two states, so checking each boundary of
// each site covers every 16-bit SLA value.
func consistent(mix, old, new *compiler.State, oldR, newR *compiler.Router) bool {
	mixR := newRouter(mix)
	bounds := map[uint16]map[uint16]bool{}
	for _, s := range []*compiler.State{old, new} {
		for _, e := range s.Table(pipeline.TableSLAFeasibility) {
			site, _ := e.Field(pipeline.FieldSite)
			sla, _ := e.Field(pipeline.FieldSLA)
			b := bounds[uint16(site.Value)]
			if b == nil {
				b = map[uint16]bool{0: true}
				bounds[uint16(site.Value)] = b
			}
			b[uint16(sla.Value)] = true
			if sla.High < 0xFFFF {
				b[uint16(sla.High+1)] = true
			}
		}
	}
	for site, b := range bounds {
		for sla := range b {
			r := mixR.Route(site, sla, 0).Region
			if r != oldR.Route(site, sla, 0).Region && r != newR.Route(site, sla, 0).Region {
				return false
			}
		}
	}
	return true
}

// newRouter is compiler.NewRouter on s without the default entries read
// back from a switch (the router expects compiled states, whose only default
// entry is active_epoch's).
func newRouter(s *compiler.State) *compiler.Router {
	c := &compiler.State{Meta: s.Meta, Entries: make([]compiler.Entry, 0, len(s.Entries))}
	for _, e := range s.Entries {
		if !e.Default || e.Table == pipeline.TableActiveEpoch {
			c.Entries = append(c.Entries, e)
		}
	}
	return compiler.NewRouter(c)
}

// OpRuns splits updates into maximal runs of one operation: each run is one
// Write call, so a server that reorders updates inside a batch can never
// apply a DELETE before the INSERT it makes room for.
func OpRuns(us []compiler.Update) [][]compiler.Update {
	var out [][]compiler.Update
	for i := 0; i < len(us); {
		j := i + 1
		for j < len(us) && us[j].Op == us[i].Op {
			j++
		}
		out = append(out, us[i:j])
		i = j
	}
	return out
}
