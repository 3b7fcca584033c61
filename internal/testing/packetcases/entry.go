// Package packetcases is the shared table of packet tests of the p4ctl
// program: each case lists table entries to install (by P4Info name), the
// frames to send in order, what must come out for each (egress port and exact
// bytes, or a drop), and the counter and register values afterwards. The
// embedded target runs them in pkg/dataplane's tests; bmv2-tests/ feeds the
// same table to BMv2. Only the credit-TTL cases depend on time: their
// packets say how long to wait (Packet.After), and their ticks are so
// coarse that the harnesses' own delays never expire a credit. Every
// expectation is what docs/PIPELINE.md says every implementation does; a
// case's Archs say where it applies (p2c pools are v1model-only).
package packetcases

import (
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Match is one key field of an entry, by field name. Kind selects which
// values are used: Exact/Optional use Value; LPM Value and PrefixLen; Ternary
// Value and Mask; Range Low and High.
type Match struct {
	Field     string
	Kind      pipeline.MatchKind
	Value     uint64
	Mask      uint64
	PrefixLen int
	Low, High uint64
}

// Exact returns an exact match.
func Exact(field string, v uint64) Match { return Match{Field: field, Kind: pipeline.Exact, Value: v} }

// LPM returns a longest-prefix match.
func LPM(field string, v uint64, plen int) Match {
	return Match{Field: field, Kind: pipeline.LPM, Value: v, PrefixLen: plen}
}

// Ternary returns a ternary match.
func Ternary(field string, v, mask uint64) Match {
	return Match{Field: field, Kind: pipeline.Ternary, Value: v, Mask: mask}
}

// Range returns a range match.
func Range(field string, lo, hi uint64) Match {
	return Match{Field: field, Kind: pipeline.Range, Low: lo, High: hi}
}

// Param is an action parameter value, by name.
type Param struct {
	Name  string
	Value uint64
}

// Entry is a table entry to insert, or (Default) the new default action of
// the table.
type Entry struct {
	Table    string
	Match    []Match
	Priority int32
	Action   string
	Params   []Param
	Default  bool
}

// String renders the entry as one line for test failure messages.
func (e Entry) String() string {
	if e.Default {
		return fmt.Sprintf("%s default %s%v", e.Table, e.Action, e.Params)
	}
	return fmt.Sprintf("%s %v prio %d -> %s%v", e.Table, e.Match, e.Priority, e.Action, e.Params)
}

// Update returns the P4Runtime update (INSERT, or MODIFY of the default
// entry) for e, with ids from info and canonical bytestrings.
func (e Entry) Update(info *p4configv1.P4Info) (*p4v1.Update, error) {
	var tb *p4configv1.Table
	for _, t := range info.GetTables() {
		if t.GetPreamble().GetName() == e.Table {
			tb = t
		}
	}
	if tb == nil {
		return nil, fmt.Errorf("entry %v: no table %s in the p4info", e, e.Table)
	}
	var act *p4configv1.Action
	for _, a := range info.GetActions() {
		if a.GetPreamble().GetName() == e.Action {
			act = a
		}
	}
	if act == nil {
		return nil, fmt.Errorf("entry %v: no action %s in the p4info", e, e.Action)
	}
	te := &p4v1.TableEntry{TableId: tb.GetPreamble().GetId(), Priority: e.Priority, IsDefaultAction: e.Default}
	for _, m := range e.Match {
		var mf *p4configv1.MatchField
		for _, f := range tb.GetMatchFields() {
			if f.GetName() == m.Field {
				mf = f
			}
		}
		if mf == nil {
			return nil, fmt.Errorf("entry %v: table has no field %s", e, m.Field)
		}
		fm := &p4v1.FieldMatch{FieldId: mf.GetId()}
		switch m.Kind {
		case pipeline.Exact:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: engine.EncodeBits(m.Value)}}
		case pipeline.LPM:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: engine.EncodeBits(m.Value), PrefixLen: int32(m.PrefixLen)}}
		case pipeline.Ternary:
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: engine.EncodeBits(m.Value), Mask: engine.EncodeBits(m.Mask)}}
		case pipeline.Range:
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: engine.EncodeBits(m.Low), High: engine.EncodeBits(m.High)}}
		case pipeline.Optional:
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: engine.EncodeBits(m.Value)}}
		default:
			return nil, fmt.Errorf("entry %v: match kind %q", e, m.Kind)
		}
		te.Match = append(te.Match, fm)
	}
	a := &p4v1.Action{ActionId: act.GetPreamble().GetId()}
	for _, p := range e.Params {
		var id uint32
		for _, ap := range act.GetParams() {
			if ap.GetName() == p.Name {
				id = ap.GetId()
			}
		}
		if id == 0 {
			return nil, fmt.Errorf("entry %v: action %s has no parameter %s", e, e.Action, p.Name)
		}
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: id, Value: engine.EncodeBits(p.Value)})
	}
	te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	typ := p4v1.Update_INSERT
	if e.Default {
		typ = p4v1.Update_MODIFY
	}
	return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}, nil
}

// Updates converts entries to updates (see Entry.Update).
func Updates(info *p4configv1.P4Info, entries []Entry) ([]*p4v1.Update, error) {
	out := make([]*p4v1.Update, 0, len(entries))
	for _, e := range entries {
		u, err := e.Update(info)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
