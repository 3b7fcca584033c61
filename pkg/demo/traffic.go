package demo

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Addresses of the demo topology that the configuration does not give.
var (
	switchMAC = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0xfe}
	serviceIP = net.IPv4(10, 255, 0, 1).To4() // the VIP requests are sent to
)

// ClientPort is the first UDP source port of demo clients.
const ClientPort = 40000

// Traffic builds request frames from a configuration's client sites and
// plays the servers of its local pools and the gateways of its remote
// regions: every request the switch binds to a server, or forwards to a
// remote region, is answered with a reply from that server (so the switch
// releases the slot, docs/PIPELINE.md step 11) or gateway — at once, or
// after the emulated delay SetDelay gives.
type Traffic struct {
	cfg      *config.Config
	servers  map[uint16]config.Server
	gateways map[uint8]config.Remote // by region index

	replies atomic.Uint64
	delay   atomic.Pointer[DelayFunc]
	pending sync.WaitGroup
}

// DelayFunc is the emulated round trip of a request of site id to region
// (its reply is injected that long after the request left the switch).
type DelayFunc func(site uint16, region uint8) time.Duration

// SetDelay makes replies wait d's delay (nil: answer at once). Waiting
// replies are injected from timers; Wait waits for them.
func (t *Traffic) SetDelay(d DelayFunc) {
	if d == nil {
		t.delay.Store(nil)
		return
	}
	t.delay.Store(&d)
}

// Wait waits for every delayed reply to have been injected.
func (t *Traffic) Wait() { t.pending.Wait() }

// NewTraffic prepares traffic for cfg (every site needs a prefix).
func NewTraffic(cfg *config.Config) (*Traffic, error) {
	t := &Traffic{cfg: cfg, servers: map[uint16]config.Server{}, gateways: map[uint8]config.Remote{}}
	for i, s := range cfg.Sites {
		if len(s.Prefixes) == 0 {
			return nil, fmt.Errorf("site %d (%s) has no prefix", i, s.Name)
		}
	}
	for _, r := range cfg.Regions {
		if l := r.NextHop.Local; l != nil {
			for _, s := range l.Servers {
				t.servers[uint16(s.ID)] = s
			}
		}
		if rm := r.NextHop.Remote; rm != nil {
			if idx, ok := cfg.RegionIndex(r); ok {
				t.gateways[uint8(idx)] = *rm
			}
		}
	}
	return t, nil
}

// ClientIP returns the address of client n of site i: the site's first
// prefix plus 1 + n modulo its size.
func (t *Traffic) ClientIP(site int, n uint32) net.IP {
	p := t.cfg.Sites[site].Prefixes[0].Prefix
	b := p.Addr().As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	size := uint32(1) << (32 - p.Bits())
	host := uint32(1)
	if size > 2 {
		host = 1 + n%(size-2)
	}
	a := base + host
	return net.IPv4(byte(a>>24), byte(a>>16), byte(a>>8), byte(a)).To4()
}

// Request returns request id of a client of site i with the given SLA
// budget and execution class.
func (t *Traffic) Request(site int, id uint32, slaMs uint16, execClass uint8) []byte {
	f := wire.Frame{
		SrcMAC: net.HardwareAddr{0x02, 0x00, 0x0c, byte(site), byte(id >> 8), byte(id)}, DstMAC: switchMAC,
		SrcIP: t.ClientIP(site, id), DstIP: serviceIP,
		SrcPort: ClientPort + uint16(id%1000), DstPort: wire.UDPPort,
		Header: wire.NewRequest(id, slaMs, execClass), Payload: []byte("req"),
	}
	b, err := f.Build()
	if err != nil {
		panic(fmt.Sprintf("demo: build request: %v", err)) // fixed layout: cannot fail
	}
	return b
}

// Serve makes the configuration's servers and gateways answer every
// request the switch binds to them or forwards to them; the returned
// function stops it.
func (t *Traffic) Serve(sw *dataplane.Switch) (stop func()) {
	return sw.OnEgress(func(e dataplane.Egress) {
		if e.Nack {
			return
		}
		f, ok, err := wire.ParseFrame(e.Frame)
		if err != nil || !ok || f.Header.Type != wire.MsgRequest {
			return
		}
		var srcMAC uint64
		var srcIP net.IP
		var port uint32
		if f.Header.Server == wire.NoServer {
			g, ok := t.gateways[f.Header.Region]
			if !ok {
				return
			}
			srcMAC, srcIP, port = uint64(g.MAC), g.IP.AsSlice(), uint32(g.Port)
		} else {
			s, ok := t.servers[f.Header.Server]
			if !ok {
				return
			}
			srcMAC, srcIP, port = uint64(s.MAC), s.IP.AsSlice(), uint32(s.Port)
		}
		mac := make(net.HardwareAddr, 6)
		for i := 5; i >= 0; i-- {
			mac[i] = byte(srcMAC)
			srcMAC >>= 8
		}
		reply := wire.Frame{SrcMAC: mac, DstMAC: f.SrcMAC, SrcIP: srcIP, DstIP: f.SrcIP,
			SrcPort: wire.UDPPort, DstPort: f.SrcPort, Header: f.Header.Reply(f.Header.Server), Payload: []byte("resp")}
		b, err := reply.Build()
		if err != nil {
			return
		}
		send := func() {
			sw.Inject(port, b)
			t.replies.Add(1)
		}
		if d := t.delay.Load(); d != nil {
			if wait := (*d)(f.Header.Site, f.Header.Region); wait > 0 {
				t.pending.Add(1)
				time.AfterFunc(wait, func() {
					defer t.pending.Done()
					send()
				})
				return
			}
		}
		send()
	})
}

// Replies returns how many replies the servers sent.
func (t *Traffic) Replies() uint64 { return t.replies.Load() }

// Outcome is what happened to one request.
type Outcome struct {
	Verdict program.Verdict
	Header  wire.Header // as the request left the switch (region, server, flags)
}

// Send injects a request on port 1 and returns the outcome.
func Send(sw *dataplane.Switch, frame []byte) (Outcome, error) {
	out := sw.Inject(1, frame)
	o := Outcome{Verdict: out.Verdict}
	if out.Verdict == program.Dropped {
		return o, fmt.Errorf("request dropped: %s", out.Reason)
	}
	f, ok, err := wire.ParseFrame(out.Frame)
	if err != nil || !ok {
		return o, fmt.Errorf("request left the switch unparseable: %w", err)
	}
	o.Header = f.Header
	return o, nil
}
