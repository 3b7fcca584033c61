package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/wire"
	"github.com/p4ctl/p4ctl/testbed"
)

const cfgPath = "../testbed.yaml"

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"topo", "-bogus"}, {"topo"}, {"summary", "-config", cfgPath}, {"size", "-config", cfgPath, "-hour", "noon"}, {"size", "-config", cfgPath, "-hours", "0"},
		{"summary", "-config", cfgPath, "x.json"}, {"push"}} {
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

// wait and state against the embedded switch, as `make mininet` drives BMv2
// (the pipeline and tables are pushed here as p4ctl push pipeline and p4ctl
// run would).
func TestWaitAndState(t *testing.T) {
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
	infoPath := filepath.Join(t.TempDir(), "p4info.txtpb")
	if err := os.WriteFile(infoPath, infoOut.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"wait", "-grpc", addr, "-timeout", "20s"}, &out, &errb); code != 0 {
		t.Fatalf("wait: exit %d: %s", code, errb.String())
	}
	info, err := p4rt.LoadP4Info(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := testbed.Connect(ctx, addr, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetP4Info(ctx, p4rt.VerifyAndCommit, info, nil, 1); err != nil {
		t.Fatal(err)
	}
	compiled, err := testbed.Compile(loadTestConfig(t), time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testbed.Push(ctx, c, compiled.State); err != nil {
		t.Fatal(err)
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

// TestSummary feeds the summary two clients' records over two hours the
// daemon applied (with a flip between them) and checks the SLA accounting,
// the hour assignment and the verdict.
func TestSummary(t *testing.T) {
	cfg := loadTestConfig(t)
	h1, h2 := time.Date(2022, 1, 10, 1, 0, 0, 0, time.UTC), time.Date(2022, 1, 10, 2, 0, 0, 0, time.UTC)
	c1, err := testbed.Compile(cfg, h1, 1)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := testbed.Compile(cfg, h2, 1)
	if err != nil {
		t.Fatal(err)
	}
	rt1, rt2 := compiler.NewRouter(c1.State), compiler.NewRouter(c2.State)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"topo", "-config", cfgPath, "-scale", "0.1"}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	topoPath := filepath.Join(dir, "topology.json")
	if err := os.WriteFile(topoPath, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var topo testbed.Topology
	if err := json.Unmarshal(out.Bytes(), &topo); err != nil {
		t.Fatal(err)
	}
	delays := topo.PathDelays()

	// The daemon planned hour 1 at t0 and hour 2 at t0+10s; with a grace
	// of 1s, hour 2's flip was done by t0+10.2s.
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	logPath := filepath.Join(dir, "run.log")
	line := func(at time.Duration, msg string, hour time.Time) string {
		return fmt.Sprintf(`{"time":%q,"level":"INFO","msg":%q,"hour":%q}`+"\n", t0.Add(at).Format(time.RFC3339Nano), msg, hour.Format(time.RFC3339))
	}
	daemonLog := `{"time":"2024-05-01T11:59:59Z","level":"INFO","msg":"p4ctl run"}` + "\nnot json\n" +
		line(0, "plan", h1) + line(1100*time.Millisecond, "pushed", h1) + line(10*time.Second, "plan", h2) + line(11200*time.Millisecond, "pushed", h2)
	if err := os.WriteFile(logPath, []byte(daemonLog), 0o644); err != nil {
		t.Fatal(err)
	}
	// Records: every SLA class at 2s (hour 1), 10.1s (in the flip, hour 1's
	// decision) and 12s (hour 2). Each reply's RTT is the path delay + the
	// server's 0.1 ms + 1 ms of testbed overhead.
	type tweak struct {
		execMs, extraMs float64
	}
	write := func(name string, site uint16, firstID uint32, tw map[uint32]tweak) string {
		var recs []loadgen.Record
		id := firstID
		for _, at := range []time.Duration{2 * time.Second, 10100 * time.Millisecond, 12 * time.Second} {
			rt := rt1
			if at > 11*time.Second {
				rt = rt2
			}
			for _, sla := range []uint16{300, 500, 800, 1000, 3000} {
				region := rt.Route(site, sla, 0).Region
				x := tweak{execMs: 0.1}
				if v, ok := tw[id]; ok {
					x = v
				}
				exec := time.Duration(x.execMs * float64(time.Millisecond))
				rtt := time.Duration((delays[[2]int{int(site), int(region)}] + x.execMs + 1 + x.extraMs) * float64(time.Millisecond))
				recs = append(recs, loadgen.Record{ID: id, Sent: at - time.Second, SLAms: sla, Outcome: loadgen.OK, RTT: rtt,
					Site: site, Region: region, Server: uint16(2 * region), Timed: true, ServerExec: exec, ServerDrawn: exec,
					SLAMet: rtt <= time.Duration(float64(sla)*0.1*float64(time.Millisecond))})
				id++
			}
		}
		res := &loadgen.Result{Config: loadgen.Config{Target: netip.MustParseAddrPort("10.0.0.100:9800"), SLAScale: 0.1}, Records: recs,
			Elapsed: 12 * time.Second, StartedAt: t0.Add(time.Second)}
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
	// Mumbai's request 3 (SLA 1000 at 2s) gets 50 ms more of testbed
	// overhead: over budget raw, not at the emulated latency.
	a := write("mumbai.json", 1, 0, map[uint32]tweak{3: {execMs: 0.1, extraMs: 50}})
	b := write("singapore.json", 2, 100, nil)
	summarize := func(files ...string) (Report, int, string) {
		var out, errb bytes.Buffer
		args := append([]string{"summary", "-config", cfgPath, "-topology", topoPath, "-daemon-log", logPath, "-grace", "1s", "-o", "json"}, files...)
		code := run(context.Background(), args, &out, &errb)
		var rep Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("summary: exit %d, %v: %s %s", code, err, out.String(), errb.String())
		}
		return rep, code, errb.String()
	}
	rep, code, stderr := summarize(a, b)
	if code != 0 || !rep.Pass {
		t.Fatalf("exit %d (%s), report %+v", code, stderr, rep)
	}
	if rep.All.Sent != 30 || rep.SLA.EmulatedViolations != 0 || rep.SLA.RawOverBudget != 1 || rep.SLA.Untimed != 0 {
		t.Errorf("SLA: sent %d, emulated violations %d, raw over %d, untimed %d; want 30, 0, 1, 0",
			rep.All.Sent, rep.SLA.EmulatedViolations, rep.SLA.RawOverBudget, rep.SLA.Untimed)
	}
	if rep.SLA.Overhead.P50 != 1 || rep.SLA.Overhead.Max != 51 {
		t.Errorf("overhead %+v, want p50 1 ms, max 51 ms", rep.SLA.Overhead)
	}
	if len(rep.Hours) != 2 || len(rep.Carbon.Hours) != 2 || rep.Carbon.InFlip != 10 || rep.Carbon.PlanAgree != 30 {
		t.Errorf("hours %+v, carbon hours %+v, in flip %d, agree %d", rep.Hours, rep.Carbon.Hours, rep.Carbon.InFlip, rep.Carbon.PlanAgree)
	}
	// In the flip, a request goes to hour 1 when only hour 1's plan
	// predicts its region (hour 2's routes some classes elsewhere), else
	// to hour 2.
	if n1, n2 := rep.Carbon.Hours[0].Requests, rep.Carbon.Hours[1].Requests; n1+n2 != 30 || n1 <= 10 || n1 >= 20 {
		t.Errorf("hours accounted %d and %d requests, want 10 < hour 1 < 20 and 30 in all", n1, n2)
	}

	// A server that drew 500 ms of execution is an emulated violation: FAIL.
	late := write("late.json", 1, 0, map[uint32]tweak{1: {execMs: 500}})
	rep, code, _ = summarize(late, b)
	if code != 1 || rep.Pass || rep.SLA.EmulatedViolations != 1 || rep.SLA.RawOverBudget != 1 {
		t.Errorf("500 ms execution: exit %d, pass %v, emulated %d, raw %d", code, rep.Pass, rep.SLA.EmulatedViolations, rep.SLA.RawOverBudget)
	}
	var text bytes.Buffer
	// A held request: expected when the sizing found a pool too small, a
	// failure when it found none.
	held := write("held.json", 1, 0, nil)
	var lf loadgen.File
	if err := readJSON(held, &lf); err != nil {
		t.Fatal(err)
	}
	lf.Records[4].Flags, lf.Records[4].Holds = wire.FlagHeld, 2
	bh, err := json.Marshal(lf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(held, bh, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		undersized []string
		pass       bool
	}{{nil, false}, {[]string{"eu-west-1"}, true}} {
		capPath := filepath.Join(dir, "capacity.json")
		bc, _ := json.Marshal(Sizing{Undersized: c.undersized})
		if err := os.WriteFile(capPath, bc, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"summary", "-config", cfgPath, "-topology", topoPath, "-daemon-log", logPath, "-capacity", capPath, "-o", "json", held, b}, &out, &errb)
		var r Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err, errb.String())
		}
		if r.Pass != c.pass || (code == 0) != c.pass || r.Dispatch.Held != 1 || r.Dispatch.Holds != 2 || !r.Dispatch.Sized {
			t.Errorf("undersized %v: exit %d, pass %v, failures %v, dispatch %+v", c.undersized, code, r.Pass, r.Failures, r.Dispatch)
		}
	}
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL (1 SLA violations at the emulated latencies): 30 requests; 1 SLA violations at the emulated latencies; raw RTT over budget 1", "hours applied by p4ctl run"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}

func TestSize(t *testing.T) {
	sizeOf := func(args ...string) (Sizing, int) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"size", "-config", cfgPath, "-o", "json"}, args...), &out, &errb)
		var s Sizing
		if code == 0 {
			if err := json.Unmarshal(out.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
		}
		return s, code
	}
	// The configuration's bounds cover the default load at real latencies
	// over the whole default day.
	s, code := sizeOf("-rate", "50", "-scale", "1", "-hours", "24")
	if code != 0 || len(s.Undersized) != 0 || len(s.Pools) != 5 || len(s.Hours) != 24 {
		t.Fatalf("exit %d, sizing %+v", code, s)
	}
	for _, p := range s.Pools {
		if p.RatePerS > 0 && (p.InFlight <= 0 || p.Need > p.Bound) {
			t.Errorf("pool %+v", p)
		}
	}
	// Ten times the load does not fit.
	if s, code = sizeOf("-rate", "500", "-scale", "1", "-hours", "4"); code != 0 || len(s.Undersized) == 0 {
		t.Errorf("rate 500: exit %d, undersized %v", code, s.Undersized)
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
