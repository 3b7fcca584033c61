// Package fnserver is the function server of a region host (`p4ctl serve`).
// It receives p4ctl requests on UDP port 9800 (pkg/wire), "executes" each
// for a time drawn from its exec class's distribution (sleeping, or
// busy-waiting to load a core), and replies to the client from port 9800
// with its server id, so the switch releases the slot it bound
// (docs/PROTOCOL.md, "Reply"); with Config.Timing the reply's payload starts
// with what the server measured (Timing). Every request is logged as one JSON line and
// counted in optional Prometheus metrics. Serve drains in-flight requests on
// shutdown, so no slot is left held by a server that stopped cleanly.
package fnserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/gopacket"

	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Mode is how a server spends a request's execution time.
type Mode string

// Execution modes.
const (
	// Sleep waits for the execution time without using a core: many
	// requests can execute at once (a function platform's concurrency).
	Sleep Mode = "sleep"
	// Busy spins on a core for the execution time, as CPU-bound work does;
	// combine with Workers to model a host's cores.
	Busy Mode = "busy"
)

// Defaults.
const (
	DefaultAddr         = ":9800"
	DefaultMaxQueue     = 4096
	DefaultDrainTimeout = 5 * time.Second
	maxDatagram         = 2048
)

// SiteDelay adds Delay before replying to requests of client site Site
// (the site id the switch writes into the header). It stands in for
// `tc netem` on kernels without sch_netem: the testbeds use it to emulate
// the site→region WAN latency on the reply path.
type SiteDelay struct {
	Site  uint16
	Delay time.Duration
}

// ParseSiteDelay parses "SITE=DURATION", e.g. "1=19.6ms".
func ParseSiteDelay(s string) (SiteDelay, error) {
	id, d, ok := strings.Cut(s, "=")
	if !ok {
		return SiteDelay{}, fmt.Errorf("delay %q: want SITE=DURATION, e.g. 1=19.6ms", s)
	}
	site, err := strconv.ParseUint(strings.TrimSpace(id), 10, 16)
	if err != nil {
		return SiteDelay{}, fmt.Errorf("delay %q: site id must be 0..65535", s)
	}
	dur, err := time.ParseDuration(strings.TrimSpace(d))
	if err != nil || dur < 0 || dur > MaxExec {
		return SiteDelay{}, fmt.Errorf("delay %q: want a duration in 0..%v", s, MaxExec)
	}
	return SiteDelay{Site: uint16(site), Delay: dur}, nil
}

// Config configures a Server.
type Config struct {
	// Addr is the UDP listen address; "" means DefaultAddr (":9800").
	// Replies leave from it, so it must be port 9800 wherever the switch
	// is to recognise them (tests on loopback may use any port).
	Addr string
	// ServerID is this server's id in the switch's server_endpoint table
	// (0..1023), or wire.NoServer for a remote region's gateway, whose
	// replies the switch forwards without releasing a slot.
	ServerID uint16
	// Classes maps exec classes to execution-time distributions; classes
	// not listed use Default.
	Classes map[uint8]Dist
	Default Dist
	// Mode is Sleep (default) or Busy.
	Mode Mode
	// Workers bounds concurrent executions (0 = unbounded); requests
	// beyond it wait, up to MaxQueue waiting (default DefaultMaxQueue),
	// after which they are dropped and counted.
	Workers  int
	MaxQueue int
	// Delays add latency before a reply, by the request's site id.
	Delays []SiteDelay
	// Timing prepends a Timing record (what the server measured) to every
	// reply's payload.
	Timing bool
	// Seed seeds the execution-time draws (0: a fixed default).
	Seed uint64
	// Log receives one JSON object per line per request (nil: none).
	Log io.Writer
	// Metrics, if set, is updated for every request.
	Metrics *Metrics
	// DrainTimeout bounds how long Serve waits for in-flight requests
	// after its context ends (default DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// Stats are a server's counters.
type Stats struct {
	Received   uint64 `json:"received"`   // datagrams read
	Replied    uint64 `json:"replied"`    // replies sent
	Malformed  uint64 `json:"malformed"`  // not a valid p4ctl header
	Unexpected uint64 `json:"unexpected"` // valid header but not a request
	Misrouted  uint64 `json:"misrouted"`  // request bound to another server id
	Dropped    uint64 `json:"dropped"`    // queue full, send error, or abandoned at shutdown
	InFlight   int64  `json:"in_flight"`  // executing or waiting now
}

// Server is a running function server.
type Server struct {
	cfg  Config
	conn *net.UDPConn
	log  *slog.Logger
	sem  chan struct{}

	rngMu sync.Mutex
	rng   *rand.Rand

	wg                                       sync.WaitGroup
	received, replied, malformed, unexpected atomic.Uint64
	misrouted, dropped                       atomic.Uint64
	inflight, waiting                        atomic.Int64
}

// New validates cfg and binds the UDP socket.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.ServerID >= 1024 && cfg.ServerID != wire.NoServer {
		return nil, fmt.Errorf("fnserver: server id %d: want 0..1023, or %d for a remote region's gateway", cfg.ServerID, wire.NoServer)
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = Sleep
	case Sleep, Busy:
	default:
		return nil, fmt.Errorf("fnserver: mode %q: want sleep or busy", cfg.Mode)
	}
	if cfg.Workers < 0 || cfg.MaxQueue < 0 {
		return nil, errors.New("fnserver: workers and max queue must be >= 0")
	}
	if cfg.MaxQueue == 0 {
		cfg.MaxQueue = DefaultMaxQueue
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.Seed == 0 {
		cfg.Seed = 0x9800
	}
	addr, err := net.ResolveUDPAddr("udp4", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("fnserver: listen address %q: %w", cfg.Addr, err)
	}
	conn, err := net.ListenUDP("udp4", addr)
	if err != nil {
		return nil, fmt.Errorf("fnserver: listen %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, conn: conn, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.ServerID)))}
	if cfg.Workers > 0 {
		s.sem = make(chan struct{}, cfg.Workers)
	}
	if cfg.Log != nil {
		s.log = slog.New(slog.NewJSONHandler(cfg.Log, nil))
	}
	return s, nil
}

// Addr is the bound UDP address.
func (s *Server) Addr() netip.AddrPort {
	return s.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	return Stats{
		Received: s.received.Load(), Replied: s.replied.Load(), Malformed: s.malformed.Load(),
		Unexpected: s.unexpected.Load(), Misrouted: s.misrouted.Load(), Dropped: s.dropped.Load(),
		InFlight: s.inflight.Load(),
	}
}

// Serve handles requests until ctx ends, then stops reading, waits up to
// DrainTimeout for in-flight requests to be answered and closes the socket.
// It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context) error {
	readErr := make(chan error, 1)
	go func() { readErr <- s.readLoop() }()
	var err error
	select {
	case <-ctx.Done():
		_ = s.conn.SetReadDeadline(time.Now())
		<-readErr
	case err = <-readErr:
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.DrainTimeout):
		// Requests still executing will fail to send on the closed
		// socket and count as dropped then.
	}
	if cerr := s.conn.Close(); err == nil && cerr != nil && !errors.Is(cerr, net.ErrClosed) {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fnserver %d: %w", s.cfg.ServerID, err)
	}
	return nil
}

func (s *Server) readLoop() error {
	var layer wire.Layer
	var payload gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(wire.LayerTypeP4ctl, &layer, &payload)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 2)
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil // shutdown
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("read: %w", err)
		}
		at := time.Now()
		s.received.Add(1)
		if err := parser.DecodeLayers(buf[:n], &decoded); err != nil || len(decoded) == 0 {
			s.malformed.Add(1)
			s.cfg.Metrics.malformed()
			s.logf("malformed", slog.String("client", from.String()), slog.Int("bytes", n))
			continue
		}
		h := layer.Header
		if h.Type != wire.MsgRequest {
			s.unexpected.Add(1)
			s.cfg.Metrics.unexpected()
			s.logf("unexpected", slog.String("client", from.String()), slog.String("type", h.Type.String()))
			continue
		}
		if h.Server != s.cfg.ServerID {
			s.misrouted.Add(1)
		}
		if s.sem != nil {
			// waiting counts accepted requests that hold no worker yet.
			if s.waiting.Load() >= int64(s.cfg.MaxQueue) {
				s.dropped.Add(1)
				s.cfg.Metrics.dropped()
				s.logf("dropped", slog.Uint64("request_id", uint64(h.RequestID)), slog.String("reason", "queue full"))
				continue
			}
			s.waiting.Add(1)
		}
		body := append([]byte(nil), layer.Payload...)
		s.wg.Add(1)
		s.inflight.Add(1)
		s.cfg.Metrics.start(h.ExecClass)
		go s.handle(h, body, from, at)
	}
}

func (s *Server) draw(class uint8) time.Duration {
	d, ok := s.cfg.Classes[class]
	if !ok {
		d = s.cfg.Default
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return d.Draw(s.rng)
}

func (s *Server) delayFor(site uint16) time.Duration {
	for _, d := range s.cfg.Delays {
		if d.Site == site {
			return d.Delay
		}
	}
	return 0
}

func (s *Server) handle(h wire.Header, body []byte, from netip.AddrPort, at time.Time) {
	defer s.wg.Done()
	defer s.inflight.Add(-1)
	exec := s.draw(h.ExecClass)
	var queued time.Duration
	if s.sem != nil {
		s.sem <- struct{}{}
		s.waiting.Add(-1)
		queued = time.Since(at)
	}
	start := time.Now()
	if s.cfg.Mode == Busy {
		spin(exec)
	} else if exec > 0 {
		time.Sleep(exec)
	}
	ran := time.Since(start)
	if s.sem != nil {
		<-s.sem
	}
	var slept time.Duration
	if d := s.delayFor(h.Site); d > 0 {
		t0 := time.Now()
		time.Sleep(d)
		slept = time.Since(t0)
	}
	reply := h.Reply(s.cfg.ServerID)
	out := make([]byte, wire.HeaderLen, wire.HeaderLen+TimingLen+len(body))
	reply.Put(out)
	if s.cfg.Timing {
		out = Timing{Queue: queued, Exec: ran, Drawn: exec, Delay: slept}.Append(out)
	}
	out = append(out, body...)
	_, err := s.conn.WriteToUDPAddrPort(out, from)
	total := time.Since(at)
	if err != nil {
		s.dropped.Add(1)
		s.cfg.Metrics.dropped()
		s.logf("send-failed", slog.Uint64("request_id", uint64(h.RequestID)), slog.String("error", err.Error()))
		s.cfg.Metrics.done(h.ExecClass, ran, total, false)
		return
	}
	s.replied.Add(1)
	s.cfg.Metrics.done(h.ExecClass, ran, total, true)
	if s.log != nil {
		s.log.Info("request",
			slog.Uint64("server", uint64(s.cfg.ServerID)),
			slog.Uint64("request_id", uint64(h.RequestID)),
			slog.String("client", from.String()),
			slog.Uint64("site", uint64(h.Site)),
			slog.Uint64("region", uint64(h.Region)),
			slog.Uint64("bound_server", uint64(h.Server)),
			slog.Uint64("sla_ms", uint64(h.SLAms)),
			slog.Uint64("exec_class", uint64(h.ExecClass)),
			slog.String("flags", h.Flags.String()),
			slog.Uint64("holds", uint64(h.HoldCount)),
			slog.Float64("queue_ms", ms(queued)),
			slog.Float64("exec_ms", ms(ran)),
			slog.Float64("drawn_ms", ms(exec)),
			slog.Float64("delay_ms", ms(slept)),
			slog.Float64("total_ms", ms(total)))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *Server) logf(msg string, attrs ...slog.Attr) {
	if s.log == nil {
		return
	}
	s.log.LogAttrs(context.Background(), slog.LevelWarn, msg, append(attrs, slog.Uint64("server", uint64(s.cfg.ServerID)))...)
}

// spin busy-waits for d, yielding now and then so a single core is not
// monopolised against the runtime's other goroutines.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		if i&1023 == 1023 {
			runtime.Gosched()
		}
	}
}
