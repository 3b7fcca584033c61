package ports

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
)

// fakeSock is an interface in memory: in feeds Recv, Send appends to out.
type fakeSock struct {
	in       chan []byte
	down     chan struct{} // receives one value: the interface went down
	closed   chan struct{}
	once     sync.Once
	attached atomic.Bool

	mu  sync.Mutex
	out [][]byte
	got chan struct{} // signalled on every Send
}

func newFake() *fakeSock {
	f := &fakeSock{in: make(chan []byte, 16), down: make(chan struct{}, 1), closed: make(chan struct{}), got: make(chan struct{}, 64)}
	f.attached.Store(true)
	return f
}

func (f *fakeSock) Recv(buf []byte) ([]byte, error) {
	select {
	case b := <-f.in:
		return buf[:copy(buf, b)], nil
	case <-f.down:
		return nil, afpacket.ErrInterfaceDown
	case <-f.closed:
		return nil, afpacket.ErrClosed
	}
}

func (f *fakeSock) Send(b []byte) error {
	select {
	case <-f.closed:
		return afpacket.ErrClosed
	default:
	}
	f.mu.Lock()
	f.out = append(f.out, append([]byte(nil), b...))
	f.mu.Unlock()
	f.got <- struct{}{}
	return nil
}

func (f *fakeSock) Attached() (bool, error) { return f.attached.Load(), nil }

func (f *fakeSock) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeSock) isClosed() bool {
	select {
	case <-f.closed:
		return true
	default:
		return false
	}
}

// next waits for the next frame sent on f.
func (f *fakeSock) next(t *testing.T) []byte {
	t.Helper()
	select {
	case <-f.got:
	case <-time.After(5 * time.Second):
		t.Fatal("no frame sent")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.out[0]
	f.out = f.out[1:]
	return b
}

// udpTo is a plain IPv4/UDP frame (no p4ctl header) to dst.
func udpTo(t *testing.T, dst net.IP) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 1, 1), DstIP: dst}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 53}
	_ = udp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: pc.MAC(0x020000000101), DstMAC: pc.MAC(pc.SwitchMAC), EthernetType: layers.EthernetTypeIPv4},
		ip, udp, gopacket.Payload("dns?"))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// routedSwitch is an embedded switch forwarding 10.0.2.0/24 to port 2 and
// 10.0.9.0/24 to port 9 (which has no interface).
func routedSwitch(t *testing.T) *dataplane.Switch {
	t.Helper()
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ups, err := pc.Updates(sw.P4Info(), []pc.Entry{pc.L3Route(pc.IPv4(10, 0, 2, 0), 24, 2), pc.L3Route(pc.IPv4(10, 0, 9, 0), 24, 9)})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range sw.Write(context.Background(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return sw
}

// openFakes opens ports 1 and 2 of sw on fake interfaces.
func openFakes(t *testing.T, sw *dataplane.Switch, opts Options) (*Ports, map[uint32]*fakeSock) {
	t.Helper()
	fakes := map[uint32]*fakeSock{1: newFake(), 2: newFake()}
	opts.open = func(s Spec) (socket, error) { return fakes[s.Port], nil }
	ps, err := Open(sw, []Spec{{2, "eth2"}, {1, "eth1"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ps, fakes
}

// Frames received on a port enter the pipeline with its number and leave
// by the interface of the port the pipeline chose — also frames a
// controller's PacketOut put in; frames for a port without an interface
// are counted, and cancelling Run closes every socket and returns nil.
func TestForwardsBetweenPorts(t *testing.T) {
	sw := routedSwitch(t)
	ps, fakes := openFakes(t, sw, Options{})
	if got := ps.Specs(); len(got) != 2 || got[0] != (Spec{1, "eth1"}) {
		t.Fatalf("specs %v, want port order", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ps.Run(ctx) }()

	f := udpTo(t, net.IPv4(10, 0, 2, 7))
	fakes[1].in <- f
	if got := fakes[2].next(t); !bytes.Equal(got, f) {
		t.Fatalf("port 2 sent % x, want % x", got, f)
	}
	fakes[2].in <- udpTo(t, net.IPv4(10, 0, 9, 1)) // to port 9: no interface
	if err := sw.PacketOut(ctx, &p4v1.PacketOut{Payload: f}); err != nil {
		t.Fatal(err)
	}
	if got := fakes[2].next(t); !bytes.Equal(got, f) {
		t.Fatalf("PacketOut: port 2 sent % x", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ps.Unrouted() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling interval: the frame is injected by Run's goroutine
	}
	if ps.Unrouted() != 1 {
		t.Fatalf("unrouted %d, want 1", ps.Unrouted())
	}
	st := ps.Stats()
	if st[0].Received != 1 || st[1].Received != 1 || st[1].Sent != 2 || st[0].Sent != 0 {
		t.Fatalf("stats %+v", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	for n, fk := range fakes {
		if !fk.isClosed() {
			t.Errorf("port %d still open", n)
		}
	}
	// Closed ports no longer receive the switch's frames.
	sw.Inject(1, f)
	if ps.Stats()[1].Sent != 2 {
		t.Error("a closed port sent a frame")
	}
}

// An interface going down is logged and survived; one that disappears
// ends Run with a *PortError naming the port and wrapping
// ErrInterfaceGone — found by the periodic check too when no receive
// error announces it.
func TestPortDisappears(t *testing.T) {
	for _, viaRecv := range []bool{true, false} {
		sw := routedSwitch(t)
		ps, fakes := openFakes(t, sw, Options{CheckInterval: 10 * time.Millisecond})
		done := make(chan error, 1)
		go func() { done <- ps.Run(context.Background()) }()
		fakes[2].down <- struct{}{} // down, still attached
		time.Sleep(30 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("Run ended on a port that is only down: %v", err)
		default:
		}
		fakes[2].attached.Store(false)
		if viaRecv {
			fakes[2].down <- struct{}{}
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not notice the interface disappeared")
		}
		var pe *PortError
		if !errors.As(err, &pe) || pe.Port != 2 || !errors.Is(err, ErrInterfaceGone) || !strings.Contains(err.Error(), "port 2@eth2") {
			t.Fatalf("Run: %v", err)
		}
		for n, fk := range fakes {
			if !fk.isClosed() {
				t.Errorf("port %d still open after Run failed", n)
			}
		}
	}
}

func TestParseSpecAndValidate(t *testing.T) {
	for in, want := range map[string]Spec{"1@veth1": {1, "veth1"}, "0@s1-eth0": {0, "s1-eth0"}, "509@x": {509, "x"}} {
		if got, err := ParseSpec(in); err != nil || got != want || got.String() != in {
			t.Errorf("ParseSpec(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "veth1", "1@", "@veth1", "x@veth1", "512@veth1", "-1@v", "1@a/b", "1@sixteen-chars-xx"} {
		if _, err := ParseSpec(in); err == nil {
			t.Errorf("ParseSpec(%q) accepted", in)
		}
	}
	bad := map[string][]Spec{
		"CPU port":                   {{510, "a"}},
		"drop port":                  {{511, "a"}},
		"given twice (a and b)":      {{1, "a"}, {1, "b"}},
		"interface a is given twice": {{1, "a"}, {2, "a"}},
	}
	for want, specs := range bad {
		if err := Validate(specs, dataplane.DefaultCPUPort); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%v) = %v, want %q", specs, err, want)
		}
	}
	if err := Validate([]Spec{{1, "a"}, {2, "b"}}, dataplane.DefaultCPUPort); err != nil {
		t.Error(err)
	}
	// An interface that cannot be opened fails Open, naming the port, and
	// leaves nothing open.
	sw := routedSwitch(t)
	first := newFake()
	_, err := Open(sw, []Spec{{1, "a"}, {2, "nope"}}, Options{open: func(s Spec) (socket, error) {
		if s.Port == 2 {
			return nil, errors.New("no such interface")
		}
		return first, nil
	}})
	if err == nil || !strings.Contains(err.Error(), "port 2@nope") || !first.isClosed() {
		t.Fatalf("Open with a missing interface: %v (port 1 closed: %v)", err, first.isClosed())
	}
}
