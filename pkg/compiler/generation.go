package compiler

import (
	"fmt"
	"slices"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// DefaultGrace is how long the old generation stays installed after the
// flip: long enough for every packet that read the old active epoch to
// leave the pipeline (recirculated holds included) and for a straggling
// replica's view to catch up. Pipelines drain in microseconds; a second is
// generous.
const DefaultGrace = time.Second

// NextEpoch returns the epoch to compile the next generation for, given the
// active one: active+1, wrapping at 256. Only two epochs are ever installed
// at once, so wrapping is safe.
func NextEpoch(active uint8) uint8 { return active + 1 }

// Generation is the hitless change from the installed state to the next
// one (../shared/DESIGN.md §2), in three phases applied in order:
//
//  1. Install: the new generation's carbon_rank entries under the inactive
//     epoch, plus every non-versioned change (other tables), plus removal
//     of leftovers of unfinished generations. Packets still read the active
//     epoch, so nothing they see changes except tables that are not
//     versioned.
//  2. Flip: one MODIFY of active_epoch's default action. Every packet
//     after it reads the new generation; every packet before it the old.
//  3. Cleanup: after a grace period, delete the old generation.
//
// A controller that stops between any two writes leaves a switch whose
// active epoch holds a complete ranking (the old one before the flip, the new
// one after it), so every packet is routed as under the old or the new plan.
// Restarting: read the switch, compile for NextEpoch(ActiveEpoch), and plan
// again — leftovers of the interrupted attempt are modified or deleted in
// phase 1, the old generation in phase 3.
type Generation struct {
	// From and To are the active epochs before and after.
	From uint8 `json:"from_epoch"`
	To   uint8 `json:"to_epoch"`
	// Unchanged is set when the new ranking equals the active one: nothing
	// is flipped and To == From.
	Unchanged bool     `json:"unchanged,omitempty"`
	Install   []Update `json:"install,omitempty"`
	Flip      []Update `json:"flip,omitempty"`
	Cleanup   []Update `json:"cleanup,omitempty"`
}

// Writes is the total number of writes of the three phases.
func (g Generation) Writes() int { return len(g.Install) + len(g.Flip) + len(g.Cleanup) }

// Updates returns the three phases concatenated (for callers that do not
// wait between phase 2 and 3, e.g. a dry run).
func (g Generation) Updates() []Update {
	out := make([]Update, 0, g.Writes())
	out = append(out, g.Install...)
	out = append(out, g.Flip...)
	return append(out, g.Cleanup...)
}

// PlanGeneration plans the hitless change from installed (what the switch
// holds, e.g. read back, or the previous desired state) to next, a state
// compiled for an epoch other than installed's active one (NextEpoch).
//
// When only the carbon ranking changed and it is site-independent, the plan
// is R inserts + 1 flip + R deletes = 2R+1 writes for R regions, whatever
// the number of sites. Sites with their own ranking (policy D, or carbon ties
// broken differently by latency) add 2R writes each.
//
// If next's ranking equals the active generation's, the plan keeps the
// active epoch (Unchanged), writes only non-versioned changes and removes
// leftovers of other epochs.
func PlanGeneration(installed, next *State) (Generation, error) {
	from := installed.ActiveEpoch()
	to := next.ActiveEpoch()
	g := Generation{From: from, To: to}

	// Non-versioned tables: a plain diff without carbon_rank and active_epoch.
	rest := diff(sorted(installed), sorted(next), versioned)

	oldRank := installed.Table(pipeline.TableCarbonRank)
	newRank := next.Table(pipeline.TableCarbonRank)
	activeOld := withEpoch(oldRank, from)
	if sameRanking(activeOld, newRank, to) {
		g.Unchanged, g.To = true, from
		g.Install = rest.Updates()
		for _, e := range oldRank {
			if entryEpoch(&e) != from {
				g.Cleanup = append(g.Cleanup, Update{Delete, e})
			}
		}
		return g, nil
	}
	if to == from {
		return Generation{}, fmt.Errorf("plan generation: the new state is compiled for the active epoch %d; compile it for NextEpoch (%d)", from, NextEpoch(from))
	}
	for _, e := range newRank {
		if entryEpoch(&e) != to {
			return Generation{}, fmt.Errorf("plan generation: carbon_rank entry of epoch %d in a state whose active epoch is %d", entryEpoch(&e), to)
		}
	}
	// Phase 1: the new generation (diffed against leftovers already under
	// epoch `to`), the non-versioned changes, and leftovers of other
	// inactive epochs.
	g.Install = make([]Update, 0, len(newRank)+rest.Len()+len(oldRank)-len(activeOld))
	var staged Changes
	if left := withEpoch(oldRank, to); len(left) == 0 {
		staged.Insert = newRank
	} else {
		staged = diff(left, newRank, nil)
	}
	g.Install = appendUpdates(g.Install, Insert, staged.Insert)
	g.Install = appendUpdates(g.Install, Modify, staged.Modify)
	g.Install = rest.appendUpdates(g.Install)
	g.Install = appendUpdates(g.Install, Delete, staged.Delete)
	for _, e := range oldRank {
		if ep := entryEpoch(&e); ep != from && ep != to {
			g.Install = append(g.Install, Update{Delete, e})
		}
	}
	// Phase 2: the flip.
	for _, e := range next.Table(pipeline.TableActiveEpoch) {
		if e.Default {
			g.Flip = append(g.Flip, Update{Modify, e})
		}
	}
	// Phase 3: the old generation.
	g.Cleanup = appendUpdates(nil, Delete, activeOld)
	return g, nil
}

var versioned = map[string]bool{pipeline.TableCarbonRank: true, pipeline.TableActiveEpoch: true}

func entryEpoch(e *Entry) uint8 {
	m, _ := e.Field(pipeline.FieldEpoch)
	return uint8(m.Value)
}

// withEpoch returns the entries of one epoch: a sub-slice, since sorted
// carbon_rank entries are grouped by epoch.
func withEpoch(es []Entry, epoch uint8) []Entry {
	lo := 0
	for lo < len(es) && entryEpoch(&es[lo]) != epoch {
		lo++
	}
	hi := lo
	for hi < len(es) && entryEpoch(&es[hi]) == epoch {
		hi++
	}
	return es[lo:hi:hi]
}

// sameRanking reports whether a (entries of one epoch) and b (entries of
// epoch eb) are the same ranking up to the epoch value. Both are sorted by
// Compare, which orders carbon_rank entries of one epoch by site and
// priority, so the two lists align entry by entry.
func sameRanking(a, b []Entry, eb uint8) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if entryEpoch(y) != eb || len(x.Match) != len(y.Match) || x.Priority != y.Priority || !sameAction(x, y) {
			return false
		}
		for k := range x.Match {
			if x.Match[k].Field != pipeline.FieldEpoch && compareMatch(&x.Match[k], &y.Match[k]) != 0 {
				return false
			}
		}
	}
	return true
}

// appendUpdates appends one update of kind op per entry to dst, in place
// (no intermediate slice: an Update copies its Entry).
func appendUpdates(dst []Update, op Op, es []Entry) []Update {
	dst = slices.Grow(dst, len(es))
	for i := range es {
		dst = append(dst, Update{op, es[i]})
	}
	return dst
}
