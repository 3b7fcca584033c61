package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/testbed"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

const cfgPath = "../testbed.yaml"

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"topo", "-bogus"}, {"topo"}, {"summary", "-config", cfgPath}, {"push", "-config", cfgPath, "-hour", "noon"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d (stderr %q), want 2", args, code, errb.String())
		}
	}
}

func TestTopo(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"topo", "-config", cfgPath, "-scale", "0.05"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var tp testbed.Topology
	if err := json.Unmarshal(out.Bytes(), &tp); err != nil {
		t.Fatal(err)
	}
	if tp.LatencyScale != 0.05 || len(tp.Servers) != 10 || tp.Servers[0].Delays[0].DelayMs != 9.8 {
		t.Errorf("topology %+v", tp)
	}
}

// wait and push against the embedded switch, as `make mininet` drives BMv2.
func TestWaitAndPush(t *testing.T) {
	sw, err := dataplane.New(dataplane.Options{NoPipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := p4rtserver.New(sw)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	var infoOut, infoErr bytes.Buffer
	if code := run(context.Background(), []string{"p4info"}, &infoOut, &infoErr); code != 0 {
		t.Fatalf("p4info: exit %d: %s", code, infoErr.String())
	}
	info := infoOut.Bytes()
	infoPath := filepath.Join(t.TempDir(), "p4info.txtpb")
	if err := os.WriteFile(infoPath, info, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"wait", "-grpc", addr, "-timeout", "20s"}, &out, &errb); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errb.String())
	}
	args := []string{"push", "-config", cfgPath, "-grpc", addr, "-p4info", infoPath}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("push: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "pipeline set") || !strings.Contains(out.String(), "policy C") {
		t.Errorf("push output %q", out.String())
	}
	if sw.Pipeline().GetP4Info() == nil {
		t.Error("no pipeline set")
	}
	out.Reset()
	if code := run(context.Background(), []string{"state", "-grpc", addr, "-servers", "10"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "slots released") {
		t.Errorf("state on an idle switch: exit %d %q %q", code, out.String(), errb.String())
	}
	// A request bound and never answered holds a slot.
	frame, err := wire.Frame{SrcMAC: net.HardwareAddr{2, 0, 0xc, 0, 1, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 0xfe},
		SrcIP: net.IPv4(10, 10, 0, 1), DstIP: net.IPv4(10, 0, 0, 100), SrcPort: 40000, DstPort: wire.UDPPort,
		Header: wire.NewRequest(1, 300, 0)}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if o := sw.Inject(1, frame); o.Verdict != program.Forwarded {
		t.Fatalf("request: %+v", o.Result)
	}
	out.Reset()
	if code := run(context.Background(), []string{"state", "-grpc", addr, "-servers", "10"}, &out, &errb); code != 1 ||
		!strings.Contains(out.String(), "NOT released") || !strings.Contains(out.String(), "server_bound: 0=1") {
		t.Errorf("state with a held slot: exit %d %q", code, out.String())
	}
	// A closed port is not ready.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	errb.Reset()
	if code := run(context.Background(), []string{"wait", "-grpc", deadAddr, "-timeout", "300ms"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not ready") {
		t.Errorf("wait on a closed port: exit %d %q", code, errb.String())
	}
}

func TestSummary(t *testing.T) {
	cfg := loadTestConfig(t)
	hour := time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)
	c, err := testbed.Compile(cfg, hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	rt := compiler.NewRouter(c.State)
	dir := t.TempDir()
	write := func(name string, site uint16, late bool) string {
		var recs []loadgen.Record
		for i, sla := range []uint16{300, 500, 800, 1000, 3000} {
			recs = append(recs, loadgen.Record{ID: uint32(i), SLAms: sla, Outcome: loadgen.OK, RTT: time.Millisecond,
				Site: site, Region: rt.Route(site, sla, 0).Region, SLAMet: !(late && i == 0)})
		}
		res := &loadgen.Result{Config: loadgen.Config{Target: netip.MustParseAddrPort("10.0.0.100:9800"), SLAScale: 0.1}, Records: recs, Elapsed: time.Second}
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := res.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("mumbai.json", 1, false), write("singapore.json", 2, false)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"topo", "-config", cfgPath}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	topoPath := filepath.Join(dir, "topology.json")
	if err := os.WriteFile(topoPath, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(context.Background(), []string{"summary", "-config", cfgPath, "-topology", topoPath, "-o", "json", a, b}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s %s", code, errb.String(), out.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || rep.All.Sent != 10 || rep.Violations != 0 || rep.Carbon.PlanAgree != 10 || len(rep.Clients) != 2 {
		t.Errorf("report %+v", rep)
	}
	// Overhead = RTT (1 ms here) minus the emulated delay of the path.
	for _, o := range rep.Overhead {
		if o.Replies == 0 || o.DelayMs <= 0 || o.P50ms != math.Round((1-o.DelayMs)*1000)/1000 {
			t.Errorf("overhead row %+v", o)
		}
	}
	if len(rep.Overhead) == 0 {
		t.Error("no overhead rows with -topology")
	}
	// One late request fails the run.
	late := write("late.json", 1, true)
	out.Reset()
	if code := run(context.Background(), []string{"summary", "-config", cfgPath, a, late}, &out, &errb); code != 1 || !strings.Contains(out.String(), "FAIL: 10 requests, 1 SLA violations") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}

func loadTestConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
