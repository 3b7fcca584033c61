//go:build linux

package afpacket

import (
	"bytes"
	"errors"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/internal/testing/testnet"
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

// vethNS creates a network namespace of the test's own holding the veth
// pair va–vb, both up with carrier, and returns its name and an ip(8)
// runner for it; the namespace (and the pair) is deleted at cleanup.
func vethNS(t *testing.T) (string, func(args ...string)) {
	t.Helper()
	ns, ip := testnet.Namespace(t, "p4ctl-afp")
	testnet.Veth(t, ns, "va", "vb")
	return ns, ip
}

// A veth pair in a namespace of the test's own: frames sent on one end
// arrive intact on the other, VLAN tag included, and a port never reads
// back what it sent.
func TestVethPair(t *testing.T) {
	ns, _ := vethNS(t)
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

// A blocking Recv waits for a frame and returns ErrClosed when the port is
// closed under it; the interface going down is ErrInterfaceDown with the
// port still attached, and receiving resumes when it is up again; a deleted
// interface detaches the port.
func TestBlockingRecvDownAndGone(t *testing.T) {
	ns, ip := vethNS(t)
	a, err := OpenIn(ns, "va", false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenIn(ns, "vb", false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	type result struct {
		f   []byte
		err error
	}
	recvc := func(p *Port) chan result {
		c := make(chan result, 1)
		go func() {
			buf := make([]byte, 2048)
			for {
				f, err := p.Recv(buf)
				if err == nil && len(f) >= 14 && f[12] == 0x86 && f[13] == 0xdd {
					continue
				}
				c <- result{append([]byte(nil), f...), err}
				return
			}
		}()
		return c
	}
	wait := func(c chan result, what string) result {
		t.Helper()
		select {
		case r := <-c:
			return r
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Recv did not return", what)
			return result{}
		}
	}

	frame := pc.Bytes(pc.Request(pc.Client(1), 42, 300, 0))
	c := recvc(b)
	if err := a.Send(frame); err != nil {
		t.Fatal(err)
	}
	if r := wait(c, "a frame"); r.err != nil || !bytes.Equal(r.f, frame) {
		t.Fatalf("received % x (%v)", r.f, r.err)
	}

	c = recvc(a)
	time.Sleep(20 * time.Millisecond) // let Recv block
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if r := wait(c, "close"); !errors.Is(r.err, ErrClosed) {
		t.Fatalf("Recv on a closed port: %v", r.err)
	}
	if err := a.Send(frame); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send on a closed port: %v", err)
	}

	c = recvc(b)
	time.Sleep(20 * time.Millisecond)
	ip("link", "set", "dev", "vb", "down")
	r := wait(c, "link down")
	if !errors.Is(r.err, ErrInterfaceDown) {
		t.Fatalf("Recv when the link went down: %v", r.err)
	}
	if ok, err := b.Attached(); !ok || err != nil {
		t.Fatalf("a port whose link is down: attached %v (%v)", ok, err)
	}
	ip("link", "set", "dev", "vb", "up")
	testnet.WaitCarrier(t, ns, "vb")
	a2, err := OpenIn(ns, "va", false)
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	c = recvc(b)
	if err := a2.Send(frame); err != nil {
		t.Fatal(err)
	}
	if r := wait(c, "link up again"); r.err != nil || !bytes.Equal(r.f, frame) {
		t.Fatalf("after the link came back: % x (%v)", r.f, r.err)
	}

	ip("link", "del", "dev", "va") // deletes the pair: vb goes too
	if ok, err := b.Attached(); ok || err != nil {
		t.Fatalf("a port whose interface was deleted: attached %v (%v)", ok, err)
	}
}

// Auxiliary data saying the checksum was left to offload makes Recv's
// frame carry the completed checksum.
func TestFixupCompletesOffloadedChecksum(t *testing.T) {
	want := pc.Bytes(pc.Request(pc.Client(1), 42, 300, 0))
	buf := make([]byte, 2048)
	n := copy(buf, want)
	buf[14+20+6], buf[14+20+7] = 0xab, 0xcd // the pseudo-header sum offload leaves
	aux := unix.TpacketAuxdata{Status: unix.TP_STATUS_CSUMNOTREADY | unix.TP_STATUS_USER, Len: uint32(n), Snaplen: uint32(n)}
	data := unsafe.Slice((*byte)(unsafe.Pointer(&aux)), unsafe.Sizeof(aux))
	oob := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_PACKET, unix.PACKET_AUXDATA
	h.SetLen(unix.CmsgLen(len(data)))
	copy(oob[unix.CmsgLen(0):], data)
	if got := fixup(buf, n, oob); !bytes.Equal(got, want) {
		t.Fatalf("got  % x\nwant % x", got, want)
	}
}
