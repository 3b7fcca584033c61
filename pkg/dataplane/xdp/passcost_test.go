package xdp_test

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/casesuite"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/internal/xdpbench"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
)

// BenchmarkProgramPass is the XDP program's own time per pass, from the
// kernel's BPF statistics, with warm caches: BPF_PROG_RUN repeats one pass
// b.N times (the metadata left as it came, so every repeat is the same
// first pass; its effects on the registers accumulate), with preemption
// off, so that other work on the machine barely shows. On the benchmark
// plan of internal/xdpbench (12 regions, 1 000 sites, 1 024 servers): a
// plain IPv4 frame (l3_forward only), a request to a local region (region
// selection, capacity, claim, probe, rewrite), a reply (release).
func BenchmarkProgramPass(b *testing.B) {
	const f = "/proc/sys/kernel/bpf_stats_enabled"
	old, err := os.ReadFile(f)
	if err != nil {
		b.Skipf("no BPF statistics: %v", err)
	}
	if err := os.WriteFile(f, []byte("1"), 0o644); err != nil {
		b.Skipf("cannot enable BPF statistics: %v", err)
	}
	defer os.WriteFile(f, old, 0o644)
	var dp *xdp.Datapath
	sw := newSwitch(b, nil, func(d *xdp.Datapath) { dp = d })
	casesuite.Install(b, sw, xdpbench.Plan(false))
	tmpl, traffic, err := xdpbench.Template()
	if err != nil {
		b.Fatal(err)
	}
	plain := pc.Bytes(pc.Request(pc.Client(1), 0, 100, 0))
	plain[14+20+2], plain[14+20+3] = 0, 53 // UDP to port 53: not p4ctl
	request := append([]byte(nil), tmpl...)
	binary.BigEndian.PutUint32(request[14+12:], traffic.Base+7*traffic.Stride) // site 8
	binary.BigEndian.PutUint16(request[14+20+8+2:], 300)                       // all 12 regions feasible
	reply := append([]byte(nil), request...)
	if res := sw.Process(reply, 1); res.Verdict.String() != pc.Forwarded {
		b.Fatalf("the request to answer: %s %s", res.Verdict, res.Reason)
	}
	// The server's answer: swap addresses and ports, type reply.
	var mac [6]byte
	copy(mac[:], reply[0:6])
	copy(reply[0:6], reply[6:12])
	copy(reply[6:12], mac[:])
	var ip [4]byte
	copy(ip[:], reply[26:30])
	copy(reply[26:30], reply[30:34])
	copy(reply[30:34], ip[:])
	reply[34], reply[35], reply[36], reply[37] = reply[36], reply[37], reply[34], reply[35]
	reply[42] = reply[42]&0xf0 | 2
	for _, k := range []struct {
		name  string
		frame []byte
	}{{"l3", plain}, {"request", request}, {"reply", reply}} {
		b.Run(k.name, func(b *testing.B) {
			runs0, rt0, err := dp.ProgramStats()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := dp.Repeat(k.frame, 1, b.N); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			runs1, rt1, err := dp.ProgramStats()
			if err != nil {
				b.Fatal(err)
			}
			if runs1 > runs0 {
				b.ReportMetric(float64(rt1-rt0)/float64(runs1-runs0), "prog-ns/pass")
			}
		})
	}
}
