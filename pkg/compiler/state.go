// Package compiler turns a controller configuration, latency profiles, a
// carbon snapshot and a policy into the desired state of the p4ctl switch
// program (docs/PIPELINE.md): table entries and default actions, by name. It
// also diffs two states and plans the hitless hourly change of generation
// (install the new carbon ranking under an unused epoch, flip active_epoch
// in one write, delete the old generation after a grace period).
//
// It is pure: no I/O, no gRPC, no clocks. State is independent of P4Info
// ids; pkg/p4rt's EntryBuilder turns an Entry into a P4Runtime TableEntry
// call for call (Exact/LPM/Ternary/Range by field name, Priority, Default,
// Action with named params).
package compiler

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Match is one key field of an entry. Value holds the exact value, the LPM
// address, the ternary value or the range's low end; Mask, PrefixLen and High
// complete ternary, LPM and range matches. A "don't care" is kept explicit
// (ternary Mask 0, LPM PrefixLen 0, range 0..max): pkg/p4rt omits it on the
// wire as P4Runtime requires.
type Match struct {
	Field     string             `json:"field"`
	Kind      pipeline.MatchKind `json:"kind"`
	Value     uint64             `json:"value"`
	Mask      uint64             `json:"mask,omitempty"`
	PrefixLen int                `json:"prefix_len,omitempty"`
	High      uint64             `json:"high,omitempty"`
}

// MarshalJSON writes the match with, for an LPM match (the program's LPM
// keys are IPv4 addresses), the prefix in CIDR notation beside its integer
// value: "cidr": "10.10.0.0/16" (plan -o json|yaml printed integers only).
func (m Match) MarshalJSON() ([]byte, error) {
	type plain Match
	if m.Kind != pipeline.LPM {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		CIDR string `json:"cidr"`
	}{plain(m), formatMatch(m)})
}

// Param is one action parameter.
type Param struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// Entry is one table entry, or a table's default action when Default is
// set (then Match and Priority are empty). Match fields are in the table's
// key order, Params in the action's parameter order (pipeline.Schema).
type Entry struct {
	Table    string  `json:"table"`
	Default  bool    `json:"default,omitempty"`
	Match    []Match `json:"match,omitempty"`
	Priority int32   `json:"priority,omitempty"`
	Action   string  `json:"action"`
	Params   []Param `json:"params,omitempty"`
}

// Field returns the named match field and whether the entry has it.
func (e *Entry) Field(name string) (Match, bool) {
	for _, m := range e.Match {
		if m.Field == name {
			return m, true
		}
	}
	return Match{}, false
}

// Param returns the value of the named action parameter.
func (e *Entry) Param(name string) (uint64, bool) {
	for _, p := range e.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return 0, false
}

// Key identifies the entry within the switch: table, default flag, match and
// priority (P4Runtime's identity of a table entry). Two entries with the same
// Key differ at most in their action.
func (e *Entry) Key() string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(e.Table)
	if e.Default {
		b.WriteString("|default")
		return b.String()
	}
	for _, m := range e.Match {
		b.WriteByte('|')
		switch m.Kind {
		case pipeline.Ternary:
			b.WriteString(strconv.FormatUint(m.Value&m.Mask, 16)) // canonical
			b.WriteByte('&')
			b.WriteString(strconv.FormatUint(m.Mask, 16))
		case pipeline.LPM:
			b.WriteString(strconv.FormatUint(m.Value, 16))
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(m.PrefixLen))
		case pipeline.Range:
			b.WriteString(strconv.FormatUint(m.Value, 16))
			b.WriteString("..")
			b.WriteString(strconv.FormatUint(m.High, 16))
		default:
			b.WriteString(strconv.FormatUint(m.Value, 16))
		}
	}
	b.WriteString("|p")
	b.WriteString(strconv.Itoa(int(e.Priority)))
	return b.String()
}

// sameAction reports whether a and b have the same action and parameters.
func sameAction(a, b *Entry) bool {
	return a.Action == b.Action && slices.Equal(a.Params, b.Params)
}

// tableRanks are the tables' positions in pipeline.Schema (computed once,
// never written after).
var tableRanks = func() map[string]int {
	m := map[string]int{}
	for i, t := range pipeline.Schema().Tables {
		m[t.Name] = i
	}
	return m
}()

// tableOrder ranks tables in pipeline.Schema order (unknown tables last).
func tableOrder(name string) int {
	if r, ok := tableRanks[name]; ok {
		return r
	}
	return 100
}

// Compare orders entries deterministically: by table (schema order), default
// entries first, then match fields in key order (value, mask, prefix length,
// high end; carbon_rank: epoch, site, then priority), then higher priority
// first, then action. Entries with equal keys are adjacent.
func Compare(a, b *Entry) int {
	if c := compareKey(a, b); c != 0 {
		return c
	}
	return strings.Compare(a.Action, b.Action)
}

// compareKey is Compare without the action: a total order on Keys.
func compareKey(a, b *Entry) int {
	if a.Table != b.Table {
		if c := cmp.Compare(tableOrder(a.Table), tableOrder(b.Table)); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	}
	if a.Default != b.Default {
		if a.Default {
			return -1
		}
		return 1
	}
	// carbon_rank reads best as a ranking: epoch, site, then priority.
	if a.Table == pipeline.TableCarbonRank && len(a.Match) == 3 && len(b.Match) == 3 {
		for i := 0; i < 2; i++ {
			if c := compareMatch(&a.Match[i], &b.Match[i]); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
	}
	for i := 0; i < len(a.Match) && i < len(b.Match); i++ {
		if c := compareMatch(&a.Match[i], &b.Match[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(a.Match), len(b.Match)); c != 0 {
		return c
	}
	return cmp.Compare(b.Priority, a.Priority)
}

func compareMatch(x, y *Match) int {
	xv, yv := x.Value, y.Value
	if x.Kind == pipeline.Ternary {
		xv, yv = xv&x.Mask, yv&y.Mask
	}
	if c := cmp.Compare(xv, yv); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Mask, y.Mask); c != 0 {
		return c
	}
	if c := cmp.Compare(x.PrefixLen, y.PrefixLen); c != 0 {
		return c
	}
	return cmp.Compare(x.High, y.High)
}

// State is a desired (or read-back) switch state: a sorted set of entries,
// unique by Key, plus what it was compiled from. Meta is informational and
// ignored by Diff.
type State struct {
	Meta    Meta    `json:"meta"`
	Entries []Entry `json:"entries"`
}

// NewState returns a state holding entries, sorted, rejecting duplicate keys.
// Use it to wrap entries read back from a switch.
func NewState(entries []Entry) (*State, error) {
	s := &State{Entries: append([]Entry(nil), entries...)}
	s.sort()
	for i := 1; i < len(s.Entries); i++ {
		if s.Entries[i-1].Key() == s.Entries[i].Key() {
			return nil, fmt.Errorf("duplicate entry %s", s.Entries[i].String())
		}
	}
	return s, nil
}

// sort sorts the entries by Compare. Entries are large and hold pointers,
// so it sorts each table's run separately (Compile emits tables in order,
// most runs already sorted) through a permutation, moving each entry once.
func (s *State) sort() {
	es := s.Entries
	byTable := func(a, b Entry) int { return cmp.Compare(tableOrder(a.Table), tableOrder(b.Table)) }
	if !slices.IsSortedFunc(es, byTable) {
		slices.SortStableFunc(es, byTable)
	}
	var perm []int32
	var tmp []Entry
	for lo := 0; lo < len(es); {
		hi := lo + 1
		for hi < len(es) && es[hi].Table == es[lo].Table {
			hi++
		}
		run := es[lo:hi]
		if !isSorted(run) {
			perm = perm[:0]
			for i := range run {
				perm = append(perm, int32(i))
			}
			slices.SortFunc(perm, func(i, j int32) int { return Compare(&run[i], &run[j]) })
			tmp = append(tmp[:0], run...)
			for k, i := range perm {
				run[k] = tmp[i]
			}
		}
		lo = hi
	}
}

func isSorted(es []Entry) bool {
	for i := 1; i < len(es); i++ {
		if Compare(&es[i-1], &es[i]) > 0 {
			return false
		}
	}
	return true
}

// sorted returns s's entries sorted by Compare (s's own slice when it
// already is).
func sorted(s *State) []Entry {
	if s == nil {
		return nil
	}
	if isSorted(s.Entries) {
		return s.Entries
	}
	c := &State{Entries: slices.Clone(s.Entries)}
	c.sort()
	return c.Entries
}

// Table returns the entries of the named table (a sub-slice of Entries).
func (s *State) Table(name string) []Entry {
	lo, hi := -1, -1
	for i := range s.Entries {
		if s.Entries[i].Table == name {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		} else if lo >= 0 {
			break
		}
	}
	if lo < 0 {
		return nil
	}
	return s.Entries[lo:hi]
}

// ActiveEpoch returns the epoch set by the active_epoch default entry, or
// the program's initial default (0) when the state has none.
func (s *State) ActiveEpoch() uint8 {
	for _, e := range s.Table(pipeline.TableActiveEpoch) {
		if e.Default && e.Action == pipeline.ActionSetActiveEpoch {
			v, _ := e.Param(pipeline.ParamEpoch)
			return uint8(v)
		}
	}
	return 0
}

// SharedRanking returns the regions of the active generation's
// site-independent carbon_rank entries (wildcard site), best first: the
// ranking most sites share (p4ctl get regions shows it).
func (s *State) SharedRanking() []regions.Index {
	epoch := s.ActiveEpoch()
	type ranked struct {
		prio   int32
		region regions.Index
	}
	var rs []ranked
	for _, e := range s.Table(pipeline.TableCarbonRank) {
		if e.Default {
			continue
		}
		ep, _ := e.Field(pipeline.FieldEpoch)
		site, _ := e.Field(pipeline.FieldSite)
		if uint8(ep.Value) != epoch || site.Mask != 0 {
			continue
		}
		r, _ := e.Param(pipeline.ParamRegion)
		rs = append(rs, ranked{e.Priority, regions.Index(r)})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(b.prio, a.prio) })
	out := make([]regions.Index, len(rs))
	for i, r := range rs {
		out[i] = r.region
	}
	return out
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := &State{Meta: s.Meta.clone(), Entries: make([]Entry, len(s.Entries))}
	nm, np := 0, 0
	for i := range s.Entries {
		nm += len(s.Entries[i].Match)
		np += len(s.Entries[i].Params)
	}
	ms, ps := make([]Match, 0, nm), make([]Param, 0, np)
	for i, e := range s.Entries {
		ms = append(ms, e.Match...)
		ps = append(ps, e.Params...)
		e.Match = ms[len(ms)-len(e.Match) : len(ms) : len(ms)]
		e.Params = ps[len(ps)-len(e.Params) : len(ps) : len(ps)]
		if len(e.Match) == 0 {
			e.Match = nil
		}
		if len(e.Params) == 0 {
			e.Params = nil
		}
		c.Entries[i] = e
	}
	return c
}

// Counts returns the number of entries per table.
func (s *State) Counts() map[string]int {
	m := map[string]int{}
	for _, e := range s.Entries {
		m[e.Table]++
	}
	return m
}
