//go:build linux

package ports

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
)

// The switch on real interfaces: two veth pairs in a network namespace of
// the test's own (sw1–h1, sw2–h2; the switch holds sw1 and sw2). A frame
// sent on h1 leaves on h2 as the pipeline forwards it; deleting the second
// pair ends Run with port 2's *PortError.
func TestVeths(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) not found")
	}
	ns := fmt.Sprintf("p4ctl-ports-%d", os.Getpid())
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v %s", ns, err, out)
		}
	})
	_ = exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").Run()
	for _, n := range []string{"1", "2"} {
		ip("-n", ns, "link", "add", "sw"+n, "type", "veth", "peer", "name", "h"+n)
		ip("-n", ns, "link", "set", "sw"+n, "up")
		ip("-n", ns, "link", "set", "h"+n, "up")
	}
	for _, ifc := range []string{"sw1", "sw2"} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			out, _ := exec.Command("ip", "-n", ns, "-o", "link", "show", "dev", ifc).Output()
			if bytes.Contains(out, []byte("LOWER_UP")) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never got carrier", ifc)
			}
			time.Sleep(5 * time.Millisecond) // polling interval of the carrier check
		}
	}
	sw := routedSwitch(t)
	ps, err := Open(sw, []Spec{{1, "sw1"}, {2, "sw2"}}, Options{NetNS: ns, CheckInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ps.Run(context.Background()) }()
	h1, err := afpacket.OpenIn(ns, "h1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer h1.Close()
	h2, err := afpacket.OpenIn(ns, "h2", true)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()

	f := udpTo(t, net.IPv4(10, 0, 2, 7))
	if err := h1.Send(f); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	var got []byte
	for deadline := time.Now().Add(5 * time.Second); got == nil && time.Now().Before(deadline); {
		g, err := h2.Recv(buf)
		switch {
		case errors.Is(err, afpacket.ErrWouldBlock):
			time.Sleep(time.Millisecond) // polling interval of a nonblocking read
		case err != nil:
			t.Fatal(err)
		case len(g) >= 14 && g[12] == 0x08 && g[13] == 0x00:
			got = append([]byte(nil), g...)
		}
	}
	if !bytes.Equal(got, f) {
		t.Fatalf("h2 received % x, want % x", got, f)
	}

	ip("-n", ns, "link", "del", "h2")
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not notice sw2 disappeared")
	}
	var pe *PortError
	if !errors.As(err, &pe) || pe.Port != 2 || !errors.Is(err, ErrInterfaceGone) {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("Run ended with: %v", err)
}
