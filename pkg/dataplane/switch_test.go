package dataplane

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4info"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// fakeClock is a settable µs clock.
type fakeClock struct{ now atomic.Uint64 }

func (c *fakeClock) read() uint64 { return c.now.Load() }

func event(t *testing.T, sw *Switch, e pipeline.Event) uint64 {
	t.Helper()
	pk, _, err := sw.CounterValue(e.Lane().Counter(), uint64(e))
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

func reg(t *testing.T, sw *Switch, name string, i uint64) uint64 {
	t.Helper()
	v, err := sw.RegisterValue(name, i)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Credit TTL with a fake clock. credit_tick 1 (1 µs ticks): a credit
// untouched for more than pipeline.CreditTTLTicks ticks is claimed with
// count 1 by the next request; work restarts at the request's cost.
func TestCreditTTL(t *testing.T) {
	var clk fakeClock
	clk.now.Store(1000)
	sw, err := New(Options{Clock: clk.read})
	if err != nil {
		t.Fatal(err)
	}
	p := pc.Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 1, CreditTick: 1}
	install(t, sw, append([]pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 0),
		p.Entry(0), pc.ExecCost(1, 40, false)}, pc.Serves(0, pc.Server(0))...))
	send := func(id uint32) Output { return sw.Inject(1, pc.Bytes(pc.Request(pc.Client(1), id, 500, 1))) }
	credit := func() pipeline.Credit {
		return pipeline.CreditFromCell(reg(t, sw, pipeline.RegisterServerCredit(0), 0))
	}

	if out := send(1); out.Verdict != program.Forwarded {
		t.Fatalf("first request: %v", out.Result)
	}
	clk.now.Store(1000 + pipeline.CreditTTLTicks) // 7 ticks: still live
	if out := send(2); out.Verdict != program.Nacked {
		t.Fatalf("at the TTL the credit is live: %v", out.Result)
	}
	clk.now.Store(1000 + pipeline.CreditTTLTicks + 1)
	out := send(3)
	if out.Verdict != program.Forwarded {
		t.Fatalf("after the TTL: %v", out.Result)
	}
	if got := event(t, sw, pipeline.EventStaleReset); got != 1 {
		t.Errorf("stale-reset = %d", got)
	}
	if c, w := credit(), reg(t, sw, pipeline.RegisterServerWork, 0); c != (pipeline.Credit{Outstanding: 1, LastTick: 1008}) || w != 40 {
		t.Errorf("after the claim: %+v work %d, want {1 1008} 40", c, w)
	}
	// A reply refreshes last_tick and releases.
	clk.now.Store(1150)
	bound := pc.Request(pc.Client(1), 3, 500, 1)
	bound.Header.Server, bound.Header.Site = 0, 1
	if out := sw.Inject(pc.Server(0).Port, pc.Bytes(pc.Reply(bound, pc.Server(0), 0))); out.Verdict != program.Forwarded {
		t.Fatalf("reply: %v", out.Result)
	}
	if c := credit(); c != (pipeline.Credit{Outstanding: 0, LastTick: 1150}) {
		t.Errorf("after the reply: %+v", c)
	}
}

// Holds re-run the pass with the current time, and other packets may run
// between the passes of a held request: here a reply frees the slot while
// request 2 is held, so its second pass binds.
func TestHoldSeesReleaseBetweenPasses(t *testing.T) {
	var calls atomic.Int32
	thirdPass := make(chan struct{})
	resume := make(chan struct{})
	clock := func() uint64 {
		// Call 1: request 1; 2: request 2, pass 1 (held); 3: request 2,
		// pass 2 (waits for the reply); 4: the reply.
		if calls.Add(1) == 3 {
			close(thirdPass)
			<-resume
		}
		return 1000
	}
	sw, err := New(Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	p := pc.Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 1, MaxHolds: 5}
	install(t, sw, []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 0),
		p.Entry(0), pc.Endpoint(0, pc.Server(0)), pc.ReplySource(0, pc.Server(0))})
	r1 := pc.Request(pc.Client(1), 1, 500, 0)
	if out := sw.Inject(1, pc.Bytes(r1)); out.Verdict != program.Forwarded {
		t.Fatal(out.Result)
	}
	done := make(chan Output)
	go func() { done <- sw.Inject(1, pc.Bytes(pc.Request(pc.Client(1), 2, 500, 0))) }()
	<-thirdPass
	r1.Header.Server, r1.Header.Site = 0, 1
	if out := sw.Inject(pc.Server(0).Port, pc.Bytes(pc.Reply(r1, pc.Server(0), 0))); out.Verdict != program.Forwarded {
		t.Fatalf("reply: %+v", out.Result)
	}
	close(resume)
	out := <-done
	if out.Verdict != program.Forwarded || out.Passes != 2 {
		t.Fatalf("held request: %+v, want bound on pass 2", out.Result)
	}
	h, _ := wire.Decode(out.Frame[42:])
	if h.Flags != wire.FlagHeld || h.HoldCount != 1 || h.Server != 0 {
		t.Fatalf("header %+v", h)
	}
	if got := event(t, sw, pipeline.EventHold); got != 1 {
		t.Fatalf("holds = %d", got)
	}
}

func TestSetPipelineRebindsAndRejects(t *testing.T) {
	ctx := context.Background()
	sw, err := New(Options{NoPipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	frame := pc.Bytes(pc.Request(pc.Client(1), 1, 500, 0))
	if out := sw.Inject(1, frame); out.Reason != program.NoPipeline {
		t.Fatalf("without pipeline: %+v", out.Result)
	}
	// Ids other than ours (a different compiler's) are fine: the model binds by name.
	info := DefaultP4Info()
	for _, tb := range info.Tables {
		tb.Preamble.Id ^= 0x00ABCD
	}
	for _, a := range info.Actions {
		a.Preamble.Id ^= 0x00ABCD
	}
	idmap := map[uint32]uint32{}
	for _, a := range DefaultP4Info().Actions {
		idmap[a.Preamble.Id] = a.Preamble.Id ^ 0x00ABCD
	}
	for _, tb := range info.Tables {
		for _, r := range tb.ActionRefs {
			r.Id = idmap[r.Id]
		}
		tb.InitialDefaultAction.ActionId = idmap[tb.InitialDefaultAction.ActionId]
	}
	if err := sw.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: info}); err != nil {
		t.Fatal(err)
	}
	install(t, sw, []pc.Entry{pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 255, 0, 0), 16, 9)})
	if out := sw.Inject(1, frame); out.Reason != program.Unreachable {
		t.Fatalf("with re-id'd pipeline: %+v", out.Result)
	}
	// A P4Info of another program is rejected, saying why.
	bad := proto.Clone(DefaultP4Info()).(*p4configv1.P4Info)
	bad.Tables = bad.Tables[1:]
	for _, r := range bad.Registers {
		if r.GetPreamble().GetName() == pipeline.RegisterServerCredit(0) {
			r.TypeSpec.GetBitstring().GetBit().Bitwidth = 8 // by name: the P4Info lists registers in p4c's order
		}
	}
	err = sw.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: bad})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "table "+pipeline.TableClientSite+" is missing") ||
		!strings.Contains(err.Error(), "bit<8>, want bit<64>") {
		t.Fatalf("mismatching p4info: %v", err)
	}
	if out := sw.Inject(1, frame); out.Reason != program.Unreachable {
		t.Fatalf("rejected pipeline replaced the running one: %+v", out.Result)
	}
	// RECONCILE keeps entries and registers.
	if err := sw.SetPipeline(ctx, p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT, &p4v1.ForwardingPipelineConfig{P4Info: DefaultP4Info()}); err != nil {
		t.Fatal(err)
	}
	if out := sw.Inject(1, frame); out.Reason != program.Unreachable || event(t, sw, pipeline.EventUnreachable) != 3 {
		t.Fatalf("after reconcile: %+v", out.Result)
	}
}

func TestPacketOutAndIn(t *testing.T) {
	sw, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	install(t, sw, []pc.Entry{pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 2, 0), 24, DefaultCPUPort)})
	var mu sync.Mutex
	var ins []*p4v1.PacketIn
	var outs []Egress
	stopIn := sw.SubscribePacketIn(func(p *p4v1.PacketIn) { mu.Lock(); ins = append(ins, p); mu.Unlock() })
	stopOut := sw.OnEgress(func(e Egress) { mu.Lock(); outs = append(outs, e); mu.Unlock() })
	toClient := pc.Bytes(pc.Request(pc.Client(2), 1, 1, 0))
	toClient[30], toClient[31], toClient[32], toClient[33] = 10, 0, 1, 1 // dst 10.0.1.1, not p4ctl? still port 9800
	plain := append([]byte(nil), toClient...)
	plain[36], plain[37] = 0, 53 // dst port 53: plain UDP
	if err := sw.PacketOut(context.Background(), &p4v1.PacketOut{Payload: plain}); err != nil {
		t.Fatal(err)
	}
	toCPU := append([]byte(nil), plain...)
	toCPU[32] = 2 // 10.0.2.1 -> CPU port
	sw.Inject(1, toCPU)
	if err := sw.PacketOut(context.Background(), &p4v1.PacketOut{Payload: plain, Metadata: []*p4v1.PacketMetadata{{MetadataId: 1}}}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("PacketOut with metadata: %v", err)
	}
	stopIn()
	stopOut()
	sw.Inject(1, toCPU)
	mu.Lock()
	defer mu.Unlock()
	if len(outs) != 1 || outs[0].Port != 1 || string(outs[0].Frame) != string(plain) {
		t.Fatalf("egress: %+v", outs)
	}
	if len(ins) != 1 || string(ins[0].Payload) != string(toCPU) {
		t.Fatalf("packet-in: %+v", ins)
	}
}

// Packets and control-plane writes and reads run concurrently (go test -race).
func TestConcurrentPacketsAndWrites(t *testing.T) {
	sw, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := pc.Pool{Base: 0, SizeMask: 3, Policy: pipeline.PolicyJBSQ}
	install(t, sw, []pc.Entry{pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.Feasibility(1, 0, 0xFFFF, 1, 0),
		pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 0), p.Entry(0),
		pc.Endpoint(0, pc.Server(0)), pc.Endpoint(1, pc.Server(1)), pc.Endpoint(2, pc.Server(2)), pc.Endpoint(3, pc.Server(3)),
		pc.ReplySource(1, pc.Server(1))})
	var wg sync.WaitGroup
	const n = 300
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				if out := sw.Inject(1, pc.Bytes(pc.Request(pc.Client(1), uint32(i), 500, 0))); out.Verdict != program.Forwarded {
					t.Errorf("request: %+v", out.Result)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			install(t, sw, []pc.Entry{pc.L3Route(pc.IPv4(20, byte(i), 0, 0), 16, 3)})
			if err := sw.Read(context.Background(), &p4v1.Entity{Entity: &p4v1.Entity_RegisterEntry{RegisterEntry: &p4v1.RegisterEntry{}}},
				func(*p4v1.Entity) error { return nil }); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if v := reg(t, sw, pipeline.RegisterRegionOutstanding, 0); v != 2*n {
		t.Fatalf("region_outstanding = %d, want %d", v, 2*n)
	}
}

// p4c's P4Info for p4src/ (committed by `make p4`), when present, must match
// the model and get the ids we compute.
func TestP4cP4Info(t *testing.T) {
	path := filepath.Join("..", "..", "p4src", "build", "v1model", "p4ctl.p4info.txtpb")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("skip: %s absent (needs p4c: make p4)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	var info p4configv1.P4Info
	if err := prototext.Unmarshal(b, &info); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := p4info.Check(&info, pipeline.Schema(), true); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	sw, err := New(Options{P4Info: &info})
	if err != nil {
		t.Fatal(err)
	}
	_ = sw
	ours := map[string]uint32{}
	gen := DefaultP4Info()
	for _, x := range gen.Tables {
		ours[x.Preamble.Name] = x.Preamble.Id
	}
	for _, x := range gen.Actions {
		ours[x.Preamble.Name] = x.Preamble.Id
	}
	for _, x := range info.Tables {
		if ours[x.Preamble.Name] != x.Preamble.Id {
			t.Errorf("table %s: p4c id %d, ours %d", x.Preamble.Name, x.Preamble.Id, ours[x.Preamble.Name])
		}
	}
	for _, x := range info.Actions {
		if ours[x.Preamble.Name] != x.Preamble.Id {
			t.Errorf("action %s: p4c id %d, ours %d", x.Preamble.Name, x.Preamble.Id, ours[x.Preamble.Name])
		}
	}
}

// The packet path allocates nothing, for requests (bound, held, nacked),
// replies and plain traffic alike.
func TestProcessDoesNotAllocate(t *testing.T) {
	sw, err := New(Options{Clock: func() uint64 { return 7 }})
	if err != nil {
		t.Fatal(err)
	}
	p := pc.Pool{Base: 0, SizeMask: 3, Policy: pipeline.PolicyJBSQ, Bound: 1, MaxHolds: 2, OnFull: pipeline.OnFullForce, CreditTick: 3}
	install(t, sw, []pc.Entry{pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 2), p.Entry(0), pc.ExecCost(0, 3, false),
		pc.Endpoint(0, pc.Server(0)), pc.Endpoint(1, pc.Server(1)), pc.Endpoint(2, pc.Server(2)), pc.Endpoint(3, pc.Server(3)),
		pc.ReplySource(1, pc.Server(1))})
	req := pc.Request(pc.Client(1), 1, 500, 0)
	frames := [][]byte{pc.Bytes(req)}
	req.Header.Server, req.Header.Site = 1, 1
	frames = append(frames, pc.Bytes(pc.Reply(req, pc.Server(1), 1)), pc.Bytes(pc.Request(pc.Client(3), 2, 500, 0)))
	buf := make([]byte, 128)
	allocs := testing.AllocsPerRun(200, func() {
		for _, f := range frames {
			b := buf[:len(f)]
			copy(b, f)
			sw.Process(b, 1)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per packet batch", allocs)
	}
	if n := event(t, sw, pipeline.EventHold); n == 0 {
		t.Fatal("the held path was not exercised")
	}
}

// A host attached through OnEgress may answer synchronously from its
// listener: here server 0 replies to every request it receives.
func TestEgressListenerCanInject(t *testing.T) {
	sw, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := pc.Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 1}
	install(t, sw, []pc.Entry{pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 0), p.Entry(0), pc.Endpoint(0, pc.Server(0)), pc.ReplySource(0, pc.Server(0))})
	var toClient int
	sw.OnEgress(func(e Egress) {
		switch e.Port {
		case pc.Server(0).Port:
			f, ok, err := wire.ParseFrame(e.Frame)
			if err != nil || !ok {
				t.Errorf("server got %v %v", ok, err)
				return
			}
			req := f
			req.SrcMAC, req.SrcIP = pc.Client(1).HW(), pc.Client(1).Addr() // the request's origin
			sw.Inject(e.Port, pc.Bytes(pc.Reply(req, pc.Server(0), f.Header.Server)))
		case 1:
			toClient++
		}
	})
	for i := 0; i < 5; i++ { // bound 1: each request needs the previous reply's release
		if out := sw.Inject(1, pc.Bytes(pc.Request(pc.Client(1), uint32(i), 500, 0))); out.Verdict != program.Forwarded {
			t.Fatalf("request %d: %+v", i, out.Result)
		}
	}
	if toClient != 5 || event(t, sw, pipeline.EventReplyReleased) != 5 {
		t.Fatalf("%d replies reached the client, %d released", toClient, event(t, sw, pipeline.EventReplyReleased))
	}
}
