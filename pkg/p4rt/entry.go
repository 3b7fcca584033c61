package p4rt

import (
	"errors"
	"fmt"
	"sort"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
)

// ActionParam is a named action parameter value for EntryBuilder.Action.
type ActionParam struct {
	Name  string
	Value any
}

// Param names an action parameter value: Param("region", 3).
func Param(name string, value any) ActionParam { return ActionParam{Name: name, Value: value} }

// EntryBuilder builds one P4Runtime TableEntry by name, checking every name,
// bit width and P4Runtime rule as it goes. Methods chain; the first error is
// kept and returned by Build, so a chain needs one error check:
//
//	e, err := idx.TableEntry("carbon_rank").
//		Exact("epoch", 1).
//		Ternary("feasible", uint32(1<<3), uint32(1<<3)).
//		Priority(30).
//		Action("route_to_region", p4rt.Param("region", 3)).
//		Build()
//
// Match values are encoded canonically (P4Runtime spec §8.4): shortest
// bytestrings, LPM values masked to the prefix, ternary values masked by
// the mask, and "don't care" matches (LPM /0, ternary mask 0, full range)
// omitted as the spec requires.
type EntryBuilder struct {
	idx   *Index
	table *p4configv1.Table
	entry *p4v1.TableEntry
	set   map[uint32]bool
	err   error
}

// TableEntry starts building an entry of the named table.
func (x *Index) TableEntry(table string) *EntryBuilder {
	b := &EntryBuilder{idx: x, entry: &p4v1.TableEntry{}, set: map[uint32]bool{}}
	t, err := x.Table(table)
	if err != nil {
		b.err = err
		return b
	}
	b.table = t
	b.entry.TableId = t.GetPreamble().GetId()
	return b
}

func (b *EntryBuilder) fail(format string, a ...any) *EntryBuilder {
	if b.err == nil {
		b.err = fmt.Errorf("table %s: %w", b.table.GetPreamble().GetName(), fmt.Errorf(format, a...))
	}
	return b
}

// field resolves a match field and checks its kind and that it is set once.
func (b *EntryBuilder) field(name string, kind p4configv1.MatchField_MatchType) (*p4configv1.MatchField, bool) {
	if b.err != nil {
		return nil, false
	}
	f, err := b.idx.MatchField(b.table, name)
	if err != nil {
		b.err = err
		return nil, false
	}
	if f.GetMatchType() != kind {
		b.fail("match field %s is %s, not %s", f.Name, matchKindName(f.GetMatchType()), matchKindName(kind))
		return nil, false
	}
	if b.set[f.Id] {
		b.fail("match field %s set twice", f.Name)
		return nil, false
	}
	b.set[f.Id] = true
	return f, true
}

func (b *EntryBuilder) encode(f *p4configv1.MatchField, what string, v any) ([]byte, bool) {
	enc, err := Encode(v, int(f.Bitwidth))
	if err != nil {
		b.fail("match field %s %s: %w", f.Name, what, err)
		return nil, false
	}
	return enc, true
}

// Exact sets an exact match.
func (b *EntryBuilder) Exact(field string, v any) *EntryBuilder {
	f, ok := b.field(field, p4configv1.MatchField_EXACT)
	if !ok {
		return b
	}
	if val, ok := b.encode(f, "value", v); ok {
		b.entry.Match = append(b.entry.Match, &p4v1.FieldMatch{FieldId: f.Id,
			FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: val}}})
	}
	return b
}

// LPM sets a longest-prefix match; the value is masked to the prefix and a
// zero-length prefix is omitted (don't care).
func (b *EntryBuilder) LPM(field string, v any, prefixLen int) *EntryBuilder {
	f, ok := b.field(field, p4configv1.MatchField_LPM)
	if !ok {
		return b
	}
	if prefixLen < 0 || prefixLen > int(f.Bitwidth) {
		return b.fail("match field %s: prefix length %d outside 0..%d", f.Name, prefixLen, f.Bitwidth)
	}
	val, ok := b.encode(f, "value", v)
	if !ok || prefixLen == 0 {
		return b
	}
	b.entry.Match = append(b.entry.Match, &p4v1.FieldMatch{FieldId: f.Id,
		FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{
			Value: maskPrefix(val, int(f.Bitwidth), prefixLen), PrefixLen: int32(prefixLen)}}})
	return b
}

// Ternary sets a ternary match; the value is masked (value & mask) and a
// zero mask is omitted (don't care).
func (b *EntryBuilder) Ternary(field string, v, mask any) *EntryBuilder {
	f, ok := b.field(field, p4configv1.MatchField_TERNARY)
	if !ok {
		return b
	}
	val, ok1 := b.encode(f, "value", v)
	m, ok2 := b.encode(f, "mask", mask)
	if !ok1 || !ok2 || BitLen(m) == 0 {
		return b
	}
	b.entry.Match = append(b.entry.Match, &p4v1.FieldMatch{FieldId: f.Id,
		FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{
			Value: andBytes(val, m), Mask: m}}})
	return b
}

// Range sets a range match lo..hi (inclusive); the full range is omitted
// (don't care).
func (b *EntryBuilder) Range(field string, lo, hi any) *EntryBuilder {
	f, ok := b.field(field, p4configv1.MatchField_RANGE)
	if !ok {
		return b
	}
	l, ok1 := b.encode(f, "low", lo)
	h, ok2 := b.encode(f, "high", hi)
	if !ok1 || !ok2 {
		return b
	}
	if compareBytes(l, h) > 0 {
		return b.fail("match field %s: range low 0x%x > high 0x%x", f.Name, l, h)
	}
	if BitLen(l) == 0 && allOnes(h, int(f.Bitwidth)) {
		return b
	}
	b.entry.Match = append(b.entry.Match, &p4v1.FieldMatch{FieldId: f.Id,
		FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: l, High: h}}})
	return b
}

// Optional sets an optional match to v (leave the field out for don't care).
func (b *EntryBuilder) Optional(field string, v any) *EntryBuilder {
	f, ok := b.field(field, p4configv1.MatchField_OPTIONAL)
	if !ok {
		return b
	}
	if val, ok := b.encode(f, "value", v); ok {
		b.entry.Match = append(b.entry.Match, &p4v1.FieldMatch{FieldId: f.Id,
			FieldMatchType: &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: val}}})
	}
	return b
}

// Priority sets the entry priority (higher wins). Required, and only
// allowed, for tables with ternary, range or optional fields.
func (b *EntryBuilder) Priority(p int32) *EntryBuilder {
	if b.err == nil && p <= 0 {
		return b.fail("priority %d: must be positive", p)
	}
	b.entry.Priority = p
	return b
}

// Default makes this the table's default entry (is_default_action): it has
// no match fields and can only be MODIFY'd.
func (b *EntryBuilder) Default() *EntryBuilder {
	b.entry.IsDefaultAction = true
	return b
}

// ControllerMetadata sets the opaque controller_metadata cookie.
func (b *EntryBuilder) ControllerMetadata(v uint64) *EntryBuilder {
	//lint:ignore SA1019 the client still reads and writes the deprecated controller_metadata for entries and operators that use it (metadata, its successor, is handled beside it)
	b.entry.ControllerMetadata = v
	return b
}

// Action sets the entry's direct action and its parameters by name. Every
// parameter of the action must be given exactly once.
func (b *EntryBuilder) Action(name string, params ...ActionParam) *EntryBuilder {
	if b.err != nil {
		return b
	}
	act, err := b.idx.BuildAction(name, params...)
	if err != nil {
		return b.fail("%w", err)
	}
	b.entry.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return b
}

// BuildAction encodes an action call by name, checking every parameter's
// name and width; every parameter must be given exactly once.
func (x *Index) BuildAction(name string, params ...ActionParam) (*p4v1.Action, error) {
	a, err := x.Action(name)
	if err != nil {
		return nil, err
	}
	out := &p4v1.Action{ActionId: a.GetPreamble().GetId()}
	given := map[uint32]bool{}
	for _, prm := range params {
		p, err := x.Param(a, prm.Name)
		if err != nil {
			return nil, err
		}
		if given[p.Id] {
			return nil, fmt.Errorf("action %s: parameter %s given twice", a.GetPreamble().GetName(), p.Name)
		}
		given[p.Id] = true
		v, err := Encode(prm.Value, int(p.Bitwidth))
		if err != nil {
			return nil, fmt.Errorf("action %s parameter %s: %w", a.GetPreamble().GetName(), p.Name, err)
		}
		out.Params = append(out.Params, &p4v1.Action_Param{ParamId: p.Id, Value: v})
	}
	for _, p := range a.GetParams() {
		if !given[p.Id] {
			return nil, fmt.Errorf("action %s: parameter %s missing", a.GetPreamble().GetName(), p.Name)
		}
	}
	sort.Slice(out.Params, func(i, j int) bool { return out.Params[i].ParamId < out.Params[j].ParamId })
	return out, nil
}

// Build checks the entry against the table (exact fields present, priority
// iff needed, action allowed in this table and scope) and returns it.
func (b *EntryBuilder) Build() (*p4v1.TableEntry, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.table == nil {
		return nil, errors.New("no table")
	}
	t, e := b.table, b.entry
	name := t.GetPreamble().GetName()
	sort.Slice(e.Match, func(i, j int) bool { return e.Match[i].FieldId < e.Match[j].FieldId })
	if e.IsDefaultAction {
		if len(e.Match) > 0 || e.Priority != 0 {
			return nil, fmt.Errorf("table %s: the default entry takes no match fields and no priority", name)
		}
		if t.ConstDefaultActionId != 0 {
			return nil, fmt.Errorf("table %s: the default action is const", name)
		}
	} else {
		if len(t.GetMatchFields()) == 0 {
			return nil, fmt.Errorf("table %s is keyless: only its default entry can be written (use Default())", name)
		}
		for _, f := range t.GetMatchFields() {
			if f.GetMatchType() == p4configv1.MatchField_EXACT && !b.set[f.Id] {
				return nil, fmt.Errorf("table %s: exact match field %s missing", name, f.Name)
			}
		}
		switch {
		case needsPriority(t) && e.Priority == 0:
			return nil, fmt.Errorf("table %s has ternary/range/optional fields: entries need a priority", name)
		case !needsPriority(t) && e.Priority != 0:
			return nil, fmt.Errorf("table %s has only exact/LPM fields: entries must not have a priority", name)
		}
	}
	if a := e.GetAction().GetAction(); a != nil {
		ref, ok := b.idx.actionRef(e.TableId, a.ActionId)
		switch {
		case !ok:
			return nil, fmt.Errorf("table %s: action %s is not one of its actions", name, b.idx.Name(a.ActionId))
		case e.IsDefaultAction && ref.Scope == p4configv1.ActionRef_TABLE_ONLY:
			return nil, fmt.Errorf("table %s: action %s cannot be the default action (@tableonly)", name, b.idx.Name(a.ActionId))
		case !e.IsDefaultAction && ref.Scope == p4configv1.ActionRef_DEFAULT_ONLY:
			return nil, fmt.Errorf("table %s: action %s can only be the default action (@defaultonly)", name, b.idx.Name(a.ActionId))
		}
	} else if !e.IsDefaultAction {
		return nil, fmt.Errorf("table %s: entry has no action", name)
	}
	return e, nil
}

// Entity builds the entry and wraps it in an Entity.
func (b *EntryBuilder) Entity() (*p4v1.Entity, error) {
	e, err := b.Build()
	if err != nil {
		return nil, err
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: e}}, nil
}

// Update builds the entry and wraps it in an Update of type op.
func (b *EntryBuilder) Update(op p4v1.Update_Type) (*p4v1.Update, error) {
	ent, err := b.Entity()
	if err != nil {
		return nil, err
	}
	return &p4v1.Update{Type: op, Entity: ent}, nil
}

// TableEntity wraps a TableEntry in an Entity.
func TableEntity(e *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: e}}
}

// Updates wraps table entries in Updates of type op.
func Updates(op p4v1.Update_Type, entries ...*p4v1.TableEntry) []*p4v1.Update {
	out := make([]*p4v1.Update, len(entries))
	for i, e := range entries {
		out[i] = &p4v1.Update{Type: op, Entity: TableEntity(e)}
	}
	return out
}

// CounterEntry returns a CounterEntry for reading counter name at index, or
// at every index when index < 0 (wildcard).
func (x *Index) CounterEntry(name string, index int64) (*p4v1.Entity, error) {
	c, err := x.Counter(name)
	if err != nil {
		return nil, err
	}
	ce := &p4v1.CounterEntry{CounterId: c.GetPreamble().GetId()}
	if index >= 0 {
		if c.Size > 0 && index >= c.Size {
			return nil, fmt.Errorf("counter %s: index %d outside 0..%d", c.GetPreamble().GetName(), index, c.Size-1)
		}
		ce.Index = &p4v1.Index{Index: index}
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: ce}}, nil
}

// RegisterEntry returns a RegisterEntry for reading register name at index,
// or at every index when index < 0 (wildcard).
func (x *Index) RegisterEntry(name string, index int64) (*p4v1.Entity, error) {
	r, err := x.Register(name)
	if err != nil {
		return nil, err
	}
	re := &p4v1.RegisterEntry{RegisterId: r.GetPreamble().GetId()}
	if index >= 0 {
		if r.Size > 0 && index >= int64(r.Size) {
			return nil, fmt.Errorf("register %s: index %d outside 0..%d", r.GetPreamble().GetName(), index, r.Size-1)
		}
		re.Index = &p4v1.Index{Index: index}
	}
	return &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: re}}, nil
}

// RegisterWrite returns an Update (MODIFY) setting register name[index] to
// value, checked against the register's cell width. (BMv2's PI server does
// not implement register reads or writes; the embedded target does.)
func (x *Index) RegisterWrite(name string, index int64, value any) (*p4v1.Update, error) {
	ent, err := x.RegisterEntry(name, index)
	if err != nil {
		return nil, err
	}
	if index < 0 {
		return nil, fmt.Errorf("register %s: write needs an index", name)
	}
	r, _ := x.Register(name)
	w := RegisterWidth(r)
	if w == 0 {
		return nil, fmt.Errorf("register %s: cell type is not bit<W>", name)
	}
	v, err := Encode(value, w)
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", name, err)
	}
	ent.GetRegisterEntry().Data = &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: v}}
	return &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: ent}, nil
}

// DirectCounterEntry returns a DirectCounterEntry reading the direct counter
// of the entry e (nil e, or one with only table_id set, reads all entries of
// that table).
func DirectCounterEntry(e *p4v1.TableEntry) *p4v1.Entity {
	return &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: e}}}
}

func matchKindName(k p4configv1.MatchField_MatchType) string {
	switch k {
	case p4configv1.MatchField_EXACT:
		return "exact"
	case p4configv1.MatchField_LPM:
		return "lpm"
	case p4configv1.MatchField_TERNARY:
		return "ternary"
	case p4configv1.MatchField_RANGE:
		return "range"
	case p4configv1.MatchField_OPTIONAL:
		return "optional"
	}
	return "unspecified"
}
