package conformance_test

import (
	"errors"
	"os"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/conformance"
	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func pipelineConfig() *p4v1.ForwardingPipelineConfig {
	return &p4v1.ForwardingPipelineConfig{P4Info: p4rttest.ProgramP4Info(),
		Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 0x4c7}}
}

// The generic engine (the default of p4rttest) loaded with the p4ctl P4Info.
func TestEngine(t *testing.T) {
	sw := p4rttest.Start(t, p4rttest.WithoutPipeline())
	conformance.Run(t, conformance.Conn{
		Name:     "embedded engine",
		Dial:     func(t testing.TB, opts ...p4rt.Option) *p4rt.Client { return sw.Dial(t, opts...) },
		Pipeline: pipelineConfig(),
	})
}

// The embedded p4ctl switch (engine + program model), as `p4ctl switch`
// serves it.
func TestEmbeddedSwitch(t *testing.T) {
	target, err := dataplane.New(dataplane.Options{NoPipeline: true})
	if err != nil {
		t.Fatal(err)
	}
	sw := p4rttest.Start(t, p4rttest.WithTarget(target))
	conformance.Run(t, conformance.Conn{
		Name:     "embedded p4ctl switch",
		Dial:     func(t testing.TB, opts ...p4rt.Option) *p4rt.Client { return sw.Dial(t, opts...) },
		Pipeline: pipelineConfig(),
	})
}

// The XDP target (pkg/dataplane/xdp), as `p4ctl switch --datapath xdp`
// serves it: the same server in front of the program's maps. Root only.
func TestXDPSwitch(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the XDP program needs root (CAP_BPF, CAP_NET_ADMIN) to load")
	}
	target, err := dataplane.New(dataplane.Options{NoPipeline: true, Datapath: xdp.New(xdp.Options{})})
	if errors.Is(err, xdp.ErrNotRoot) {
		t.Skipf("the XDP program cannot be loaded here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	sw := p4rttest.Start(t, p4rttest.WithTarget(target))
	conformance.Run(t, conformance.Conn{
		Name:     "XDP p4ctl switch",
		Dial:     func(t testing.TB, opts ...p4rt.Option) *p4rt.Client { return sw.Dial(t, opts...) },
		Pipeline: pipelineConfig(),
	})
}
