package xdpbench

import (
	"context"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// requireRig skips tb without root, namespaces or the go command, and
// returns a p4ctl binary built from this tree.
func requireRig(tb testing.TB) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("the benchmark rig needs root (network namespaces, XDP)")
	}
	if err := bmv2harness.CheckNetNS(); err != nil {
		tb.Skipf("the benchmark rig needs network namespaces: %v", err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("the go command is needed to build p4ctl")
	}
	bin := filepath.Join(tb.TempDir(), "p4ctl")
	if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/p4ctl/p4ctl/cmd/p4ctl").CombinedOutput(); err != nil {
		tb.Fatalf("go build p4ctl: %v\n%s", err, out)
	}
	return bin
}

// The rig works end to end: the generator's requests cross the bare
// redirect and the XDP switch, whose program runs once per request (random
// pools, no recirculation), and the sink times them.
func TestRigMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts switches (-short)")
	}
	bin := requireRig(t)
	for _, c := range []struct {
		name    string
		closed  bool
		targets []string
		runs    float64 // the XDP program's runs per request
	}{
		{"open", false, []string{Bare, XDP}, 1},
		// closed: a request and its reply; the Go model joins to prove the
		// servers' answers reach a switch on AF_PACKET ports
		{"closed", true, []string{Bare, XDP, GoModel}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Measure(t.Context(), Options{P4ctl: bin, Targets: c.targets, Closed: c.closed,
				Duration: 200 * time.Millisecond, Cores: []int{1}, LatencyFrames: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Runs {
				t.Logf("%s: %.0f requests/s, p50 %v, %s", r.Target, r.Rate[1], r.P50, r.Note)
				// The Go model NACKs a few requests when the machine is
				// loaded: a note on its frames, not a fault of the rig.
				nacks := r.Target == GoModel && strings.Contains(r.Note, "other frames/s")
				if r.Rate[1] <= 0 || r.P50 <= 0 || (r.Note != "" && !nacks) {
					t.Errorf("%s: nothing measured (rate %.0f, p50 %v) %s", r.Target, r.Rate[1], r.P50, r.Note)
				}
				if r.Target == XDP && (r.PassesPerRequest < 0.99*c.runs || r.PassesPerRequest > 1.01*c.runs) {
					t.Errorf("%s: %.3f program runs per request, want %v", r.Target, r.PassesPerRequest, c.runs)
				}
			}
		})
	}
}

// BenchmarkDatapath measures every data plane on the same veths in one run
// (requests only, one generator core, then two): requests/s, the ratio to
// the bare XDP redirect, CPU per request and the latency quantiles, one
// metric set per target. BMv2 joins when simple_switch_grpc and p4c's
// outputs are present.
func BenchmarkDatapath(b *testing.B) {
	bin := requireRig(b)
	o := Options{P4ctl: bin, Duration: 2 * time.Second}
	if info, err := p4rt.LoadP4Info("../../p4src/build/v1model/p4ctl.p4info.txtpb"); err == nil {
		if blob, err := os.ReadFile("../../p4src/build/v1model/p4ctl.json"); err == nil {
			o.BMv2Config = &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob}
		}
	}
	var res *Result
	for b.Loop() {
		var err error
		if res, err = Measure(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range res.Runs {
		if r.Note != "" {
			b.Logf("%s: %s", r.Target, r.Note)
		}
		for c, v := range r.Rate {
			b.ReportMetric(v, r.shortName()+"-req/s-"+itoa(c)+"core")
		}
		if r.XBare > 0 {
			b.ReportMetric(r.XBare, r.shortName()+"-x-bare")
		}
		if r.P99 > 0 {
			b.ReportMetric(float64(r.P99.Nanoseconds()), r.shortName()+"-p99-ns")
		}
	}
}

// latBucket is rig.c's lat_bucket, for checking BucketEdge against it.
func latBucket(v uint64) int {
	if v < LatencyLinear {
		return int(v)
	}
	msb := 63 - bits.LeadingZeros64(v)
	b := LatencyLinear + (msb-7)*8 + int((v>>(msb-3))&7)
	return min(b, 255)
}

func TestBucketEdgesBoundTheirLatencies(t *testing.T) {
	step := uint64(LatencyStep)
	for b := 1; b < 256; b++ {
		if BucketEdge(b) <= BucketEdge(b-1) {
			t.Fatalf("edge %d = %v not above edge %d = %v", b, BucketEdge(b), b-1, BucketEdge(b-1))
		}
	}
	for v := uint64(0); v < 1<<22; v = v*9/8 + 1 {
		for _, w := range []uint64{v, v + 1} {
			b := latBucket(w)
			lat := time.Duration(w * step)
			if lat >= BucketEdge(b) || (b > 0 && lat < BucketEdge(b-1)) {
				t.Fatalf("%v in bucket %d: [%v, %v)", lat, b, BucketEdge(b-1), BucketEdge(b))
			}
			if b >= LatencyLinear && float64(BucketEdge(b)-BucketEdge(b-1)) > 0.125*float64(lat)+1 {
				t.Fatalf("bucket %d wider than an eighth of %v", b, lat)
			}
		}
	}
}

func TestWritePlot(t *testing.T) {
	r := &Result{CPUs: 2, Kernel: "6.8.0-51-generic", Runs: []Run{
		{Target: Bare, Rate: map[int]float64{1: 6.8e6, 2: 9.2e6}},
		{Target: XDP, Rate: map[int]float64{1: 2.5e6, 2: 4.6e6}},
		{Target: BMv2, Rate: map[int]float64{1: 575}},
	}}
	dir := t.TempDir()
	files, err := r.WritePlot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("wrote %v, want a PNG and an SVG", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (size %v)", f, err, st)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "xdpbench.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6.80 M", "4.60 M", "575", "log scale"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	// Issue 27 item 19: a short title; the run's provenance (kernel, CPUs,
	// the command) is the caption, whole in the SVG's <desc>.
	if pr := figcheck.SVGProblem(svg, "kernel 6.8.0-51-generic, 2 CPUs", "internal/xdpbench/cmd/xdpbench"); pr != "" {
		t.Error(pr)
	}
	if _, err := (&Result{Runs: []Run{{Target: Bare}}}).WritePlot(dir); err == nil {
		t.Error("a result without rates drew a plot")
	}
}
