package engine

import (
	"context"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Ids of the test P4Info.
const (
	tExact   = 0x02000001 // key: a exact 16, b exact 8
	tLPM     = 0x02000002 // key: vrf exact 8, dst lpm 32
	tTern    = 0x02000003 // key: e exact 8, t ternary 32, r range 16, o optional 9
	tKeyless = 0x02000004
	tConst   = 0x02000005 // const default action
	tSmall   = 0x02000006 // size 2, direct counter
	tWide    = 0x02000007 // key: mac exact 48, ip exact 32, port exact 9: 89 bits
	tHuge    = 0x02000008 // key: 3 x exact 48 + lpm 48: beyond 128 bits, scanned

	aNo    = 0x01000001
	aSet   = 0x01000002 // set(v:16, w:48)
	aDrop  = 0x01000003
	aTOnly = 0x01000004 // @tableonly on tTern
	aDOnly = 0x01000005 // @defaultonly on tTern

	cEvents = 0x12000001
	dSmall  = 0x13000001
	rCells  = 0x16000001
)

func mf(id uint32, name string, w int32, k p4configv1.MatchField_MatchType) *p4configv1.MatchField {
	return &p4configv1.MatchField{Id: id, Name: name, Bitwidth: w, Match: &p4configv1.MatchField_MatchType_{MatchType: k}}
}

func pre(id uint32, name string) *p4configv1.Preamble {
	return &p4configv1.Preamble{Id: id, Name: name}
}

func refs(ids ...uint32) []*p4configv1.ActionRef {
	var r []*p4configv1.ActionRef
	for _, id := range ids {
		r = append(r, &p4configv1.ActionRef{Id: id})
	}
	return r
}

func testInfo() *p4configv1.P4Info {
	return &p4configv1.P4Info{
		Actions: []*p4configv1.Action{
			{Preamble: pre(aNo, "NoAction")},
			{Preamble: pre(aSet, "C.set"), Params: []*p4configv1.Action_Param{{Id: 1, Name: "v", Bitwidth: 16}, {Id: 2, Name: "w", Bitwidth: 48}}},
			{Preamble: pre(aDrop, "C.drop")},
			{Preamble: pre(aTOnly, "C.tonly")},
			{Preamble: pre(aDOnly, "C.donly")},
		},
		Tables: []*p4configv1.Table{
			{Preamble: pre(tExact, "C.exact"), Size: 100,
				MatchFields: []*p4configv1.MatchField{mf(1, "a", 16, p4configv1.MatchField_EXACT), mf(2, "b", 8, p4configv1.MatchField_EXACT)},
				ActionRefs:  refs(aSet, aNo)},
			{Preamble: pre(tLPM, "C.lpm"), Size: 100,
				MatchFields: []*p4configv1.MatchField{mf(1, "vrf", 8, p4configv1.MatchField_EXACT), mf(2, "dst", 32, p4configv1.MatchField_LPM)},
				ActionRefs:  refs(aSet, aDrop), InitialDefaultAction: &p4configv1.TableActionCall{ActionId: aDrop}},
			{Preamble: pre(tTern, "C.tern"), Size: 100,
				MatchFields: []*p4configv1.MatchField{mf(1, "e", 8, p4configv1.MatchField_EXACT), mf(2, "t", 32, p4configv1.MatchField_TERNARY),
					mf(3, "r", 16, p4configv1.MatchField_RANGE), mf(4, "o", 9, p4configv1.MatchField_OPTIONAL)},
				ActionRefs: append(refs(aSet, aNo),
					&p4configv1.ActionRef{Id: aTOnly, Scope: p4configv1.ActionRef_TABLE_ONLY},
					&p4configv1.ActionRef{Id: aDOnly, Scope: p4configv1.ActionRef_DEFAULT_ONLY})},
			{Preamble: pre(tKeyless, "C.keyless"), Size: 1, ActionRefs: refs(aSet),
				InitialDefaultAction: &p4configv1.TableActionCall{ActionId: aSet, Arguments: []*p4configv1.TableActionCall_Argument{
					{ParamId: 1, Value: []byte{7}}, {ParamId: 2, Value: []byte{0}}}}},
			{Preamble: pre(tConst, "C.const"), Size: 10, ActionRefs: refs(aSet, aDrop),
				MatchFields:          []*p4configv1.MatchField{mf(1, "a", 16, p4configv1.MatchField_EXACT)},
				ConstDefaultActionId: aDrop, InitialDefaultAction: &p4configv1.TableActionCall{ActionId: aDrop}},
			{Preamble: pre(tSmall, "C.small"), Size: 2, ActionRefs: refs(aSet, aNo), DirectResourceIds: []uint32{dSmall},
				MatchFields: []*p4configv1.MatchField{mf(1, "a", 16, p4configv1.MatchField_EXACT)}},
			{Preamble: pre(tWide, "C.wide"), Size: 10000, ActionRefs: refs(aSet, aNo),
				MatchFields: []*p4configv1.MatchField{mf(1, "mac", 48, p4configv1.MatchField_EXACT), mf(2, "ip", 32, p4configv1.MatchField_EXACT),
					mf(3, "port", 9, p4configv1.MatchField_EXACT)}},
			{Preamble: pre(tHuge, "C.huge"), Size: 10000, ActionRefs: refs(aSet, aNo),
				MatchFields: []*p4configv1.MatchField{mf(1, "a", 48, p4configv1.MatchField_EXACT), mf(2, "b", 48, p4configv1.MatchField_EXACT),
					mf(3, "c", 48, p4configv1.MatchField_EXACT), mf(4, "d", 48, p4configv1.MatchField_LPM)}},
		},
		Counters: []*p4configv1.Counter{{Preamble: pre(cEvents, "C.events"), Spec: &p4configv1.CounterSpec{Unit: p4configv1.CounterSpec_BOTH}, Size: 4}},
		DirectCounters: []*p4configv1.DirectCounter{{Preamble: pre(dSmall, "C.small_hits"),
			Spec: &p4configv1.CounterSpec{Unit: p4configv1.CounterSpec_BOTH}, DirectTableId: tSmall}},
		Registers: []*p4configv1.Register{{Preamble: pre(rCells, "C.cells"), Size: 8,
			TypeSpec: &p4configv1.P4DataTypeSpec{TypeSpec: &p4configv1.P4DataTypeSpec_Bitstring{Bitstring: &p4configv1.P4BitstringLikeTypeSpec{
				TypeSpec: &p4configv1.P4BitstringLikeTypeSpec_Bit{Bit: &p4configv1.P4BitTypeSpec{Bitwidth: 12}}}}}}},
	}
}

func newTestEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	e := New(opts)
	if err := e.SetPipelineInfo(testInfo()); err != nil {
		t.Fatal(err)
	}
	return e
}

// Entry builders.
func exact(id uint32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}}
}
func lpm(id uint32, plen int32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: v, PrefixLen: plen}}}
}
func tern(id uint32, v, m []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: v, Mask: m}}}
}
func rng(id uint32, lo, hi []byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: lo, High: hi}}}
}
func opt(id uint32, v ...byte) *p4v1.FieldMatch {
	return &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: v}}}
}
func act(id uint32, params ...[]byte) *p4v1.TableAction {
	a := &p4v1.Action{ActionId: id}
	for i, p := range params {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: uint32(i + 1), Value: p})
	}
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
}
func setAct(v uint16) *p4v1.TableAction { return act(aSet, EncodeBits(uint64(v)), []byte{1}) }

func te(table uint32, prio int32, a *p4v1.TableAction, m ...*p4v1.FieldMatch) *p4v1.TableEntry {
	return &p4v1.TableEntry{TableId: table, Priority: prio, Action: a, Match: m}
}
func upd(typ p4v1.Update_Type, e *p4v1.TableEntry) *p4v1.Update {
	return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: e}}}
}

func write1(t testing.TB, e *Engine, u *p4v1.Update) error {
	t.Helper()
	return e.Write(context.Background(), []*p4v1.Update{u}, p4v1.WriteRequest_CONTINUE_ON_ERROR)[0]
}

func mustWrite(t testing.TB, e *Engine, u *p4v1.Update) {
	t.Helper()
	if err := write1(t, e, u); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func code(err error) codes.Code { return status.Code(err) }

// lookup returns the action (id, first param) a key selects.
func lookup(t *testing.T, e *Engine, table string, key ...uint64) (bool, uint32, uint64) {
	t.Helper()
	p := e.Acquire()
	defer e.Release()
	tb, err := p.Table(table)
	if err != nil {
		t.Fatal(err)
	}
	hit, a := tb.Apply(key, 64)
	var v uint64
	if len(a.Params) > 0 {
		v = a.Params[0]
	}
	return hit, a.ID, v
}

func TestExactInsertModifyDelete(t *testing.T) {
	e := newTestEngine(t, Options{})
	k := []*p4v1.FieldMatch{exact(1, 0x01, 0x02), exact(2, 3)}
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(5), k...)))
	if hit, id, v := lookup(t, e, "C.exact", 0x102, 3); !hit || id != aSet || v != 5 {
		t.Fatalf("lookup = %v %x %d", hit, id, v)
	}
	if hit, id, _ := lookup(t, e, "C.exact", 0x102, 4); hit || id != aNo {
		t.Fatalf("miss = %v %x, want default NoAction", hit, id)
	}
	if err := write1(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(6), k...))); code(err) != codes.AlreadyExists {
		t.Fatalf("duplicate insert: %v", err)
	}
	mustWrite(t, e, upd(p4v1.Update_MODIFY, te(tExact, 0, setAct(9), k...)))
	if _, _, v := lookup(t, e, "C.exact", 0x102, 3); v != 9 {
		t.Fatalf("after modify v = %d", v)
	}
	// DELETE ignores non-key fields, even nonsensical ones.
	mustWrite(t, e, upd(p4v1.Update_DELETE, te(tExact, 0, act(999), k...)))
	if hit, _, _ := lookup(t, e, "C.exact", 0x102, 3); hit {
		t.Fatal("hit after delete")
	}
	for _, typ := range []p4v1.Update_Type{p4v1.Update_MODIFY, p4v1.Update_DELETE} {
		if err := write1(t, e, upd(typ, te(tExact, 0, setAct(1), k...))); code(err) != codes.NotFound {
			t.Fatalf("%v of missing entry: %v", typ, err)
		}
	}
}

func TestValidation(t *testing.T) {
	e := newTestEngine(t, Options{})
	ok2 := []*p4v1.FieldMatch{exact(1, 1), exact(2, 1)}
	cases := []struct {
		name string
		u    *p4v1.Update
		want codes.Code
	}{
		{"unknown table", upd(p4v1.Update_INSERT, te(0x02999999, 0, setAct(1), ok2...)), codes.InvalidArgument},
		{"unknown field id", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(2, 1), exact(7, 1))), codes.InvalidArgument},
		{"duplicate field", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(1, 1), exact(2, 1))), codes.InvalidArgument},
		{"missing exact field", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1))), codes.InvalidArgument},
		{"exact too wide", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(2, 1, 0))), codes.InvalidArgument},
		{"empty bytestring", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1), exact(2, 1))), codes.InvalidArgument},
		{"wrong kind", upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), lpm(1, 8, 1), exact(2, 1))), codes.InvalidArgument},
		{"priority on exact table", upd(p4v1.Update_INSERT, te(tExact, 5, setAct(1), ok2...)), codes.InvalidArgument},
		{"no priority on ternary table", upd(p4v1.Update_INSERT, te(tTern, 0, setAct(1), exact(1, 1))), codes.InvalidArgument},
		{"negative priority", upd(p4v1.Update_INSERT, te(tTern, -1, setAct(1), exact(1, 1))), codes.InvalidArgument},
		{"lpm prefix 0", upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(1), exact(1, 1), lpm(2, 0, 0))), codes.InvalidArgument},
		{"lpm prefix too long", upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(1), exact(1, 1), lpm(2, 33, 1))), codes.InvalidArgument},
		{"lpm value not masked", upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(1), exact(1, 1), lpm(2, 8, 10, 0, 0, 1))), codes.InvalidArgument},
		{"ternary mask 0", upd(p4v1.Update_INSERT, te(tTern, 1, setAct(1), exact(1, 1), tern(2, []byte{0}, []byte{0}))), codes.InvalidArgument},
		{"ternary value outside mask", upd(p4v1.Update_INSERT, te(tTern, 1, setAct(1), exact(1, 1), tern(2, []byte{3}, []byte{1}))), codes.InvalidArgument},
		{"range low > high", upd(p4v1.Update_INSERT, te(tTern, 1, setAct(1), exact(1, 1), rng(3, []byte{5}, []byte{4}))), codes.InvalidArgument},
		{"range full", upd(p4v1.Update_INSERT, te(tTern, 1, setAct(1), exact(1, 1), rng(3, []byte{0}, []byte{0xff, 0xff}))), codes.InvalidArgument},
		{"optional too wide", upd(p4v1.Update_INSERT, te(tTern, 1, setAct(1), exact(1, 1), opt(4, 2, 0))), codes.InvalidArgument},
		{"no action", upd(p4v1.Update_INSERT, te(tExact, 0, nil, ok2...)), codes.InvalidArgument},
		{"action not in table", upd(p4v1.Update_INSERT, te(tExact, 0, act(aDrop), ok2...)), codes.InvalidArgument},
		{"unknown action", upd(p4v1.Update_INSERT, te(tExact, 0, act(0x01777777), ok2...)), codes.InvalidArgument},
		{"missing param", upd(p4v1.Update_INSERT, te(tExact, 0, act(aSet, []byte{1}), ok2...)), codes.InvalidArgument},
		{"param too wide", upd(p4v1.Update_INSERT, te(tExact, 0, act(aSet, []byte{1, 0, 0}, []byte{1}), ok2...)), codes.InvalidArgument},
		{"defaultonly in entry", upd(p4v1.Update_INSERT, te(tTern, 1, act(aDOnly), exact(1, 1))), codes.PermissionDenied},
		{"keyless insert", upd(p4v1.Update_INSERT, te(tKeyless, 0, setAct(1))), codes.InvalidArgument},
		{"is_const", upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: tExact, Match: ok2, Action: setAct(1), IsConst: true}), codes.InvalidArgument},
		{"counter data without direct counter", upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: tExact, Match: ok2, Action: setAct(1), CounterData: &p4v1.CounterData{}}), codes.InvalidArgument},
		{"no entity", &p4v1.Update{Type: p4v1.Update_INSERT}, codes.InvalidArgument},
		{"unspecified type", &p4v1.Update{Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te(tExact, 0, setAct(1), ok2...)}}}, codes.InvalidArgument},
		{"meter entry", &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{}}}}, codes.Unimplemented},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := write1(t, e, c.u); code(err) != c.want {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	p := e.Acquire()
	n := 0
	for _, tb := range p.tables {
		n += tb.Len()
	}
	e.Release()
	if n != 0 {
		t.Fatalf("%d entries installed by invalid writes", n)
	}
}

func TestPaddedBytestrings(t *testing.T) {
	padded := upd(p4v1.Update_INSERT, te(tExact, 0, act(aSet, []byte{0, 5}, []byte{0, 0, 0, 0, 0, 1}), exact(1, 0, 9), exact(2, 0, 0, 3)))
	if err := write1(t, newTestEngine(t, Options{StrictBytestrings: true}), padded); code(err) != codes.InvalidArgument {
		t.Fatalf("strict: %v", err)
	}
	e := newTestEngine(t, Options{})
	mustWrite(t, e, padded)
	if hit, _, v := lookup(t, e, "C.exact", 9, 3); !hit || v != 5 {
		t.Fatal("padded entry does not match")
	}
	// Reads return the canonical form; a canonical DELETE finds the entry.
	ents := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tExact}}})
	got := ents[0].GetTableEntry()
	if v := got.GetMatch()[0].GetExact().GetValue(); len(v) != 1 || v[0] != 9 {
		t.Fatalf("read value % x, want 09", v)
	}
	if v := got.GetAction().GetAction().GetParams()[1].GetValue(); len(v) != 1 || v[0] != 1 {
		t.Fatalf("read param % x, want 01", v)
	}
	mustWrite(t, e, upd(p4v1.Update_DELETE, te(tExact, 0, nil, exact(1, 9), exact(2, 3))))
}

func TestLPMLongestPrefix(t *testing.T) {
	e := newTestEngine(t, Options{})
	ins := func(vrf byte, plen int32, v uint16, addr ...byte) {
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(v), exact(1, vrf), lpm(2, plen, addr...))))
	}
	ins(1, 8, 8, 10, 0, 0, 0)
	ins(1, 16, 16, 10, 1, 0, 0)
	ins(1, 32, 32, 10, 1, 2, 3)
	ins(2, 1, 1, 0x80, 0, 0, 0)
	for _, c := range []struct {
		vrf, addr uint64
		hit       bool
		v         uint64
	}{
		{1, 0x0a010203, true, 32}, {1, 0x0a010204, true, 16}, {1, 0x0a020304, true, 8},
		{1, 0x0b000000, false, 0}, {2, 0x0a010203, false, 0}, {2, 0xc0000001, true, 1},
	} {
		hit, id, v := lookup(t, e, "C.lpm", c.vrf, c.addr)
		if hit != c.hit || (hit && v != c.v) || (!hit && id != aDrop) {
			t.Errorf("vrf %d addr %#x: hit=%v id=%x v=%d, want hit=%v v=%d", c.vrf, c.addr, hit, id, v, c.hit, c.v)
		}
	}
	mustWrite(t, e, upd(p4v1.Update_DELETE, te(tLPM, 0, nil, exact(1, 1), lpm(2, 32, 10, 1, 2, 3))))
	if _, _, v := lookup(t, e, "C.lpm", 1, 0x0a010203); v != 16 {
		t.Fatalf("after delete /32: v=%d, want 16", v)
	}
}

func TestTernaryRangeOptionalPriority(t *testing.T) {
	e := newTestEngine(t, Options{})
	ins := func(prio int32, v uint16, m ...*p4v1.FieldMatch) {
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, prio, setAct(v), append([]*p4v1.FieldMatch{exact(1, 1)}, m...)...)))
	}
	ins(10, 1, tern(2, []byte{1}, []byte{1}))                                // bit 0 set
	ins(20, 2, tern(2, []byte{2}, []byte{2}))                                // bit 1 set: preferred
	ins(5, 3, rng(3, []byte{100}, []byte{200}))                              // range
	ins(30, 4, rng(3, []byte{150}, []byte{160}), opt(4, 7))                  // narrower range on port 7
	ins(1, 5)                                                                // all don't care (e=1)
	ins(10, 6, tern(2, []byte{1}, []byte{1}), rng(3, []byte{0}, []byte{10})) // same ternary, different entry
	for _, c := range []struct {
		tv, r, o uint64
		want     uint64
	}{
		{3, 0, 0, 2}, {1, 50, 0, 1}, {0, 120, 0, 3}, {0, 155, 7, 4}, {0, 155, 8, 3}, {0, 500, 0, 5}, {2, 155, 7, 4},
	} {
		if hit, _, v := lookup(t, e, "C.tern", 1, c.tv, c.r, c.o); !hit || v != c.want {
			t.Errorf("t=%d r=%d o=%d: hit=%v v=%d, want %d", c.tv, c.r, c.o, hit, v, c.want)
		}
	}
	if hit, _, _ := lookup(t, e, "C.tern", 2, 3, 155, 7); hit {
		t.Error("exact field e=2 must miss")
	}
	// Same match with another priority is a different entry; same match and priority is a duplicate.
	ins(11, 7, tern(2, []byte{1}, []byte{1}))
	if err := write1(t, e, upd(p4v1.Update_INSERT, te(tTern, 11, setAct(8), exact(1, 1), tern(2, []byte{1}, []byte{1})))); code(err) != codes.AlreadyExists {
		t.Fatalf("duplicate (match, priority): %v", err)
	}
	if _, _, v := lookup(t, e, "C.tern", 1, 1, 50, 0); v != 7 {
		t.Errorf("priority 11 entry should win, got %d", v)
	}
}

func TestDefaultEntry(t *testing.T) {
	e := newTestEngine(t, Options{})
	def := func(a *p4v1.TableAction) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: tKeyless, IsDefaultAction: true, Action: a}
	}
	if _, id, v := lookup(t, e, "C.keyless"); id != aSet || v != 7 {
		t.Fatalf("initial default = %x(%d)", id, v)
	}
	mustWrite(t, e, upd(p4v1.Update_MODIFY, def(setAct(42))))
	if _, _, v := lookup(t, e, "C.keyless"); v != 42 {
		t.Fatalf("default v = %d", v)
	}
	got := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tKeyless, IsDefaultAction: true}}})
	if len(got) != 1 || !got[0].GetTableEntry().GetIsDefaultAction() || got[0].GetTableEntry().GetAction().GetAction().GetParams()[0].GetValue()[0] != 42 {
		t.Fatalf("read default = %v", got)
	}
	if n := len(readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tKeyless}}})); n != 0 {
		t.Fatalf("wildcard read returned %d entries; the default entry is read only with is_default_action", n)
	}
	// MODIFY without action resets to the program's default.
	mustWrite(t, e, upd(p4v1.Update_MODIFY, def(nil)))
	if _, _, v := lookup(t, e, "C.keyless"); v != 7 {
		t.Fatalf("after reset v = %d", v)
	}
	for _, c := range []struct {
		name string
		u    *p4v1.Update
		want codes.Code
	}{
		{"insert default", upd(p4v1.Update_INSERT, def(setAct(1))), codes.InvalidArgument},
		{"delete default", upd(p4v1.Update_DELETE, def(nil)), codes.InvalidArgument},
		{"default with match", upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tExact, IsDefaultAction: true, Match: []*p4v1.FieldMatch{exact(1, 1)}, Action: setAct(1)}), codes.InvalidArgument},
		{"const default", upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tConst, IsDefaultAction: true, Action: setAct(1)}), codes.PermissionDenied},
		{"tableonly default", upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tTern, IsDefaultAction: true, Action: act(aTOnly)}), codes.PermissionDenied},
	} {
		if err := write1(t, e, c.u); code(err) != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	mustWrite(t, e, upd(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tTern, IsDefaultAction: true, Action: act(aDOnly)}))
}

func TestSizeLimitAndDirectCounter(t *testing.T) {
	e := newTestEngine(t, Options{})
	for i := byte(1); i <= 2; i++ {
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(uint16(i)), exact(1, i))))
	}
	if err := write1(t, e, upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(3), exact(1, 3)))); code(err) != codes.ResourceExhausted {
		t.Fatalf("third insert into size-2 table: %v", err)
	}
	lookup(t, e, "C.small", 1)
	lookup(t, e, "C.small", 1)
	lookup(t, e, "C.small", 9) // miss: default entry's counter
	rd := func(te *p4v1.TableEntry) *p4v1.CounterData {
		t.Helper()
		got := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: te}}})
		if len(got) != 1 {
			t.Fatalf("direct counter read: %d results", len(got))
		}
		return got[0].GetDirectCounterEntry().GetData()
	}
	if d := rd(te(tSmall, 0, nil, exact(1, 1))); d.GetPacketCount() != 2 || d.GetByteCount() != 128 {
		t.Fatalf("entry counter %v", d)
	}
	if d := rd(&p4v1.TableEntry{TableId: tSmall, IsDefaultAction: true}); d.GetPacketCount() != 1 {
		t.Fatalf("default counter %v", d)
	}
	// Counter data through a table read, and reset through DirectCounterEntry.
	got := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tSmall, CounterData: &p4v1.CounterData{}}}})
	if len(got) != 2 || got[0].GetTableEntry().GetCounterData().GetPacketCount() != 2 {
		t.Fatalf("table read with counter data: %v", got)
	}
	mustWrite(t, e, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{
		DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: te(tSmall, 0, nil, exact(1, 1)), Data: &p4v1.CounterData{}}}}})
	if d := rd(te(tSmall, 0, nil, exact(1, 1))); d.GetPacketCount() != 0 {
		t.Fatalf("after reset %v", d)
	}
	if err := write1(t, e, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{
		DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: te(tSmall, 0, nil, exact(1, 9)), Data: &p4v1.CounterData{}}}}}); code(err) != codes.NotFound {
		t.Fatalf("direct counter of missing entry: %v", err)
	}
}

func readAll(t testing.TB, e *Engine, ent *p4v1.Entity) []*p4v1.Entity {
	t.Helper()
	var out []*p4v1.Entity
	if err := e.Read(context.Background(), ent, func(x *p4v1.Entity) error { out = append(out, x); return nil }); err != nil {
		t.Fatalf("read: %v", err)
	}
	return out
}

func TestCountersAndRegisters(t *testing.T) {
	e := newTestEngine(t, Options{})
	p := e.Acquire()
	c, _ := p.Counter("C.events")
	r, _ := p.Register("C.cells")
	c.Count(2, 100)
	c.Count(2, 50)
	c.Count(99, 1) // out of range: ignored
	r.Write(3, 0xfff5)
	e.Release()
	all := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cEvents}}})
	if len(all) != 4 || all[2].GetCounterEntry().GetData().GetPacketCount() != 2 || all[2].GetCounterEntry().GetData().GetByteCount() != 150 {
		t.Fatalf("counter read: %v", all)
	}
	if n := len(readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{}}})); n != 4 {
		t.Fatalf("counter_id 0 read %d cells", n)
	}
	regs := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: rCells, Index: &p4v1.Index{Index: 3}}}})
	if b := regs[0].GetRegisterEntry().GetData().GetBitstring(); len(b) != 2 || b[0] != 0x0f || b[1] != 0xf5 {
		t.Fatalf("register cell 3 = % x, want 0f f5 (12-bit)", b)
	}
	if n := len(readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{}}})); n != 8 {
		t.Fatalf("wildcard register read: %d cells", n)
	}
	regW := func(idx *p4v1.Index, v []byte) error {
		return write1(t, e, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{
			RegisterId: rCells, Index: idx, Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: v}}}}}})
	}
	if err := regW(nil, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := regW(&p4v1.Index{Index: 8}, []byte{1}); code(err) != codes.OutOfRange {
		t.Fatalf("index 8 of 8: %v", err)
	}
	if err := regW(&p4v1.Index{Index: -1}, []byte{1}); code(err) != codes.InvalidArgument {
		t.Fatalf("index -1: %v", err)
	}
	if err := regW(&p4v1.Index{Index: 1}, []byte{0x10, 0}); code(err) != codes.InvalidArgument {
		t.Fatalf("13-bit value in bit<12>: %v", err)
	}
	r, _ = e.Acquire().Register("C.cells") // the running pipeline's cells, read under the lock
	for i := uint64(0); i < 8; i++ {
		if r.Read(i) != 1 {
			t.Errorf("cell %d = %d after wildcard write", i, r.Read(i))
		}
	}
	e.Release()
	if err := write1(t, e, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
		CounterId: cEvents, Data: &p4v1.CounterData{}}}}}); err != nil {
		t.Fatal(err)
	}
	if pk, _ := c.Get(2); pk != 0 {
		t.Fatalf("counter after wildcard reset: %d", pk)
	}
	if err := write1(t, e, &p4v1.Update{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cEvents}}}}); code(err) != codes.InvalidArgument {
		t.Fatalf("counter INSERT: %v", err)
	}
}

func TestAtomicBatch(t *testing.T) {
	for _, atom := range []p4v1.WriteRequest_Atomicity{p4v1.WriteRequest_ROLLBACK_ON_ERROR, p4v1.WriteRequest_DATAPLANE_ATOMIC} {
		e := newTestEngine(t, Options{})
		mustWrite(t, e, upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(1), exact(1, 1))))
		batch := []*p4v1.Update{
			upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(2), exact(1, 2))),
			upd(p4v1.Update_MODIFY, te(tSmall, 0, setAct(9), exact(1, 1))),
			upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(3), exact(1, 3))), // table full
			upd(p4v1.Update_DELETE, te(tSmall, 0, nil, exact(1, 1))),
		}
		errs := e.Write(context.Background(), batch, atom)
		want := []codes.Code{codes.Aborted, codes.Aborted, codes.ResourceExhausted, codes.Aborted}
		for i := range want {
			if code(errs[i]) != want[i] {
				t.Errorf("%v update %d: %v, want %v", atom, i, errs[i], want[i])
			}
		}
		if hit, _, v := lookup(t, e, "C.small", 1); !hit || v != 1 {
			t.Errorf("%v: entry 1 = %v/%d after rollback", atom, hit, v)
		}
		if hit, _, _ := lookup(t, e, "C.small", 2); hit {
			t.Errorf("%v: entry 2 survived rollback", atom)
		}
	}
	// CONTINUE_ON_ERROR applies the good updates.
	e := newTestEngine(t, Options{})
	errs := e.Write(context.Background(), []*p4v1.Update{
		upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(1), exact(1, 1))),
		upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(1), exact(1, 1))),
		upd(p4v1.Update_INSERT, te(tSmall, 0, setAct(2), exact(1, 2))),
	}, p4v1.WriteRequest_CONTINUE_ON_ERROR)
	if errs[0] != nil || code(errs[1]) != codes.AlreadyExists || errs[2] != nil {
		t.Fatalf("continue on error: %v", errs)
	}
}

func TestWildcardReads(t *testing.T) {
	e := newTestEngine(t, Options{})
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(2, 1))))
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(2), exact(1, 1), lpm(2, 8, 10, 0, 0, 0))))
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, 3, setAct(3), exact(1, 1), tern(2, []byte{1}, []byte{1}))))
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, 4, act(aNo), exact(1, 1), rng(3, []byte{1}, []byte{2}))))
	all := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}})
	if len(all) != 4 {
		t.Fatalf("read all tables: %d entries", len(all))
	}
	byPrio := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tTern, Priority: 4}}})
	if len(byPrio) != 1 || byPrio[0].GetTableEntry().GetPriority() != 4 {
		t.Fatalf("priority filter: %v", byPrio)
	}
	byAction := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tTern, Action: act(aSet)}}})
	if len(byAction) != 1 {
		t.Fatalf("action filter: %d", len(byAction))
	}
	one := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te(tLPM, 0, nil, exact(1, 1), lpm(2, 8, 10, 0, 0, 0))}})
	if len(one) != 1 || one[0].GetTableEntry().GetMatch()[1].GetLpm().GetPrefixLen() != 8 {
		t.Fatalf("read by key: %v", one)
	}
	defaults := readAll(t, e, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{IsDefaultAction: true}}})
	if len(defaults) != 8 {
		t.Fatalf("default entries of all tables: %d", len(defaults))
	}
	// Read-write symmetry: what was read can be deleted verbatim.
	for _, x := range all {
		mustWrite(t, e, upd(p4v1.Update_DELETE, x.GetTableEntry()))
	}
}

func TestNoPipelineAndSetPipeline(t *testing.T) {
	e := New(Options{})
	if err := write1(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1)))); code(err) != codes.FailedPrecondition {
		t.Fatalf("write without pipeline: %v", err)
	}
	ctx := context.Background()
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: testInfo()}
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_COMMIT, nil); code(err) != codes.NotFound {
		t.Fatalf("COMMIT without saved: %v", err)
	}
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY, cfg); err != nil || e.P4Info() != nil {
		t.Fatalf("VERIFY: %v / installed %v", err, e.P4Info() != nil)
	}
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE, cfg); err != nil || e.P4Info() != nil {
		t.Fatalf("VERIFY_AND_SAVE: %v", err)
	}
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_COMMIT, nil); err != nil || e.P4Info() == nil {
		t.Fatalf("COMMIT: %v", err)
	}
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(2, 1))))
	// RECONCILE keeps state, even when ids change.
	info2 := testInfo()
	info2.Tables[0].Preamble.Id = 0x02000099
	info2.Tables[0].MatchFields[0].Id, info2.Tables[0].MatchFields[1].Id = 2, 1
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: info2}); err != nil {
		t.Fatal(err)
	}
	if hit, _, v := lookup(t, e, "C.exact", 1, 1); !hit || v != 1 {
		t.Fatal("entry lost by RECONCILE_AND_COMMIT")
	}
	// Reconciling to a program without the table fails and keeps the old one.
	info3 := testInfo()
	info3.Tables = info3.Tables[1:]
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: info3}); code(err) != codes.FailedPrecondition {
		t.Fatalf("reconcile dropping a table: %v", err)
	}
	// VERIFY_AND_COMMIT clears state.
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, cfg); err != nil {
		t.Fatal(err)
	}
	if hit, _, _ := lookup(t, e, "C.exact", 1, 1); hit {
		t.Fatal("VERIFY_AND_COMMIT kept entries")
	}
	bad := testInfo()
	bad.Tables[0].MatchFields[0].Bitwidth = 128
	if err := e.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY, &p4v1.ForwardingPipelineConfig{P4Info: bad}); code(err) != codes.InvalidArgument {
		t.Fatalf("128-bit field: %v", err)
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	e := newTestEngine(t, Options{})
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tExact, 0, setAct(1), exact(1, 1), exact(2, 1))))
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tLPM, 0, setAct(2), exact(1, 1), lpm(2, 8, 10, 0, 0, 0))))
	mustWrite(t, e, upd(p4v1.Update_INSERT, te(tTern, 3, setAct(3), exact(1, 1), tern(2, []byte{1}, []byte{1}))))
	p := e.Acquire()
	defer e.Release()
	tx, _ := p.Table("C.exact")
	tl, _ := p.Table("C.lpm")
	tt, _ := p.Table("C.tern")
	var k2 [2]uint64
	var k4 [4]uint64
	allocs := testing.AllocsPerRun(100, func() {
		k2[0], k2[1] = 1, 1
		tx.Apply(k2[:], 60)
		k2[1] = 0x0a000001
		tl.Apply(k2[:], 60)
		k4[0], k4[1] = 1, 1
		tt.Apply(k4[:], 60)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per lookup", allocs)
	}
}
