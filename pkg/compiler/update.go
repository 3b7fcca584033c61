package compiler

import (
	"fmt"
	"io"
	"slices"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// UpdatePlan is the hitless change from what a switch holds to the next
// state, as the ordered phases a controller writes (docs/ARCHITECTURE.md,
// "Controller runtime"):
//
//  1. Stage: the new carbon_rank generation under the inactive epoch, and
//     removal of leftovers of interrupted attempts (PlanGeneration).
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
// therefore evaluates the mixed states with Router at every SLA boundary of
// every site and puts the non-versioned changes on the side of the flip
// where every mixture routes each request as the old or the new plan does.
// Hitless is false when neither side is safe (then they go before the flip,
// and the caller logs it).
type UpdatePlan struct {
	From      uint8    `json:"from_epoch"`
	To        uint8    `json:"to_epoch"`
	Unchanged bool     `json:"unchanged,omitempty"` // same ranking: no flip
	Hitless   bool     `json:"hitless"`
	Stage     []Update `json:"stage,omitempty"`
	Before    []Update `json:"before,omitempty"`
	Flip      []Update `json:"flip,omitempty"`
	After     []Update `json:"after,omitempty"`
	Cleanup   []Update `json:"cleanup,omitempty"`
}

// Writes is the total number of updates.
func (u *UpdatePlan) Writes() int {
	return len(u.Stage) + len(u.Before) + len(u.Flip) + len(u.After) + len(u.Cleanup)
}

// Empty reports whether the switch already holds the state.
func (u *UpdatePlan) Empty() bool { return u.Writes() == 0 }

// Phase names, in write order. The grace period goes between PhaseAfter and
// PhaseCleanup.
const (
	PhaseStage   = "stage"
	PhaseBefore  = "before"
	PhaseFlip    = "flip"
	PhaseAfter   = "after"
	PhaseCleanup = "cleanup"
)

// Phases returns the phases in write order with their names; the grace
// period goes between "after" and "cleanup".
func (u *UpdatePlan) Phases() []Phase {
	return []Phase{{PhaseStage, u.Stage}, {PhaseBefore, u.Before}, {PhaseFlip, u.Flip}, {PhaseAfter, u.After}, {PhaseCleanup, u.Cleanup}}
}

// All returns every update in write order.
func (u *UpdatePlan) All() []Update {
	out := make([]Update, 0, u.Writes())
	for _, p := range u.Phases() {
		out = append(out, p.Updates...)
	}
	return out
}

// Phase is a named list of updates.
type Phase struct {
	Name    string
	Updates []Update
}

// WriteText prints the update phase by phase.
func (u *UpdatePlan) WriteText(w io.Writer) error {
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
		if _, err := fmt.Fprintf(w, "## %s (%d)\n", p.Name, len(p.Updates)); err != nil {
			return err
		}
		for _, x := range p.Updates {
			if _, err := fmt.Fprintf(w, "%-6s %s\n", x.Op, x.Entry.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// PlanUpdate plans the change from installed (read back from the switch, or
// the state last written) to next, which must be compiled for
// NextEpoch(installed.ActiveEpoch()). It is pure: executing the phases
// (writes, the grace period) is the controller's.
func PlanUpdate(installed, next *State) (*UpdatePlan, error) {
	iv, nv := versionedPart(installed), versionedPart(next)
	g, err := PlanGeneration(iv, nv)
	if err != nil {
		return nil, err
	}
	u := &UpdatePlan{From: g.From, To: g.To, Unchanged: g.Unchanged, Hitless: true,
		Stage: g.Install, Flip: g.Flip, Cleanup: g.Cleanup}
	rest := diffByTable(installed, next)
	if len(rest) == 0 {
		return u, nil
	}
	if len(withEpoch(iv.Table(pipeline.TableCarbonRank), g.From)) == 0 && !g.Unchanged {
		// The switch has no active ranking: a switch (re)started empty, or
		// one whose ranking was deleted. There is no old plan to keep, but
		// feasibility and next hops without a ranking do route: every
		// request to its site's nearest region (the fallback). So the new
		// ranking goes first and everything else after the flip, in table
		// order (sites and feasibility before next hops, pools and
		// endpoints): at every write a request is dropped (no next hop,
		// pool or endpoint yet) or routed as the new plan.
		u.After = rest
		return u, nil
	}
	if g.Unchanged || !touchesRouting(rest) {
		// The active ranking is already the new one (new feasibility with
		// it is the new plan itself); or no table that selects the region
		// changes (any mix routes as one of the plans).
		u.Before = rest
		return u, nil
	}
	_, inv := splitVersioned(installed)
	_, nnv := splitVersioned(next)
	oldR, newR := routerOf(installed), routerOf(next)
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

// isVersioned reports whether e belongs to the epoch-versioned part of the
// program: carbon_rank entries (not its default action, which is
// NoAction whatever the epoch) and active_epoch.
func isVersioned(e *Entry) bool {
	return (e.Table == pipeline.TableCarbonRank && !e.Default) || e.Table == pipeline.TableActiveEpoch
}

// splitVersioned returns the versioned (carbon_rank, active_epoch) and
// non-versioned parts of s.
func splitVersioned(s *State) (v, nv *State) {
	nver := 0
	for i := range s.Entries {
		if isVersioned(&s.Entries[i]) {
			nver++
		}
	}
	v = &State{Meta: s.Meta, Entries: make([]Entry, 0, nver)}
	nv = &State{Meta: s.Meta, Entries: make([]Entry, 0, len(s.Entries)-nver)}
	for _, e := range s.Entries {
		if isVersioned(&e) {
			v.Entries = append(v.Entries, e)
		} else {
			nv.Entries = append(nv.Entries, e)
		}
	}
	return v, nv
}

// join is the sorted union of two states' entries.
func join(a, b *State) *State {
	s, _ := NewState(append(slices.Clone(a.Entries), b.Entries...))
	return s
}

// versionedPart returns the versioned entries of s (a small state).
func versionedPart(s *State) *State {
	v := &State{Meta: s.Meta}
	for i := range s.Entries {
		if isVersioned(&s.Entries[i]) {
			v.Entries = append(v.Entries, s.Entries[i])
		}
	}
	return v
}

// diffByTable returns the non-versioned part of Diff(old, new).Updates()
// (everything but carbon_rank entries and active_epoch), computed table by
// table: a table of which old holds no entries is all inserts, without
// comparisons, so a full reconcile into an empty switch costs one copy.
// Both states are sorted (tables in schema order).
func diffByTable(old, new *State) []Update {
	out := make([]Update, 0, len(new.Entries))
	var mod, del []Update
	add := func(ch Changes) {
		out = appendUpdates(out, Insert, ch.Insert)
		mod = appendUpdates(mod, Modify, ch.Modify)
		del = appendUpdates(del, Delete, ch.Delete)
	}
	oe, ne := old.Entries, new.Entries
	for _, t := range pipeline.Schema().Tables {
		o, n := tableRun(&oe, t.Name), tableRun(&ne, t.Name)
		od, o := defaults(o)
		nd, n := defaults(n)
		if len(od)+len(nd) > 0 && t.Name != pipeline.TableActiveEpoch {
			add(Diff(&State{Entries: od}, &State{Entries: nd}))
		}
		if t.Name == pipeline.TableCarbonRank || t.Name == pipeline.TableActiveEpoch {
			continue // versioned: PlanGeneration's
		}
		if len(o) == 0 {
			out = appendUpdates(out, Insert, n)
			continue
		}
		add(Diff(&State{Entries: o}, &State{Entries: n}))
	}
	return append(append(out, mod...), del...)
}

// tableRun cuts the leading run of table's entries off *es (sorted states
// keep a table's entries together, in schema order).
func tableRun(es *[]Entry, table string) []Entry {
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
func defaults(run []Entry) (def, rest []Entry) {
	i := 0
	for i < len(run) && run[i].Default {
		i++
	}
	return run[:i:i], run[i:]
}

// touchesRouting reports whether us change a table that region selection
// reads besides the versioned ones.
func touchesRouting(us []Update) bool {
	for i := range us {
		if t := us[i].Entry.Table; t == pipeline.TableSLAFeasibility || t == pipeline.TableClientSite {
			return true
		}
	}
	return false
}

// consistent reports whether every request (site, SLA) is routed by mix as
// by old or by new. Decisions are piecewise constant in the SLA between the
// feasibility boundaries of the two states, so checking each boundary of
// each site covers every 16-bit SLA value.
func consistent(mix, old, new *State, oldR, newR *Router) bool {
	mixR := routerOf(mix)
	bounds := map[uint16]map[uint16]bool{}
	for _, s := range []*State{old, new} {
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

// routerOf is NewRouter on s without the default entries read back from a
// switch (the router expects compiled states, whose only default entry is
// active_epoch's).
func routerOf(s *State) *Router {
	c := &State{Meta: s.Meta, Entries: make([]Entry, 0, len(s.Entries))}
	for _, e := range s.Entries {
		if !e.Default || e.Table == pipeline.TableActiveEpoch {
			c.Entries = append(c.Entries, e)
		}
	}
	return NewRouter(c)
}
