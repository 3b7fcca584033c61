package conformance_test

import (
	"os"
	"path/filepath"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/internal/testing/conformance"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// buildDir holds p4c's outputs for the v1model program (`make p4`). The
// P4CTL_P4BUILD variable overrides it (e.g. a scratch compile).
func buildDir() string {
	if d := os.Getenv("P4CTL_P4BUILD"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "p4src", "build", "v1model")
}

// TestBMv2 runs the suite against simple_switch_grpc, started by
// bmv2harness in a network namespace of its own (see that package for how;
// needs root and P4CTL_BMV2 or simple_switch_grpc on PATH), loaded with
// p4c's compile of p4src/v1model. To run it by hand:
//
//	source /opt/p4/env.sh   # PATH/LD_LIBRARY_PATH of a local BMv2 build
//	sudo -E go test ./internal/testing/conformance -run BMv2 -v
//
// P4CTL_P4BUILD=DIR (holding p4ctl.json and p4ctl.p4info.txtpb) runs the
// same suite with another program: it only relies on the P4Info.
func TestBMv2(t *testing.T) {
	bmv2harness.Require(t)
	dir := buildDir()
	info, err := p4rt.LoadP4Info(filepath.Join(dir, "p4ctl.p4info.txtpb"))
	if err != nil {
		t.Skipf("no p4c output for the v1model program in %s (run make p4): %v", dir, err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, "p4ctl.json"))
	if err != nil {
		t.Skipf("no BMv2 JSON in %s (run make p4): %v", dir, err)
	}
	sw := bmv2harness.StartT(t, bmv2harness.Config{})
	conformance.Run(t, conformance.Conn{
		Name:     "BMv2 simple_switch_grpc",
		Dial:     sw.ClientT,
		DeviceID: sw.DeviceID,
		Pipeline: &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob,
			Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}},
		Quirks: conformance.BMv2Quirks,
	})
}
