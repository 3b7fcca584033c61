package dataplane

import (
	"context"
	"net"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// serveLoopback starts a switch behind its P4Runtime server on a loopback
// port, stopped at tb's cleanup, and returns it with the server's address.
func serveLoopback(tb testing.TB) (*Switch, string) {
	tb.Helper()
	sw, err := New(Options{})
	if err != nil {
		tb.Fatal(err)
	}
	srv := p4rtserver.New(sw)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	tb.Cleanup(srv.Stop)
	return sw, lis.Addr().String()
}

// The switch behind the P4Runtime server, driven over gRPC on loopback as a
// controller drives it: arbitrate, write entries, send traffic, read counters.
func TestOverP4Runtime(t *testing.T) {
	sw, addr := serveLoopback(t)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := p4v1.NewP4RuntimeClient(conn)
	stream, err := rpc.StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	election := &p4v1.Uint128{Low: 1}
	if err := stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: election}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := stream.Recv(); err != nil || m.GetArbitration().GetStatus().GetCode() != 0 {
		t.Fatalf("arbitration: %v %v", m, err)
	}
	cfg, err := rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1})
	if err != nil {
		t.Fatal(err)
	}
	info := cfg.GetConfig().GetP4Info()
	p := pc.Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 1}
	ups, err := pc.Updates(info, []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0),
		pc.LocalRegion(0, 0), p.Entry(0), pc.Endpoint(0, pc.Server(0))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: election, Updates: ups}); err != nil {
		t.Fatal(err)
	}
	if out := sw.Inject(1, pc.Bytes(pc.Request(pc.Client(1), 1, 500, 0))); out.Verdict != program.Forwarded || out.Port != pc.Server(0).Port {
		t.Fatalf("request: %+v", out.Result)
	}
	// Duplicate insert: per-update ALREADY_EXISTS through the server.
	if _, err := rpc.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: election, Updates: ups[:1]}); err == nil {
		t.Fatal("duplicate insert accepted")
	}
	var ctrID, regID uint32
	for _, c := range info.GetCounters() {
		if c.GetPreamble().GetName() == pipeline.CounterServerBound {
			ctrID = c.GetPreamble().GetId()
		}
	}
	for _, r := range info.GetRegisters() {
		if r.GetPreamble().GetName() == pipeline.RegisterServerCredit(0) {
			regID = r.GetPreamble().GetId()
		}
	}
	rd, err := rpc.Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{
		{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: ctrID, Index: &p4v1.Index{Index: 0}}}},
		{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{RegisterId: regID, Index: &p4v1.Index{Index: 0}}}},
		{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []*p4v1.Entity
	for {
		r, err := rd.Recv()
		if err != nil {
			break
		}
		got = append(got, r.GetEntities()...)
	}
	if len(got) != 2+len(ups) {
		t.Fatalf("read %d entities, want %d", len(got), 2+len(ups))
	}
	if n := got[0].GetCounterEntry().GetData().GetPacketCount(); n != 1 {
		t.Errorf("server_bound[0] = %d", n)
	}
	if b := got[1].GetRegisterEntry().GetData().GetBitstring(); len(b) != 1 || b[0] != 1 {
		t.Errorf("server_credit_0[0] = % x", b)
	}
}
