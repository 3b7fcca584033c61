// Package testnet gives tests a network namespace of their own with veth
// pairs in it (Linux, root, iproute2): the place the packet-socket tests of
// pkg/afpacket, pkg/dataplane/ports and `p4ctl switch -i` run, never an
// interface of the machine. Without root or ip(8) the test is skipped with
// a one-line reason. SilentListener (any OS) is a loopback peer that
// accepts and never answers.
package testnet

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Namespace creates a network namespace named prefix-PID-N for t (IPv6
// off, so no router solicitations reach the ports), deleted with
// everything in it at cleanup, and returns its name and a runner of
// `ip -n NAME args…` that fails t on error.
func Namespace(t testing.TB, prefix string) (string, func(args ...string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 (ip) not found")
	}
	ns := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v %s", ns, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v %s", ns, err, out)
		}
	})
	_ = exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").Run()
	return ns, func(args ...string) {
		t.Helper()
		full := append([]string{"-n", ns}, args...)
		if out, err := exec.Command("ip", full...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", full, err, out)
		}
	}
}

// Veth adds the veth pair a–b to namespace ns, both ends up, and waits
// until both have carrier.
func Veth(t testing.TB, ns, a, b string) {
	t.Helper()
	for _, args := range [][]string{
		{"link", "add", a, "type", "veth", "peer", "name", b},
		{"link", "set", "dev", a, "up"},
		{"link", "set", "dev", b, "up"},
	} {
		full := append([]string{"-n", ns}, args...)
		if out, err := exec.Command("ip", full...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", full, err, out)
		}
	}
	WaitCarrier(t, ns, a)
	WaitCarrier(t, ns, b)
}

// WaitCarrier waits until interface ifc of namespace ns has carrier: a
// veth passes frames once both ends have it (set asynchronously).
func WaitCarrier(t testing.TB, ns, ifc string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("ip", "-n", ns, "-o", "link", "show", "dev", ifc).Output()
		if bytes.Contains(out, []byte("LOWER_UP")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got carrier: %s", ifc, out)
		}
		time.Sleep(5 * time.Millisecond) // polling interval of the carrier check
	}
}
