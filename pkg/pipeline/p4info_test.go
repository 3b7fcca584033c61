package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
)

// Committed p4c outputs for p4src/v1model (written by `make p4`).
var (
	p4infoPath = filepath.Join("..", "..", "p4src", "build", "v1model", "p4ctl.p4info.txtpb")
	bmv2Path   = filepath.Join("..", "..", "p4src", "build", "v1model", "p4ctl.json")
)

// loadP4Info reads the committed P4Info, skipping the test when it is absent.
func loadP4Info(t *testing.T) *p4configv1.P4Info {
	t.Helper()
	b, err := os.ReadFile(p4infoPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("skip: %s absent (run `make p4` with p4c-bm2-ss on PATH)", p4infoPath)
	}
	if err != nil {
		t.Fatalf("read P4Info: %v", err)
	}
	var info p4configv1.P4Info
	if err := prototext.Unmarshal(b, &info); err != nil {
		t.Fatalf("parse %s: %v", p4infoPath, err)
	}
	return &info
}

var matchKinds = map[p4configv1.MatchField_MatchType]MatchKind{
	p4configv1.MatchField_EXACT:    Exact,
	p4configv1.MatchField_LPM:      LPM,
	p4configv1.MatchField_TERNARY:  Ternary,
	p4configv1.MatchField_RANGE:    Range,
	p4configv1.MatchField_OPTIONAL: Optional,
}

var counterUnits = map[p4configv1.CounterSpec_Unit]CounterUnit{
	p4configv1.CounterSpec_PACKETS: Packets,
	p4configv1.CounterSpec_BYTES:   Bytes,
	p4configv1.CounterSpec_BOTH:    Both,
}

// programFromP4Info converts p4c's P4Info into the contract's terms, so
// the two can be compared with one equality. Initial default actions are in
// P4Info only from p4runtime 1.4 on (initial_default_action); the BMv2 JSON
// test below checks them independently.
func programFromP4Info(t *testing.T, info *p4configv1.P4Info) Program {
	t.Helper()
	var p Program
	actionName := map[uint32]string{}
	for _, a := range info.GetActions() {
		actionName[a.GetPreamble().GetId()] = a.GetPreamble().GetName()
		act := Action{Name: a.GetPreamble().GetName()}
		for _, prm := range a.GetParams() {
			act.Params = append(act.Params, Param{Name: prm.GetName(), Width: int(prm.GetBitwidth())})
		}
		p.Actions = append(p.Actions, act)
	}
	for _, tb := range info.GetTables() {
		tab := Table{Name: tb.GetPreamble().GetName(), Size: int(tb.GetSize())}
		for _, mf := range tb.GetMatchFields() {
			kind, ok := matchKinds[mf.GetMatchType()]
			if !ok {
				t.Errorf("table %s field %s: unexpected match kind %v", tab.Name, mf.GetName(), mf.GetMatch())
			}
			tab.Keys = append(tab.Keys, Field{Name: mf.GetName(), Kind: kind, Width: int(mf.GetBitwidth())})
		}
		for _, ref := range tb.GetActionRefs() {
			tab.Actions = append(tab.Actions, actionName[ref.GetId()])
		}
		if def := tb.GetInitialDefaultAction(); def != nil {
			tab.DefaultAction = actionName[def.GetActionId()]
			for _, arg := range def.GetArguments() {
				var v uint64
				for _, b := range arg.GetValue() {
					v = v<<8 | uint64(b)
				}
				tab.DefaultParams = append(tab.DefaultParams, v)
			}
		}
		if id := tb.GetConstDefaultActionId(); id != 0 {
			tab.ConstDefault = true
			tab.DefaultAction = actionName[id]
		}
		p.Tables = append(p.Tables, tab)
	}
	for _, r := range info.GetRegisters() {
		w := int(r.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())
		if st := r.GetTypeSpec().GetStruct(); st != nil { // TNA: a pair a stateful ALU updates
			for _, m := range info.GetTypeInfo().GetStructs()[st.GetName()].GetMembers() {
				w += int(m.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())
			}
		}
		p.Registers = append(p.Registers, Register{Name: r.GetPreamble().GetName(), Width: w, Size: int(r.GetSize())})
	}
	for _, c := range info.GetCounters() {
		p.Counters = append(p.Counters, Counter{
			Name: c.GetPreamble().GetName(),
			Size: int(c.GetSize()),
			Unit: counterUnits[c.GetSpec().GetUnit()],
		})
	}
	for _, d := range info.GetDigests() {
		dg := Digest{Name: d.GetPreamble().GetName()}
		st, ok := info.GetTypeInfo().GetStructs()[d.GetTypeSpec().GetStruct().GetName()]
		if !ok {
			t.Errorf("digest %s: data type %v is not a struct of type_info", dg.Name, d.GetTypeSpec())
		}
		for _, m := range st.GetMembers() {
			dg.Members = append(dg.Members, Param{Name: m.GetName(), Width: int(m.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())})
		}
		p.Digests = append(p.Digests, dg)
	}
	return p
}

// normalize orders everything by name so declaration order in the P4
// source does not matter (parameter and key order do matter and are kept),
// and drops what P4Info cannot tell (non-const defaults).
func normalize(p Program, keepDefaults bool) Program {
	q := Program{
		Actions:   append([]Action(nil), p.Actions...),
		Registers: append([]Register(nil), p.Registers...),
		Counters:  append([]Counter(nil), p.Counters...),
		Digests:   append([]Digest(nil), p.Digests...),
	}
	for _, tb := range p.Tables {
		tb.Actions = append([]string(nil), tb.Actions...)
		sort.Strings(tb.Actions)
		if !keepDefaults && !tb.ConstDefault {
			tb.DefaultAction, tb.DefaultParams = "", nil
		}
		q.Tables = append(q.Tables, tb)
	}
	sort.Slice(q.Actions, func(i, j int) bool { return q.Actions[i].Name < q.Actions[j].Name })
	sort.Slice(q.Tables, func(i, j int) bool { return q.Tables[i].Name < q.Tables[j].Name })
	sort.Slice(q.Registers, func(i, j int) bool { return q.Registers[i].Name < q.Registers[j].Name })
	sort.Slice(q.Counters, func(i, j int) bool { return q.Counters[i].Name < q.Counters[j].Name })
	sort.Slice(q.Digests, func(i, j int) bool { return q.Digests[i].Name < q.Digests[j].Name })
	return q
}

// TestSchemaMatchesP4Info: pkg/pipeline's Schema and p4c's P4Info for
// p4src/v1model declare exactly the same tables (keys with names, match
// kinds and widths; actions; sizes), actions (parameter names and widths),
// registers (cell width, size), counters (size, unit) and digests (struct
// members and widths).
func TestSchemaMatchesP4Info(t *testing.T) {
	info := loadP4Info(t)
	withDefaults := true
	for _, tb := range info.GetTables() {
		withDefaults = withDefaults && tb.GetInitialDefaultAction() != nil
	}
	got := normalize(programFromP4Info(t, info), withDefaults)
	want := normalize(Schema(), withDefaults)
	for _, d := range diffPrograms("P4Info", got, want) {
		t.Error(d)
	}

	for _, kind := range []struct {
		name string
		n    int
	}{
		{"direct counters", len(info.GetDirectCounters())},
		{"meters", len(info.GetMeters())},
		{"direct meters", len(info.GetDirectMeters())},
		{"action profiles", len(info.GetActionProfiles())},
		{"value sets", len(info.GetValueSets())},
	} {
		if kind.n != 0 {
			t.Errorf("P4Info has %d %s; the contract has none", kind.n, kind.name)
		}
	}
}

// diffPrograms lists every difference between got (from p4c) and want
// (the contract), item by item, so a failure says what to fix.
func diffPrograms(src string, got, want Program) []string {
	var diffs []string
	str := func(v any) string { return fmt.Sprintf("%+v", v) }
	compare := func(kind string, g, w map[string]string) {
		for n, wi := range w {
			gi, ok := g[n]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s lacks %s %s (contract: %s)", src, kind, n, wi))
			case gi != wi:
				diffs = append(diffs, fmt.Sprintf("%s %s %s differs:\n  p4c:      %s\n  contract: %s", src, kind, n, gi, wi))
			}
		}
		for n, gi := range g {
			if _, ok := w[n]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s has %s %s not in the contract: %s", src, kind, n, gi))
			}
		}
	}
	byName := func(p Program) (acts, tabs, regs, ctrs, digs map[string]string) {
		acts, tabs, regs, ctrs, digs = map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
		put := func(kind string, m map[string]string, name string, v any) {
			if _, dup := m[name]; dup {
				diffs = append(diffs, fmt.Sprintf("%s: %s %s declared twice", src, kind, name))
			}
			m[name] = str(v)
		}
		for _, a := range p.Actions {
			put("action", acts, a.Name, a)
		}
		for _, tb := range p.Tables {
			put("table", tabs, tb.Name, tb)
		}
		for _, r := range p.Registers {
			put("register", regs, r.Name, r)
		}
		for _, c := range p.Counters {
			put("counter", ctrs, c.Name, c)
		}
		for _, d := range p.Digests {
			put("digest", digs, d.Name, d)
		}
		return
	}
	ga, gt, gr, gc, gd := byName(got)
	wa, wt, wr, wc, wd := byName(want)
	compare("action", ga, wa)
	compare("table", gt, wt)
	compare("register", gr, wr)
	compare("counter", gc, wc)
	compare("digest", gd, wd)
	sort.Strings(diffs)
	return diffs
}

// The comparison itself must catch each kind of drift, or the P4Info test
// could pass against a program that disagrees with the contract.
func TestDiffProgramsDetectsDrift(t *testing.T) {
	base := normalize(Schema(), false)
	if d := diffPrograms("same", base, normalize(Schema(), false)); len(d) != 0 {
		t.Fatalf("identical programs differ: %v", d)
	}
	cases := []struct {
		name   string
		mutate func(p *Program)
	}{
		{"key width", func(p *Program) { p.Tables[0].Keys[0].Width++ }},
		{"key kind", func(p *Program) { p.Tables[0].Keys[0].Kind = Exact }},
		{"key name", func(p *Program) { p.Tables[0].Keys[0].Name += "x" }},
		{"table size", func(p *Program) { p.Tables[1].Size *= 2 }},
		{"table action", func(p *Program) { p.Tables[1].Actions = p.Tables[1].Actions[1:] }},
		{"missing table", func(p *Program) { p.Tables = p.Tables[1:] }},
		{"param width", func(p *Program) { p.Actions[1].Params[0].Width-- }},
		{"param order", func(p *Program) {
			a := &p.Actions[len(p.Actions)-1]
			for i := range p.Actions {
				if len(p.Actions[i].Params) > 1 {
					a = &p.Actions[i]
					break
				}
			}
			a.Params[0], a.Params[1] = a.Params[1], a.Params[0]
		}},
		{"extra action", func(p *Program) { p.Actions = append(p.Actions, Action{Name: "X.y"}) }},
		{"register width", func(p *Program) { p.Registers[0].Width = 32 }},
		{"register size", func(p *Program) { p.Registers[1].Size = 7 }},
		{"counter unit", func(p *Program) { p.Counters[0].Unit = Packets }},
		{"counter size", func(p *Program) { p.Counters[0].Size = 1 }},
		{"digest member width", func(p *Program) { p.Digests[0].Members[3].Width = 16 }},
		{"digest member order", func(p *Program) {
			m := p.Digests[0].Members
			m[0], m[1] = m[1], m[0]
		}},
		{"missing digest", func(p *Program) { p.Digests = nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Schema()
			c.mutate(&p)
			if d := diffPrograms("mutated", normalize(p, false), base); len(d) == 0 {
				t.Errorf("mutation %q not detected", c.name)
			}
		})
	}
}

// bmv2JSON is the part of p4c's BMv2 JSON that holds initial default actions.
type bmv2JSON struct {
	Actions []struct {
		Name string `json:"name"`
		ID   int    `json:"id"`
	} `json:"actions"`
	Pipelines []struct {
		Name   string `json:"name"`
		Tables []struct {
			Name         string `json:"name"`
			DefaultEntry struct {
				ActionID    int      `json:"action_id"`
				ActionConst bool     `json:"action_const"`
				ActionData  []string `json:"action_data"`
			} `json:"default_entry"`
		} `json:"tables"`
	} `json:"pipelines"`
}

// TestDefaultActionsMatchBMv2JSON: each contract table's initial default
// action and its arguments are what the compiled program installs (P4Info
// carries only const defaults; the BMv2 JSON carries all of them).
func TestDefaultActionsMatchBMv2JSON(t *testing.T) {
	b, err := os.ReadFile(bmv2Path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("skip: %s absent (run `make p4` with p4c-bm2-ss on PATH)", bmv2Path)
	}
	if err != nil {
		t.Fatalf("read BMv2 JSON: %v", err)
	}
	var doc bmv2JSON
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", bmv2Path, err)
	}
	actionName := map[int]string{}
	for _, a := range doc.Actions {
		actionName[a.ID] = a.Name
	}
	type entry struct {
		action string
		params []uint64
		isCons bool
	}
	defaults := map[string]entry{}
	for _, pl := range doc.Pipelines {
		for _, tb := range pl.Tables {
			e := entry{action: actionName[tb.DefaultEntry.ActionID], isCons: tb.DefaultEntry.ActionConst}
			for _, d := range tb.DefaultEntry.ActionData {
				v, err := strconv.ParseUint(strings.TrimPrefix(d, "0x"), 16, 64)
				if err != nil {
					t.Fatalf("table %s default data %q: %v", tb.Name, d, err)
				}
				e.params = append(e.params, v)
			}
			defaults[tb.Name] = e
		}
	}
	for _, tb := range Schema().Tables {
		e, ok := defaults[tb.Name]
		if !ok {
			t.Errorf("BMv2 JSON lacks table %s", tb.Name)
			continue
		}
		if e.action != tb.DefaultAction || fmt.Sprint(e.params) != fmt.Sprint(tb.DefaultParams) {
			t.Errorf("table %s default: compiled %s%v, contract %s%v", tb.Name, e.action, e.params, tb.DefaultAction, tb.DefaultParams)
		}
		if e.isCons != tb.ConstDefault {
			t.Errorf("table %s default const: compiled %v, contract %v", tb.Name, e.isCons, tb.ConstDefault)
		}
	}
}

// tnaP4InfoPath is bf-p4c's P4Info of p4src/tna (`make p4-tna`).
var tnaP4InfoPath = filepath.Join("..", "..", "p4src", "build", "tna", "p4ctl.p4info.txtpb")

// TestTNAP4InfoMatchesV1Model: the P4Info bf-p4c derives from p4src/tna
// (committed by `make p4-tna` with --p4runtime-force-std-externs) has
// exactly the contract's tables (keys, match kinds, widths, actions,
// sizes), actions (parameters), registers (TNA's pairs: the members'
// widths summed), counters and digests for TNA (SchemaFor(TNA)), plus
// pipeline.TNAOnly's constant tables, so one controller fills both
// programs with the same entries.
func TestTNAP4InfoMatchesV1Model(t *testing.T) {
	b, err := os.ReadFile(tnaP4InfoPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("skip: %s absent (run `make p4-tna` with p4c-barefoot on PATH)", tnaP4InfoPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	var info p4configv1.P4Info
	if err := prototext.Unmarshal(b, &info); err != nil {
		t.Fatalf("parse %s: %v", tnaP4InfoPath, err)
	}
	tnaOnly := TNAOnly()
	want := normalize(SchemaFor(TNA), false)
	got := normalize(programFromP4Info(t, &info), false)
	seen := map[string]bool{}
	tables := got.Tables[:0:0]
	for _, tb := range got.Tables {
		seen[tb.Name] = true
		if !tnaOnly[tb.Name] {
			tables = append(tables, tb)
		}
	}
	actions := got.Actions[:0:0]
	for _, a := range got.Actions {
		seen[a.Name] = true
		if !tnaOnly[a.Name] {
			actions = append(actions, a)
		}
	}
	for name := range tnaOnly {
		if !seen[name] {
			t.Errorf("%s: TNA's %s is missing", tnaP4InfoPath, name)
		}
	}
	got.Tables, got.Actions = tables, actions
	for _, d := range diffPrograms("TNA P4Info", got, want) {
		t.Error(d)
	}
}
