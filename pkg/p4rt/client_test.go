package p4rt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// l2 builds an l2_forward entry (exact 48-bit key).
func l2(t testing.TB, idx *p4rt.Index, mac uint64, port int) *p4v1.TableEntry {
	t.Helper()
	e, err := idx.TableEntry("l2_forward").Exact("dst_mac", mac).Action("forward", p4rt.Param("port", port)).Build()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func l2s(t testing.TB, idx *p4rt.Index, n int) []*p4v1.TableEntry {
	out := make([]*p4v1.TableEntry, n)
	for i := range out {
		out[i] = l2(t, idx, uint64(0x020000000000+i), i%500)
	}
	return out
}

// countWrites counts Write RPCs reaching the server.
func countWrites(n *atomic.Int64) p4rttest.Option {
	return p4rttest.WithServerOptions(p4rtserver.WithGRPCOptions(grpc.UnaryInterceptor(
		func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if strings.HasSuffix(info.FullMethod, "/Write") {
				n.Add(1)
			}
			return h(ctx, req)
		})))
}

func TestWriteReadRoundTrip(t *testing.T) {
	var writes atomic.Int64
	c, _ := p4rttest.New(t, countWrites(&writes), p4rttest.WithClientOptions(p4rt.WithBatchSize(3)))
	ctx := ctxT(t)
	idx, err := c.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := l2s(t, idx, 10)
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, want...)); err != nil {
		t.Fatal(err)
	}
	if got := writes.Load(); got != 4 {
		t.Errorf("10 updates in batches of 3: %d Write RPCs, want 4", got)
	}
	got, err := c.ReadTableEntries(ctx, "l2_forward")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	byKey := map[string]*p4v1.TableEntry{}
	for _, e := range got {
		byKey[p4rt.EntryKey(e)] = e
	}
	for _, w := range want {
		g, ok := byKey[p4rt.EntryKey(w)]
		if !ok || !proto.Equal(g, w) {
			t.Fatalf("read-write asymmetry for %s: got %v", idx.FormatTableEntry(w), g)
		}
	}
	all, err := c.ReadTableEntries(ctx)
	if err != nil || len(all) != 10 {
		t.Fatalf("wildcard read of all tables: %d entries, %v", len(all), err)
	}
	one, err := c.ReadEntry(ctx, want[4])
	if err != nil || !proto.Equal(one, want[4]) {
		t.Fatalf("ReadEntry: %v %v", one, err)
	}
	if _, err := c.ReadEntry(ctx, l2(t, idx, 0xdead, 1)); !errors.Is(err, p4rt.ErrNotFound) {
		t.Fatalf("ReadEntry of a missing entry: %v", err)
	}
	// Dry run: the same batches, nothing sent.
	reqs := c.WriteRequests(p4rt.Updates(p4v1.Update_DELETE, want...))
	if len(reqs) != 4 || reqs[0].GetElectionId().GetLow() != 1 || reqs[0].GetDeviceId() != 1 {
		t.Fatalf("WriteRequests: %d requests %v", len(reqs), reqs[0])
	}
	if txt := p4rt.FormatWriteRequests(reqs); !strings.Contains(txt, "type:") || !strings.Contains(txt, "DELETE") {
		t.Fatalf("dry-run text:\n%s", txt)
	}
}

func TestWriteErrorDetails(t *testing.T) {
	c, _ := p4rttest.New(t, p4rttest.WithClientOptions(p4rt.WithBatchSize(4)))
	ctx := ctxT(t)
	idx, _ := c.Index(ctx)
	es := l2s(t, idx, 10)
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, es[5])); err != nil {
		t.Fatal(err)
	}
	err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, es...))
	var we *p4rt.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("want *WriteError, got %T %v", err, err)
	}
	if len(we.Failed) != 1 || we.Failed[0].Index != 5 || we.Failed[0].Op != p4v1.Update_INSERT || we.Failed[0].Code != codes.AlreadyExists {
		t.Fatalf("failed updates: %+v", we.Failed)
	}
	if !strings.Contains(err.Error(), "update 5 (INSERT table entry P4ctlIngress.l2_forward dst_mac=02:00:00:00:00:05") {
		t.Errorf("error does not say which update failed: %v", err)
	}
	if !errors.Is(err, p4rt.ErrAlreadyExists) || errors.Is(err, p4rt.ErrNotFound) || p4rt.Code(err) != codes.AlreadyExists {
		t.Errorf("errors.Is / Code: %v", err)
	}
	got, _ := c.ReadTableEntries(ctx, "l2_forward")
	if len(got) != 10 {
		t.Errorf("CONTINUE_ON_ERROR applied %d entries, want 10", len(got))
	}

	// Atomic batches: all or nothing, later batches not sent.
	more := make([]*p4v1.TableEntry, 0, 8)
	for i := range 8 {
		more = append(more, l2(t, idx, uint64(0x030000000000+i), 1))
	}
	more[1] = es[0] // exists: batch 0 fails
	err = c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, more...), p4rt.WriteAtomicity(p4v1.WriteRequest_ROLLBACK_ON_ERROR))
	if !errors.As(err, &we) || we.NotAttempted != 4 {
		t.Fatalf("atomic: %v", err)
	}
	aborted := 0
	for _, f := range we.Failed {
		if f.Code == codes.Aborted {
			aborted++
		}
	}
	if aborted != 3 || !errors.Is(err, p4rt.ErrAlreadyExists) {
		t.Errorf("atomic batch: %d aborted, want 3: %v", aborted, err)
	}
	if got, _ := c.ReadTableEntries(ctx, "l2_forward"); len(got) != 10 {
		t.Errorf("after a failed atomic batch: %d entries, want 10", len(got))
	}

	// Delete / modify of missing entries.
	err = c.Write(ctx, p4rt.Updates(p4v1.Update_DELETE, l2(t, idx, 0xbeef, 1)))
	if !errors.Is(err, p4rt.ErrNotFound) {
		t.Errorf("delete missing: %v", err)
	}
	err = c.Write(ctx, p4rt.Updates(p4v1.Update_MODIFY, l2(t, idx, 0xbeef, 1)))
	if !errors.Is(err, p4rt.ErrNotFound) {
		t.Errorf("modify missing: %v", err)
	}
}

func TestNotPrimary(t *testing.T) {
	_, sw := p4rttest.New(t)
	ctx := ctxT(t)
	backup := sw.Dial(t) // no election id: read-only backup
	st, err := backup.Arbitrate(ctx)
	if err != nil || st.Primary || !st.HasPrimary || st.PrimaryElectionID != p4rt.Election(1) {
		t.Fatalf("backup arbitration: %v %v", st, err)
	}
	idx, _ := backup.Index(ctx)
	err = backup.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, l2(t, idx, 1, 1)))
	if !errors.Is(err, p4rt.ErrPermissionDenied) || !strings.Contains(err.Error(), "not primary") {
		t.Fatalf("backup write: %v", err)
	}
	if _, err := backup.ReadTableEntries(ctx); err != nil {
		t.Fatalf("backup read: %v", err)
	}
}

func TestArbitrationChanges(t *testing.T) {
	sw := p4rttest.Start(t)
	ctx := ctxT(t)
	a := sw.Dial(t, p4rt.WithElectionID(p4rt.Election(5)))
	if st, err := a.Arbitrate(ctx); err != nil || !st.Primary || st.Event != p4rt.EventPrimary {
		t.Fatalf("a: %v %v", st, err)
	}
	// Duplicate election id: a clear error.
	dup := sw.Dial(t, p4rt.WithElectionID(p4rt.Election(5)))
	_, err := dup.Arbitrate(ctx)
	var ae *p4rt.ArbitrationError
	if !errors.As(err, &ae) || !errors.Is(err, p4rt.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "another controller already uses election id 5 for device 1") {
		t.Fatalf("duplicate election id: %v", err)
	}
	// Wrong device id.
	wrong := sw.Dial(t, p4rt.WithElectionID(p4rt.Election(9)), p4rt.WithDeviceID(42))
	if _, err := wrong.Arbitrate(ctx); !errors.Is(err, p4rt.ErrNotFound) || !strings.Contains(err.Error(), "device id 42") {
		t.Fatalf("wrong device id: %v", err)
	}

	drain(a)
	b := sw.Dial(t, p4rt.WithElectionID(p4rt.Election(6)))
	if st, err := b.Arbitrate(ctx); err != nil || !st.Primary {
		t.Fatalf("b: %v %v", st, err)
	}
	st := waitEvent(t, a, p4rt.EventLostPrimary)
	if st.Primary || st.PrimaryElectionID != p4rt.Election(6) || !st.HasPrimary {
		t.Fatalf("a after b took over: %v", st)
	}
	// b leaves: nobody is primary; a must raise its id to take over.
	b.Close()
	st = waitEvent(t, a, p4rt.EventBackup)
	if st.HasPrimary {
		t.Fatalf("a after b left: %v", st)
	}
	if st, err := a.SetElectionID(ctx, p4rt.Election(7)); err != nil || !st.Primary {
		t.Fatalf("a takes over: %v %v", st, err)
	}
	if _, err := a.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
}

func drain(c *p4rt.Client) {
	for {
		select {
		case <-c.StateChanges():
		default:
			return
		}
	}
}

func waitEvent(t *testing.T, c *p4rt.Client, ev p4rt.StateEvent) p4rt.ArbitrationState {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case st := <-c.StateChanges():
			if st.Event == ev {
				return st
			}
		case <-timeout:
			t.Fatalf("no %v event; state %v", ev, c.State())
		}
	}
}

func TestPipelineAndDefaultEntry(t *testing.T) {
	c, _ := p4rttest.New(t, p4rttest.WithoutPipeline())
	ctx := ctxT(t)
	if _, err := c.ReadTableEntries(ctx); !errors.Is(err, p4rt.ErrFailedPrecondition) {
		t.Fatalf("read without pipeline: %v", err)
	}
	if _, err := c.Index(ctx); !errors.Is(err, p4rt.ErrFailedPrecondition) {
		t.Fatalf("index without pipeline: %v", err)
	}
	info := p4rttest.ProgramP4Info()
	if err := c.SetP4Info(ctx, p4rt.Verify, info, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SetP4Info(ctx, p4rt.VerifyAndCommit, info, []byte("device config"), 77); err != nil {
		t.Fatal(err)
	}
	cfg, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_ALL)
	if err != nil || !proto.Equal(cfg.GetP4Info(), info) || cfg.GetCookie().GetCookie() != 77 || string(cfg.GetP4DeviceConfig()) != "device config" {
		t.Fatalf("GetPipeline: %v", err)
	}
	idx, err := c.Index(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def, err := idx.TableEntry("active_epoch").Default().Action("set_active_epoch", p4rt.Param("epoch", 3)).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_MODIFY, def)); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadDefaultEntry(ctx, "active_epoch")
	if err != nil || !p4rt.SameContents(got, def) {
		t.Fatalf("default entry: %v %v", got, err)
	}
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, def)); !errors.Is(err, p4rt.ErrInvalidArgument) {
		t.Fatalf("INSERT of a default entry: %v", err)
	}
	for _, a := range []string{"verify", "VERIFY_AND_COMMIT", "reconcile-and-commit", "commit", "verify-and-save"} {
		if _, err := p4rt.ParsePipelineAction(a); err != nil {
			t.Error(err)
		}
	}
	if _, err := p4rt.ParsePipelineAction("push"); err == nil {
		t.Error("bad action parsed")
	}
}

func TestCountersAndRegisters(t *testing.T) {
	c, _ := p4rttest.New(t)
	ctx := ctxT(t)
	cells, err := c.ReadCounter(ctx, "dispatch_events", -1)
	if err != nil || len(cells) != 16 {
		t.Fatalf("wildcard counter read: %d cells, %v", len(cells), err)
	}
	one, err := c.ReadCounter(ctx, "dispatch_events", 4)
	if err != nil || len(one) != 1 || one[0].Index != 4 || one[0].Packets != 0 {
		t.Fatalf("counter cell: %v %v", one, err)
	}
	if _, err := c.ReadCounter(ctx, "dispatch_events", 16); err == nil {
		t.Fatal("counter index beyond size accepted")
	}
	if err := c.WriteRegister(ctx, "server_work_us", 9, 3); err != nil {
		t.Fatal(err)
	}
	regs, err := c.ReadRegister(ctx, "server_work_us", 9)
	if err != nil || len(regs) != 1 || regs[0].Value != 3 {
		t.Fatalf("register: %v %v", regs, err)
	}
	all, err := c.ReadRegister(ctx, "region_outstanding", -1)
	if err != nil || len(all) != 32 {
		t.Fatalf("register wildcard: %v %v", all, err)
	}
	if _, err := c.ReadDirectCounters(ctx, "l2_forward", nil); !errors.Is(err, p4rt.ErrUnknownName) {
		t.Fatalf("direct counter of a table without one: %v", err)
	}
}

func TestReconcile(t *testing.T) {
	c, _ := p4rttest.New(t)
	ctx := ctxT(t)
	idx, _ := c.Index(ctx)
	entry := func(epoch, region, prio int) *p4v1.TableEntry {
		e, err := idx.TableEntry("carbon_rank").Exact("epoch", epoch).Ternary("feasible", uint32(1)<<region, uint32(1)<<region).
			Priority(int32(prio)).Action("route_to_region", p4rt.Param("region", region)).Build()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	active := func(epoch int) *p4v1.TableEntry {
		e, err := idx.TableEntry("active_epoch").Default().Action("set_active_epoch", p4rt.Param("epoch", epoch)).Build()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	gen1 := []*p4v1.TableEntry{entry(1, 0, 32), entry(1, 1, 31), entry(1, 2, 30), active(1)}
	plan, err := c.Reconcile(ctx, gen1, p4rt.ReconcileOptions{})
	if err != nil || plan.String() != "3 inserts, 1 modify, 0 deletes" {
		t.Fatalf("first reconcile: %v %v", plan, err)
	}
	plan, err = c.PlanReconcile(ctx, gen1, p4rt.ReconcileOptions{})
	if err != nil || !plan.Empty() {
		t.Fatalf("reconcile of an up-to-date switch: %v %v", plan, err)
	}
	// Next generation: new epoch, flip, old epoch gone; one rank changed in place.
	gen2 := []*p4v1.TableEntry{entry(2, 2, 32), entry(2, 0, 31), entry(2, 1, 30), active(2)}
	plan, err = c.PlanReconcile(ctx, gen2, p4rt.ReconcileOptions{})
	if err != nil || plan.String() != "3 inserts, 1 modify, 3 deletes" {
		t.Fatalf("plan: %v %v", plan, err)
	}
	if plan.Modifies[0].GetEntity().GetTableEntry().GetIsDefaultAction() != true {
		t.Errorf("the epoch flip is not the modify: %v", plan.Modifies[0])
	}
	reqs := c.PlanRequests(plan)
	if len(reqs) != 3 || reqs[0].Updates[0].Type != p4v1.Update_INSERT || reqs[1].Updates[0].Type != p4v1.Update_MODIFY || reqs[2].Updates[0].Type != p4v1.Update_DELETE {
		t.Fatalf("dry-run requests are not phased insert → modify → delete: %v", reqs)
	}
	if got, _ := c.ReadTableEntries(ctx, "carbon_rank"); len(got) != 3 {
		t.Fatalf("planning wrote to the switch: %d entries", len(got))
	}
	if _, err := c.Reconcile(ctx, gen2, p4rt.ReconcileOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := c.ReadTableEntries(ctx, "carbon_rank")
	if plan, _ := p4rt.Diff(gen2[:3], got, nil); !plan.Empty() || len(got) != 3 {
		t.Fatalf("after reconcile: %d entries, diff %v", len(got), plan)
	}
	// A changed action is a MODIFY; scoping to other tables deletes nothing here.
	changed := entry(2, 0, 31)
	changed.GetAction().GetAction().Params[0].Value = []byte{5}
	plan, _ = c.PlanReconcile(ctx, []*p4v1.TableEntry{changed}, p4rt.ReconcileOptions{Tables: []string{"l2_forward"}})
	if plan.String() != "0 inserts, 1 modify, 0 deletes" {
		t.Fatalf("scoped plan: %v", plan)
	}
	if _, err := p4rt.Diff([]*p4v1.TableEntry{changed, changed}, nil, nil); err == nil {
		t.Fatal("duplicate desired keys accepted")
	}
}

// After a controller restart, replaying its writes converges instead of
// failing: INSERT of an existing entry becomes MODIFY, DELETE of a missing
// entry is done.
func TestApplyRetrySafe(t *testing.T) {
	c, _ := p4rttest.New(t, p4rttest.WithClientOptions(p4rt.WithBatchSize(2)))
	ctx := ctxT(t)
	idx, _ := c.Index(ctx)
	es := l2s(t, idx, 5)
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, es[:3]...)); err != nil {
		t.Fatal(err)
	}
	es[1] = l2(t, idx, 0x020000000001, 99) // changed port
	ups := p4rt.Updates(p4v1.Update_INSERT, es...)
	ups = append(ups, p4rt.Updates(p4v1.Update_DELETE, l2(t, idx, 0xdead, 1))...)
	ups = append(ups, p4rt.Updates(p4v1.Update_MODIFY, l2(t, idx, 0xbeef, 2))...)
	if err := c.ApplyRetrySafe(ctx, ups); err != nil {
		t.Fatalf("retry-safe apply: %v", err)
	}
	got, _ := c.ReadTableEntries(ctx, "l2_forward")
	if len(got) != 6 {
		t.Fatalf("%d entries, want 6", len(got))
	}
	one, err := c.ReadEntry(ctx, es[1])
	if err != nil || !p4rt.SameContents(one, es[1]) {
		t.Fatalf("existing entry not modified: %v %v", one, err)
	}
	// Hard failures still fail, with indices into the caller's slice.
	bad := l2(t, idx, 7, 1)
	bad.GetAction().GetAction().Params[0].Value = []byte{0xff, 0xff}
	err = c.ApplyRetrySafe(ctx, append(p4rt.Updates(p4v1.Update_INSERT, es[0]), p4rt.Updates(p4v1.Update_INSERT, bad)...))
	var we *p4rt.WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed[0].Index != 1 {
		t.Fatalf("hard failure: %v", err)
	}
}

func TestCallDeadlines(t *testing.T) {
	var missing atomic.Int64
	opt := p4rttest.WithServerOptions(p4rtserver.WithGRPCOptions(grpc.UnaryInterceptor(
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if _, ok := ctx.Deadline(); !ok {
				missing.Add(1)
			}
			return h(ctx, req)
		})))
	c, _ := p4rttest.New(t, opt, p4rttest.WithClientOptions(p4rt.WithCallTimeout(time.Minute)))
	ctx := context.Background() // no deadline: the client adds one
	if _, err := c.Capabilities(ctx); err != nil {
		t.Fatal(err)
	}
	idx, _ := c.Index(ctx)
	if err := c.Write(ctx, p4rt.Updates(p4v1.Update_INSERT, l2(t, idx, 1, 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY); err != nil {
		t.Fatal(err)
	}
	if n := missing.Load(); n != 0 {
		t.Fatalf("%d unary calls reached the server without a deadline", n)
	}
	expired, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-expired.Done()
	if _, err := c.Capabilities(expired); p4rt.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("expired context: %v", err)
	}
}

func TestPlaintextOnlyToLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:9559": true, "localhost:9559": true, "[::1]:9559": true,
		"192.0.2.10:9559": false, "switch.example:9559": false,
		"passthrough:///127.0.0.1:9559": true, "passthrough:///192.0.2.10:9559": false,
		"dns:///localhost:9559": true, "unix:///run/p4.sock": true,
	} {
		c, err := p4rt.Dial(addr)
		if (err == nil) != ok {
			t.Errorf("Dial(%s) plaintext: err %v, want allowed=%v", addr, err, ok)
		}
		if c != nil {
			c.Close()
		}
	}
	c, err := p4rt.Dial("192.0.2.10:9559", p4rt.WithInsecure())
	if err != nil {
		t.Fatalf("explicit insecure: %v", err)
	}
	c.Close()
}

func TestCapabilities(t *testing.T) {
	c, _ := p4rttest.New(t, p4rttest.WithoutArbitration())
	v, err := c.Capabilities(ctxT(t))
	if err != nil || v != "1.5.0" {
		t.Fatalf("Capabilities = %q, %v", v, err)
	}
	if st := c.State(); st.Connected {
		t.Fatalf("state before arbitration: %v", st)
	}
	if err := c.SendPacketOut(ctxT(t), &p4v1.PacketOut{}); !errors.Is(err, p4rt.ErrFailedPrecondition) {
		t.Fatalf("PacketOut without stream: %v", err)
	}
	if got := fmt.Sprint(p4rt.ElectionID{High: 1, Low: 2}); got != "18446744073709551618" {
		t.Errorf("ElectionID.String = %s", got)
	}
}
