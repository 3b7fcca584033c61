//go:build linux

package bmv2tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// p4ctlBinary builds cmd/p4ctl into a directory of t's (skipping t when
// the go command is missing) and returns its path.
func p4ctlBinary(t testing.TB) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed to build p4ctl")
	}
	bin := filepath.Join(t.TempDir(), "p4ctl")
	cmd := exec.Command(gobin, "build", "-o", bin, "github.com/p4ctl/p4ctl/cmd/p4ctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build p4ctl: %v\n%s", err, out)
	}
	return bin
}

// embeddedPipeline is the pipeline the embedded switch is given: p4c's
// outputs for p4src/v1model when they are here (the switch re-binds p4c's
// ids by name and keeps the BMv2 JSON unused), else its own P4Info.
func embeddedPipeline(t testing.TB) *p4v1.ForwardingPipelineConfig {
	t.Helper()
	cookie := &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}
	dir := buildDir()
	info, err := p4rt.LoadP4Info(filepath.Join(dir, "p4ctl.p4info.txtpb"))
	if err != nil {
		t.Logf("no p4c P4Info in %s (%v): using the embedded target's own", dir, err)
		return &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info(), Cookie: cookie}
	}
	blob, _ := os.ReadFile(filepath.Join(dir, "p4ctl.json"))
	return &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob, Cookie: cookie}
}

// The shared packet-case table on p4ctl's embedded switch as a process of
// its own (`p4ctl switch -i N@swN ...`), through the same veths, AF_PACKET
// sockets and P4Runtime calls as BMv2 in TestPacketCases, next to the
// in-process embedded target: frames out, counters and the listed
// registers must agree with it and with each case's expectation.
func TestPacketCasesEmbedded(t *testing.T) {
	bmv2harness.RequireNetNS(t)
	packetCases(t, "p4ctl switch", embeddedPipeline(t), bmv2harness.Config{P4ctl: p4ctlBinary(t)})
}

// The shared packet-case table on `p4ctl switch --datapath xdp`: the p4ctl
// program in the XDP data path of the same veths, driven over the same
// P4Runtime calls, next to the in-process embedded target. The host ends
// get GRO on, without which a veth drops the frames XDP redirects into it.
func TestPacketCasesXDP(t *testing.T) {
	bmv2harness.RequireNetNS(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("ethtool is needed to turn GRO on at the XDP ports' veth peers (apt-get install ethtool)")
	}
	packetCases(t, "p4ctl switch --datapath xdp", embeddedPipeline(t),
		bmv2harness.Config{P4ctl: p4ctlBinary(t), Extra: []string{"--datapath", "xdp"}, HostGRO: true})
}
