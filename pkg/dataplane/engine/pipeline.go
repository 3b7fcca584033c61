package engine

import (
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Pipeline is one installed P4Info compiled into lookup structures, with its
// state (entries, counters, registers). It is replaced as a whole by
// SetPipeline. Its methods that look up by name are meant to be called once
// (when the pipeline is installed) to obtain typed handles for the packet path.
type Pipeline struct {
	info   *p4configv1.P4Info
	config *p4v1.ForwardingPipelineConfig
	strict bool

	tables        []*Table
	tablesByID    map[uint32]*Table
	tablesByName  map[string]*Table
	actions       map[uint32]*actionInfo
	actionsByName map[string]*actionInfo
	counters      []*Counter
	countersByID  map[uint32]*Counter
	counterByName map[string]*Counter
	registers     []*Register
	registersByID map[uint32]*Register
	registerNames map[string]*Register
	directByID    map[uint32]*Table // direct counter id -> its table
	digests       []*Digest
	digestsByID   map[uint32]*Digest
	digestNames   map[string]*Digest

	admit   func(*Table, *Entry) error // Options.Admit
	pending *Changes                   // the batch being applied by Write (under the write lock)
	carried bool                       // installed by RECONCILE_AND_COMMIT over a running pipeline
}

type actionInfo struct {
	id       uint32
	name     string
	params   []paramInfo
	paramIdx map[uint32]int
}

type paramInfo struct {
	id    uint32
	name  string
	width int
}

type fieldKind uint8

const (
	kindExact fieldKind = iota
	kindLPM
	kindTernary
	kindRange
	kindOptional
)

func (k fieldKind) String() string {
	return [...]string{"exact", "lpm", "ternary", "range", "optional"}[k]
}

type fieldInfo struct {
	id    uint32
	name  string
	width int
	kind  fieldKind
	max   uint64
}

// P4Info returns the P4Info the pipeline was built from (read-only).
func (p *Pipeline) P4Info() *p4configv1.P4Info { return p.info }

// Table returns the named table (fully-qualified P4Info name).
func (p *Pipeline) Table(name string) (*Table, error) {
	if t, ok := p.tablesByName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("pipeline has no table %q", name)
}

// Counter returns the named indirect counter.
func (p *Pipeline) Counter(name string) (*Counter, error) {
	if c, ok := p.counterByName[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("pipeline has no counter %q", name)
}

// Register returns the named register array.
func (p *Pipeline) Register(name string) (*Register, error) {
	if r, ok := p.registerNames[name]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("pipeline has no register %q", name)
}

// ActionID returns the id of the named action.
func (p *Pipeline) ActionID(name string) (uint32, error) {
	if a, ok := p.actionsByName[name]; ok {
		return a.id, nil
	}
	return 0, fmt.Errorf("pipeline has no action %q", name)
}

// ParamIndex returns the position of the named parameter in
// ActionCall.Params of the named action.
func (p *Pipeline) ParamIndex(action, param string) (int, error) {
	a, ok := p.actionsByName[action]
	if !ok {
		return 0, fmt.Errorf("pipeline has no action %q", action)
	}
	for i, prm := range a.params {
		if prm.name == param {
			return i, nil
		}
	}
	return 0, fmt.Errorf("action %q has no parameter %q", action, param)
}

func invalid(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

func kindOf(mf *p4configv1.MatchField) (fieldKind, error) {
	switch mf.GetMatchType() {
	case p4configv1.MatchField_EXACT:
		return kindExact, nil
	case p4configv1.MatchField_LPM:
		return kindLPM, nil
	case p4configv1.MatchField_TERNARY:
		return kindTernary, nil
	case p4configv1.MatchField_RANGE:
		return kindRange, nil
	case p4configv1.MatchField_OPTIONAL:
		return kindOptional, nil
	}
	if o := mf.GetOtherMatchType(); o != "" {
		return 0, fmt.Errorf("match type %q is not supported", o)
	}
	return 0, fmt.Errorf("match type unspecified")
}

func checkWidth(what string, w int32) error {
	if w <= 0 || w > MaxWidth {
		return fmt.Errorf("%s is %d bits; the embedded engine supports 1..%d", what, w, MaxWidth)
	}
	return nil
}

// compile builds a Pipeline from a P4Info. Errors are INVALID_ARGUMENT.
func compile(cfg *p4v1.ForwardingPipelineConfig, strict bool, defaults DefaultsFunc) (*Pipeline, error) {
	info := cfg.GetP4Info()
	if info == nil {
		return nil, invalid("pipeline config has no p4info")
	}
	p := &Pipeline{
		info: info, config: cfg, strict: strict,
		tablesByID: map[uint32]*Table{}, tablesByName: map[string]*Table{},
		actions: map[uint32]*actionInfo{}, actionsByName: map[string]*actionInfo{},
		countersByID: map[uint32]*Counter{}, counterByName: map[string]*Counter{},
		registersByID: map[uint32]*Register{}, registerNames: map[string]*Register{},
		directByID: map[uint32]*Table{},
	}
	ids := map[uint32]string{}
	claim := func(id uint32, name string) error {
		if id == 0 {
			return invalid("p4info: %s has id 0", name)
		}
		if prev, dup := ids[id]; dup {
			return invalid("p4info: id %d used by both %s and %s", id, prev, name)
		}
		ids[id] = name
		return nil
	}
	for _, a := range info.GetActions() {
		name := a.GetPreamble().GetName()
		if err := claim(a.GetPreamble().GetId(), "action "+name); err != nil {
			return nil, err
		}
		ai := &actionInfo{id: a.GetPreamble().GetId(), name: name, paramIdx: map[uint32]int{}}
		for _, prm := range a.GetParams() {
			if err := checkWidth(fmt.Sprintf("action %s param %s", name, prm.GetName()), prm.GetBitwidth()); err != nil {
				return nil, invalid("p4info: %v", err)
			}
			if _, dup := ai.paramIdx[prm.GetId()]; dup {
				return nil, invalid("p4info: action %s: duplicate param id %d", name, prm.GetId())
			}
			ai.paramIdx[prm.GetId()] = len(ai.params)
			ai.params = append(ai.params, paramInfo{id: prm.GetId(), name: prm.GetName(), width: int(prm.GetBitwidth())})
		}
		p.actions[ai.id] = ai
		p.actionsByName[name] = ai
	}
	for _, c := range info.GetCounters() {
		name := c.GetPreamble().GetName()
		if err := claim(c.GetPreamble().GetId(), "counter "+name); err != nil {
			return nil, err
		}
		if c.GetSize() <= 0 || c.GetSize() > 1<<24 {
			return nil, invalid("p4info: counter %s size %d", name, c.GetSize())
		}
		ctr := &Counter{ID: c.GetPreamble().GetId(), Name: name, Size: int(c.GetSize()), Unit: c.GetSpec().GetUnit(),
			cells: make([]uint64, 2*c.GetSize())}
		p.counters = append(p.counters, ctr)
		p.countersByID[ctr.ID] = ctr
		p.counterByName[name] = ctr
	}
	for _, r := range info.GetRegisters() {
		name := r.GetPreamble().GetName()
		if err := claim(r.GetPreamble().GetId(), "register "+name); err != nil {
			return nil, err
		}
		bs := r.GetTypeSpec().GetBitstring()
		var w int32
		switch {
		case bs.GetBit() != nil:
			w = bs.GetBit().GetBitwidth()
		default:
			return nil, invalid("p4info: register %s: only bit<W> cells are supported", name)
		}
		if err := checkWidth("register "+name+" cell", w); err != nil {
			return nil, invalid("p4info: %v", err)
		}
		if r.GetSize() <= 0 || r.GetSize() > 1<<24 {
			return nil, invalid("p4info: register %s size %d", name, r.GetSize())
		}
		reg := &Register{ID: r.GetPreamble().GetId(), Name: name, Width: int(w), Size: int(r.GetSize()),
			mask: mask(int(w)), cells: make([]uint64, r.GetSize())}
		p.registers = append(p.registers, reg)
		p.registersByID[reg.ID] = reg
		p.registerNames[name] = reg
	}
	p.digestsByID, p.digestNames = map[uint32]*Digest{}, map[string]*Digest{}
	for _, d := range info.GetDigests() {
		name := d.GetPreamble().GetName()
		if err := claim(d.GetPreamble().GetId(), "digest "+name); err != nil {
			return nil, err
		}
		dg := &Digest{ID: d.GetPreamble().GetId(), Name: name}
		p.digests = append(p.digests, dg)
		p.digestsByID[dg.ID] = dg
		p.digestNames[name] = dg
	}
	directUnits := map[uint32]p4configv1.CounterSpec_Unit{}
	for _, dc := range info.GetDirectCounters() {
		name := dc.GetPreamble().GetName()
		if err := claim(dc.GetPreamble().GetId(), "direct counter "+name); err != nil {
			return nil, err
		}
		directUnits[dc.GetPreamble().GetId()] = dc.GetSpec().GetUnit()
	}
	for _, tb := range info.GetTables() {
		t, err := compileTable(p, tb, directUnits, defaults)
		if err != nil {
			return nil, err
		}
		if err := claim(t.ID, "table "+t.Name); err != nil {
			return nil, err
		}
		p.tables = append(p.tables, t)
		p.tablesByID[t.ID] = t
		p.tablesByName[t.Name] = t
		if t.directID != 0 {
			p.directByID[t.directID] = t
		}
	}
	for _, dc := range info.GetDirectCounters() {
		id := dc.GetPreamble().GetId()
		t, ok := p.tablesByID[dc.GetDirectTableId()]
		if !ok || t.directID != id {
			return nil, invalid("p4info: direct counter %s: table %d does not list it", dc.GetPreamble().GetName(), dc.GetDirectTableId())
		}
	}
	// Objects kinds the engine does not implement are tolerated in the
	// P4Info (writes to them return UNIMPLEMENTED), but keep ids unique.
	for _, m := range info.GetMeters() {
		if err := claim(m.GetPreamble().GetId(), "meter "+m.GetPreamble().GetName()); err != nil {
			return nil, err
		}
	}
	for _, ap := range info.GetActionProfiles() {
		if err := claim(ap.GetPreamble().GetId(), "action profile "+ap.GetPreamble().GetName()); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// DefaultsFunc supplies a table's initial default action by name when the
// P4Info carries none (older p4c, hand-written P4Info). ok=false means none.
type DefaultsFunc func(table string) (action string, params []uint64, ok bool)

func compileTable(p *Pipeline, tb *p4configv1.Table, directUnits map[uint32]p4configv1.CounterSpec_Unit, defaults DefaultsFunc) (*Table, error) {
	name := tb.GetPreamble().GetName()
	t := &Table{
		ID: tb.GetPreamble().GetId(), Name: name, Size: int(tb.GetSize()),
		fieldIdx: map[uint32]int{}, refs: map[uint32]p4configv1.ActionRef_Scope{}, actions: p.actions,
		entries:      map[string]*Entry{},
		idleTimeouts: tb.GetIdleTimeoutBehavior() == p4configv1.Table_NOTIFY_CONTROL,
		constTable:   tb.GetIsConstTable(),
		indirect:     tb.GetImplementationId() != 0,
		strict:       p.strict,
	}
	for _, mf := range tb.GetMatchFields() {
		k, err := kindOf(mf)
		if err != nil {
			return nil, invalid("p4info: table %s field %s: %v", name, mf.GetName(), err)
		}
		if err := checkWidth(fmt.Sprintf("table %s field %s", name, mf.GetName()), mf.GetBitwidth()); err != nil {
			return nil, invalid("p4info: %v", err)
		}
		if _, dup := t.fieldIdx[mf.GetId()]; dup || mf.GetId() == 0 {
			return nil, invalid("p4info: table %s: bad or duplicate field id %d", name, mf.GetId())
		}
		t.fieldIdx[mf.GetId()] = len(t.fields)
		t.fields = append(t.fields, fieldInfo{id: mf.GetId(), name: mf.GetName(), width: int(mf.GetBitwidth()), kind: k, max: mask(int(mf.GetBitwidth()))})
	}
	for _, ref := range tb.GetActionRefs() {
		if _, ok := p.actions[ref.GetId()]; !ok {
			return nil, invalid("p4info: table %s references unknown action %d", name, ref.GetId())
		}
		t.refs[ref.GetId()] = ref.GetScope()
	}
	for _, id := range tb.GetDirectResourceIds() {
		if u, ok := directUnits[id]; ok {
			t.directID, t.directUnit = id, u
		}
	}
	t.layout()

	// Initial default action.
	var def ActionCall
	switch {
	case tb.GetInitialDefaultAction() != nil:
		call := tb.GetInitialDefaultAction()
		a, ok := p.actions[call.GetActionId()]
		if !ok {
			return nil, invalid("p4info: table %s: initial default action %d unknown", name, call.GetActionId())
		}
		def = ActionCall{ID: a.id, Params: make([]uint64, len(a.params))}
		for _, arg := range call.GetArguments() {
			i, ok := a.paramIdx[arg.GetParamId()]
			if !ok {
				return nil, invalid("p4info: table %s: default action %s: unknown param %d", name, a.name, arg.GetParamId())
			}
			v, err := decodeBits(arg.GetValue(), a.params[i].width, false)
			if err != nil {
				return nil, invalid("p4info: table %s: default action %s param %s: %v", name, a.name, a.params[i].name, err)
			}
			def.Params[i] = v
		}
	case tb.GetConstDefaultActionId() != 0:
		a, ok := p.actions[tb.GetConstDefaultActionId()]
		if !ok {
			return nil, invalid("p4info: table %s: const default action %d unknown", name, tb.GetConstDefaultActionId())
		}
		def = ActionCall{ID: a.id, Params: make([]uint64, len(a.params))}
	default:
		if defaults != nil {
			if an, params, ok := defaults(name); ok {
				a, ok := p.actionsByName[an]
				if !ok || len(params) != len(a.params) {
					return nil, invalid("p4info: table %s: default action %s(%v) does not match the p4info", name, an, params)
				}
				def = ActionCall{ID: a.id, Params: append([]uint64(nil), params...)}
				break
			}
		}
		if a, ok := p.actionsByName["NoAction"]; ok {
			def = ActionCall{ID: a.id}
		}
	}
	t.constDefault = tb.GetConstDefaultActionId() != 0
	t.initialDefault = def
	t.def = &Entry{Action: cloneCall(def), isDefault: true}
	return t, nil
}

func cloneCall(a ActionCall) ActionCall {
	return ActionCall{ID: a.ID, Params: append([]uint64(nil), a.Params...)}
}
