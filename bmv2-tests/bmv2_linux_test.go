//go:build linux

package bmv2tests

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/internal/testing/conformance"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/bmv2rt"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Capture timing: how long to wait for the first frame a packet causes,
// and how long the ports must then stay quiet. A packet that causes nothing
// within firstFrame is a drop.
const (
	firstFrame = 400 * time.Millisecond
	quiet      = 50 * time.Millisecond
)

// buildDir holds p4c's outputs for the v1model program (`make p4`);
// P4CTL_P4BUILD overrides it.
func buildDir() string {
	if d := os.Getenv("P4CTL_P4BUILD"); d != "" {
		return d
	}
	return filepath.Join("..", "p4src", "build", "v1model")
}

// requireBMv2 skips unless BMv2, root and the p4c outputs are all here, and
// returns the pipeline to load.
func requireBMv2(t *testing.T) *p4v1.ForwardingPipelineConfig {
	t.Helper()
	bmv2harness.Require(t)
	dir := buildDir()
	info, err := p4rt.LoadP4Info(filepath.Join(dir, "p4ctl.p4info.txtpb"))
	if err != nil {
		t.Skipf("no p4c P4Info for p4src/v1model in %s (run make p4): %v", dir, err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, "p4ctl.json"))
	if err != nil {
		t.Skipf("no BMv2 JSON for p4src/v1model in %s (run make p4): %v", dir, err)
	}
	return &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob,
		Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}}
}

// startRig starts BMv2 with the given switch ports, opens an AF_PACKET
// socket on each port's host side (pp in ports' order, byPort by number)
// and returns a primary P4Runtime client; all are closed at t's cleanup.
func startRig(ctx context.Context, t *testing.T, ports []int) (sw *bmv2harness.Switch, pp []*packetPort, byPort map[uint32]*packetPort, c *p4rt.Client) {
	t.Helper()
	return startRigWith(ctx, t, bmv2harness.Config{}, ports)
}

// startRigWith is startRig for the switch hc describes (BMv2, or with
// hc.P4ctl p4ctl's embedded switch).
func startRigWith(ctx context.Context, t testing.TB, hc bmv2harness.Config, ports []int) (sw *bmv2harness.Switch, pp []*packetPort, byPort map[uint32]*packetPort, c *p4rt.Client) {
	t.Helper()
	hc.PortIDs = ports
	sw = bmv2harness.StartT(t, hc)
	// The kernel's IPv6 chatter on the veths is not switch traffic.
	if out, err := sw.Command(ctx, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").CombinedOutput(); err != nil {
		t.Logf("disable IPv6 in %s: %v %s (IPv6 frames are ignored anyway)", sw.NetNS, err, out)
	}
	byPort = map[uint32]*packetPort{}
	for i, port := range ports {
		p, err := openPacketPort(sw.NetNS, sw.Hosts[i], uint32(port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		pp = append(pp, p)
		byPort[uint32(port)] = p
	}
	c = sw.ClientT(t, p4rt.WithElectionID(p4rt.Election(1)))
	if _, err := c.Arbitrate(ctx); err != nil {
		t.Fatalf("arbitrate with the switch: %v", err)
	}
	return sw, pp, byPort, c
}

// casePorts are the switch ports the packet cases use (the drop port 511
// is not a real port).
func casePorts(cases []pc.Case) []int {
	seen := map[int]bool{}
	add := func(p uint32) {
		if p != program.DropPortNumber {
			seen[int(p)] = true
		}
	}
	for _, c := range cases {
		for _, p := range c.Packets {
			add(p.Port)
			if p.Expect.Verdict != pc.Dropped {
				add(p.Expect.Port)
			}
		}
		for _, e := range c.Entries {
			for _, prm := range e.Params {
				if prm.Name == "port" {
					add(uint32(prm.Value))
				}
			}
		}
	}
	var out []int
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// outcome is what one input frame caused on a target.
type outcome struct {
	Verdict string
	Port    uint32
	Frame   []byte
	Extra   []captured // BMv2: frames beyond the first (always a mismatch)
}

func (o outcome) String() string {
	switch o.Verdict {
	case pc.Dropped:
		return "dropped"
	}
	s := fmt.Sprintf("%s on port %d: %s", o.Verdict, o.Port, describe(o.Frame))
	for _, x := range o.Extra {
		s += fmt.Sprintf("; and on port %d: %s", x.port, describe(x.frame))
	}
	return s
}

// describe renders a frame's layers on one line (p4ctl header decoded).
func describe(b []byte) string {
	if b == nil {
		return "<none>"
	}
	p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	var parts []string
	if e, ok := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet); ok {
		parts = append(parts, fmt.Sprintf("eth %v>%v type 0x%04x", e.SrcMAC, e.DstMAC, uint16(e.EthernetType)))
	}
	if ip, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
		parts = append(parts, fmt.Sprintf("ip %v>%v ttl %d csum 0x%04x", ip.SrcIP, ip.DstIP, ip.TTL, ip.Checksum))
	}
	if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
		parts = append(parts, fmt.Sprintf("udp %d>%d len %d csum 0x%04x", u.SrcPort, u.DstPort, u.Length, u.Checksum))
		if len(u.Payload) >= wire.HeaderLen && (u.SrcPort == wire.UDPPort || u.DstPort == wire.UDPPort) {
			h, err := wire.Decode(u.Payload)
			if err == nil {
				parts = append(parts, fmt.Sprintf("p4ctl %v flags %v sla %d class %d holds %d site %d region %d server %d id %d",
					h.Type, h.Flags, h.SLAms, h.ExecClass, h.HoldCount, h.Site, h.Region, h.Server, h.RequestID))
			} else {
				parts = append(parts, "p4ctl "+err.Error())
			}
		}
	}
	return strings.Join(parts, " | ") + fmt.Sprintf(" (%d bytes)", len(b))
}

func expected(e pc.Expect) outcome {
	if e.Verdict == pc.Dropped {
		return outcome{Verdict: pc.Dropped}
	}
	return outcome{Verdict: e.Verdict, Port: e.Port, Frame: e.Frame}
}

func embeddedOutcome(o dataplane.Output) outcome {
	if o.Verdict == program.Dropped {
		return outcome{Verdict: pc.Dropped}
	}
	return outcome{Verdict: o.Verdict.String(), Port: o.Port, Frame: o.Frame}
}

// bmv2Outcome classifies what BMv2 emitted for a frame sent on inPort: no
// frame is a drop; a p4ctl nack back out of inPort is "nacked".
func bmv2Outcome(inPort uint32, got []captured) outcome {
	if len(got) == 0 {
		return outcome{Verdict: pc.Dropped}
	}
	o := outcome{Verdict: pc.Forwarded, Port: got[0].port, Frame: got[0].frame, Extra: got[1:]}
	if f, ok, err := wire.ParseFrame(o.Frame); err == nil && ok && f.Header.Type == wire.MsgNack && o.Port == inPort {
		o.Verdict = pc.Nacked
	}
	return o
}

func same(a, b outcome) bool {
	return a.Verdict == b.Verdict && len(a.Extra) == 0 && len(b.Extra) == 0 &&
		(a.Verdict == pc.Dropped || (a.Port == b.Port && bytes.Equal(a.Frame, b.Frame)))
}

// caseReport collects one case's disagreements.
type caseReport struct {
	name     string
	packets  int
	problems []string
}

// The shared packet-case table on BMv2, next to the embedded target.
func TestPacketCases(t *testing.T) {
	packetCases(t, "BMv2", requireBMv2(t), bmv2harness.Config{})
}

// packetCases runs the shared packet-case table through veths on the
// switch hc describes (named name in messages) with pipeline cfg, next to
// a fresh in-process embedded target per case.
func packetCases(t *testing.T, name string, cfg *p4v1.ForwardingPipelineConfig, hc bmv2harness.Config) {
	cases := pc.Cases()
	ports := casePorts(cases)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sw, pp, byPort, c := startRigWith(ctx, t, hc, ports)
	first, q := firstFrame, quiet
	if hc.P4ctl != "" {
		// The embedded switch emits a frame's every output within
		// microseconds: shorter waits keep make test fast.
		first, q = 150*time.Millisecond, 15*time.Millisecond
	}

	var reports []*caseReport
	for _, cs := range cases {
		rep := &caseReport{name: cs.Name, packets: len(cs.Packets)}
		reports = append(reports, rep)
		passed := t.Run(cs.Name, func(t *testing.T) {
			fail := func(format string, a ...any) {
				msg := fmt.Sprintf(format, a...)
				rep.problems = append(rep.problems, msg)
				t.Error(msg)
			}
			// A new pipeline config gives BMv2 empty tables, registers and
			// counters: each case starts fresh, as on the embedded target.
			if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, cfg); err != nil {
				t.Fatalf("set pipeline: %v", err)
			}
			ups, err := pc.Updates(cfg.GetP4Info(), cs.Entries)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Write(ctx, ups); err != nil {
				t.Fatalf("install entries on %s: %v", name, err)
			}
			// The latency digest, sent at once and acknowledged (PI holds
			// back data equal to an unacknowledged list's).
			if err := c.ConfigureDigest(ctx, pipeline.DigestLatencySample, p4rt.DigestConfig{MaxTimeoutNs: int64(time.Millisecond), MaxListSize: 1, AckTimeoutNs: int64(time.Second)}); err != nil {
				t.Fatalf("enable the latency digest on %s: %v", name, err)
			}
			var bdig pc.Digests
			dctx, dstop := context.WithCancel(ctx)
			dgone := make(chan struct{})
			go func() {
				defer close(dgone)
				for {
					select {
					case <-dctx.Done():
						return
					case l := <-c.Digests():
						bdig.Add(l)
						_ = c.AckDigest(dctx, l)
					}
				}
			}()
			defer func() { dstop(); <-dgone }()
			// The embedded target's clock advances by each packet's After,
			// as BMv2's does in real time while the harness sleeps it.
			var clock atomic.Uint64
			clock.Store(1000)
			emb, err := dataplane.New(dataplane.Options{Clock: clock.Load})
			if err != nil {
				t.Fatal(err)
			}
			eups, err := pc.Updates(emb.P4Info(), cs.Entries)
			if err != nil {
				t.Fatal(err)
			}
			for i, err := range emb.Write(ctx, eups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
				if err != nil {
					t.Fatalf("install %v on the embedded target: %v", cs.Entries[i], err)
				}
			}
			var edig pc.Digests
			enableEmbeddedDigest(t, emb)
			defer emb.SubscribeDigests(edig.Add)()
			if stray, err := readAll(pp, q, q); err != nil || len(stray) > 0 {
				t.Logf("before the case: %d stray frames (%v)", len(stray), err)
			}
			skipped := 0
			for i, p := range cs.Packets {
				in, ok := byPort[p.Port]
				if !ok {
					t.Fatalf("packet %d: no port %d", i, p.Port)
				}
				if len(p.Frame) < afpacket.MinFrame {
					t.Logf("packet %d (%s): a %d-byte frame cannot be sent on a real port; skipped on both targets", i, p.Note, len(p.Frame))
					skipped++
					continue
				}
				if p.After > 0 {
					time.Sleep(p.After)
					clock.Add(uint64(p.After.Microseconds()))
				}
				if err := in.send(p.Frame); err != nil {
					t.Fatal(err)
				}
				got, err := readAll(pp, first, q)
				if err != nil {
					t.Fatal(err)
				}
				b := bmv2Outcome(p.Port, got)
				e := embeddedOutcome(emb.Inject(p.Port, p.Frame))
				x := expected(p.Expect)
				where := fmt.Sprintf("packet %d (%s)", i, p.Note)
				if !same(b, e) {
					fail("%s: %s and the embedded target differ:\n  %-9s %v\n  embedded: %v", where, name, name+":", b, e)
				}
				if !same(b, x) {
					fail("%s: %s differs from the case's expectation:\n  %-9s %v\n  expected: %v", where, name, name+":", b, x)
				}
			}
			if skipped > 0 {
				t.Logf("%d packets skipped: counters are compared with the embedded target only", skipped)
			}
			compareState(ctx, t, name, c, regReader(sw, c), emb, cs, skipped == 0, fail)
			// Latency digests: the embedded target's exactly as the case
			// says; the switch's with round trips stretched by the harness's own
			// gaps between packets (it waits for each output in real time).
			eg, err := edig.Wait(len(cs.Digests), time.Second, 10*time.Millisecond)
			if err == nil {
				err = pc.MatchSamples(eg, cs.Digests, 0)
			}
			if err != nil {
				fail("embedded target: %v", err)
			}
			bg, err := bdig.Wait(len(cs.Digests), 3*time.Second, 200*time.Millisecond)
			if err == nil {
				err = pc.MatchSamples(bg, cs.Digests, digestSlack(cs))
			}
			if err != nil {
				fail("%s: %v", name, err)
			}
		})
		if !passed && len(rep.problems) == 0 {
			rep.problems = append(rep.problems, "the case stopped on an error (see its log)")
		}
	}
	var agree, disagree []string
	for _, r := range reports {
		if len(r.problems) == 0 {
			agree = append(agree, fmt.Sprintf("%s (%d packets)", r.name, r.packets))
		} else {
			disagree = append(disagree, fmt.Sprintf("%s: %d problems", r.name, len(r.problems)))
		}
	}
	t.Logf("%s vs embedded target and expectations: %d of %d cases agree", name, len(agree), len(reports))
	t.Logf("agree: %s", strings.Join(agree, ", "))
	if len(disagree) > 0 {
		t.Logf("disagree: %s", strings.Join(disagree, "; "))
	}
}

// enableEmbeddedDigest writes the latency digest's DigestEntry on the
// embedded target (lists sent at once).
func enableEmbeddedDigest(t *testing.T, emb *dataplane.Switch) {
	t.Helper()
	idx, err := p4rt.NewIndex(emb.P4Info())
	if err != nil {
		t.Fatal(err)
	}
	id, err := idx.DigestID(pipeline.DigestLatencySample)
	if err != nil {
		t.Fatal(err)
	}
	ent := &p4v1.Entity{Entity: &p4v1.Entity_DigestEntry{DigestEntry: &p4v1.DigestEntry{DigestId: id, Config: &p4v1.DigestEntry_Config{}}}}
	if errs := emb.Write(context.Background(), []*p4v1.Update{{Type: p4v1.Update_INSERT, Entity: ent}}, p4v1.WriteRequest_CONTINUE_ON_ERROR); errs[0] != nil {
		t.Fatal(errs[0])
	}
}

// digestSlack is how much longer than the case's round trips BMv2's may
// be: the harness waits for every packet's output (and for silence after a
// drop) before sending the next.
func digestSlack(cs pc.Case) time.Duration {
	return time.Duration(len(cs.Packets)) * 500 * time.Millisecond
}

// compareState compares every counter cell (the case lists the non-zero
// ones) and the listed register cells on the switch (BMv2, or name) with
// the embedded target and, when vsExpected, with the case's expectation.
func compareState(ctx context.Context, t *testing.T, name string, c *p4rt.Client, readReg func(context.Context, string, int) (uint64, error), emb *dataplane.Switch, cs pc.Case, vsExpected bool, fail func(string, ...any)) {
	t.Helper()
	want := map[string]map[uint64]uint64{}
	for _, w := range cs.Counters {
		if want[w.Counter] == nil {
			want[w.Counter] = map[uint64]uint64{}
		}
		want[w.Counter][w.Index] += w.Packets
	}
	for _, ctr := range pipeline.Schema().Counters {
		cells, err := c.ReadCounter(ctx, ctr.Name, -1)
		if err != nil {
			t.Fatalf("read %s on %s: %v", ctr.Name, name, err)
		}
		got := map[uint64]uint64{}
		for _, cell := range cells {
			got[uint64(cell.Index)] = uint64(cell.Packets)
		}
		for i := uint64(0); i < uint64(ctr.Size); i++ {
			ep, _, err := emb.CounterValue(ctr.Name, i)
			if err != nil {
				t.Fatal(err)
			}
			cell := fmt.Sprint(i)
			if isLane(ctr.Name) {
				cell = pipeline.Event(i).String()
			}
			if got[i] != ep {
				fail("counter %s[%s]: %s %d packets, embedded %d", ctr.Name, cell, name, got[i], ep)
			}
			if w := want[ctr.Name][i]; vsExpected && got[i] != w {
				fail("counter %s[%s]: %s %d packets, expected %d", ctr.Name, cell, name, got[i], w)
			}
		}
	}
	for _, r := range cs.Registers {
		bv, err := readReg(ctx, r.Register, int(r.Index))
		if err != nil {
			t.Fatalf("read %s[%d] on %s: %v", r.Register, r.Index, name, err)
		}
		ev, err := emb.RegisterValue(r.Register, r.Index)
		if err != nil {
			t.Fatal(err)
		}
		// Masked bits only: a credit's last tick is on each switch's own clock.
		if !(pc.Cell{Value: ev, Mask: r.Mask}).Matches(bv) || (vsExpected && !r.Matches(bv)) {
			fail("register %s[%d]: %s %d, embedded %d, expected %d", r.Register, r.Index, name, bv, ev, r.Value)
		}
	}
}

// regReader reads one register cell of the switch: over P4Runtime, or,
// when the switch's P4Runtime server does not implement register reads (PI
// in BMv2 answers UNIMPLEMENTED), over BMv2's Thrift API inside the
// switch's namespace (pkg/bmv2rt; no simple_switch_CLI, no Python).
func regReader(sw *bmv2harness.Switch, c *p4rt.Client) func(context.Context, string, int) (uint64, error) {
	regs := &bmv2rt.Registers{P4: c, Thrift: func(ctx context.Context) (*bmv2rt.Client, error) {
		return bmv2rt.Dial(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(bmv2rt.DefaultPort)), bmv2rt.Options{Dial: sw.Dialer()})
	}}
	return func(ctx context.Context, name string, index int) (uint64, error) {
		cells, err := regs.Read(ctx, name, int64(index))
		if err != nil {
			return 0, err
		}
		if len(cells) != 1 {
			return 0, fmt.Errorf("register %s[%d]: %d cells", name, index, len(cells))
		}
		return cells[0].Value, nil
	}
}

// The P4Runtime conformance suite (internal/testing/conformance) against BMv2
// loaded with our program.
func TestConformance(t *testing.T) {
	cfg := requireBMv2(t)
	sw := bmv2harness.StartT(t, bmv2harness.Config{})
	conformance.Run(t, conformance.Conn{
		Name:     "BMv2 simple_switch_grpc (bmv2-tests)",
		Dial:     sw.ClientT,
		DeviceID: sw.DeviceID,
		Pipeline: cfg,
		Quirks:   conformance.BMv2Quirks,
	})
}

// isLane reports whether counter is one of the dispatch_events lanes.
func isLane(counter string) bool {
	for _, l := range pipeline.Lanes() {
		if l.Counter() == counter {
			return true
		}
	}
	return false
}
