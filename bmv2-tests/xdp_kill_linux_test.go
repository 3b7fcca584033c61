//go:build linux

package bmv2tests

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
)

// A `p4ctl switch --datapath xdp` killed with SIGKILL leaves no program on
// its interfaces (its attachments are BPF links, gone with the process),
// and a new one starts on the same interfaces.
func TestSwitchXDPKilled(t *testing.T) {
	bmv2harness.RequireNetNS(t)
	bin := p4ctlBinary(t)
	cfg := bmv2harness.Config{P4ctl: bin, Extra: []string{"--datapath", "xdp"}}
	sw := bmv2harness.StartT(t, cfg)
	xdpOn := func() []string {
		out, err := exec.Command("ip", "-n", sw.NetNS, "-d", "link", "show").CombinedOutput()
		if err != nil {
			t.Fatalf("ip link show: %v %s", err, out)
		}
		var on []string
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasSuffix(f[0], ":") && strings.Contains(l, " xdp") {
				on = append(on, strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0])
			}
		}
		return on
	}
	if on := xdpOn(); len(on) != 2 {
		t.Fatalf("XDP is on %v while the switch runs, want its two ports", on)
	}
	if err := syscall.Kill(sw.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); sw.Alive(); {
		if time.Now().After(deadline) {
			t.Fatal("the switch survived SIGKILL")
		}
		time.Sleep(10 * time.Millisecond) // waiting for the process to be reaped
	}
	// The kernel releases a dead process's links asynchronously.
	var on []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if on = xdpOn(); len(on) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(on) != 0 {
		t.Fatalf("XDP still on %v after the switch was killed", on)
	}
	cmd := sw.Command(t.Context(), bin, "switch", "--datapath", "xdp", "-i", "0@sw0", "-i", "1@sw1", "--grpc-addr", "127.0.0.1:9560")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var all strings.Builder
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "P4Runtime on") {
				started <- ""
				io.Copy(io.Discard, stderr)
				return
			}
		}
		started <- all.String()
	}()
	select {
	case out := <-started:
		if out != "" {
			t.Fatalf("the switch did not start again on the same interfaces: %s", out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the switch did not start again on the same interfaces")
	}
	if on := xdpOn(); len(on) != 2 {
		t.Fatalf("XDP is on %v after the restart, want its two ports", on)
	}
}
