// Package loadgen is p4ctl's open-loop request generator (`p4ctl loadgen`).
// It sends p4ctl requests (pkg/wire, encoded and decoded with gopacket) over
// a UDP socket at Poisson or CV-controlled renewal arrival times, with SLA
// classes and exec classes drawn from configurable mixes, and records for
// every request what the switch decided (site, region, server, flags, holds)
// as echoed in the reply, the round-trip time, and whether the SLA was met.
// Summaries give RTT percentiles, SLA accounting and routing shares; records
// are written as CSV or JSON.
//
// Open loop: send times are fixed by the arrival process alone, never by
// replies, so a slow system sees the full offered load (no coordinated
// omission). A request unanswered within Timeout counts as timed out.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/gopacket"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/p4ctl/p4ctl/pkg/fnserver"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Bounds on a run; Validate refuses anything outside them.
const (
	MaxRate     = 50000.0         // requests per second
	MaxDuration = time.Hour       // send window
	MaxRequests = 2_000_000       // rate × duration: records are kept in memory
	MaxTimeout  = 5 * time.Minute // per-request reply timeout
	MaxCV       = 10.0            // arrival coefficient of variation
	MaxPayload  = 1400            // extra payload bytes after the header
	// InterruptWait is how long an interrupted run still waits for replies
	// in flight: well within the second p4ctl gives a command after Ctrl-C.
	InterruptWait = 500 * time.Millisecond
	// DefaultTimeout is how long a request may wait for its reply.
	DefaultTimeout = 5 * time.Second
	// progressEvery is how often Config.Progress is called.
	progressEvery = 100 * time.Millisecond
)

// Config configures a run.
type Config struct {
	// Target is where requests are sent: the service address (any address
	// the switch routes, by convention a VIP) on wire.UDPPort.
	Target netip.AddrPort
	// Local is the local UDP address to bind ("" = any address, any port).
	Local string
	// Rate is the mean request rate (requests/s) and Duration the send
	// window.
	Rate     float64
	Duration time.Duration
	// CV is the coefficient of variation of inter-arrival times: 1 is
	// Poisson (what `p4ctl loadgen` defaults to), 0 deterministic, other
	// values a gamma renewal process with that CV.
	CV float64
	// SLAMix and ExecMix draw each request's SLA (ms) and exec class.
	SLAMix  Mix[uint16]
	ExecMix Mix[uint8]
	// SLAScale multiplies the SLA when judging whether a reply met it (an
	// emulation that scales latencies by 1/10 judges against SLA/10; the
	// header still carries the unscaled SLA the switch decides on).
	SLAScale float64
	// Timeout is how long a request may wait for its reply.
	Timeout time.Duration
	// Seed seeds arrivals and mixes.
	Seed uint64
	// FirstID is the first request id (ids are FirstID, FirstID+1, ...).
	FirstID uint32
	// Payload is the number of extra bytes after the header.
	Payload int
	// Progress, if set, is called about every 100 ms and once at the end.
	Progress func(Progress)
}

// Progress is a run's state for progress displays.
type Progress struct {
	Elapsed, Duration time.Duration
	Sent, Done        int
}

// Defaults fills unset mixes, SLA scale and timeout. It leaves CV alone:
// 0 is a valid (deterministic) choice.
func (c *Config) Defaults() {
	if c.SLAMix == nil {
		c.SLAMix = DefaultSLAMix()
	}
	if c.ExecMix == nil {
		c.ExecMix = DefaultExecMix()
	}
	if c.SLAScale == 0 {
		c.SLAScale = 1
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate refuses absurd or inconsistent settings.
func (c *Config) Validate() error {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	if !c.Target.IsValid() || c.Target.Port() == 0 {
		bad("target %v: want host:port", c.Target)
	}
	if !(c.Rate > 0 && c.Rate <= MaxRate) {
		bad("rate %v req/s: want > 0 and <= %v", c.Rate, MaxRate)
	}
	if c.Duration <= 0 || c.Duration > MaxDuration {
		bad("duration %v: want > 0 and <= %v", c.Duration, MaxDuration)
	}
	if c.Rate > 0 && c.Duration > 0 && c.Rate*c.Duration.Seconds() > MaxRequests {
		bad("rate × duration = %.0f requests: at most %d per run (records are kept in memory)", c.Rate*c.Duration.Seconds(), MaxRequests)
	}
	if !(c.CV >= 0 && c.CV <= MaxCV) {
		bad("arrival CV %v: want 0..%v", c.CV, MaxCV)
	}
	if !(c.SLAScale > 0 && c.SLAScale <= 100) {
		bad("SLA scale %v: want > 0 and <= 100", c.SLAScale)
	}
	if c.Timeout <= 0 || c.Timeout > MaxTimeout {
		bad("timeout %v: want > 0 and <= %v", c.Timeout, MaxTimeout)
	}
	if c.Payload < 0 || c.Payload > MaxPayload {
		bad("payload %d bytes: want 0..%d", c.Payload, MaxPayload)
	}
	if err := c.SLAMix.Validate(); err != nil {
		bad("SLA %v", err)
	}
	if err := c.ExecMix.Validate(); err != nil {
		bad("exec-class %v", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("loadgen: %s", strings.Join(errs, "; "))
	}
	return nil
}

// arrivals draws inter-arrival gaps.
type arrivals struct {
	mean  float64 // seconds
	cv    float64
	r     *rand.Rand
	gamma distuv.Gamma
}

func newArrivals(rate, cv float64, r *rand.Rand) *arrivals {
	a := &arrivals{mean: 1 / rate, cv: cv, r: r}
	if cv > 0 && cv != 1 {
		k := 1 / (cv * cv)
		a.gamma = distuv.Gamma{Alpha: k, Beta: k * rate, Src: r}
	}
	return a
}

func (a *arrivals) next() time.Duration {
	var s float64
	switch {
	case a.cv == 0:
		s = a.mean
	case a.cv == 1:
		s = a.r.ExpFloat64() * a.mean
	default:
		s = a.gamma.Rand()
	}
	return time.Duration(s * float64(time.Second))
}

// Run sends requests for cfg.Duration and collects replies until every
// request is answered or has timed out. Cancelling ctx stops sending early
// (Result.Interrupted) and waits at most InterruptWait for outstanding
// replies.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	local := cfg.Local
	if local == "" {
		local = "0.0.0.0:0"
	}
	laddr, err := net.ResolveUDPAddr("udp4", local)
	if err != nil {
		return nil, fmt.Errorf("loadgen: local address %q: %w", local, err)
	}
	conn, err := net.ListenUDP("udp4", laddr)
	if err != nil {
		return nil, fmt.Errorf("loadgen: bind %s: %w", local, err)
	}
	defer conn.Close()

	r := &runner{cfg: cfg, conn: conn, pending: map[uint32]int{},
		records: make([]Record, 0, int(math.Min(cfg.Rate*cfg.Duration.Seconds()*1.1+16, MaxRequests))),
		idle:    make(chan struct{}, 1)}
	recvDone := make(chan struct{})
	go func() { r.receive(); close(recvDone) }()

	r.start = time.Now()
	started := time.Now().UTC() // wall clock only (r.start keeps the monotonic reading)
	var stopProgress func()
	if cfg.Progress != nil {
		stopProgress = r.progressLoop()
	}
	sendErr := r.send(ctx)
	r.elapsed = time.Since(r.start)
	interrupted := ctx.Err() != nil
	wait := cfg.Timeout
	if interrupted && wait > InterruptWait {
		wait = InterruptWait
	}
	r.awaitReplies(wait)
	_ = conn.Close()
	<-recvDone
	if stopProgress != nil {
		stopProgress()
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	for _, i := range r.pending {
		r.records[i].Outcome = Timeout
	}
	for i := range r.records {
		rec := &r.records[i]
		rec.SLAMet = rec.Outcome == OK && rec.RTT <= time.Duration(float64(rec.SLAms)*cfg.SLAScale*float64(time.Millisecond))
	}
	res := &Result{Config: cfg, Records: r.records, Elapsed: r.elapsed, Unmatched: r.unmatched,
		Malformed: r.malformed, MaxSendLag: r.maxLag, Interrupted: interrupted, Local: conn.LocalAddr().String(), StartedAt: started}
	if cfg.Progress != nil {
		cfg.Progress(Progress{Elapsed: r.elapsed, Duration: cfg.Duration, Sent: len(r.records), Done: len(r.records)})
	}
	if sendErr != nil {
		return res, sendErr
	}
	return res, nil
}

type runner struct {
	cfg     Config
	conn    *net.UDPConn
	start   time.Time
	elapsed time.Duration

	mu                   sync.Mutex
	records              []Record
	pending              map[uint32]int // request id → record index
	sendingDone          bool
	unmatched, malformed int
	maxLag               time.Duration
	idle                 chan struct{} // signalled when pending empties after sending ended
}

func (r *runner) send(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 0x10adc0de))
	arr := newArrivals(r.cfg.Rate, r.cfg.CV, rng)
	slas, execs := newSampler(r.cfg.SLAMix), newSampler(r.cfg.ExecMix)
	buf := gopacket.NewSerializeBuffer()
	payload := make(gopacket.Payload, r.cfg.Payload)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer func() {
		r.mu.Lock()
		r.sendingDone = true
		empty := len(r.pending) == 0
		r.mu.Unlock()
		if empty {
			r.signalIdle()
		}
	}()
	var at time.Duration
	for i := 0; ; i++ {
		at += arr.next()
		if at >= r.cfg.Duration {
			return nil
		}
		if d := time.Until(r.start.Add(at)); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return nil
		}
		id := r.cfg.FirstID + uint32(i)
		h := wire.NewRequest(id, slas.draw(rng), execs.draw(rng))
		h.Region = wire.NoRegion // a switch overwrites it: a reply still carrying it was not routed
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &wire.Layer{Header: h}, payload); err != nil {
			return fmt.Errorf("loadgen: encode request %d: %w", id, err)
		}
		now := time.Since(r.start)
		r.mu.Lock()
		if lag := now - at; lag > r.maxLag {
			r.maxLag = lag
		}
		r.records = append(r.records, Record{ID: id, Sent: now, SLAms: h.SLAms, ExecClass: h.ExecClass, Server: wire.NoServer})
		idx := len(r.records) - 1
		r.pending[id] = idx
		r.mu.Unlock()
		if _, err := r.conn.WriteToUDPAddrPort(buf.Bytes(), r.cfg.Target); err != nil {
			r.mu.Lock()
			r.records[idx].Outcome = SendError
			delete(r.pending, id)
			r.mu.Unlock()
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("loadgen: send: %w", err)
			}
		}
	}
}

func (r *runner) signalIdle() {
	select {
	case r.idle <- struct{}{}:
	default:
	}
}

// awaitReplies waits until nothing is pending or until wait has passed
// since the last request was sent.
func (r *runner) awaitReplies(wait time.Duration) {
	r.mu.Lock()
	empty := len(r.pending) == 0
	var lastSent time.Duration
	if n := len(r.records); n > 0 {
		lastSent = r.records[n-1].Sent
	}
	r.mu.Unlock()
	if empty {
		return
	}
	deadline := time.Until(r.start.Add(lastSent + wait))
	if deadline <= 0 {
		return
	}
	t := time.NewTimer(deadline)
	defer t.Stop()
	select {
	case <-r.idle:
	case <-t.C:
	}
}

func (r *runner) receive() {
	var layer wire.Layer
	var payload gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(wire.LayerTypeP4ctl, &layer, &payload)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 2)
	buf := make([]byte, 2048)
	for {
		n, _, err := r.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable surfaced as a read error
		}
		at := time.Since(r.start)
		if err := parser.DecodeLayers(buf[:n], &decoded); err != nil || len(decoded) == 0 {
			r.mu.Lock()
			r.malformed++
			r.mu.Unlock()
			continue
		}
		h := layer.Header
		r.mu.Lock()
		idx, ok := r.pending[h.RequestID]
		if !ok || h.Type == wire.MsgRequest {
			r.unmatched++
			r.mu.Unlock()
			continue
		}
		delete(r.pending, h.RequestID)
		rec := &r.records[idx]
		rec.RTT = at - rec.Sent
		rec.Site, rec.Region, rec.Server, rec.Flags, rec.Holds = h.Site, h.Region, h.Server, h.Flags, h.HoldCount
		// payload keeps the previous datagram's bytes unless decoded now.
		if tm, ok := fnserver.ParseTiming(payload); ok && h.Type == wire.MsgReply && slices.Contains(decoded, gopacket.LayerTypePayload) {
			rec.Timed, rec.ServerQueue, rec.ServerExec, rec.ServerDrawn, rec.ServerDelay = true, tm.Queue, tm.Exec, tm.Drawn, tm.Delay
		}
		if h.Type == wire.MsgNack {
			rec.Outcome = Nack
		} else {
			rec.Outcome = OK
		}
		idle := r.sendingDone && len(r.pending) == 0
		r.mu.Unlock()
		if idle {
			r.signalIdle()
		}
	}
}

func (r *runner) progressLoop() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.mu.Lock()
				p := Progress{Elapsed: time.Since(r.start), Duration: r.cfg.Duration, Sent: len(r.records), Done: len(r.records) - len(r.pending)}
				r.mu.Unlock()
				r.cfg.Progress(p)
			}
		}
	}()
	return func() { close(done); <-finished }
}
