package controller

import (
	"fmt"
	"maps"
	"math/bits"
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
	// arch is the architecture the P4Info was compiled for: TNA when it
	// carries TNA's constant tables (pipeline.TNAOnly).
	arch pipeline.Arch
	// sizes are the P4Info's table sizes, by schema table name.
	sizes map[string]int
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
		actions: map[string]*actionLayout{}, actByID: map[uint32]*actionLayout{}, sizes: map[string]int{}}
	prog := pipeline.Schema()
	for _, t := range prog.Tables {
		pt, err := idx.Table(t.Name)
		if err != nil {
			return nil, fmt.Errorf("translator: %w", err)
		}
		tl := &tableLayout{name: t.Name, id: pt.GetPreamble().GetId(), byID: map[uint32]int{}}
		tr.sizes[t.Name] = int(pt.GetSize())
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
	tr.arch = pipeline.V1Model
	if _, err := idx.Table(pipeline.TableDispatchSlots); err == nil {
		tr.arch = pipeline.TNA
	}
	return tr, nil
}

// Capacity is what the P4Info's tables hold (their `size`), labelled with
// whose P4Info it is: the switch enforces it, so a state beyond it is
// refused before anything is written (compiler.Capacity.Check).
func (tr *Translator) Capacity(target string) compiler.Capacity {
	return compiler.Capacity{Target: target, Sizes: maps.Clone(tr.sizes)}
}

// Arch returns the architecture of the translator's P4Info.
func (tr *Translator) Arch() pipeline.Arch { return tr.arch }

// supports refuses a set_pool whose policy the P4Info's architecture
// cannot run (pipeline.Arch.Supports), before anything is written.
func (tr *Translator) supports(e *compiler.Entry) error {
	if tr.arch == pipeline.V1Model || e.Action != pipeline.ActionSetPool {
		return nil
	}
	for _, p := range e.Params {
		if p.Name == pipeline.ParamPolicy {
			if err := tr.arch.Supports(pipeline.Policy(p.Value)); err != nil {
				return fmt.Errorf("%s %v: %w", e.Table, e.Match, err)
			}
		}
	}
	return nil
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

// TableEntry converts a compiled entry to a P4Runtime table entry.
func (tr *Translator) TableEntry(e *compiler.Entry) (*p4v1.TableEntry, error) {
	return tr.tableEntry(e, &arena{})
}

// arena hands out protobuf structs and byte strings from chunks, so that
// translating thousands of entries costs a few dozen allocations instead
// of fifteen per entry. Everything it returns lives as long as any of it
// (one batch of updates).
type arena struct {
	buf    []byte
	fm     []p4v1.FieldMatch
	fmPtr  []*p4v1.FieldMatch
	exact  []p4v1.FieldMatch_Exact
	exactW []p4v1.FieldMatch_Exact_
	lpm    []p4v1.FieldMatch_LPM
	lpmW   []p4v1.FieldMatch_Lpm
	tern   []p4v1.FieldMatch_Ternary
	ternW  []p4v1.FieldMatch_Ternary_
	rng    []p4v1.FieldMatch_Range
	rngW   []p4v1.FieldMatch_Range_
	opt    []p4v1.FieldMatch_Optional
	optW   []p4v1.FieldMatch_Optional_
	act    []p4v1.Action
	param  []p4v1.Action_Param
	parPtr []*p4v1.Action_Param
	tact   []p4v1.TableAction
	tactW  []p4v1.TableAction_Action
	te     []p4v1.TableEntry
	upd    []p4v1.Update
	ent    []p4v1.Entity
	entW   []p4v1.Entity_TableEntry
}

const arenaChunk = 128

// take returns a zero T from the chunk *s, refilling it when empty.
func take[T any](s *[]T) *T {
	if len(*s) == 0 {
		*s = make([]T, arenaChunk)
	}
	p := &(*s)[0]
	*s = (*s)[1:]
	return p
}

// ptrs returns a slice of n pointers (length 0, capacity n) from the
// chunk *s.
func ptrs[T any](s *[]*T, n int) []*T {
	if n > arenaChunk {
		return make([]*T, 0, n)
	}
	if len(*s) < n {
		*s = make([]*T, arenaChunk)
	}
	p := (*s)[:0:n]
	*s = (*s)[n:]
	return p
}

// enc returns the canonical bytestring of v (checked against width by
// the caller) from the arena's byte chunk.
func (a *arena) enc(v uint64) []byte {
	n := (bits.Len64(v) + 7) / 8
	if n == 0 {
		n = 1
	}
	if len(a.buf) < n {
		a.buf = make([]byte, 4096)
	}
	b := a.buf[:n:n]
	a.buf = a.buf[n:]
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

func mask(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(width) - 1
}

func (tr *Translator) tableEntry(e *compiler.Entry, a *arena) (*p4v1.TableEntry, error) {
	tl, ok := tr.tables[e.Table]
	if !ok {
		return nil, fmt.Errorf("%s: unknown table", e.Table)
	}
	if err := tr.supports(e); err != nil {
		return nil, err
	}
	te := take(&a.te)
	te.TableId, te.IsDefaultAction, te.Priority = tl.id, e.Default, e.Priority
	if e.Default && (len(e.Match) > 0 || e.Priority != 0) {
		return nil, fmt.Errorf("%s: default entry with match fields or priority", e.Table)
	}
	if len(e.Match) > 0 {
		te.Match = ptrs(&a.fmPtr, len(e.Match))
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
		fm := take(&a.fm)
		fm.FieldId = f.id
		switch f.kind {
		case pipeline.Exact:
			x, w := take(&a.exact), take(&a.exactW)
			x.Value, w.Exact, fm.FieldMatchType = a.enc(m.Value), x, w
		case pipeline.LPM:
			if m.PrefixLen == 0 {
				continue
			}
			x, w := take(&a.lpm), take(&a.lpmW)
			x.Value, x.PrefixLen = a.enc(m.Value&^(max>>uint(m.PrefixLen))), int32(m.PrefixLen)
			w.Lpm, fm.FieldMatchType = x, w
		case pipeline.Ternary:
			if m.Mask == 0 {
				continue
			}
			x, w := take(&a.tern), take(&a.ternW)
			x.Value, x.Mask = a.enc(m.Value&m.Mask), a.enc(m.Mask)
			w.Ternary, fm.FieldMatchType = x, w
		case pipeline.Range:
			if m.Value > m.High {
				return nil, fmt.Errorf("%s.%s: empty range %d..%d", e.Table, m.Field, m.Value, m.High)
			}
			if m.Value == 0 && m.High == max {
				continue
			}
			x, w := take(&a.rng), take(&a.rngW)
			x.Low, x.High = a.enc(m.Value), a.enc(m.High)
			w.Range, fm.FieldMatchType = x, w
		case pipeline.Optional:
			x, w := take(&a.opt), take(&a.optW)
			x.Value, w.Optional, fm.FieldMatchType = a.enc(m.Value), x, w
		default:
			return nil, fmt.Errorf("%s.%s: unsupported match kind %s", e.Table, m.Field, f.kind)
		}
		te.Match = append(te.Match, fm)
	}
	if len(te.Match) == 0 {
		te.Match = nil
	}
	al, ok := tr.actions[e.Action]
	if !ok {
		return nil, fmt.Errorf("%s: unknown action %s", e.Table, e.Action)
	}
	if len(e.Params) != len(al.params) {
		return nil, fmt.Errorf("%s: action %s takes %d parameters, got %d", e.Table, e.Action, len(al.params), len(e.Params))
	}
	act := take(&a.act)
	act.ActionId = al.id
	if len(al.params) > 0 {
		act.Params = ptrs(&a.parPtr, len(al.params))
	}
	for _, p := range al.params {
		v, ok := e.Param(p.name)
		if !ok {
			return nil, fmt.Errorf("%s: action %s: parameter %s missing", e.Table, e.Action, p.name)
		}
		if v > mask(p.width) {
			return nil, fmt.Errorf("%s: action %s: parameter %s = %d does not fit in %d bits", e.Table, e.Action, p.name, v, p.width)
		}
		ap := take(&a.param)
		ap.ParamId, ap.Value = p.id, a.enc(v)
		act.Params = append(act.Params, ap)
	}
	ta, w := take(&a.tact), take(&a.tactW)
	w.Action, ta.Type = act, w
	te.Action = ta
	return te, nil
}

// Updates converts compiler updates to P4Runtime updates, in order.
func (tr *Translator) Updates(us []compiler.Update) ([]*p4v1.Update, error) {
	out := make([]*p4v1.Update, len(us))
	a := &arena{}
	for i := range us {
		te, err := tr.tableEntry(&us[i].Entry, a)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", us[i].Op, us[i].Entry.String(), err)
		}
		u, ent, w := take(&a.upd), take(&a.ent), take(&a.entW)
		w.TableEntry, ent.Entity = te, w
		u.Type, u.Entity = updateType(us[i].Op), ent
		out[i] = u
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
