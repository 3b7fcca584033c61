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

// BenchmarkProgramPass is the XDP program's own time per pass (the
// kernel's bpf_stats of p4ctl_inject), by what the frame is, on the
// benchmark plan of internal/xdpbench (12 regions, 1 000 sites, 1 024
// servers): a plain IPv4 frame (l3_forward only) and requests from
// varying sites (region selection, claim, rewrite).
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
	for _, k := range []struct {
		name  string
		frame func(i int) []byte
	}{
		{"l3", func(int) []byte { return plain }},
		{"request", func(i int) []byte {
			f := append([]byte(nil), tmpl...)
			site := i % int(traffic.Sources)
			binary.BigEndian.PutUint32(f[14+12:], traffic.Base+uint32(site)*traffic.Stride)
			binary.BigEndian.PutUint32(f[14+20+8+12:], uint32(i))
			binary.BigEndian.PutUint16(f[14+20+8+2:], uint16(1+i%int(traffic.SLAs)))
			return f
		}},
	} {
		b.Run(k.name, func(b *testing.B) {
			runs0, rt0, err := dp.ProgramStats()
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				sw.Process(k.frame(i), 1)
				i++
			}
			runs1, rt1, err := dp.ProgramStats()
			if err != nil {
				b.Fatal(err)
			}
			if runs1 > runs0 {
				b.ReportMetric(float64(rt1-rt0)/float64(runs1-runs0), "prog-ns/pass")
				b.ReportMetric(float64(runs1-runs0)/float64(i), "passes/frame")
			}
		})
	}
}
