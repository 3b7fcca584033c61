//go:build linux

package bmv2tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Forwarding-rate topology: clients on port 1 (10.0.1.0/24, site 1); port
// 2 carries both the plain IPv4 destination 10.0.2.0/24 and a local pool
// of 16 servers (JBSQ, bound 65535: no request is ever held, whatever the
// benchmark's length, so each takes one pass).
const (
	fwdServers = 16
	fwdWindow  = 16 // frames in flight (P4CTL_FWD_WINDOW overrides): the switch is never idle; BMv2 loses frames from about 64 on
)

// forwardEntries programs requests from site 1 to a 16-server pool behind
// port 2, and plain IPv4 to 10.0.2.0/24 out of port 2.
func forwardEntries() []pc.Entry {
	e := []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
		pc.L3Route(pc.IPv4(10, 0, 2, 0), 24, 2),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0),
		pc.CarbonRank(0, 0, 0),
		pc.LocalRegion(0, 0),
		pc.Pool{Base: 0, SizeMask: fwdServers - 1, Policy: pipeline.PolicyJBSQ, Bound: 0xFFFF}.Entry(0),
	}
	for s := uint16(0); s < fwdServers; s++ {
		h := pc.Server(s)
		h.Port = 2
		e = append(e, pc.Serves(s, h)...)
	}
	return e
}

// forwardFrames are n distinct frames of one kind, sent from port 1:
// p4ctl requests to the VIP (request ids vary, so the candidate hash
// spreads them over the pool) or plain UDP to 10.0.2.0/24.
func forwardFrames(kind string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		f := pc.Request(pc.Client(1), uint32(i+1), 500, 0)
		if kind == "ipv4" {
			f.DstIP, f.DstPort = pc.IP(pc.IPv4(10, 0, 2, byte(1+i%250))), 53
		}
		out[i] = pc.Bytes(f)
	}
	return out
}

// fwdRig is a switch in its namespace, programmed for forwarding, with the
// host ends of ports 1 and 2.
type fwdRig struct {
	name    string
	sw      *bmv2harness.Switch
	in, out *packetPort
	c       *p4rt.Client
	cfg     *p4v1.ForwardingPipelineConfig
}

func startForwardRig(b *testing.B, name string, hc bmv2harness.Config, cfg *p4v1.ForwardingPipelineConfig) *fwdRig {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sw, _, byPort, c := startRigWith(ctx, b, hc, []int{1, 2})
	r := &fwdRig{name: name, sw: sw, in: byPort[1], out: byPort[2], c: c, cfg: cfg}
	if err := r.out.SetBuffers(8<<20, 0); err != nil {
		b.Fatal(err)
	}
	return r
}

// program installs a fresh pipeline and the forwarding entries.
func (r *fwdRig) program(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.c.SetPipeline(ctx, p4rt.VerifyAndCommit, r.cfg); err != nil {
		b.Fatalf("%s: set pipeline: %v", r.name, err)
	}
	ups, err := pc.Updates(r.cfg.GetP4Info(), forwardEntries())
	if err != nil {
		b.Fatal(err)
	}
	if err := r.c.Write(ctx, ups); err != nil {
		b.Fatalf("%s: install entries: %v", r.name, err)
	}
	_, _ = readAll([]*packetPort{r.in, r.out}, quiet, quiet)
}

// pump sends n frames (cycling through frames) on r.in with at most
// window() in flight and counts what leaves on r.out; frames not out
// within 1 s are lost (the window refills). It returns the frames
// delivered, the time from the first send to the last delivery, and
// the switch process's CPU time meanwhile.
func (r *fwdRig) pump(frames [][]byte, n int) (delivered, lost int, elapsed, cpu time.Duration, err error) {
	buf := make([]byte, 65536)
	fds := []unix.PollFd{{Fd: int32(r.out.Fd()), Events: unix.POLLIN}}
	inflight, sent := 0, 0
	cpu0, err := processCPU(r.sw.Pid())
	if err != nil {
		return 0, 0, 0, 0, err
	}
	start := time.Now()
	last := start
	for sent < n || inflight > 0 {
		for inflight < window() && sent < n {
			if err := r.in.send(frames[sent%len(frames)]); err != nil {
				return delivered, lost, 0, 0, err
			}
			sent++
			inflight++
		}
		got := 0
		for {
			f, err := r.out.Recv(buf)
			if errors.Is(err, afpacket.ErrWouldBlock) {
				break
			}
			if err != nil {
				return delivered, lost, 0, 0, err
			}
			if len(f) >= 14 && f[12] == 0x08 && f[13] == 0x00 {
				got++
			}
		}
		if got > 0 {
			delivered += got
			inflight = max(0, inflight-got)
			last = time.Now()
			continue
		}
		ready, err := unix.Poll(fds, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return delivered, lost, 0, 0, fmt.Errorf("poll: %w", err)
		}
		if ready == 0 { // nothing for 1 s: what is in flight is lost
			lost += inflight
			inflight = 0
		}
	}
	cpu1, err := processCPU(r.sw.Pid())
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return delivered, lost, last.Sub(start), cpu1 - cpu0, nil
}

// processCPU is the CPU time of every thread of process pid so far.
func processCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("threads of process %d: %v", pid, err)
	}
	var total time.Duration
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that just exited
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// BenchmarkVethForwarding is the forwarding rate of p4ctl's embedded
// switch (`p4ctl switch -i ...`, a process of its own) and of BMv2's
// simple_switch_grpc (without logging), measured in the same run through
// the same veths from the same generator: p4ctl requests (feasibility,
// carbon rank, a local pool: one dispatch pass, bound to a server) and
// plain IPv4 (l3_forward). The generator keeps 16 frames in flight
// (P4CTL_FWD_WINDOW; BMv2 drops frames from about 64 in flight) and counts
// those that leave on the egress port. Reported per target and
// kind: frames/s (wall clock, which on a two-core machine also carries the
// generator's share of the CPU) and frames per CPU-second of the switch
// process (its own cost per frame, steadier on a shared machine); the
// parent prints embedded/BMv2 for both. BMv2's side skips (and no ratio is
// printed) without BMv2 or p4c's outputs; everything skips without root.
func BenchmarkVethForwarding(b *testing.B) {
	bmv2harness.RequireNetNS(b)
	type result struct{ wall, cpu float64 }
	results := map[string]result{}
	rigs := map[string]*fwdRig{}
	rigs["embedded"] = startForwardRig(b, "p4ctl switch", bmv2harness.Config{P4ctl: p4ctlBinary(b)}, embeddedPipeline(b))
	bmv2Skip := ""
	if err := bmv2harness.Check(); err != nil {
		bmv2Skip = "BMv2 unavailable: " + err.Error()
	} else if cfg, err := bmv2Pipeline(); err != nil {
		bmv2Skip = err.Error()
	} else {
		rigs["bmv2"] = startForwardRig(b, "BMv2", bmv2harness.Config{NoLog: true}, cfg)
	}
	for _, kind := range []string{"request", "ipv4"} {
		frames := forwardFrames(kind, 4096)
		for _, target := range []string{"embedded", "bmv2"} {
			b.Run(target+"/"+kind, func(b *testing.B) {
				r := rigs[target]
				if r == nil {
					b.Skip(bmv2Skip)
				}
				r.program(b)
				b.ResetTimer()
				delivered, lost, elapsed, cpu, err := r.pump(frames, b.N)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if delivered == 0 || lost > b.N/100 {
					b.Fatalf("%s: %d of %d frames delivered, %d lost", r.name, delivered, b.N, lost)
				}
				res := result{wall: float64(delivered) / elapsed.Seconds(), cpu: float64(delivered) / cpu.Seconds()}
				results[target+"/"+kind] = res
				b.ReportMetric(res.wall, "frames/s")
				b.ReportMetric(res.cpu, "frames/switch-cpu-s")
				b.ReportMetric(float64(lost), "lost")
			})
		}
	}
	for _, kind := range []string{"request", "ipv4"} {
		e, okE := results["embedded/"+kind]
		m, okB := results["bmv2/"+kind]
		switch {
		case okE && okB:
			b.Logf("%s: embedded %.0f frames/s (%.0f per switch CPU-second), BMv2 %.0f frames/s (%.0f per switch CPU-second): embedded/BMv2 = %.1fx wall, %.1fx per CPU-second",
				kind, e.wall, e.cpu, m.wall, m.cpu, e.wall/m.wall, e.cpu/m.cpu)
		case okE:
			b.Logf("%s: embedded %.0f frames/s (%.0f per switch CPU-second); BMv2 not measured (%s)", kind, e.wall, e.cpu, bmv2Skip)
		}
	}
}

// bmv2Pipeline is p4c's compile of p4src/v1model for BMv2.
func bmv2Pipeline() (*p4v1.ForwardingPipelineConfig, error) {
	dir := buildDir()
	info, err := p4rt.LoadP4Info(filepath.Join(dir, "p4ctl.p4info.txtpb"))
	if err != nil {
		return nil, fmt.Errorf("no p4c P4Info for p4src/v1model in %s (run make p4): %w", dir, err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, "p4ctl.json"))
	if err != nil {
		return nil, fmt.Errorf("no BMv2 JSON for p4src/v1model in %s (run make p4): %w", dir, err)
	}
	return &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob,
		Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}}, nil
}

// window is the number of frames the generator keeps in flight.
func window() int {
	if v, err := strconv.Atoi(os.Getenv("P4CTL_FWD_WINDOW")); err == nil && v > 0 {
		return v
	}
	return fwdWindow
}
