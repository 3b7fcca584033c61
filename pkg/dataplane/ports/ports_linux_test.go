//go:build linux

package ports

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/testnet"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
)

// The switch on real interfaces: two veth pairs in a network namespace of
// the test's own (sw1–h1, sw2–h2; the switch holds sw1 and sw2). A frame
// sent on h1 leaves on h2 as the pipeline forwards it; deleting the second
// pair ends Run with port 2's *PortError.
func TestVeths(t *testing.T) {
	ns, ip := testnet.Namespace(t, "p4ctl-ports")
	testnet.Veth(t, ns, "sw1", "h1")
	testnet.Veth(t, ns, "sw2", "h2")
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
	got := testnet.RecvIPv4(t, h2.Recv, afpacket.ErrWouldBlock, 5*time.Second)
	if !bytes.Equal(got, f) {
		t.Fatalf("h2 received % x, want % x", got, f)
	}

	ip("link", "del", "h2")
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
