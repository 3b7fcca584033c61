package xdpbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
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
	res, err := Measure(context.Background(), Options{P4ctl: bin, Targets: []string{Bare, XDP},
		Duration: 200 * time.Millisecond, Cores: []int{1}, LatencyFrames: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		t.Logf("%s: %.0f requests/s, p50 %v, %s", r.Target, r.Rate[1], r.P50, r.Note)
		if r.Rate[1] <= 0 || r.P50 <= 0 || r.Note != "" {
			t.Errorf("%s: nothing measured (rate %.0f, p50 %v) %s", r.Target, r.Rate[1], r.P50, r.Note)
		}
		if r.Target == XDP && (r.PassesPerRequest < 0.99 || r.PassesPerRequest > 1.01) {
			t.Errorf("%s: %.3f program runs per request, want 1", r.Target, r.PassesPerRequest)
		}
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
