//go:build linux

package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/internal/testing/testnet"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// `p4ctl switch -i 1@sw1 -i 2@sw2` on veth pairs in a network namespace of
// the test's own: a frame sent on h1 is forwarded out of sw2 to h2 as the
// entries written over P4Runtime say; interrupting the switch closes its
// packet sockets; a deleted interface stops it with an error naming the
// port.
func TestSwitchPorts(t *testing.T) {
	ns, ip := testnet.Namespace(t, "p4ctl-swcmd")
	testnet.Veth(t, ns, "sw1", "h1")
	testnet.Veth(t, ns, "sw2", "h2")
	// packetSockets counts the packet sockets bound in the namespace.
	packetSockets := func() int {
		out, err := exec.Command("ip", "netns", "exec", ns, "cat", "/proc/net/packet").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(strings.TrimSpace(string(out)), "\n") // minus the heading line
	}

	start := func() (net.Addr, chan error, context.CancelFunc, *bytes.Buffer) {
		ctx, cancel := context.WithCancel(context.Background())
		addrc := make(chan net.Addr, 1)
		o := &switchOptions{GRPCAddr: "127.0.0.1:0", DeviceID: 1, CPUPort: 510, Interfaces: []string{"1@sw1", "2@sw2"},
			netns: ns, ready: func(a net.Addr) { addrc <- a }}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		errb := &bytes.Buffer{}
		done := make(chan error, 1)
		go func() { done <- o.Run(ctx, &streams{Out: &bytes.Buffer{}, Err: errb}) }()
		select {
		case a := <-addrc:
			return a, done, cancel, errb
		case err := <-done:
			t.Fatalf("switch exited: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("switch did not start")
		}
		return nil, nil, nil, nil
	}
	before := packetSockets()
	addr, done, cancel, errb := start()
	if !strings.Contains(errb.String(), "ports 1@sw1 2@sw2") {
		t.Errorf("stderr %q does not list the ports", errb.String())
	}
	if n := packetSockets(); n != before+2 {
		t.Errorf("%d packet sockets in the namespace while the switch runs, want %d", n, before+2)
	}
	h1, h2 := routeHosts(t, addr.String(), ns)
	ipl := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 1, 1), DstIP: net.IPv4(10, 0, 2, 9)}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 53}
	_ = udp.SetNetworkLayerForChecksum(ipl)
	sb := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: pc.MAC(0x020000000101), DstMAC: pc.MAC(pc.SwitchMAC), EthernetType: layers.EthernetTypeIPv4},
		ipl, udp, gopacket.Payload("x")); err != nil {
		t.Fatal(err)
	}
	frame := sb.Bytes()
	if err := h1.Send(frame); err != nil {
		t.Fatal(err)
	}
	got := testnet.RecvIPv4(t, h2.Recv, afpacket.ErrWouldBlock, 5*time.Second)
	if !bytes.Equal(got, frame) {
		t.Fatalf("h2 received % x, want % x", got, frame)
	}

	cancel() // Ctrl-C
	if err := <-done; err != nil {
		t.Fatalf("interrupted switch: %v", err)
	}
	if n := packetSockets(); n != before+2 { // h1 and h2 are the test's
		t.Errorf("%d packet sockets after the switch stopped, want %d (the test's own)", n, before+2)
	}

	_, done, cancel, _ = start()
	defer cancel()
	ip("link", "del", "h2")
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the switch did not stop when sw2 disappeared")
	}
	if err == nil || !strings.Contains(err.Error(), "port 2@sw2") || !strings.Contains(err.Error(), "disappeared") {
		t.Fatalf("switch after sw2 was deleted: %v", err)
	}
}

// `p4ctl switch --datapath xdp -i 1@sw1 -i 2@sw2`: the XDP program is
// attached to both interfaces (native XDP on veths), forwards a frame from
// h1 to h2 as the entries say, and leaves both interfaces when the switch
// is interrupted. sw1 has interface index 2, the index the recirculation
// veth's receiving end has in its own namespace: a port is never taken for
// it (it once was, and its frames were dropped).
func TestSwitchXDP(t *testing.T) {
	ns, ip := testnet.Namespace(t, "p4ctl-swxdp")
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("ethtool is needed to turn GRO on at h2 (a veth passes XDP-redirected frames only to a peer with GRO or XDP)")
	}
	ip("link", "add", "sw1", "index", "2", "type", "veth", "peer", "name", "h1", "index", "9")
	ip("link", "set", "dev", "sw1", "up")
	ip("link", "set", "dev", "h1", "up")
	testnet.WaitCarrier(t, ns, "sw1")
	testnet.WaitCarrier(t, ns, "h1")
	testnet.Veth(t, ns, "sw2", "h2")
	if out, err := exec.Command("ip", "netns", "exec", ns, "ethtool", "-K", "h2", "gro", "on").CombinedOutput(); err != nil {
		t.Fatalf("ethtool -K h2 gro on: %v %s", err, out)
	}
	xdpOn := func() string {
		out, err := exec.Command("ip", "-n", ns, "-d", "link", "show").CombinedOutput()
		if err != nil {
			t.Fatalf("ip link show: %v %s", err, out)
		}
		var on []string
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasSuffix(f[0], ":") && strings.Contains(l, " xdp") {
				on = append(on, strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
			}
		}
		return strings.Join(on, " ")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	o := &switchOptions{GRPCAddr: "127.0.0.1:0", DeviceID: 1, CPUPort: 510, Interfaces: []string{"1@sw1", "2@sw2"},
		Datapath: datapathXDP, netns: ns, ready: func(a net.Addr) { addrc <- a }}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	errb := &bytes.Buffer{}
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, &streams{Out: &bytes.Buffer{}, Err: errb}) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("switch exited: %v\n%s", err, errb)
	case <-time.After(20 * time.Second):
		t.Fatal("switch did not start")
	}
	if !strings.Contains(errb.String(), "XDP ports 1@sw1 (native) 2@sw2 (native)") {
		t.Errorf("stderr %q does not list the XDP ports", errb.String())
	}
	if got := xdpOn(); got != "sw1 sw2" {
		t.Errorf("XDP is on %q while the switch runs, want sw1 sw2", got)
	}
	h1, h2 := routeHosts(t, addr.String(), ns)
	frame := pc.Bytes(pc.Request(pc.Client(1), 1, 100, 0))
	frame[14+20+2], frame[14+20+3] = 0, 53 // plain UDP: l3_forward
	frame[14+16], frame[14+17], frame[14+18], frame[14+19] = 10, 0, 2, 9
	if err := h1.Send(frame); err != nil {
		t.Fatal(err)
	}
	got := testnet.RecvIPv4(t, h2.Recv, afpacket.ErrWouldBlock, 5*time.Second)
	if !bytes.Equal(got, frame) {
		t.Fatalf("h2 received % x, want % x", got, frame)
	}
	cancel() // Ctrl-C
	if err := <-done; err != nil {
		t.Fatalf("interrupted switch: %v", err)
	}
	if got := xdpOn(); got != "" {
		t.Errorf("XDP is still on %q after the switch stopped", got)
	}
}

// routeHosts routes 10.0.2.0/24 out of port 2 on the switch at addr (device
// 1, over P4Runtime) and opens h1 and h2 in namespace ns, closed when t ends.
func routeHosts(t *testing.T, addr, ns string) (h1, h2 *afpacket.Port) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := p4rt.Dial(addr, p4rt.WithDeviceID(1), p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Arbitrate(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := c.GetPipeline(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	ups, err := pc.Updates(info.GetP4Info(), []pc.Entry{pc.L3Route(pc.IPv4(10, 0, 2, 0), 24, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, ups); err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct {
		name string
		s    **afpacket.Port
	}{{"h1", &h1}, {"h2", &h2}} {
		sock, err := afpacket.OpenIn(ns, h.name, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sock.Close() })
		*h.s = sock
	}
	return h1, h2
}
