package bmv2harness_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	"github.com/p4ctl/p4ctl/internal/testing/conformance"
	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
)

// When run as a fake simple_switch_grpc (P4CTL_FAKE_BMV2=1), the test
// binary serves the embedded engine on --grpc-server-addr, so the harness
// can be tested without BMv2.
func TestMain(m *testing.M) {
	if os.Getenv("P4CTL_FAKE_BMV2") == "1" {
		os.Exit(fakeSwitch(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeSwitch(args []string) int {
	addr := ""
	for i, a := range args {
		if a == "--grpc-server-addr" && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	if addr == "" {
		return 2
	}
	srv := p4rtserver.New(engine.New(engine.Options{}), p4rtserver.WithAddress(addr))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := srv.ListenAndServe(ctx); err != nil {
		return 1
	}
	return 0
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) not found")
	}
}

// The harness creates the namespace and ports, starts the "switch" inside,
// reaches it only through its namespace dialer, and removes everything.
func TestHarnessWithFakeSwitch(t *testing.T) {
	needRoot(t)
	t.Setenv("P4CTL_FAKE_BMV2", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A port that is free on the host, so the isolation check below cannot
	// hit someone else's server.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	sw, err := bmv2harness.Start(ctx, bmv2harness.Config{Binary: os.Args[0], LogDir: t.TempDir(), Ports: 3, GRPCPort: port})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	c, err := sw.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Capabilities(ctx); err != nil || v != p4rtserver.APIVersion {
		t.Fatalf("Capabilities through the namespace dialer: %q %v", v, err)
	}
	// The port is not reachable from the host namespace.
	var d = &netDialer{}
	if conn, err := d.dial(sw.Addr); err == nil {
		conn.Close()
		t.Errorf("%s reachable from the host namespace", sw.Addr)
	}
	out, err := sw.Command(ctx, "ip", "-br", "link").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, ifc := range append([]string{"sw0", "sw2"}, sw.Hosts...) {
		if !strings.Contains(string(out), ifc) {
			t.Errorf("interface %s missing in %s:\n%s", ifc, sw.NetNS, out)
		}
	}
	if len(sw.Hosts) != 3 || !sw.Alive() {
		t.Fatalf("hosts %v alive %v", sw.Hosts, sw.Alive())
	}
	if err := sw.Stop(); err != nil {
		t.Fatal(err)
	}
	if sw.Alive() {
		t.Error("switch still running after Stop")
	}
	list, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	if strings.Contains(string(list), sw.NetNS) {
		t.Errorf("namespace %s left behind", sw.NetNS)
	}
}

func TestStartFailsCleanly(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := bmv2harness.Start(ctx, bmv2harness.Config{Binary: "/bin/false", LogDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("a switch that exits at once: %v", err)
	}
	list, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	if strings.Contains(string(list), "p4ctl-bmv2-"+itoa(os.Getpid())+"-") {
		t.Errorf("namespace left behind: %s", list)
	}
}

func TestFind(t *testing.T) {
	t.Setenv(bmv2harness.EnvBinary, "/nonexistent/simple_switch_grpc")
	if _, err := bmv2harness.Find(); err == nil {
		t.Fatal("a missing binary was found")
	}
	if err := bmv2harness.Check(); err == nil {
		t.Fatal("Check passed without a binary")
	}
	t.Setenv(bmv2harness.EnvBinary, "/bin/true")
	if p, err := bmv2harness.Find(); err != nil || p != "/bin/true" {
		t.Fatalf("Find = %q %v", p, err)
	}
}

// The conformance suite through the harness (namespace dialer, one client
// per controller) against the fake switch: the path TestBMv2 takes.
func TestConformanceThroughHarness(t *testing.T) {
	needRoot(t)
	t.Setenv("P4CTL_FAKE_BMV2", "1")
	sw := startFake(t)
	conformance.Run(t, conformance.Conn{
		Name:     "fake switch in a namespace",
		Dial:     sw.ClientT,
		Pipeline: &p4v1.ForwardingPipelineConfig{P4Info: p4rttest.ProgramP4Info()},
	})
}

func startFake(t *testing.T) *bmv2harness.Switch {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := bmv2harness.Start(ctx, bmv2harness.Config{Binary: os.Args[0], LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Stop() })
	return sw
}
