// Package bmv2harness runs BMv2's simple_switch_grpc for tests, isolated in
// a network namespace it creates and removes, so nothing it opens (the
// P4Runtime port, the Thrift port that BMv2 always binds on every
// interface, switch ports) is reachable from the host.
//
// How it works:
//
//  1. `ip netns add p4ctl-bmv2-<pid>-<n>`; loopback up; one veth pair per
//     switch port, both ends inside the namespace: swN (bound to BMv2 port
//     N) and hN (where a test injects and captures frames).
//  2. `ip netns exec NS simple_switch_grpc --no-p4 --device-id 1
//     -i 0@sw0 ... --log-file DIR/bmv2 [--cpu-port P] --
//     --grpc-server-addr 127.0.0.1:9559`.
//  3. The test process stays in the host namespace. Its gRPC dialer
//     (Switch.Dialer) creates each socket from inside the namespace: on an
//     OS thread locked for the purpose it setns(2)s into the namespace,
//     connects to 127.0.0.1:9559, and setns's back. A socket keeps the
//     namespace it was created in, so the connection works from anywhere.
//  4. Stop kills the switch and runs `ip netns del`, which also removes the
//     veth pairs.
//
// The same harness runs p4ctl's embedded switch in BMv2's place
// (Config.P4ctl: `p4ctl switch --no-p4 --device-id 1 -i 0@sw0 ...
// --grpc-addr 127.0.0.1:9559`, its data-plane ports on the same veths), so
// that tests drive both targets through real interfaces the same way.
//
// Requirements: Linux, root (CAP_NET_ADMIN and CAP_SYS_ADMIN for netns),
// iproute2, and simple_switch_grpc built with PI (P4Runtime), named by
// P4CTL_BMV2 or found on PATH (or a p4ctl binary). Require (RequireNetNS
// for the embedded switch) skips a test with the reason when one is
// missing. The bmv2-tests/ directory reuses this package.
package bmv2harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// EnvBinary names the environment variable holding the simple_switch_grpc
// path.
const EnvBinary = "P4CTL_BMV2"

// Config describes the switch to start. The zero value is a switch with two
// ports, device id 1, P4Runtime on 127.0.0.1:9559 inside the namespace.
type Config struct {
	Binary   string   // simple_switch_grpc; default: Find()
	P4ctl    string   // a p4ctl binary: start its embedded switch instead of BMv2 (Binary unused)
	DeviceID uint64   // default 1
	GRPCPort int      // P4Runtime port inside the namespace; default 9559
	Ports    int      // number of switch ports (veth pairs); default 2
	PortIDs  []int    // explicit switch port numbers (overrides Ports); Hosts follow their order
	CPUPort  int      // --cpu-port for PacketIn/PacketOut; 0 = none
	LogDir   string   // where the switch log goes; default a new temp dir
	NoLog    bool     // BMv2 without --log-file (its fastest; only stdout is kept)
	Extra    []string // extra simple_switch_grpc options (before "--"), or p4ctl switch options
	// HostGRO turns GRO on at the host ends of the veth pairs: a veth
	// passes frames an XDP program redirects into its peer only when the
	// receiving end has GRO on or an XDP program of its own, so `p4ctl
	// switch --datapath xdp` needs it (ethtool).
	HostGRO bool
	// SwitchGRO turns GRO on at the switch ends: a switch that reads its
	// ports with sockets (BMv2, the Go datapath) receives frames an XDP
	// program sent into the veth (a traffic generator's) only with it.
	SwitchGRO bool
	// Queues gives each veth end that many RX and TX queues (default 1),
	// so that frames sent from several CPUs are received on several.
	Queues int
	// NoSwitch creates the namespace and the veth pairs only: the caller
	// attaches its own programs to them (Client and Pid are unusable).
	NoSwitch bool
}

// Switch is a running simple_switch_grpc (or p4ctl switch) in its own
// network namespace.
type Switch struct {
	NetNS    string   // namespace name
	Addr     string   // P4Runtime address inside NetNS
	DeviceID uint64   // P4Runtime device id
	Hosts    []string // per switch port (in Config.PortIDs order), the peer interface inside NetNS
	Log      string   // switch log file
	LogDir   string

	embedded bool // p4ctl's embedded switch, not BMv2
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	stop     sync.Once
}

// Find returns the simple_switch_grpc binary: $P4CTL_BMV2, else PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			return "", fmt.Errorf("%s=%s: not an executable file", EnvBinary, p)
		}
		return p, nil
	}
	p, err := exec.LookPath("simple_switch_grpc")
	if err != nil {
		return "", fmt.Errorf("simple_switch_grpc not found (set %s or put it on PATH)", EnvBinary)
	}
	return p, nil
}

// Check reports why BMv2 cannot run here (nil when it can).
func Check() error {
	if _, err := Find(); err != nil {
		return err
	}
	return CheckNetNS()
}

// CheckNetNS reports why the harness cannot create network namespaces
// here (nil when it can): all the embedded switch needs.
func CheckNetNS() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("iproute2 (ip) not found")
	}
	return nil
}

// Require skips t with the reason when BMv2 cannot run here.
func Require(t testing.TB) {
	t.Helper()
	if err := Check(); err != nil {
		t.Skipf("BMv2 unavailable: %v", err)
	}
}

// RequireNetNS skips t with the reason when the harness cannot create
// network namespaces here (the embedded switch's requirement).
func RequireNetNS(t testing.TB) {
	t.Helper()
	if err := CheckNetNS(); err != nil {
		t.Skipf("cannot run a switch in a network namespace: %v", err)
	}
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Start creates the namespace, starts the switch with no pipeline
// (--no-p4) and waits until its P4Runtime server answers.
func Start(ctx context.Context, cfg Config) (*Switch, error) {
	if cfg.Binary == "" && cfg.P4ctl == "" && !cfg.NoSwitch {
		b, err := Find()
		if err != nil {
			return nil, err
		}
		cfg.Binary = b
	}
	if cfg.DeviceID == 0 {
		cfg.DeviceID = 1
	}
	if cfg.GRPCPort == 0 {
		cfg.GRPCPort = 9559
	}
	if cfg.Ports == 0 {
		cfg.Ports = 2
	}
	if cfg.LogDir == "" {
		d, err := os.MkdirTemp("", "p4ctl-bmv2-")
		if err != nil {
			return nil, err
		}
		cfg.LogDir = d
	}
	s := &Switch{
		NetNS:    fmt.Sprintf("p4ctl-bmv2-%d-%08x", os.Getpid(), rand.Uint32()), // unique without a package-level counter
		Addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.GRPCPort)),
		DeviceID: cfg.DeviceID,
		Log:      filepath.Join(cfg.LogDir, "bmv2.log"),
		LogDir:   cfg.LogDir,
		embedded: cfg.P4ctl != "",
		exited:   make(chan struct{}),
	}
	if err := ip(ctx, "netns", "add", s.NetNS); err != nil {
		return nil, err
	}
	fail := func(err error) (*Switch, error) {
		s.Stop()
		return nil, err
	}
	if err := ip(ctx, "-n", s.NetNS, "link", "set", "lo", "up"); err != nil {
		return fail(err)
	}
	args := []string{"netns", "exec", s.NetNS, cfg.Binary, "--no-p4",
		"--device-id", strconv.FormatUint(cfg.DeviceID, 10),
		"--notifications-addr", "ipc://" + filepath.Join(cfg.LogDir, "notifications.ipc")}
	if cfg.NoLog {
		s.Log = filepath.Join(cfg.LogDir, "stdout.log")
	} else {
		args = append(args, "--log-file", strings.TrimSuffix(s.Log, ".log"), "--log-flush", "--log-level", "info")
	}
	if cfg.P4ctl != "" {
		s.Log = filepath.Join(cfg.LogDir, "stdout.log") // the embedded switch logs to stderr
		args = []string{"netns", "exec", s.NetNS, cfg.P4ctl, "switch", "--no-p4",
			"--device-id", strconv.FormatUint(cfg.DeviceID, 10), "--grpc-addr", s.Addr}
		if cfg.CPUPort != 0 {
			args = append(args, "--cpu-port", strconv.Itoa(cfg.CPUPort))
		}
	}
	ids := cfg.PortIDs
	if len(ids) == 0 {
		for i := range cfg.Ports {
			ids = append(ids, i)
		}
	}
	for _, i := range ids {
		sw, host := fmt.Sprintf("sw%d", i), fmt.Sprintf("h%d", i)
		add := []string{"-n", s.NetNS, "link", "add", sw}
		var q []string
		if cfg.Queues > 1 {
			q = []string{"numtxqueues", strconv.Itoa(cfg.Queues), "numrxqueues", strconv.Itoa(cfg.Queues)}
		}
		add = append(append(add, q...), "type", "veth", "peer", "name", host)
		if err := ip(ctx, append(add, q...)...); err != nil {
			return fail(err)
		}
		for _, ifc := range []string{sw, host} {
			if err := ip(ctx, "-n", s.NetNS, "link", "set", ifc, "up"); err != nil {
				return fail(err)
			}
		}
		for _, g := range []struct {
			on  bool
			ifc string
		}{{cfg.HostGRO, host}, {cfg.SwitchGRO, sw}} {
			if !g.on {
				continue
			}
			if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", s.NetNS, "ethtool", "-K", g.ifc, "gro", "on").CombinedOutput(); err != nil {
				return fail(fmt.Errorf("turn GRO on at %s (ethtool -K %s gro on): %v %s", g.ifc, g.ifc, err, bytes.TrimSpace(out)))
			}
		}
		s.Hosts = append(s.Hosts, host)
		args = append(args, "-i", fmt.Sprintf("%d@%s", i, sw))
	}
	args = append(args, cfg.Extra...)
	if cfg.P4ctl == "" {
		args = append(args, "--", "--grpc-server-addr", s.Addr)
		if cfg.CPUPort != 0 {
			args = append(args, "--cpu-port", strconv.Itoa(cfg.CPUPort))
		}
	}
	if cfg.NoSwitch {
		close(s.exited)
		return s, nil
	}
	out, err := os.Create(filepath.Join(cfg.LogDir, "stdout.log"))
	if err != nil {
		return fail(err)
	}
	s.cmd = exec.Command("ip", args...)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		out.Close()
		return fail(fmt.Errorf("start %s: %w", s.program(), err))
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		out.Close()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// waitReady polls the P4Runtime port until Capabilities answers.
func (s *Switch) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited (%w): %s", s.program(), s.exitErr, s.tail())
		case <-ctx.Done():
			return fmt.Errorf("%s not answering on %s in %s: %w: %s", s.program(), s.Addr, s.NetNS, last, s.tail())
		case <-time.After(100 * time.Millisecond):
		}
		c, err := s.Client(p4rt.WithCallTimeout(time.Second))
		if err != nil {
			return err
		}
		_, last = c.Capabilities(ctx)
		c.Close()
		if last == nil {
			return nil
		}
	}
}

// program names the switch program in errors.
func (s *Switch) program() string {
	if s.embedded {
		return "p4ctl switch"
	}
	return "simple_switch_grpc"
}

func (s *Switch) tail() string {
	var b []byte
	files := []string{filepath.Join(s.LogDir, "stdout.log")}
	if s.Log != files[0] {
		files = append(files, s.Log)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b = append(b, data...)
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// Dialer returns a gRPC context dialer whose sockets are created inside the
// switch's namespace.
func (s *Switch) Dialer() func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		return dialInNetNS(ctx, s.NetNS, strings.TrimPrefix(addr, "passthrough:///"))
	}
}

// DialOption is grpc.WithContextDialer(s.Dialer()).
func (s *Switch) DialOption() grpc.DialOption { return grpc.WithContextDialer(s.Dialer()) }

// Client dials the switch's P4Runtime server (device id set) with opts.
func (s *Switch) Client(opts ...p4rt.Option) (*p4rt.Client, error) {
	base := []p4rt.Option{p4rt.WithDeviceID(s.DeviceID), p4rt.WithDialOptions(s.DialOption())}
	return p4rt.Dial("passthrough:///"+s.Addr, append(base, opts...)...)
}

// ClientT is Client for a test: it fails t when dialing fails and closes
// the client at t's cleanup. Its signature is conformance.Conn's Dial.
func (s *Switch) ClientT(t testing.TB, opts ...p4rt.Option) *p4rt.Client {
	t.Helper()
	c, err := s.Client(opts...)
	if err != nil {
		t.Fatalf("bmv2harness: dial %s in %s: %v", s.Addr, s.NetNS, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Command returns cmd to run name inside the switch's namespace (e.g. to
// send frames on s.Hosts[i]).
func (s *Switch) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", s.NetNS, name}, args...)...)
}

// Pid is the switch process's id (0 before it started).
func (s *Switch) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Alive reports whether the switch process is still running.
func (s *Switch) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return s.cmd != nil
	}
}

// Stop kills the switch (SIGTERM, then SIGKILL after 3 s) and deletes the
// namespace. It is safe to call more than once.
func (s *Switch) Stop() error {
	var err error
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(3 * time.Second):
				syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.exited
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = ip(ctx, "netns", "del", s.NetNS)
	})
	return err
}

// StartT starts a switch for a test (skipping when BMv2 is unavailable) and
// stops it at cleanup; the log directory is the test's temp dir.
func StartT(t testing.TB, cfg Config) *Switch {
	t.Helper()
	if cfg.P4ctl != "" {
		RequireNetNS(t)
	} else {
		Require(t)
	}
	if cfg.LogDir == "" {
		cfg.LogDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("bmv2harness: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("bmv2harness: %v", err)
		}
	})
	return s
}
