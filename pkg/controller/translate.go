package controller

import (
	"fmt"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Translator converts between the compiler's name-based entries and
// P4Runtime table entries for one P4Info. Names are resolved once, so a
// conversion is a few map lookups and integer encodings: the controller
// translates every desired entry on each full reconcile. The encoding is the
// one p4rt.EntryBuilder produces (canonical bytestrings, don't-care fields
// omitted; a test checks them against each other entry for entry).
type Translator struct {
	idx     *p4rt.Index
	tables  map[string]*tableLayout // by compiler (schema) table name
	byID    map[uint32]*tableLayout
	actions map[string]*actionLayout
	actByID map[uint32]*actionLayout
}

type fieldLayout struct {
	name  string // schema name (compiler.Match.Field)
	id    uint32
	width int
	kind  pipeline.MatchKind
}

type tableLayout struct {
	name   string
	id     uint32
	fields []fieldLayout // schema key order
	byID   map[uint32]int
}

type paramLayout struct {
	name  string
	id    uint32
	width int
}

type actionLayout struct {
	name   string
	id     uint32
	params []paramLayout // schema order
}

// NewTranslator resolves every table, match field, action and parameter of
// the p4ctl program (pipeline.Schema) in idx. It fails when the P4Info lacks
// one of them or declares a different match kind or width.
func NewTranslator(idx *p4rt.Index) (*Translator, error) {
	tr := &Translator{idx: idx, tables: map[string]*tableLayout{}, byID: map[uint32]*tableLayout{},
		actions: map[string]*actionLayout{}, actByID: map[uint32]*actionLayout{}}
	prog := pipeline.Schema()
	for _, t := range prog.Tables {
		pt, err := idx.Table(t.Name)
		if err != nil {
			return nil, fmt.Errorf("translator: %w", err)
		}
		tl := &tableLayout{name: t.Name, id: pt.GetPreamble().GetId(), byID: map[uint32]int{}}
		for i, k := range t.Keys {
			f, err := idx.MatchField(pt, k.Name)
			if err != nil {
				return nil, fmt.Errorf("translator: %w", err)
			}
			if int(f.GetBitwidth()) != k.Width || matchKind(f.GetMatchType()) != k.Kind {
				return nil, fmt.Errorf("translator: %s.%s is %s bit<%d> in the P4Info, the program declares %s bit<%d>",
					t.Name, k.Name, matchKind(f.GetMatchType()), f.GetBitwidth(), k.Kind, k.Width)
			}
			tl.fields = append(tl.fields, fieldLayout{name: k.Name, id: f.GetId(), width: k.Width, kind: k.Kind})
			tl.byID[f.GetId()] = i
		}
		tr.tables[t.Name] = tl
		tr.byID[tl.id] = tl
	}
	for _, a := range prog.Actions {
		pa, err := idx.Action(a.Name)
		if err != nil {
			return nil, fmt.Errorf("translator: %w", err)
		}
		al := &actionLayout{name: a.Name, id: pa.GetPreamble().GetId()}
		for _, p := range a.Params {
			pp, err := idx.Param(pa, p.Name)
			if err != nil {
				return nil, fmt.Errorf("translator: %w", err)
			}
			if int(pp.GetBitwidth()) != p.Width {
				return nil, fmt.Errorf("translator: %s(%s) is bit<%d> in the P4Info, the program declares bit<%d>", a.Name, p.Name, pp.GetBitwidth(), p.Width)
			}
			al.params = append(al.params, paramLayout{name: p.Name, id: pp.GetId(), width: p.Width})
		}
		tr.actions[a.Name] = al
		tr.actByID[al.id] = al
	}
	return tr, nil
}

// Index returns the P4Info index the translator was built from.
func (tr *Translator) Index() *p4rt.Index { return tr.idx }

func matchKind(t p4configv1.MatchField_MatchType) pipeline.MatchKind {
	switch t {
	case p4configv1.MatchField_EXACT:
		return pipeline.Exact
	case p4configv1.MatchField_LPM:
		return pipeline.LPM
	case p4configv1.MatchField_TERNARY:
		return pipeline.Ternary
	case p4configv1.MatchField_RANGE:
		return pipeline.Range
	case p4configv1.MatchField_OPTIONAL:
		return pipeline.Optional
	}
	return pipeline.MatchKind(strings.ToLower(t.String()))
}

func enc(v uint64, width int) []byte {
	// Values were checked against their width; EncodeUint cannot fail here.
	b, _ := p4rt.EncodeUint(v, width)
	return b
}

func mask(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(width) - 1
}

// TableEntry converts a compiled entry to a P4Runtime table entry.
func (tr *Translator) TableEntry(e *compiler.Entry) (*p4v1.TableEntry, error) {
	tl, ok := tr.tables[e.Table]
	if !ok {
		return nil, fmt.Errorf("%s: unknown table", e.Table)
	}
	te := &p4v1.TableEntry{TableId: tl.id, IsDefaultAction: e.Default, Priority: e.Priority}
	if e.Default && (len(e.Match) > 0 || e.Priority != 0) {
		return nil, fmt.Errorf("%s: default entry with match fields or priority", e.Table)
	}
	for _, m := range e.Match {
		var f *fieldLayout
		for i := range tl.fields {
			if tl.fields[i].name == m.Field {
				f = &tl.fields[i]
				break
			}
		}
		if f == nil {
			return nil, fmt.Errorf("%s: no match field %s", e.Table, m.Field)
		}
		if m.Kind != f.kind {
			return nil, fmt.Errorf("%s.%s: %s match on a %s field", e.Table, m.Field, m.Kind, f.kind)
		}
		max := mask(f.width)
		if m.Value > max || m.Mask > max || m.High > max || m.PrefixLen < 0 || m.PrefixLen > f.width {
			return nil, fmt.Errorf("%s.%s: value does not fit in %d bits", e.Table, m.Field, f.width)
		}
		var fm *p4v1.FieldMatch
		switch f.kind {
		case pipeline.Exact:
			fm = &p4v1.FieldMatch{FieldId: f.id, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: enc(m.Value, f.width)}}}
		case pipeline.LPM:
			if m.PrefixLen == 0 {
				continue
			}
			v := m.Value &^ (max >> uint(m.PrefixLen))
			fm = &p4v1.FieldMatch{FieldId: f.id, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: enc(v, f.width), PrefixLen: int32(m.PrefixLen)}}}
		case pipeline.Ternary:
			if m.Mask == 0 {
				continue
			}
			fm = &p4v1.FieldMatch{FieldId: f.id, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{
				Value: enc(m.Value&m.Mask, f.width), Mask: enc(m.Mask, f.width)}}}
		case pipeline.Range:
			if m.Value > m.High {
				return nil, fmt.Errorf("%s.%s: empty range %d..%d", e.Table, m.Field, m.Value, m.High)
			}
			if m.Value == 0 && m.High == max {
				continue
			}
			fm = &p4v1.FieldMatch{FieldId: f.id, FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{
				Low: enc(m.Value, f.width), High: enc(m.High, f.width)}}}
		case pipeline.Optional:
			fm = &p4v1.FieldMatch{FieldId: f.id, FieldMatchType: &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: enc(m.Value, f.width)}}}
		default:
			return nil, fmt.Errorf("%s.%s: unsupported match kind %s", e.Table, m.Field, f.kind)
		}
		te.Match = append(te.Match, fm)
	}
	al, ok := tr.actions[e.Action]
	if !ok {
		return nil, fmt.Errorf("%s: unknown action %s", e.Table, e.Action)
	}
	act := &p4v1.Action{ActionId: al.id}
	if len(e.Params) != len(al.params) {
		return nil, fmt.Errorf("%s: action %s takes %d parameters, got %d", e.Table, e.Action, len(al.params), len(e.Params))
	}
	for _, p := range al.params {
		v, ok := e.Param(p.name)
		if !ok {
			return nil, fmt.Errorf("%s: action %s: parameter %s missing", e.Table, e.Action, p.name)
		}
		if v > mask(p.width) {
			return nil, fmt.Errorf("%s: action %s: parameter %s = %d does not fit in %d bits", e.Table, e.Action, p.name, v, p.width)
		}
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: p.id, Value: enc(v, p.width)})
	}
	te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return te, nil
}

// Updates converts compiler updates to P4Runtime updates, in order.
func (tr *Translator) Updates(us []compiler.Update) ([]*p4v1.Update, error) {
	out := make([]*p4v1.Update, len(us))
	for i := range us {
		te, err := tr.TableEntry(&us[i].Entry)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", us[i].Op, us[i].Entry.String(), err)
		}
		out[i] = &p4v1.Update{Type: updateType(us[i].Op), Entity: p4rt.TableEntity(te)}
	}
	return out, nil
}

func updateType(op compiler.Op) p4v1.Update_Type {
	switch op {
	case compiler.Insert:
		return p4v1.Update_INSERT
	case compiler.Modify:
		return p4v1.Update_MODIFY
	case compiler.Delete:
		return p4v1.Update_DELETE
	}
	return p4v1.Update_UNSPECIFIED
}

// Entry converts an entry read back from a switch to the compiler's form
// (compiler.Normalize: don't-care fields explicit, key order), so that it
// diffs against compiled states by key.
func (tr *Translator) Entry(te *p4v1.TableEntry) (compiler.Entry, error) {
	tl, ok := tr.byID[te.GetTableId()]
	if !ok {
		return compiler.Entry{}, fmt.Errorf("table id 0x%08x is not a table of the p4ctl program", te.GetTableId())
	}
	e := compiler.Entry{Table: tl.name, Default: te.GetIsDefaultAction(), Priority: te.GetPriority()}
	for _, fm := range te.GetMatch() {
		i, ok := tl.byID[fm.GetFieldId()]
		if !ok {
			return compiler.Entry{}, fmt.Errorf("%s: match field id %d is not in the P4Info", tl.name, fm.GetFieldId())
		}
		f := tl.fields[i]
		m := compiler.Match{Field: f.name, Kind: f.kind}
		var err error
		var kind pipeline.MatchKind
		switch v := fm.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			kind = pipeline.Exact
			m.Value, err = p4rt.DecodeUint(v.Exact.GetValue())
		case *p4v1.FieldMatch_Lpm:
			kind = pipeline.LPM
			m.Value, err = p4rt.DecodeUint(v.Lpm.GetValue())
			m.PrefixLen = int(v.Lpm.GetPrefixLen())
		case *p4v1.FieldMatch_Ternary_:
			kind = pipeline.Ternary
			m.Value, err = p4rt.DecodeUint(v.Ternary.GetValue())
			if err == nil {
				m.Mask, err = p4rt.DecodeUint(v.Ternary.GetMask())
			}
		case *p4v1.FieldMatch_Range_:
			kind = pipeline.Range
			m.Value, err = p4rt.DecodeUint(v.Range.GetLow())
			if err == nil {
				m.High, err = p4rt.DecodeUint(v.Range.GetHigh())
			}
		case *p4v1.FieldMatch_Optional_:
			kind = pipeline.Optional
			m.Value, err = p4rt.DecodeUint(v.Optional.GetValue())
		default:
			err = fmt.Errorf("unsupported match type %T", v)
		}
		switch {
		case err != nil:
		case kind != f.kind:
			err = fmt.Errorf("%s match on a %s field", kind, f.kind)
		case kind == pipeline.Range && m.Value > m.High:
			err = fmt.Errorf("empty range %d..%d", m.Value, m.High)
		case kind == pipeline.LPM && (m.PrefixLen < 0 || m.PrefixLen > f.width || m.Value&(mask(f.width)>>uint(m.PrefixLen)) != 0):
			err = fmt.Errorf("LPM value %#x/%d has bits set beyond the prefix (or a bad length)", m.Value, m.PrefixLen)
		}
		if err != nil {
			return compiler.Entry{}, fmt.Errorf("%s.%s: %w", tl.name, f.name, err)
		}
		e.Match = append(e.Match, m)
	}
	a := te.GetAction().GetAction()
	if a == nil {
		return compiler.Entry{}, fmt.Errorf("%s: entry without a direct action", tl.name)
	}
	al, ok := tr.actByID[a.GetActionId()]
	if !ok {
		return compiler.Entry{}, fmt.Errorf("%s: action id 0x%08x is not an action of the p4ctl program", tl.name, a.GetActionId())
	}
	e.Action = al.name
	for _, p := range a.GetParams() {
		var pl *paramLayout
		for i := range al.params {
			if al.params[i].id == p.GetParamId() {
				pl = &al.params[i]
			}
		}
		if pl == nil {
			return compiler.Entry{}, fmt.Errorf("%s: parameter id %d is not in the P4Info", al.name, p.GetParamId())
		}
		v, err := p4rt.DecodeUint(p.GetValue())
		if err != nil {
			return compiler.Entry{}, fmt.Errorf("%s(%s): %w", al.name, pl.name, err)
		}
		e.Params = append(e.Params, compiler.Param{Name: pl.name, Value: v})
	}
	return compiler.Normalize(e)
}
