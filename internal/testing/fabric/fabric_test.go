package fabric

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// A one-region switch: site 1 (10.0.1.0/24, port 1) → region 0 → server 0
// (JBSQ, bound 1, nack when full), plus a route to 10.0.9.0/24 on port 9,
// where no host is attached.
func newSwitch(t *testing.T) *dataplane.Switch {
	t.Helper()
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pool := pc.Pool{Policy: pipeline.PolicyJBSQ, Bound: 1, OnFull: pipeline.OnFullNack}
	ups, err := pc.Updates(sw.P4Info(), []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1), pc.L3Route(pc.IPv4(10, 0, 9, 0), 24, 9),
		pc.Feasibility(1, 0, 0xFFFF, 1, 0), pc.CarbonRank(0, 0, 0), pc.LocalRegion(0, 0), pool.Entry(0), pc.Endpoint(0, pc.Server(0)), pc.ReplySource(0, pc.Server(0))})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range sw.Write(context.Background(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	return sw
}

func udp(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t *testing.T, c *net.UDPConn) ([]byte, netip.AddrPort) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return buf[:n], from
}

func TestRequestReplyNack(t *testing.T) {
	sw := newSwitch(t)
	app := udp(t)    // the server's application
	client := udp(t) // the client's application
	srv, cl := pc.Server(0), pc.Client(1)
	f, err := New(sw, Config{Service: netip.MustParseAddr("10.255.0.1"), Hosts: []Host{
		{Name: "c1", Port: cl.Port, MAC: cl.HW(), IP: netip.AddrFrom4([4]byte(cl.Addr().To4()))},
		{Name: "s0", Port: srv.Port, MAC: srv.HW(), IP: netip.AddrFrom4([4]byte(srv.Addr().To4())), App: app.LocalAddr().(*net.UDPAddr).AddrPort()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	svc, err := f.ServiceAddr("c1")
	if err != nil {
		t.Fatal(err)
	}

	// Request → server application, with the switch's decisions.
	if _, err := client.WriteToUDPAddrPort(append(wire.NewRequest(7, 300, 0).Marshal(), "hi"...), svc); err != nil {
		t.Fatal(err)
	}
	b, peer := read(t, app)
	h, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Type != wire.MsgRequest || h.RequestID != 7 || h.Site != 1 || h.Region != 0 || h.Server != 0 || string(b[wire.HeaderLen:]) != "hi" {
		t.Fatalf("server got %+v %q", h, b[wire.HeaderLen:])
	}
	// A second request finds the only server at its bound: nacked back.
	if _, err := client.WriteToUDPAddrPort(wire.NewRequest(8, 300, 0).Marshal(), svc); err != nil {
		t.Fatal(err)
	}
	b, from := read(t, client)
	if n, err := wire.Decode(b); err != nil || n.Type != wire.MsgNack || n.RequestID != 8 || from != svc {
		t.Fatalf("nack %+v %v from %v (want from %v)", n, err, from, svc)
	}
	// The server's reply reaches the client, from the server's address (as
	// on a real network: the switch rewrote only the request's destination),
	// and releases the slot.
	if _, err := app.WriteToUDPAddrPort(h.Reply(0).Marshal(), peer); err != nil {
		t.Fatal(err)
	}
	b, from = read(t, client)
	srvEnd, err := f.Endpoint("c1", netip.AddrPortFrom(netip.AddrFrom4([4]byte(srv.Addr().To4())), wire.UDPPort))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := wire.Decode(b); err != nil || r.Type != wire.MsgReply || r.RequestID != 7 || r.Server != 0 || from != srvEnd {
		t.Fatalf("reply %+v %v from %v, want from %v", r, err, from, srvEnd)
	}
	if v, _ := sw.RegisterValue(pipeline.CreditCell(0)); pipeline.CreditFromCell(v).Outstanding != 0 {
		t.Errorf("server 0: %d outstanding after the reply", pipeline.CreditFromCell(v).Outstanding)
	}

	// Malformed p4ctl traffic is dropped by the switch; traffic routed to a
	// port without a host is counted.
	if _, err := client.WriteToUDPAddrPort([]byte{1, 2, 3}, svc); err != nil {
		t.Fatal(err)
	}
	far, err := f.Endpoint("c1", netip.MustParseAddrPort("10.0.9.9:5000"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteToUDPAddrPort([]byte("plain"), far); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Stats().Injected < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	st := f.Stats()
	want := Stats{Injected: 5, Emitted: 4, Delivered: 3, NoHost: 1, Dropped: map[string]uint64{"malformed": 1}}
	if st.Injected != want.Injected || st.Emitted != want.Emitted || st.Delivered != want.Delivered || st.NoHost != 1 ||
		st.Dropped["malformed"] != 1 || len(st.Dropped) != 1 || st.BadFrame+st.Misdelivered+st.SendErrors+st.UnknownApp != 0 {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if _, err := f.Endpoint("nobody", far); err == nil {
		t.Error("unknown host accepted")
	}
}

func TestNewRejects(t *testing.T) {
	sw := newSwitch(t)
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	ip := netip.MustParseAddr("10.0.0.1")
	svc := netip.MustParseAddr("10.255.0.1")
	for name, cfg := range map[string]Config{
		"no service":  {},
		"ipv6 host":   {Service: svc, Hosts: []Host{{Name: "a", Port: 1, MAC: mac, IP: netip.MustParseAddr("::1")}}},
		"bad mac":     {Service: svc, Hosts: []Host{{Name: "a", Port: 1, MAC: mac[:3], IP: ip}}},
		"shared port": {Service: svc, Hosts: []Host{{Name: "a", Port: 1, MAC: mac, IP: ip}, {Name: "b", Port: 1, MAC: mac, IP: ip}}},
		"shared name": {Service: svc, Hosts: []Host{{Name: "a", Port: 1, MAC: mac, IP: ip}, {Name: "a", Port: 2, MAC: mac, IP: ip}}},
	} {
		if _, err := New(sw, cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestIPv4Checksum(t *testing.T) {
	frame := pc.Bytes(pc.Request(pc.Client(1), 1, 300, 0))
	hdr := append([]byte(nil), frame[14:34]...)
	if !ipv4ChecksumOK(hdr) {
		t.Fatal("valid header rejected")
	}
	hdr[8]-- // TTL changed, checksum not updated
	if ipv4ChecksumOK(hdr) || ipv4ChecksumOK(hdr[:10]) {
		t.Fatal("bad header accepted")
	}
}
