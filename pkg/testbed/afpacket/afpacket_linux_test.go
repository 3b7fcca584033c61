//go:build linux

package afpacket

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	pc "github.com/p4ctl/p4ctl/pkg/dataplane/packetcases"
)

// recv waits up to 2 s for a frame on p (nonblocking).
func recv(t *testing.T, p *Port) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		f, err := p.Recv(buf)
		if errors.Is(err, ErrWouldBlock) {
			time.Sleep(time.Millisecond) // polling interval of a nonblocking read
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(f) >= 14 && f[12] == 0x86 && f[13] == 0xdd {
			continue // the kernel's IPv6 chatter
		}
		return append([]byte(nil), f...)
	}
	return nil
}

// A veth pair in a namespace of the test's own: frames sent on one end
// arrive intact on the other, VLAN tag included, and a port never reads
// back what it sent.
func TestVethPair(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) not found")
	}
	ns := fmt.Sprintf("p4ctl-afp-%d", os.Getpid())
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
	ip("-n", ns, "link", "add", "va", "type", "veth", "peer", "name", "vb")
	_ = exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1").Run()
	ip("-n", ns, "link", "set", "dev", "va", "up")
	ip("-n", ns, "link", "set", "dev", "vb", "up")
	// A veth passes frames once both ends have carrier (set asynchronously).
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("ip", "-n", ns, "-o", "link", "show", "dev", "va").Output()
		if bytes.Contains(out, []byte("LOWER_UP")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("va never got carrier: %s", out)
		}
		time.Sleep(5 * time.Millisecond) // polling interval of the carrier check
	}
	a, err := OpenIn(ns, "va", true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenIn(ns, "vb", true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := Open("va", true); err == nil {
		t.Error("va opened outside its namespace")
	}

	frame := pc.Bytes(pc.Request(pc.Client(1), 42, 300, 0))
	tagged := append(append(append([]byte(nil), frame[:12]...), 0x81, 0x00, 0x20, 0x07), frame[12:]...)
	for _, f := range [][]byte{frame, tagged} {
		if err := a.Send(f); err != nil {
			t.Fatal(err)
		}
		if got := recv(t, b); !bytes.Equal(got, f) {
			t.Fatalf("sent     % x\nreceived % x", f, got)
		}
	}
	buf := make([]byte, 2048)
	if f, err := a.Recv(buf); !errors.Is(err, ErrWouldBlock) {
		t.Errorf("the sender read back %d bytes (%v)", len(f), err)
	}
	if err := a.Send(frame[:MinFrame-1]); err == nil {
		t.Error("a frame shorter than an Ethernet header was sent")
	}
}
