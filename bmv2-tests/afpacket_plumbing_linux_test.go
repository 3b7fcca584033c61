//go:build linux

package bmv2tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	pc "github.com/p4ctl/p4ctl/pkg/dataplane/packetcases"
)

// The injection and capture plumbing on its own (no BMv2): a veth pair in a
// namespace of the test's own, a frame sent on one end arrives intact on
// the other, and a port never reads back what it sent.
func TestAFPacketPlumbing(t *testing.T) {
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
	a, err := openPacketPort(ns, "va", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := openPacketPort(ns, "vb", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	frame := pc.Bytes(pc.Request(pc.Client(1), 42, 300, 0))
	if err := a.send(frame); err != nil {
		t.Fatal(err)
	}
	got, err := readAll([]*packetPort{a, b}, 2*time.Second, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].port != 2 || !bytes.Equal(got[0].frame, frame) {
		t.Fatalf("captured %d frames: %+v", len(got), got)
	}
	if o := bmv2Outcome(1, got); o.Verdict != pc.Forwarded || o.Port != 2 {
		t.Errorf("outcome %v", o)
	}
	if got, _ := readAll([]*packetPort{a, b}, 100*time.Millisecond, 10*time.Millisecond); len(got) != 0 {
		t.Errorf("stray frames %+v", got)
	}
	if o := bmv2Outcome(1, nil); o.Verdict != pc.Dropped {
		t.Errorf("no frame: %v", o)
	}
}
