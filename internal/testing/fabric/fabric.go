// Package fabric wires the embedded switch (pkg/dataplane) to ordinary UDP
// programs on loopback, so `p4ctl loadgen` and `p4ctl serve` can talk
// through the switch without root, namespaces or real ports.
//
// Every switch port carries one emulated host (a client or a server) with an
// IPv4 and MAC address. The fabric plays each host's network stack:
//
//   - A datagram an application sends through the fabric becomes an
//     Ethernet/IPv4/UDP frame from its host's addresses (pkg/wire's Frame,
//     built with gopacket) and enters the switch on the host's port.
//   - A frame the switch emits on a port is checked (IPv4 checksum, the
//     destination is that port's host) and its UDP payload is delivered to
//     the host's application on loopback.
//
// Addresses map like a NAT: for each remote endpoint (IPv4, port) a host
// talks to, the fabric keeps one loopback socket; the application sees that
// socket as the remote endpoint. A client application therefore sends its
// requests to ServiceAddr (the socket standing for the service VIP on port
// 9800), receives nacks from it and replies from the socket standing for the
// server that answered (the switch rewrote only the request's destination,
// so on a real network too the reply comes from the server's address); a
// server application sees each client as a distinct loopback address and
// replies to it as it would on a real network.
package fabric

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Host is one emulated host on a switch port.
type Host struct {
	Name string
	Port uint32           // switch port
	MAC  net.HardwareAddr // source MAC of its frames
	IP   netip.Addr       // IPv4 address
	// App is where a server's application listens on loopback: frames to
	// IP:wire.UDPPort are delivered there, and datagrams it sends from App
	// leave with source port wire.UDPPort. Zero for clients.
	App netip.AddrPort
}

// Config describes the fabric.
type Config struct {
	Hosts []Host
	// Service is the address clients send requests to (the VIP); requests
	// go to Service:wire.UDPPort.
	Service netip.Addr
	// SwitchMAC is the destination MAC of frames hosts send (the switch's
	// router MAC); nil means 02:00:00:00:00:fe.
	SwitchMAC net.HardwareAddr
}

// Stats count what the fabric saw.
type Stats struct {
	Injected     uint64            `json:"injected"`     // frames into the switch
	Emitted      uint64            `json:"emitted"`      // frames out of the switch (forwarded or nacked)
	Delivered    uint64            `json:"delivered"`    // datagrams handed to applications
	Dropped      map[string]uint64 `json:"dropped"`      // switch drops by reason
	NoHost       uint64            `json:"no_host"`      // emitted on a port without a host
	Misdelivered uint64            `json:"misdelivered"` // emitted toward an address not the port's host
	BadFrame     uint64            `json:"bad_frame"`    // not Ethernet/IPv4/UDP, or a bad IPv4 checksum
	SendErrors   uint64            `json:"send_errors"`  // loopback writes that failed
	UnknownApp   uint64            `json:"unknown_app"`  // to a server host on a port other than 9800
}

// Fabric is a running loopback fabric.
type Fabric struct {
	sw        *dataplane.Switch
	cfg       Config
	switchMAC net.HardwareAddr
	byPort    map[uint32]*host
	byName    map[string]*host

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	injected, emitted, delivered, noHost, misdelivered, badFrame, sendErrors, unknownApp atomic.Uint64

	dropMu  sync.Mutex
	dropped map[string]uint64
}

type host struct {
	Host
	mu    sync.Mutex
	conns map[netip.AddrPort]*net.UDPConn // remote endpoint → the loopback socket standing for it
}

// New builds a fabric around sw. Sockets open on demand (ServiceAddr, and
// the first frame toward each remote endpoint); Close releases them.
func New(sw *dataplane.Switch, cfg Config) (*Fabric, error) {
	f := &Fabric{sw: sw, cfg: cfg, byPort: map[uint32]*host{}, byName: map[string]*host{}, dropped: map[string]uint64{}}
	f.switchMAC = cfg.SwitchMAC
	if f.switchMAC == nil {
		f.switchMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0xfe}
	}
	if !cfg.Service.Is4() {
		return nil, fmt.Errorf("fabric: service address %v: want IPv4", cfg.Service)
	}
	for _, h := range cfg.Hosts {
		if !h.IP.Is4() {
			return nil, fmt.Errorf("fabric: host %s: IPv4 address %v", h.Name, h.IP)
		}
		if len(h.MAC) != 6 {
			return nil, fmt.Errorf("fabric: host %s: MAC %v", h.Name, h.MAC)
		}
		if _, dup := f.byPort[h.Port]; dup {
			return nil, fmt.Errorf("fabric: port %d has two hosts", h.Port)
		}
		if _, dup := f.byName[h.Name]; dup {
			return nil, fmt.Errorf("fabric: host name %q used twice", h.Name)
		}
		hh := &host{Host: h, conns: map[netip.AddrPort]*net.UDPConn{}}
		f.byPort[h.Port] = hh
		f.byName[h.Name] = hh
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, nil
}

// ServiceAddr returns the loopback address the application of client host
// name sends requests to (standing for Service:9800), creating its socket.
func (f *Fabric) ServiceAddr(name string) (netip.AddrPort, error) {
	return f.Endpoint(name, netip.AddrPortFrom(f.cfg.Service, wire.UDPPort))
}

// Endpoint returns the loopback address that stands for remote endpoint r
// (an IPv4 address and UDP port on the emulated network) to the
// application of host name: datagrams sent there leave host name toward r.
func (f *Fabric) Endpoint(name string, r netip.AddrPort) (netip.AddrPort, error) {
	h, ok := f.byName[name]
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("fabric: no host %q", name)
	}
	if !r.Addr().Is4() {
		return netip.AddrPort{}, fmt.Errorf("fabric: remote %v: want IPv4", r)
	}
	c, err := f.conn(h, r)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return c.LocalAddr().(*net.UDPAddr).AddrPort(), nil
}

// conn returns (opening if needed) host h's socket for remote endpoint r.
func (f *Fabric) conn(h *host, r netip.AddrPort) (*net.UDPConn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.conns[r]; ok {
		return c, nil
	}
	if f.ctx.Err() != nil {
		return nil, errors.New("fabric: closed")
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("fabric: host %s: socket for %v: %w", h.Name, r, err)
	}
	h.conns[r] = c
	f.wg.Add(1)
	go f.readLoop(h, r, c)
	return c, nil
}

// readLoop turns datagrams an application sends on socket c (standing for
// remote r) into frames from host h into the switch.
func (f *Fabric) readLoop(h *host, r netip.AddrPort, c *net.UDPConn) {
	defer f.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || f.ctx.Err() != nil {
				return
			}
			continue
		}
		sport := from.Port()
		if h.App.IsValid() && from == h.App {
			sport = wire.UDPPort
		}
		frame, err := f.build(h, sport, r, buf[:n])
		if err != nil {
			f.badFrame.Add(1)
			continue
		}
		f.inject(h.Port, frame)
	}
}

func (f *Fabric) build(h *host, sport uint16, r netip.AddrPort, payload []byte) ([]byte, error) {
	eth := &layers.Ethernet{SrcMAC: h.MAC, DstMAC: f.switchMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: h.IP.AsSlice(), DstIP: r.Addr().AsSlice()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(r.Port())}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, err
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, gopacket.Payload(payload)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inject runs frame through the switch and delivers what comes out.
func (f *Fabric) inject(port uint32, frame []byte) {
	// Counted once fully handled, so a reader that sees Injected = n sees
	// every other counter of those n frames too.
	defer f.injected.Add(1)
	out := f.sw.Inject(port, frame)
	if out.Verdict == program.Dropped {
		f.dropMu.Lock()
		f.dropped[out.Reason.String()]++
		f.dropMu.Unlock()
		return
	}
	f.emitted.Add(1)
	f.deliver(out.Port, out.Frame)
}

// deliver hands a frame emitted on port to the application of its host.
func (f *Fabric) deliver(port uint32, frame []byte) {
	h, ok := f.byPort[port]
	if !ok {
		f.noHost.Add(1)
		return
	}
	var (
		eth layers.Ethernet
		ip  layers.IPv4
		udp layers.UDP
		pl  gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip, &udp, &pl)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 4)
	if err := parser.DecodeLayers(frame, &decoded); err != nil || len(decoded) < 3 || decoded[2] != layers.LayerTypeUDP {
		f.badFrame.Add(1)
		return
	}
	if !ipv4ChecksumOK(ip.Contents) {
		f.badFrame.Add(1)
		return
	}
	dst, _ := netip.AddrFromSlice(ip.DstIP.To4())
	src, _ := netip.AddrFromSlice(ip.SrcIP.To4())
	if dst != h.IP {
		f.misdelivered.Add(1)
		return
	}
	var app netip.AddrPort
	if h.App.IsValid() {
		if uint16(udp.DstPort) != wire.UDPPort {
			f.unknownApp.Add(1)
			return
		}
		app = h.App
	} else {
		// A client's application: the fabric kept its real source port as
		// the frame's source port, so the port maps back one to one.
		app = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(udp.DstPort))
	}
	c, err := f.conn(h, netip.AddrPortFrom(src, uint16(udp.SrcPort)))
	if err != nil {
		f.sendErrors.Add(1)
		return
	}
	if _, err := c.WriteToUDPAddrPort(udp.Payload, app); err != nil {
		f.sendErrors.Add(1)
		return
	}
	f.delivered.Add(1)
}

// ipv4ChecksumOK verifies an IPv4 header checksum.
func ipv4ChecksumOK(hdr []byte) bool {
	if len(hdr) < 20 {
		return false
	}
	var sum uint32
	for i := 0; i+1 < len(hdr); i += 2 {
		sum += uint32(hdr[i])<<8 | uint32(hdr[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// Stats returns the fabric's counters.
func (f *Fabric) Stats() Stats {
	s := Stats{Injected: f.injected.Load(), Emitted: f.emitted.Load(), Delivered: f.delivered.Load(),
		NoHost: f.noHost.Load(), Misdelivered: f.misdelivered.Load(), BadFrame: f.badFrame.Load(),
		SendErrors: f.sendErrors.Load(), UnknownApp: f.unknownApp.Load(), Dropped: map[string]uint64{}}
	f.dropMu.Lock()
	for k, v := range f.dropped {
		s.Dropped[k] = v
	}
	f.dropMu.Unlock()
	return s
}

// Close closes every socket and waits for the fabric's goroutines.
func (f *Fabric) Close() error {
	f.cancel()
	for _, h := range f.byPort {
		h.mu.Lock()
		for _, c := range h.conns {
			_ = c.Close()
		}
		h.mu.Unlock()
	}
	f.wg.Wait()
	return nil
}
