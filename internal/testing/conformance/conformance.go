// Package conformance is a P4Runtime conformance suite run against any
// switch: the embedded target (in CI, through p4rttest) and BMv2
// simple_switch_grpc (when P4CTL_BMV2 is set). It checks the behaviour a
// controller relies on — arbitration, INSERT/MODIFY/DELETE and their
// error codes, wildcard reads, per-update error details in batches,
// bytestring checks, priorities, default entries, counters and registers —
// using only the P4Info it is given: tables are picked by their match kinds,
// entries are generated to fit their bit widths.
//
// Where a target deviates from the P4Runtime specification (1.5), Quirks
// records it and the suite checks the target's actual behaviour instead, so
// every difference is written down in one place (see BMv2Quirks).
package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Conn is a switch under test.
type Conn struct {
	// Name is used in messages.
	Name string
	// Dial returns a new client (a new controller) to the switch with the
	// given options added to the transport's; it must close the client when
	// the test ends.
	Dial func(t testing.TB, opts ...p4rt.Option) *p4rt.Client
	// DeviceID of the switch (default 1).
	DeviceID uint64
	// Pipeline is installed with VERIFY_AND_COMMIT before the tests (P4Info
	// and, for BMv2, the compiled JSON). Required.
	Pipeline *p4v1.ForwardingPipelineConfig
	// Quirks lists where the target differs from the specification.
	Quirks Quirks
}

// Quirks are documented deviations from the P4Runtime 1.5 specification.
// The zero value means "behaves as the spec says".
type Quirks struct {
	// PrimaryIsHighestLive: the primary is the live controller with the
	// highest election id (P4Runtime < 1.3 semantics), so when the primary
	// leaves the next one is promoted, instead of "highest id ever seen"
	// with no primary until a controller re-arbitrates at or above it.
	PrimaryIsHighestLive bool
	// NoDeviceIDCheck: unknown device ids are accepted on the stream.
	NoDeviceIDCheck bool
	// AcceptsEmptyBytestring: an empty bytestring is read as 0 instead of
	// being rejected.
	AcceptsEmptyBytestring bool
	// RegisterReadCode and RegisterWriteCode are the codes of register
	// reads and writes when the target does not implement them (codes.OK =
	// it does).
	RegisterReadCode  codes.Code
	RegisterWriteCode codes.Code
	// IndexOutOfRangeCode, if set, is the code the target returns for a
	// counter read beyond the array instead of OUT_OF_RANGE or
	// INVALID_ARGUMENT.
	IndexOutOfRangeCode codes.Code
}

// BMv2Quirks are the deviations of simple_switch_grpc's P4Runtime server
// (p4lang/PI, proto/server/pi_server.cpp and proto/frontend), observed in
// its source and confirmed by running this suite against it:
//   - arbitration keeps pre-1.3 semantics: the highest *live* election id is
//     primary, and a departing primary's successor is promoted at once;
//   - any device id is accepted on the StreamChannel (PI creates the device
//     on first use), but SetForwardingPipelineConfig only for the id
//     simple_switch_grpc was started with (--device-id, default 0): any
//     other gets UNKNOWN "Error when trying to assign device";
//   - empty bytestrings are zero-padded to the field width and accepted;
//   - register reads and writes return UNIMPLEMENTED ("Register reads/writes
//     are not supported yet"), which is why p4ctl keeps controller state in
//     action parameters (docs/ARCHITECTURE.md decision 5) and reads BMv2's
//     registers over its Thrift API (pkg/bmv2rt);
//   - reading a counter index beyond the array fails the whole Read with
//     UNKNOWN ("Error when reading counter from target"), without
//     per-request details.
var BMv2Quirks = Quirks{
	PrimaryIsHighestLive:   true,
	NoDeviceIDCheck:        true,
	AcceptsEmptyBytestring: true,
	RegisterReadCode:       codes.Unimplemented,
	RegisterWriteCode:      codes.Unimplemented,
	IndexOutOfRangeCode:    codes.Unknown,
}

// bytestringCodes are the codes accepted for an out-of-range bytestring:
// the spec (1.5, §8.4) says OUT_OF_RANGE; PI and the embedded engine
// return INVALID_ARGUMENT, as P4Runtime 1.0–1.2 prescribed.
var bytestringCodes = []codes.Code{codes.OutOfRange, codes.InvalidArgument}

// suite is the state shared by the subtests.
type suite struct {
	c    Conn
	info *p4configv1.P4Info
	idx  *p4rt.Index
	next p4rt.ElectionID
}

// Run runs the suite against c. Subtests run in order and share the switch:
// each one becomes primary with a fresh, higher election id and clears the
// tables it uses.
func Run(t *testing.T, c Conn) {
	if c.DeviceID == 0 {
		c.DeviceID = 1
	}
	if c.Pipeline.GetP4Info() == nil {
		t.Fatal("conformance: Conn.Pipeline with a P4Info is required")
	}
	idx, err := p4rt.NewIndex(c.Pipeline.GetP4Info())
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	s := &suite{c: c, info: c.Pipeline.GetP4Info(), idx: idx}
	s.start(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Capabilities", s.testCapabilities},
		{"Pipeline", s.testPipeline},
		{"Arbitration", s.testArbitration},
		{"InsertModifyDelete", s.testInsertModifyDelete},
		{"DuplicateInsert", s.testDuplicateInsert},
		{"MissingEntries", s.testMissing},
		{"WildcardRead", s.testWildcardRead},
		{"BatchWithOneBadUpdate", s.testBatch},
		{"CanonicalBytestrings", s.testBytestrings},
		{"Priorities", s.testPriorities},
		{"DefaultEntry", s.testDefaultEntry},
		{"Counters", s.testCounters},
		{"DirectCounters", s.testDirectCounters},
		{"Registers", s.testRegisters},
		{"ReconcileReadBack", s.testReconcile},
	} {
		t.Run(tc.name, tc.fn)
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start learns the switch's highest election id and installs the pipeline.
func (s *suite) start(t *testing.T) {
	ctx := ctxFor(t)
	probe := s.dial(t, p4rt.ElectionID{})
	st, err := probe.Arbitrate(ctx)
	if err != nil {
		t.Fatalf("conformance: cannot open a StreamChannel to %s: %v", s.c.Name, err)
	}
	s.next = st.PrimaryElectionID.Next()
	if s.next.Compare(p4rt.Election(10)) < 0 {
		s.next = p4rt.Election(10)
	}
	probe.Close()
	c := s.primary(t)
	if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, s.c.Pipeline); err != nil {
		t.Fatalf("conformance: install the pipeline on %s: %v", s.c.Name, err)
	}
	c.Close()
}

func (s *suite) dial(t testing.TB, id p4rt.ElectionID, opts ...p4rt.Option) *p4rt.Client {
	base := []p4rt.Option{p4rt.WithDeviceID(s.c.DeviceID), p4rt.WithP4Info(s.info), p4rt.WithoutReconnect(),
		p4rt.WithCallTimeout(20 * time.Second)}
	if !id.IsZero() {
		base = append(base, p4rt.WithElectionID(id))
	}
	return s.c.Dial(t, append(base, opts...)...)
}

// electionID returns a fresh id above every id used so far.
func (s *suite) electionID() p4rt.ElectionID {
	id := s.next
	s.next = s.next.Next()
	return id
}

// primary returns a new client that is primary.
func (s *suite) primary(t *testing.T) *p4rt.Client {
	t.Helper()
	c := s.dial(t, s.electionID())
	st, err := c.Arbitrate(ctxFor(t))
	if err != nil {
		t.Fatalf("arbitrate: %v", err)
	}
	if !st.Primary {
		t.Fatalf("a controller with a fresh, highest election id is not primary: %v", st)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clear deletes every entry of every non-const table.
func (s *suite) clear(t *testing.T, c *p4rt.Client) {
	t.Helper()
	ctx := ctxFor(t)
	got, err := c.ReadTableEntries(ctx)
	if err != nil {
		t.Fatalf("read all entries: %v", err)
	}
	var ups []*p4v1.Update
	for _, e := range got {
		if tb, ok := s.idx.TableByID(e.GetTableId()); ok && !tb.GetIsConstTable() && !e.GetIsConst() {
			ups = append(ups, &p4v1.Update{Type: p4v1.Update_DELETE, Entity: p4rt.TableEntity(&p4v1.TableEntry{
				TableId: e.GetTableId(), Match: e.GetMatch(), Priority: e.GetPriority()})})
		}
	}
	if err := c.ApplyRetrySafe(ctx, ups); err != nil {
		t.Fatalf("clear tables: %v", err)
	}
}

// table picks the first usable table (by name) whose match kinds satisfy
// want; it skips the test if none.
func (s *suite) table(t *testing.T, what string, want func(kinds []p4configv1.MatchField_MatchType) bool) *p4configv1.Table {
	t.Helper()
	if tb := s.find(want, nil); tb != nil {
		return tb
	}
	t.Skipf("the P4Info has no table with %s", what)
	return nil
}

// find returns the first non-const table (by name), other than not, with
// room for 4 entries, fields of 4..64 bits and an entry action, whose match
// kinds satisfy want.
func (s *suite) find(want func(kinds []p4configv1.MatchField_MatchType) bool, not *p4configv1.Table) *p4configv1.Table {
	tables := slices.Clone(s.info.GetTables())
	sort.Slice(tables, func(i, j int) bool { return tables[i].GetPreamble().GetName() < tables[j].GetPreamble().GetName() })
	for _, tb := range tables {
		if tb == not || tb.GetIsConstTable() || len(tb.GetMatchFields()) == 0 || tb.GetSize() < 4 || s.action(tb) == nil {
			continue
		}
		var kinds []p4configv1.MatchField_MatchType
		wide := false
		for _, f := range tb.GetMatchFields() {
			kinds = append(kinds, f.GetMatchType())
			wide = wide || f.GetBitwidth() > 64 || f.GetBitwidth() < 4
		}
		if !wide && want(kinds) {
			return tb
		}
	}
	return nil
}

// usable picks the table most subtests write to: an exact-only table when
// the P4Info has one, else any table the generator can fill.
func (s *suite) usable(t *testing.T) *p4configv1.Table {
	t.Helper()
	if tb := s.find(all(p4configv1.MatchField_EXACT), nil); tb != nil {
		return tb
	}
	return s.table(t, "match fields of 4..64 bits and an action with parameters of at most 64 bits", func([]p4configv1.MatchField_MatchType) bool { return true })
}

// second picks a usable table other than first (nil if none).
func (s *suite) second(first *p4configv1.Table) *p4configv1.Table {
	return s.find(func([]p4configv1.MatchField_MatchType) bool { return true }, first)
}

func all(k p4configv1.MatchField_MatchType) func([]p4configv1.MatchField_MatchType) bool {
	return func(ks []p4configv1.MatchField_MatchType) bool {
		for _, x := range ks {
			if x != k {
				return false
			}
		}
		return true
	}
}

// action returns the table's first entry action (not @defaultonly) whose
// parameters are all 1..64 bits, preferring one with parameters.
func (s *suite) action(tb *p4configv1.Table) *p4configv1.Action {
	var best *p4configv1.Action
	for _, ref := range tb.GetActionRefs() {
		if ref.GetScope() == p4configv1.ActionRef_DEFAULT_ONLY {
			continue
		}
		a, ok := s.idx.ActionByID(ref.GetId())
		if !ok {
			continue
		}
		okWidths := true
		for _, p := range a.GetParams() {
			okWidths = okWidths && p.GetBitwidth() >= 1 && p.GetBitwidth() <= 64
		}
		if !okWidths {
			continue
		}
		if len(a.GetParams()) > 0 {
			return a
		}
		if best == nil {
			best = a
		}
	}
	return best
}

func needsPriority(tb *p4configv1.Table) bool {
	for _, f := range tb.GetMatchFields() {
		switch f.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			return true
		}
	}
	return false
}

func enc(t testing.TB, v uint64, width int32) []byte {
	t.Helper()
	if width < 64 {
		v &= 1<<uint(width) - 1
	}
	b, err := p4rt.EncodeUint(v, int(width))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entry generates entry number i (>= 0) of tb: every field matches the value
// i+1 exactly (full-length prefix, all-ones mask, [i+1, i+1]), priority i+1
// where needed, and the table's action with every parameter = param.
func (s *suite) entry(t testing.TB, tb *p4configv1.Table, i int, param uint64) *p4v1.TableEntry {
	t.Helper()
	e := &p4v1.TableEntry{TableId: tb.GetPreamble().GetId()}
	v := uint64(i + 1)
	for _, f := range tb.GetMatchFields() {
		w := f.GetBitwidth()
		fm := &p4v1.FieldMatch{FieldId: f.GetId()}
		switch f.GetMatchType() {
		case p4configv1.MatchField_EXACT:
			fm.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: enc(t, v, w)}}
		case p4configv1.MatchField_LPM:
			fm.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: enc(t, v, w), PrefixLen: w}}
		case p4configv1.MatchField_TERNARY:
			fm.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: enc(t, v, w), Mask: enc(t, ^uint64(0), w)}}
		case p4configv1.MatchField_RANGE:
			fm.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: enc(t, v, w), High: enc(t, v, w)}}
		case p4configv1.MatchField_OPTIONAL:
			fm.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: enc(t, v, w)}}
		default:
			t.Fatalf("table %s: unsupported match kind %v", tb.GetPreamble().GetName(), f.GetMatchType())
		}
		e.Match = append(e.Match, fm)
	}
	if needsPriority(tb) {
		e.Priority = int32(i + 1)
	}
	a := s.action(tb)
	act := &p4v1.Action{ActionId: a.GetPreamble().GetId()}
	for _, p := range a.GetParams() {
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: p.GetId(), Value: enc(t, param, p.GetBitwidth())})
	}
	e.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}
	return e
}

func ins(es ...*p4v1.TableEntry) []*p4v1.Update { return p4rt.Updates(p4v1.Update_INSERT, es...) }

// expectCode fails unless err carries one of the codes.
func expectCode(t *testing.T, what string, err error, want ...codes.Code) {
	t.Helper()
	got := p4rt.Code(err)
	if !slices.Contains(want, got) {
		t.Errorf("%s: got %v (%v), want %v", what, got, err, want)
	}
}

func (s *suite) testCapabilities(t *testing.T) {
	c := s.dial(t, p4rt.ElectionID{})
	v, err := c.Capabilities(ctxFor(t))
	if err != nil {
		t.Fatalf("Capabilities: %v", err)
	}
	if !strings.HasPrefix(v, "1.") {
		t.Errorf("p4runtime_api_version %q", v)
	}
}

func (s *suite) testPipeline(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	cfg, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil {
		t.Fatalf("GetForwardingPipelineConfig: %v", err)
	}
	if !proto.Equal(cfg.GetP4Info(), s.info) {
		t.Error("GetForwardingPipelineConfig returned another P4Info than the one installed")
	}
	if cfg.GetCookie().GetCookie() != s.c.Pipeline.GetCookie().GetCookie() {
		t.Errorf("cookie %d, want %d", cfg.GetCookie().GetCookie(), s.c.Pipeline.GetCookie().GetCookie())
	}
	if err := c.SetPipeline(ctx, p4rt.Verify, s.c.Pipeline); err != nil {
		t.Errorf("VERIFY of the running pipeline: %v", err)
	}
	backup := s.dial(t, p4rt.ElectionID{})
	if _, err := backup.Arbitrate(ctx); err != nil {
		t.Fatal(err)
	}
	expectCode(t, "SetForwardingPipelineConfig from a backup", backup.SetPipeline(ctx, p4rt.Verify, s.c.Pipeline), codes.PermissionDenied)
}

func waitState(t *testing.T, c *p4rt.Client, what string, ok func(p4rt.ArbitrationState) bool) p4rt.ArbitrationState {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if st := c.State(); ok(st) {
			return st
		}
		select {
		case <-c.StateChanges():
		case <-deadline:
			t.Fatalf("%s: state stayed %v", what, c.State())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *suite) testArbitration(t *testing.T) {
	ctx := ctxFor(t)
	q := s.c.Quirks
	a := s.primary(t)
	idx := s.idx
	tb := s.usable(t)
	s.clear(t, a)

	// A second controller with the same election id is refused.
	dup := s.dial(t, a.ElectionID())
	_, err := dup.Arbitrate(ctx)
	var ae *p4rt.ArbitrationError
	if !errors.As(err, &ae) || p4rt.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "already uses election id") {
		t.Errorf("duplicate election id: %v, want INVALID_ARGUMENT explained", err)
	}
	dup.Close()

	// A higher id takes over; the old primary is told and loses write access.
	b := s.primary(t)
	st := waitState(t, a, "old primary after takeover", func(st p4rt.ArbitrationState) bool { return !st.Primary })
	if st.PrimaryElectionID != b.ElectionID() {
		t.Errorf("old primary sees primary election id %s, want %s", st.PrimaryElectionID, b.ElectionID())
	}
	expectCode(t, "write by the old primary", a.Write(ctx, ins(s.entry(t, tb, 0, 1))), codes.PermissionDenied)
	if err := b.Write(ctx, ins(s.entry(t, tb, 0, 1))); err != nil {
		t.Errorf("write by the new primary: %v", err)
	}

	// A read-only backup (no election id) can read, not write.
	ro := s.dial(t, p4rt.ElectionID{})
	if st, err := ro.Arbitrate(ctx); err != nil || st.Primary {
		t.Errorf("controller without election id: %v %v", st, err)
	}
	if _, err := ro.ReadTableEntries(ctx, idx.Name(tb.GetPreamble().GetId())); err != nil {
		t.Errorf("read by a backup: %v", err)
	}
	expectCode(t, "write by a backup", ro.Write(ctx, ins(s.entry(t, tb, 1, 1))), codes.PermissionDenied)
	ro.Close()

	// The primary leaves.
	b.Close()
	if q.PrimaryIsHighestLive {
		waitState(t, a, "next controller after the primary left (promoted at once, pre-1.3 semantics)", func(st p4rt.ArbitrationState) bool { return st.Primary })
	} else {
		st := waitState(t, a, "backup after the primary left", func(st p4rt.ArbitrationState) bool { return !st.HasPrimary })
		if st.Primary {
			t.Error("a backup became primary without re-arbitrating above the highest election id")
		}
		// Re-arbitrating above the highest id ever seen takes over.
		if st, err := a.SetElectionID(ctx, s.electionID()); err != nil || !st.Primary {
			t.Errorf("re-arbitration with a higher id: %v %v", st, err)
		}
	}
	if err := a.Write(ctx, p4rt.Updates(p4v1.Update_DELETE, s.entry(t, tb, 0, 1))); err != nil {
		t.Errorf("write by the new primary: %v", err)
	}

	// An unknown device id is refused.
	other := s.dial(t, s.electionID(), p4rt.WithDeviceID(s.c.DeviceID+1000))
	_, err = other.Arbitrate(ctx)
	switch {
	case q.NoDeviceIDCheck && err != nil:
		t.Errorf("arbitration for an unknown device id: %v; the NoDeviceIDCheck quirk says it is accepted", err)
	case !q.NoDeviceIDCheck && p4rt.Code(err) != codes.NotFound:
		t.Errorf("arbitration for an unknown device id: %v, want NOT_FOUND", err)
	}
	other.Close()
}

func (s *suite) testInsertModifyDelete(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	e := s.entry(t, tb, 0, 1)
	if err := c.Write(ctx, ins(e)); err != nil {
		t.Fatalf("INSERT: %v", err)
	}
	got, err := c.ReadEntry(ctx, e)
	if err != nil || !p4rt.SameContents(got, e) {
		t.Fatalf("read after INSERT: %v %v", got, err)
	}
	if !proto.Equal(got, e) {
		t.Errorf("read-write symmetry: wrote %v, read %v", e, got)
	}
	m := s.entry(t, tb, 0, 2)
	if len(m.GetAction().GetAction().GetParams()) == 0 {
		t.Logf("action %s has no parameters: MODIFY rewrites the same action", s.idx.Name(m.GetAction().GetAction().GetActionId()))
	}
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_MODIFY, m)); err != nil {
		t.Fatalf("MODIFY: %v", err)
	}
	if got, err := c.ReadEntry(ctx, e); err != nil || !p4rt.SameContents(got, m) {
		t.Fatalf("read after MODIFY: %v %v", got, err)
	}
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_DELETE, &p4v1.TableEntry{TableId: e.TableId, Match: e.Match, Priority: e.Priority})); err != nil {
		t.Fatalf("DELETE (key only): %v", err)
	}
	if _, err := c.ReadEntry(ctx, e); !errors.Is(err, p4rt.ErrNotFound) {
		t.Fatalf("read after DELETE: %v", err)
	}
}

func (s *suite) testDuplicateInsert(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	if err := c.Write(ctx, ins(s.entry(t, tb, 0, 1))); err != nil {
		t.Fatal(err)
	}
	err := c.Write(ctx, ins(s.entry(t, tb, 0, 2)))
	if !errors.Is(err, p4rt.ErrAlreadyExists) {
		t.Fatalf("duplicate INSERT: %v, want ALREADY_EXISTS", err)
	}
	if got, _ := c.ReadEntry(ctx, s.entry(t, tb, 0, 1)); !p4rt.SameContents(got, s.entry(t, tb, 0, 1)) {
		t.Errorf("a refused INSERT changed the existing entry: %v", got)
	}
}

func (s *suite) testMissing(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	e := s.entry(t, tb, 3, 1)
	expectCode(t, "DELETE of a missing entry", c.Write(ctx, p4rt.Updates(p4v1.Update_DELETE, e)), codes.NotFound)
	expectCode(t, "MODIFY of a missing entry", c.Write(ctx, p4rt.Updates(p4v1.Update_MODIFY, e)), codes.NotFound)
}

func (s *suite) testWildcardRead(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	exact := s.usable(t)
	s.clear(t, c)
	want := []*p4v1.TableEntry{s.entry(t, exact, 0, 1), s.entry(t, exact, 1, 1), s.entry(t, exact, 2, 1)}
	if other := s.second(exact); other != nil {
		want = append(want, s.entry(t, other, 0, 1), s.entry(t, other, 1, 1))
	} else {
		t.Logf("only one writable table: the all-tables read holds one table's entries")
	}
	if err := c.Write(ctx, ins(want...)); err != nil {
		t.Fatal(err)
	}
	allEntries, err := c.ReadTableEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plan, err := p4rt.Diff(want, allEntries, nil); err != nil || !plan.Empty() {
		t.Errorf("wildcard read of all tables: %d entries, differences %v %v", len(allEntries), plan, err)
	}
	one, err := c.ReadTableEntries(ctx, s.idx.Name(exact.GetPreamble().GetId()))
	if err != nil {
		t.Fatal(err)
	}
	if plan, err := p4rt.Diff(want[:3], one, nil); err != nil || !plan.Empty() {
		t.Errorf("wildcard read of one table: %d entries, differences %v %v", len(one), plan, err)
	}
}

func (s *suite) testBatch(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	if err := c.Write(ctx, ins(s.entry(t, tb, 1, 1))); err != nil {
		t.Fatal(err)
	}
	batch := ins(s.entry(t, tb, 0, 1), s.entry(t, tb, 1, 1), s.entry(t, tb, 2, 1))
	err := c.Write(ctx, batch)
	var we *p4rt.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("batch with a duplicate: %T %v, want *p4rt.WriteError with per-update details", err, err)
	}
	if len(we.Failed) != 1 || we.Failed[0].Index != 1 || we.Failed[0].Code != codes.AlreadyExists {
		t.Fatalf("per-update details: %v, want exactly update 1 ALREADY_EXISTS", err)
	}
	for _, i := range []int{0, 2} {
		if _, err := c.ReadEntry(ctx, s.entry(t, tb, i, 1)); err != nil {
			t.Errorf("update %d of the batch was not applied (CONTINUE_ON_ERROR): %v", i, err)
		}
	}
}

func (s *suite) testBytestrings(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	w := tb.GetMatchFields()[0].GetBitwidth()
	kind := tb.GetMatchFields()[0].GetMatchType()

	tooWide := s.entry(t, tb, 0, 1)
	*valueOf(tooWide.Match[0]) = append([]byte{0x80}, make([]byte, (w+7)/8)...)
	expectCode(t, fmt.Sprintf("%v match value wider than %d bits", kind, w), c.Write(ctx, ins(tooWide)), bytestringCodes...)

	if a := s.action(tb); len(a.GetParams()) > 0 {
		pw := a.GetParams()[0].GetBitwidth()
		bad := s.entry(t, tb, 0, 1)
		bad.GetAction().GetAction().Params[0].Value = append([]byte{0x80}, make([]byte, (pw+7)/8)...)
		expectCode(t, fmt.Sprintf("action parameter wider than %d bits", pw), c.Write(ctx, ins(bad)), bytestringCodes...)
	}
	if w%8 != 0 {
		// One bit above the width, within the same byte count.
		bad := s.entry(t, tb, 0, 1)
		b := make([]byte, (w+7)/8)
		b[0] = 1 << uint(w%8)
		*valueOf(bad.Match[0]) = b
		expectCode(t, fmt.Sprintf("bit %d set in a %d-bit field", w, w), c.Write(ctx, ins(bad)), bytestringCodes...)
	}

	empty := s.entry(t, tb, 0, 1)
	*valueOf(empty.Match[0]) = nil
	err := c.Write(ctx, ins(empty))
	if s.c.Quirks.AcceptsEmptyBytestring {
		if err != nil {
			t.Errorf("empty bytestring: %v; the AcceptsEmptyBytestring quirk says it is accepted", err)
		}
		c.ApplyRetrySafe(ctx, p4rt.Updates(p4v1.Update_DELETE, empty))
	} else {
		expectCode(t, "empty bytestring", err, bytestringCodes...)
	}

	// Zero-padded values are in range: accepted, and read back canonical.
	padded := s.entry(t, tb, 4, 1)
	*valueOf(padded.Match[0]) = append([]byte{0, 0}, *valueOf(padded.Match[0])...)
	if err := c.Write(ctx, ins(padded)); err != nil {
		t.Fatalf("zero-padded value: %v, want it accepted (P4Runtime 1.3+)", err)
	}
	got, err := c.ReadTableEntries(ctx, s.idx.Name(tb.GetPreamble().GetId()))
	if err != nil || len(got) != 1 {
		t.Fatalf("read back: %v %v", got, err)
	}
	for _, fm := range got[0].GetMatch() {
		if fm.GetFieldId() != tb.GetMatchFields()[0].GetId() {
			continue
		}
		if v := *valueOf(fm); len(v) == 0 || (len(v) > 1 && v[0] == 0) {
			t.Errorf("read back %x: not the canonical (shortest) bytestring", v)
		}
	}

	if lpm := s.lpmTable(); lpm != nil {
		e := s.entry(t, lpm, 0, 1)
		for _, fm := range e.Match {
			if l := fm.GetLpm(); l != nil {
				l.PrefixLen = 1 // the value i+1 has low bits set beyond a /1
			}
		}
		expectCode(t, "LPM value with bits beyond the prefix", c.Write(ctx, ins(e)), codes.InvalidArgument)
	}
	if tern := s.tableWith(p4configv1.MatchField_TERNARY); tern != nil {
		e := s.entry(t, tern, 0, 1)
		for _, fm := range e.Match {
			if tr := fm.GetTernary(); tr != nil {
				tr.Value, tr.Mask = []byte{3}, []byte{2} // 3 & 2 != 3
			}
		}
		expectCode(t, "ternary value with bits outside the mask", c.Write(ctx, ins(e)), codes.InvalidArgument)
	}
}

// valueOf points at the value bytes of a field match (the high end of a
// range).
func valueOf(fm *p4v1.FieldMatch) *[]byte {
	switch m := fm.GetFieldMatchType().(type) {
	case *p4v1.FieldMatch_Exact_:
		return &m.Exact.Value
	case *p4v1.FieldMatch_Lpm:
		return &m.Lpm.Value
	case *p4v1.FieldMatch_Ternary_:
		return &m.Ternary.Value
	case *p4v1.FieldMatch_Range_:
		return &m.Range.High
	case *p4v1.FieldMatch_Optional_:
		return &m.Optional.Value
	}
	var none []byte
	return &none
}

// lpmTable returns a table whose fields are LPM or exact, with one LPM.
func (s *suite) lpmTable() *p4configv1.Table {
	for _, tb := range s.info.GetTables() {
		if tb.GetIsConstTable() || s.action(tb) == nil || tb.GetSize() < 4 {
			continue
		}
		n, ok := 0, len(tb.GetMatchFields()) > 0
		for _, f := range tb.GetMatchFields() {
			switch f.GetMatchType() {
			case p4configv1.MatchField_LPM:
				n++
				ok = ok && f.GetBitwidth() >= 2 && f.GetBitwidth() <= 64
			case p4configv1.MatchField_EXACT:
			default:
				ok = false
			}
		}
		if ok && n == 1 {
			return tb
		}
	}
	return nil
}

// tableWith returns the first usable table with a field of kind k.
func (s *suite) tableWith(k p4configv1.MatchField_MatchType) *p4configv1.Table {
	tables := slices.Clone(s.info.GetTables())
	sort.Slice(tables, func(i, j int) bool { return tables[i].GetPreamble().GetName() < tables[j].GetPreamble().GetName() })
	for _, tb := range tables {
		if tb.GetIsConstTable() || s.action(tb) == nil || tb.GetSize() < 4 {
			continue
		}
		ok, found := true, false
		for _, f := range tb.GetMatchFields() {
			ok = ok && f.GetBitwidth() >= 4 && f.GetBitwidth() <= 64
			found = found || f.GetMatchType() == k
		}
		if ok && found {
			return tb
		}
	}
	return nil
}

func (s *suite) testPriorities(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	s.clear(t, c)
	tested := 0
	for _, k := range []p4configv1.MatchField_MatchType{p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL} {
		tb := s.tableWith(k)
		if tb == nil {
			continue
		}
		tested++
		name := s.idx.Name(tb.GetPreamble().GetId())
		e := s.entry(t, tb, 0, 1)
		e.Priority = 0
		expectCode(t, fmt.Sprintf("%s (%v field) entry without priority", name, k), c.Write(ctx, ins(e)), codes.InvalidArgument)
		// Same match, two priorities: two distinct entries.
		lo, hi := s.entry(t, tb, 0, 1), s.entry(t, tb, 0, 1)
		lo.Priority, hi.Priority = 10, 20
		if err := c.Write(ctx, ins(lo, hi)); err != nil {
			t.Errorf("%s: same match with priorities 10 and 20: %v", name, err)
			continue
		}
		got, err := c.ReadTableEntries(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var prios []int32
		for _, g := range got {
			prios = append(prios, g.GetPriority())
		}
		slices.Sort(prios)
		if !slices.Equal(prios, []int32{10, 20}) {
			t.Errorf("%s: read priorities %v, want [10 20]", name, prios)
		}
	}
	if exact := s.tableWith(p4configv1.MatchField_EXACT); exact != nil && !needsPriority(exact) {
		e := s.entry(t, exact, 0, 1)
		e.Priority = 5
		expectCode(t, "exact-only table entry with a priority", c.Write(ctx, ins(e)), codes.InvalidArgument)
		tested++
	}
	if tested == 0 {
		t.Skip("the P4Info has no table with ternary, range, optional or exact fields")
	}
	// Which entry wins a lookup is data-plane behaviour, checked by the
	// packet tests (pkg/dataplane, bmv2-tests/), not here.
}

func (s *suite) testDefaultEntry(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	// A table whose default action may change, and an action allowed as
	// default, preferring one with parameters (so the change is visible).
	var tb *p4configv1.Table
	var act *p4configv1.Action
	for _, cand := range s.info.GetTables() {
		if cand.GetConstDefaultActionId() != 0 {
			continue
		}
		for _, ref := range cand.GetActionRefs() {
			a, ok := s.idx.ActionByID(ref.GetId())
			if !ok || ref.GetScope() == p4configv1.ActionRef_TABLE_ONLY || slices.ContainsFunc(a.GetParams(), func(p *p4configv1.Action_Param) bool { return p.GetBitwidth() > 64 }) {
				continue
			}
			if act == nil || (len(act.GetParams()) == 0 && len(a.GetParams()) > 0) {
				tb, act = cand, a
			}
		}
	}
	if tb == nil {
		t.Skip("the P4Info has no table whose default action can be modified")
	}
	def := &p4v1.TableEntry{TableId: tb.GetPreamble().GetId(), IsDefaultAction: true}
	a := &p4v1.Action{ActionId: act.GetPreamble().GetId()}
	for _, p := range act.GetParams() {
		a.Params = append(a.Params, &p4v1.Action_Param{ParamId: p.GetId(), Value: enc(t, 3, p.GetBitwidth())})
	}
	def.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: a}}
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_MODIFY, def)); err != nil {
		t.Fatalf("MODIFY of %s's default entry: %v", s.idx.Name(tb.GetPreamble().GetId()), err)
	}
	got, err := c.ReadDefaultEntry(ctx, s.idx.Name(tb.GetPreamble().GetId()))
	if err != nil || !p4rt.SameContents(got, def) {
		t.Errorf("read default entry: %v %v", got, err)
	}
	expectCode(t, "INSERT of a default entry", c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, def)), codes.InvalidArgument)
	expectCode(t, "DELETE of a default entry", c.Write(ctx, p4rt.Updates(p4v1.Update_DELETE, def)), codes.InvalidArgument)
}

func (s *suite) testCounters(t *testing.T) {
	ctx := ctxFor(t)
	c := s.dial(t, p4rt.ElectionID{})
	var ctr *p4configv1.Counter
	for _, x := range s.info.GetCounters() {
		if x.GetSize() > 0 && (ctr == nil || x.GetPreamble().GetName() < ctr.GetPreamble().GetName()) {
			ctr = x
		}
	}
	if ctr == nil {
		t.Skip("the P4Info has no indirect counter")
	}
	name := ctr.GetPreamble().GetName()
	cells, err := c.ReadCounter(ctx, name, -1)
	if err != nil {
		t.Fatalf("wildcard read of counter %s: %v", name, err)
	}
	if int64(len(cells)) != ctr.GetSize() {
		t.Errorf("counter %s: %d cells, want %d", name, len(cells), ctr.GetSize())
	}
	seen := map[int64]bool{}
	for _, cell := range cells {
		if cell.Index < 0 || cell.Index >= ctr.GetSize() || seen[cell.Index] || cell.Packets < 0 || cell.Bytes < 0 {
			t.Errorf("counter %s: bad cell %+v", name, cell)
		}
		seen[cell.Index] = true
	}
	last := ctr.GetSize() - 1
	one, err := c.ReadCounter(ctx, name, last)
	if err != nil || len(one) != 1 || one[0].Index != last {
		t.Errorf("read of %s[%d]: %v %v", name, last, one, err)
	}
	ent := &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
		CounterId: ctr.GetPreamble().GetId(), Index: &p4v1.Index{Index: ctr.GetSize()}}}}
	_, err = c.ReadAll(ctx, ent)
	want := []codes.Code{codes.OutOfRange, codes.InvalidArgument}
	if q := s.c.Quirks.IndexOutOfRangeCode; q != codes.OK {
		want = []codes.Code{q}
	}
	expectCode(t, "read of a counter index beyond its size", err, want...)
}

func (s *suite) testDirectCounters(t *testing.T) {
	if len(s.info.GetDirectCounters()) == 0 {
		t.Skip("the P4Info has no direct counter")
	}
	ctx := ctxFor(t)
	c := s.primary(t)
	s.clear(t, c)
	dc := s.info.GetDirectCounters()[0]
	tb, ok := s.idx.TableByID(dc.GetDirectTableId())
	if !ok || s.action(tb) == nil {
		t.Skip("the direct counter's table has no usable action")
	}
	e := s.entry(t, tb, 0, 1)
	if err := c.Write(ctx, ins(e)); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadDirectCounters(ctx, s.idx.Name(tb.GetPreamble().GetId()), e)
	if err != nil || len(got) != 1 || got[0].GetData() == nil {
		t.Fatalf("direct counter of a new entry: %v %v", got, err)
	}
}

func (s *suite) testRegisters(t *testing.T) {
	ctx := ctxFor(t)
	var reg *p4configv1.Register
	for _, r := range s.info.GetRegisters() {
		if w := p4rt.RegisterWidth(r); w > 0 && w <= 64 && r.GetSize() > 0 {
			reg = r
			break
		}
	}
	if reg == nil {
		t.Skip("the P4Info has no bit<W> register")
	}
	name := reg.GetPreamble().GetName()
	c := s.primary(t)
	cells, err := c.ReadRegister(ctx, name, 0)
	if want := s.c.Quirks.RegisterReadCode; want != codes.OK {
		expectCode(t, "register read (documented as unsupported)", err, want)
		expectCode(t, "register write (documented as unsupported)", c.WriteRegister(ctx, name, 0, 1), s.c.Quirks.RegisterWriteCode)
		return
	}
	if err != nil || len(cells) != 1 || cells[0].Index != 0 {
		t.Fatalf("read %s[0]: %v %v", name, cells, err)
	}
	err = c.WriteRegister(ctx, name, 0, 1)
	if want := s.c.Quirks.RegisterWriteCode; want != codes.OK {
		expectCode(t, "register write (documented as unsupported)", err, want)
		return
	}
	if err != nil {
		t.Fatalf("write %s[0]: %v", name, err)
	}
	cells, err = c.ReadRegister(ctx, name, 0)
	if err != nil || len(cells) != 1 || cells[0].Value != 1 {
		t.Errorf("read back %s[0]: %v %v", name, cells, err)
	}
	c.WriteRegister(ctx, name, 0, 0)
}

// testReconcile checks read-write symmetry end to end: after a reconcile,
// reading the switch back yields exactly the desired entries (same keys,
// same contents), so the next reconcile has nothing to do.
func (s *suite) testReconcile(t *testing.T) {
	ctx := ctxFor(t)
	c := s.primary(t)
	tb := s.usable(t)
	s.clear(t, c)
	tables := []string{s.idx.Name(tb.GetPreamble().GetId())}
	desired := []*p4v1.TableEntry{s.entry(t, tb, 0, 1), s.entry(t, tb, 1, 1), s.entry(t, tb, 2, 1)}
	if other := s.second(tb); other != nil {
		tables = append(tables, s.idx.Name(other.GetPreamble().GetId()))
		desired = append(desired, s.entry(t, other, 0, 1), s.entry(t, other, 1, 1))
	}
	opts := p4rt.ReconcileOptions{Tables: tables}
	plan, err := c.Reconcile(ctx, desired, opts)
	if err != nil || len(plan.Inserts) != len(desired) {
		t.Fatalf("first reconcile: %v %v", plan, err)
	}
	if plan, err := c.PlanReconcile(ctx, desired, opts); err != nil || !plan.Empty() {
		t.Fatalf("reconcile right after a reconcile: %v %v (the switch does not read back what was written)", plan, err)
	}
	next := append([]*p4v1.TableEntry{s.entry(t, tb, 0, 2)}, desired[2:]...) // entry 0 changed, entry 1 gone
	want := "0 inserts, 1 modify, 1 delete"
	if len(s.action(tb).GetParams()) == 0 {
		want = "0 inserts, 0 modifies, 1 delete" // a parameterless action cannot change
	}
	plan, err = c.Reconcile(ctx, next, opts)
	if err != nil || plan.String() != want {
		t.Fatalf("second reconcile: %v %v, want %s", plan, err, want)
	}
	if plan, err := c.PlanReconcile(ctx, next, opts); err != nil || !plan.Empty() {
		t.Fatalf("after the second reconcile: %v %v", plan, err)
	}
}
