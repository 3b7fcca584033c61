//go:build linux

package bmv2tests

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
	"github.com/p4ctl/p4ctl/testbed"
)

// The Mininet testbed's compiled tables (pkg/compiler output for
// mininet/testbed.yaml, not hand-written entries) on BMv2 and on the
// embedded target: for every site and SLA class, requests are bound to a
// server of the region the compiled plan predicts, identically on both
// targets, and each server's reply is forwarded to the client and releases
// the slot.
func TestCompiledConfig(t *testing.T) {
	cfg := requireBMv2(t)
	tbCfg, err := config.Load("../mininet/testbed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := testbed.Compile(tbCfg, time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := testbed.Plan(tbCfg, testbed.DefaultLatencyScale)
	if err != nil {
		t.Fatal(err)
	}
	var ports []int
	server := map[uint16]testbed.ServerHost{}
	for _, c := range topo.Clients {
		ports = append(ports, c.Port)
	}
	for _, s := range topo.Servers {
		ports = append(ports, s.Port)
		server[uint16(s.ServerID)] = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sw, pp, byPort, c := startRig(ctx, t, ports)
	if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := testbed.Push(ctx, c, compiled.State); err != nil {
		t.Fatalf("push the compiled state to BMv2: %v", err)
	}
	emb, err := dataplane.New(dataplane.Options{Clock: func() uint64 { return 1000 }})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p4rt.NewIndex(emb.P4Info())
	if err != nil {
		t.Fatal(err)
	}
	ups, err := testbed.Updates(idx, compiled.State)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range emb.Write(ctx, ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatalf("embedded: %v: %v", compiled.State.Entries[i], err)
		}
	}
	_, _ = readAll(pp, quiet, quiet)

	rt := compiler.NewRouter(compiled.State)
	switchMAC, _ := net.ParseMAC(topo.SwitchMAC)
	id := uint32(1)
	for _, cl := range topo.Clients {
		cmac, _ := net.ParseMAC(cl.MAC)
		for _, sla := range []uint16{300, 500, 800, 1000, 3000} {
			for range 3 {
				id++
				req := wire.Frame{SrcMAC: cmac, DstMAC: switchMAC, SrcIP: net.ParseIP(cl.IP), DstIP: net.ParseIP(topo.Service),
					SrcPort: 40000, DstPort: wire.UDPPort, Header: wire.NewRequest(id, sla, 0)}
				frame, err := req.Build()
				if err != nil {
					t.Fatal(err)
				}
				where := fmt.Sprintf("site %s SLA %d request %d", cl.Site, sla, id)
				b := send(t, byPort, pp, uint32(cl.Port), frame)
				e := embeddedOutcome(emb.Inject(uint32(cl.Port), frame))
				if !same(b, e) {
					t.Fatalf("%s: BMv2 and the embedded target differ:\n  BMv2:     %v\n  embedded: %v", where, b, e)
				}
				f, ok, err := wire.ParseFrame(b.Frame)
				if err != nil || !ok || b.Verdict != "forwarded" {
					t.Fatalf("%s: BMv2 %v (%v)", where, b, err)
				}
				want := rt.Route(uint16(cl.SiteID), sla, 0)
				srv, known := server[f.Header.Server]
				if f.Header.Region != want.Region || !known || srv.RegionIndex != int(want.Region) || b.Port != uint32(srv.Port) ||
					f.DstIP.String() != srv.IP || f.Header.Site != uint16(cl.SiteID) {
					t.Fatalf("%s: bound %v, plan says region %d", where, b, want.Region)
				}
				// The server's reply goes back to the client and releases.
				reply := wire.Frame{SrcMAC: f.DstMAC, DstMAC: cmac, SrcIP: f.DstIP, DstIP: f.SrcIP,
					SrcPort: wire.UDPPort, DstPort: f.SrcPort, Header: f.Header.Reply(f.Header.Server)}
				rframe, err := reply.Build()
				if err != nil {
					t.Fatal(err)
				}
				rb := send(t, byPort, pp, uint32(srv.Port), rframe)
				re := embeddedOutcome(emb.Inject(uint32(srv.Port), rframe))
				if !same(rb, re) || rb.Verdict != "forwarded" || rb.Port != uint32(cl.Port) {
					t.Fatalf("%s reply:\n  BMv2:     %v\n  embedded: %v", where, rb, re)
				}
			}
		}
	}
	read := regReader(sw, c)
	for _, s := range topo.Servers {
		reg, cell := pipeline.CreditCell(uint16(s.ServerID))
		v, err := read(ctx, reg, int(cell))
		if err != nil {
			t.Fatal(err)
		}
		if out := pipeline.CreditFromCell(v).Outstanding; out != 0 {
			t.Errorf("BMv2 server %d: %d outstanding after every reply", s.ServerID, out)
		}
	}
	ev, err := c.ReadCounter(ctx, pipeline.CounterDispatchEvents, int64(pipeline.EventReplyReleased))
	if err != nil || len(ev) != 1 || ev[0].Packets != int64(id-1) {
		t.Errorf("BMv2 reply-released: %v %v, want %d", ev, err, id-1)
	}
}

func send(t *testing.T, byPort map[uint32]*packetPort, pp []*packetPort, port uint32, frame []byte) outcome {
	t.Helper()
	if err := byPort[port].send(frame); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(pp, firstFrame, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return bmv2Outcome(port, got)
}
