package p4rt

import (
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// Entry is a table entry decoded to names, for printing and JSON/YAML
// output (`p4ctl get`).
type Entry struct {
	Table     string        `json:"table"`
	Default   bool          `json:"default,omitempty"`
	Match     []MatchValue  `json:"match,omitempty"`
	Priority  int32         `json:"priority,omitempty"`
	Action    string        `json:"action,omitempty"`
	Params    []ParamValue  `json:"params,omitempty"`
	Counter   *CounterValue `json:"counter,omitempty"`
	Const     bool          `json:"const,omitempty"`
	CtrlMeta  uint64        `json:"controllerMetadata,omitempty"`
	ActionRaw string        `json:"actionRaw,omitempty"` // action profile member/group, when not a direct action
}

// MatchValue is one decoded match field. Value is formatted for humans
// (addresses as IPv4/MAC, numbers in decimal, masks in hex).
type MatchValue struct {
	Field string `json:"field"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// ParamValue is one decoded action parameter.
type ParamValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CounterValue is a counter cell: packets and bytes.
type CounterValue struct {
	Packets int64 `json:"packets"`
	Bytes   int64 `json:"bytes"`
}

// CounterCell is one decoded indirect counter cell.
type CounterCell struct {
	Counter string `json:"counter"`
	Index   int64  `json:"index"`
	CounterValue
}

// RegisterCell is one decoded register cell.
type RegisterCell struct {
	Register string `json:"register"`
	Index    int64  `json:"index"`
	Value    uint64 `json:"value"`
}

// String renders an entry on one line:
// "P4ctlIngress.carbon_rank epoch=1 feasible=0x8&&&0x8 priority=30 -> P4ctlIngress.route_to_region(region=3)".
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(e.Table)
	if e.Default {
		b.WriteString(" (default)")
	}
	for _, m := range e.Match {
		fmt.Fprintf(&b, " %s=%s", m.Field, m.Value)
	}
	if e.Priority != 0 {
		fmt.Fprintf(&b, " priority=%d", e.Priority)
	}
	if e.Action != "" {
		b.WriteString(" -> " + e.Action + "(")
		for i, p := range e.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name + "=" + p.Value)
		}
		b.WriteString(")")
	} else if e.ActionRaw != "" {
		b.WriteString(" -> " + e.ActionRaw)
	}
	if e.Counter != nil {
		fmt.Fprintf(&b, " [%d pkts, %d bytes]", e.Counter.Packets, e.Counter.Bytes)
	}
	return b.String()
}

// DecodeTableEntry decodes e to names using the P4Info. Unknown ids are an
// error (a P4Info mismatch between client and switch).
func (x *Index) DecodeTableEntry(e *p4v1.TableEntry) (Entry, error) {
	t, ok := x.TableByID(e.GetTableId())
	if !ok {
		return Entry{}, fmt.Errorf("table id 0x%08x is not in the P4Info", e.GetTableId())
	}
	out := Entry{Table: t.GetPreamble().GetName(), Default: e.GetIsDefaultAction(), Priority: e.GetPriority(),
		//lint:ignore SA1019 the client still reads and writes the deprecated controller_metadata for entries and operators that use it (metadata, its successor, is handled beside it)
		Const: e.GetIsConst(), CtrlMeta: e.GetControllerMetadata()}
	fields := map[uint32]*p4configv1.MatchField{}
	for _, f := range t.GetMatchFields() {
		fields[f.Id] = f
	}
	for _, m := range e.GetMatch() {
		f, ok := fields[m.GetFieldId()]
		if !ok {
			return Entry{}, fmt.Errorf("table %s: match field id %d is not in the P4Info", out.Table, m.GetFieldId())
		}
		out.Match = append(out.Match, decodeMatch(f, m))
	}
	switch a := e.GetAction().GetType().(type) {
	case *p4v1.TableAction_Action:
		act, ok := x.ActionByID(a.Action.GetActionId())
		if !ok {
			return Entry{}, fmt.Errorf("table %s: action id 0x%08x is not in the P4Info", out.Table, a.Action.GetActionId())
		}
		out.Action = act.GetPreamble().GetName()
		params := map[uint32]*p4configv1.Action_Param{}
		for _, p := range act.GetParams() {
			params[p.Id] = p
		}
		for _, p := range a.Action.GetParams() {
			pi, ok := params[p.GetParamId()]
			if !ok {
				return Entry{}, fmt.Errorf("action %s: parameter id %d is not in the P4Info", out.Action, p.GetParamId())
			}
			out.Params = append(out.Params, ParamValue{Name: pi.Name, Value: formatValue(pi.Name, int(pi.Bitwidth), p.GetValue())})
		}
	case *p4v1.TableAction_ActionProfileMemberId:
		out.ActionRaw = fmt.Sprintf("member %d", a.ActionProfileMemberId)
	case *p4v1.TableAction_ActionProfileGroupId:
		out.ActionRaw = fmt.Sprintf("group %d", a.ActionProfileGroupId)
	}
	if c := e.GetCounterData(); c != nil {
		out.Counter = &CounterValue{Packets: c.GetPacketCount(), Bytes: c.GetByteCount()}
	}
	return out, nil
}

// FormatTableEntry is DecodeTableEntry(e).String(), falling back to the raw
// protobuf text when the entry does not match the P4Info.
func (x *Index) FormatTableEntry(e *p4v1.TableEntry) string {
	d, err := x.DecodeTableEntry(e)
	if err != nil {
		return fmt.Sprintf("%v (%v)", e, err)
	}
	return d.String()
}

// DecodeCounter decodes an indirect counter cell.
func (x *Index) DecodeCounter(c *p4v1.CounterEntry) CounterCell {
	return CounterCell{Counter: x.Name(c.GetCounterId()), Index: c.GetIndex().GetIndex(),
		CounterValue: CounterValue{Packets: c.GetData().GetPacketCount(), Bytes: c.GetData().GetByteCount()}}
}

// DecodeRegister decodes a register cell holding a bit<W> value of at most
// 64 bits.
func (x *Index) DecodeRegister(r *p4v1.RegisterEntry) (RegisterCell, error) {
	cell := RegisterCell{Register: x.Name(r.GetRegisterId()), Index: r.GetIndex().GetIndex()}
	bs := r.GetData().GetBitstring()
	if bs == nil {
		return cell, fmt.Errorf("register %s[%d]: data is not a bitstring (%v)", cell.Register, cell.Index, r.GetData())
	}
	v, err := DecodeUint(bs)
	if err != nil {
		return cell, fmt.Errorf("register %s[%d]: %w", cell.Register, cell.Index, err)
	}
	cell.Value = v
	return cell, nil
}

func decodeMatch(f *p4configv1.MatchField, m *p4v1.FieldMatch) MatchValue {
	w := int(f.Bitwidth)
	mv := MatchValue{Field: f.Name}
	switch v := m.GetFieldMatchType().(type) {
	case *p4v1.FieldMatch_Exact_:
		mv.Kind, mv.Value = "exact", formatValue(f.Name, w, v.Exact.GetValue())
	case *p4v1.FieldMatch_Lpm:
		mv.Kind, mv.Value = "lpm", formatValue(f.Name, w, v.Lpm.GetValue())+"/"+strconv.Itoa(int(v.Lpm.GetPrefixLen()))
	case *p4v1.FieldMatch_Ternary_:
		mv.Kind, mv.Value = "ternary", formatHex(v.Ternary.GetValue())+"&&&"+formatHex(v.Ternary.GetMask())
	case *p4v1.FieldMatch_Range_:
		mv.Kind, mv.Value = "range", formatValue(f.Name, w, v.Range.GetLow())+".."+formatValue(f.Name, w, v.Range.GetHigh())
	case *p4v1.FieldMatch_Optional_:
		mv.Kind, mv.Value = "optional", formatValue(f.Name, w, v.Optional.GetValue())
	default:
		mv.Kind, mv.Value = "other", fmt.Sprint(m.GetFieldMatchType())
	}
	return mv
}

// formatValue renders a bytestring: 48-bit values as MACs, 32-bit values
// whose name says address as IPv4, values up to 64 bits in decimal, wider
// ones in hex.
func formatValue(name string, width int, b []byte) string {
	lname := strings.ToLower(name)
	switch {
	case width == 48 && (strings.Contains(lname, "mac") || strings.Contains(lname, "eth")):
		return net.HardwareAddr(padTo(b, 6)).String()
	case width == 32 && (strings.Contains(lname, "addr") || strings.Contains(lname, "ip")):
		return net.IP(padTo(b, 4)).String()
	}
	if v, err := DecodeUint(b); err == nil {
		return strconv.FormatUint(v, 10)
	}
	return formatHex(b)
}

func formatHex(b []byte) string { return "0x" + new(big.Int).SetBytes(b).Text(16) }

// DecodeStruct decodes a P4Data struct (digest data, for instance) whose
// members are bitstrings of the given widths, in order.
func DecodeStruct(d *p4v1.P4Data, widths []int) ([]uint64, error) {
	st := d.GetStruct()
	if st == nil {
		return nil, fmt.Errorf("p4data: want a struct, got %T", d.GetData())
	}
	if len(st.GetMembers()) != len(widths) {
		return nil, fmt.Errorf("p4data: struct of %d members, want %d", len(st.GetMembers()), len(widths))
	}
	out := make([]uint64, len(widths))
	for i, m := range st.GetMembers() {
		b := m.GetBitstring()
		if b == nil {
			return nil, fmt.Errorf("p4data: struct member %d is %T, want a bitstring", i, m.GetData())
		}
		if !FitsWidth(b, widths[i]) {
			return nil, fmt.Errorf("p4data: struct member %d (% x) does not fit bit<%d>", i, b, widths[i])
		}
		v, err := DecodeUint(b)
		if err != nil {
			return nil, fmt.Errorf("p4data: struct member %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}
