package micro

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/research/sim/dist"
)

type evKind uint8

const (
	evArrival      evKind = iota + 1 // next external arrival (its own slot, not queued)
	evHostArrive                     // a = request reaches host b
	evCompletion                     // core b finishes (if ver still matches)
	evDispRequest                    // a = request at the dispatcher
	evDispNotify                     // completion on host b learned by the dispatcher
	evDispToken                      // idle token of host b reaches the dispatcher
	evDispReport                     // load-report snapshot a reaches the ingress
	evReportTick                     // hosts snapshot their load
	evStallStart                     // host b pauses
	evStallEnd                       // host b resumes
	evMigrateTick                    // ingress considers migrating a connection
	evCreditExpire                   // credit a (generation ver) reaches its TTL
	evSwitchPass                     // a = recirculated request back at the switch
	evConnMiss                       // a late reply of connection a, served by host b, reaches the ingress
)

// Random streams: each purpose draws from its own generator so that, for a
// seed, every policy sees the same arrivals and service times (common random
// numbers) and changing one mechanism does not shift another's draws.
const (
	streamArrival = iota + 1
	streamService
	streamPolicy
	streamFault
	streamConn
	streamBurst
)

const flagMeasured uint8 = 1

type request struct {
	t0     float64 // arrival at the ingress/dispatcher
	svc    float64 // service time
	conn   int32
	credit int32  // per-credit TTL: the credit slot, −1 if none
	cgen   uint32 // and its generation
	flags  uint8
	// Switch policies: the request's hash (its candidate group), hold
	// count and dispatch round, as its header and carry hold them.
	hash  uint16
	holds uint8
	round pipeline.Round
	hops  uint8 // times forwarded (saturating)
	flow  int32 // the arrival flow (per-flow arrivals), else −1
}

// credit is one outstanding JBSQ credit under per-credit TTL expiry.
type credit struct {
	host int32
	gen  uint32
	open bool
}

type host struct {
	queue   ring[int32] // waiting requests (FCFS, shared by the host's cores)
	qwork   float64     // service time of the waiting requests
	idleN   int32       // idle cores: idleStack[h*m : h*m+idleN]
	busy    int32
	stalled bool
}

// sim is one run's state. Nothing in it is shared between runs.
type sim struct {
	cfg   Config
	n, m  int32   // servers, cores per server (hosts and their cores unless per-core)
	group int32   // servers per physical host (m when every core is a server, else 1)
	bound int32   // JBSQ bound, 0 = unbounded
	thr   int     // forward threshold
	hops  int     // forwards allowed per request
	fwdD  float64 // what one forward costs: D or 2D
	meanS float64

	now  float64
	seq  uint64
	heap eventHeap
	fD   ring[event] // messages delayed by D: FIFO because D is constant
	f2D  ring[event] // host → host forwards (D or 2D: constant per run)
	fTTL ring[event] // per-credit expiries (constant TTL, so FIFO too)

	rArr, rSvc, rPol, rFault, rConn, rBurst *rand.Rand
	inter                                   dist.Interval
	svc                                     dist.Service
	zipf                                    *dist.Zipf

	// Arrivals.
	nextArr    float64
	nextArrSeq uint64
	arrived    int
	total      int
	// Per-flow arrivals: each flow's next arrival and its event sequence,
	// and a min-heap of flows by next arrival (flowHeap[0] is the next).
	flowNext   []float64
	flowSeq    []uint64
	flowHeap   []int32
	flowServer []int32 // the server a flow hashes to
	burstOn    bool
	burstEnd   float64
	rateOn     float64
	rateOff    float64
	meanOff    float64

	reqs []request
	free []int32

	hosts     []host
	idleStack []int32
	coreReq   []int32
	coreEnd   []float64
	coreVer   []uint32

	// Ideal movement.
	idleHosts idxSet
	waitHosts idxSet

	// Dispatcher.
	out     []int32
	last    []float64
	central ring[int32]
	tokens  ring[int32]
	rot     int32
	scratch []int32
	gwFree  []float64
	gwBusy  float64
	silence bool // silence TTL in force
	perCred bool // per-credit TTL in force
	credits []credit
	freeCr  []int32

	// Load reports.
	view      []float64
	sentSince []float64
	snaps     [][]float64
	freeSnaps []int32

	// Switch policies: the switch's credits and pool (pkg/pipeline).
	credits2 switchCredits
	pool     pipeline.Pool
	recirc   float64

	// Connections.
	connHost  []int32
	connCount []int32
	hostCount []int32

	hist         histogram
	doneMeasured int
	// Windowed SLO: latencies of the current window, its end, and counts.
	win      []float64
	winEnd   float64
	windows  int
	winViol  int
	winTotal int
	res      RunResult
	latSum   float64
	waitSum  float64
}

// Run simulates one scenario. The same Config gives the same RunResult.
func Run(ctx context.Context, cfg Config) (RunResult, error) {
	s, err := newSim(cfg)
	if err != nil {
		return RunResult{}, err
	}
	if err := s.run(ctx); err != nil {
		return RunResult{}, err
	}
	return s.result(), nil
}

func newSim(cfg Config) (*sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("micro: invalid config: %w", err)
	}
	s := &sim{cfg: cfg, n: int32(cfg.Servers()), m: int32(cfg.ServerCores()), meanS: cfg.Service.Mean}
	s.group = int32(cfg.Cores()/cfg.Servers()) / s.m
	s.bound = int32(cfg.ResolvedBound())
	s.thr = cfg.ForwardThreshold
	if s.thr == 0 {
		s.thr = int(s.m)
	}
	s.hops = max(1, cfg.ForwardHops)
	if cfg.ForwardHops == ForwardUnlimited {
		s.hops = math.MaxInt
	}
	s.fwdD = 2 * cfg.Delay
	if cfg.ForwardOneWay {
		s.fwdD = cfg.Delay
	}
	meanGap := 1 / cfg.ArrivalRate()
	if cfg.FlowsPerCore > 0 {
		meanGap *= float64(cfg.FlowsPerCore * cfg.Cores())
	}
	var err error
	if s.inter, err = dist.NewInterval(cfg.ArrivalKind, meanGap, cfg.ArrivalCV); err != nil {
		return nil, fmt.Errorf("micro: arrivals: %w", err)
	}
	if s.svc, err = dist.NewService(cfg.Service); err != nil {
		return nil, fmt.Errorf("micro: service: %w", err)
	}
	seed := cfg.Seed
	s.rArr = dist.NewRand(seed, streamArrival)
	s.rSvc = dist.NewRand(seed, streamService)
	s.rPol = dist.NewRand(seed, streamPolicy)
	s.rFault = dist.NewRand(seed, streamFault)
	s.rConn = dist.NewRand(seed, streamConn)
	s.rBurst = dist.NewRand(seed, streamBurst)

	n, m := int(s.n), int(s.m)
	s.hosts = make([]host, n)
	s.idleStack = make([]int32, n*m)
	s.coreReq = make([]int32, n*m)
	s.coreEnd = make([]float64, n*m)
	s.coreVer = make([]uint32, n*m)
	for h := 0; h < n; h++ {
		s.hosts[h].idleN = int32(m)
		for c := 0; c < m; c++ {
			// Pop order: core 0 first.
			s.idleStack[h*m+c] = int32(h*m + m - 1 - c)
		}
	}
	for i := range s.coreReq {
		s.coreReq[i] = -1
	}
	if cfg.Policy.Movement == Ideal {
		s.idleHosts = newIdxSet(n)
		s.waitHosts = newIdxSet(n)
		for h := 0; h < n; h++ {
			s.idleHosts.add(int32(h))
		}
	}
	s.out = make([]int32, n)
	s.last = make([]float64, n)
	s.scratch = make([]int32, 0, n)
	s.view = make([]float64, n)
	s.sentSince = make([]float64, n)
	if cfg.Policy.Binding == JIQ {
		for c := 0; c < m; c++ {
			for h := 0; h < n; h++ {
				s.tokens.push(int32(h))
			}
		}
	}
	if cfg.Policy.Binding == JBSQ && cfg.CreditTTL > 0 {
		s.perCred = cfg.TTLMode == TTLCredit
		s.silence = !s.perCred
	}
	if cfg.Policy.Binding == Switch {
		if err := s.initSwitch(); err != nil {
			return nil, err
		}
	}
	if cfg.Gateway.Enabled() {
		s.gwFree = make([]float64, cfg.Gateway.Cores)
	}
	if cfg.Connections > 0 {
		if s.zipf, err = dist.NewZipf(cfg.Connections, cfg.ZipfAlpha); err != nil {
			return nil, fmt.Errorf("micro: connections: %w", err)
		}
		s.connHost = make([]int32, cfg.Connections)
		for i := range s.connHost {
			s.connHost[i] = int32(s.rConn.IntN(n)) // the static hash
		}
		s.connCount = make([]int32, cfg.Connections)
		s.hostCount = make([]int32, n)
	}
	s.total = cfg.Warmup + cfg.Requests
	s.hist = newHistogram()
	s.reqs = make([]request, 0, 1024)
	s.res = RunResult{Policy: cfg.Policy.String(), Seed: cfg.Seed, Bound: int(s.bound)}
	if (cfg.Policy.Binding == JBSQ || cfg.Policy.Binding == Switch) && cfg.Policy.Bound == BoundAuto {
		p := cfg.Policy
		p.Bound = int(s.bound)
		s.res.Policy = p.String()
	}

	// Initial events.
	if b := cfg.Burst; b.Enabled() {
		s.rateOn = b.Factor
		s.rateOff = (1 - b.Factor*b.OnFraction) / (1 - b.OnFraction)
		s.meanOff = b.MeanOn * (1 - b.OnFraction) / b.OnFraction
		s.burstOn = s.rBurst.Float64() < b.OnFraction
		if s.burstOn {
			s.burstEnd = s.rBurst.ExpFloat64() * b.MeanOn
		} else {
			s.burstEnd = s.rBurst.ExpFloat64() * s.meanOff
		}
	}
	if cfg.FlowsPerCore > 0 {
		s.initFlows()
	} else {
		s.scheduleArrival(0)
	}
	if cfg.Policy.Binding == Early && (cfg.Policy.Ingress == P2C || cfg.Policy.Ingress == JSW) {
		s.schedule(event{t: 0, kind: evReportTick})
	}
	if cfg.Policy.Binding == Early && cfg.Policy.Ingress == Migrate {
		iv := cfg.MigrateInterval
		if iv == 0 {
			iv = 100
		}
		s.cfg.MigrateInterval = iv
		s.schedule(event{t: iv, kind: evMigrateTick})
	}
	if cfg.Stall.Interval > 0 {
		for h := int32(0); h < int32(cfg.Hosts); h++ { // physical hosts
			s.schedule(event{t: s.rFault.ExpFloat64() * cfg.Stall.Interval, kind: evStallStart, b: h})
		}
	}
	return s, nil
}

func (s *sim) nextSeq() uint64 { s.seq++; return s.seq }

func (s *sim) schedule(e event) {
	e.seq = s.nextSeq()
	s.heap.push(e)
}

func (s *sim) afterD(e event) {
	e.t = s.now + s.cfg.Delay
	e.seq = s.nextSeq()
	s.fD.push(e)
}

// initFlows starts every flow: its first arrival one interval after 0,
// its server by the flow hash (flow f → core ⌊f/k⌋, or that core's host).
func (s *sim) initFlows() {
	k := s.cfg.FlowsPerCore
	nf := k * s.cfg.Cores()
	coresPerServer := s.cfg.Cores() / int(s.n)
	s.flowNext = make([]float64, nf)
	s.flowSeq = make([]uint64, nf)
	s.flowHeap = make([]int32, nf)
	s.flowServer = make([]int32, nf)
	for f := range nf {
		s.flowNext[f] = s.inter.Sample(s.rArr)
		s.flowSeq[f] = s.nextSeq()
		s.flowHeap[f] = int32(f)
		s.flowServer[f] = int32(f / k / coresPerServer)
	}
	for i := nf/2 - 1; i >= 0; i-- {
		s.flowDown(i)
	}
	s.nextArr, s.nextArrSeq = s.flowNext[s.flowHeap[0]], s.flowSeq[s.flowHeap[0]]
}

// flowLess orders flows by next arrival, then by the sequence their
// arrival was drawn in.
func (s *sim) flowLess(a, b int32) bool {
	if s.flowNext[a] != s.flowNext[b] {
		return s.flowNext[a] < s.flowNext[b]
	}
	return s.flowSeq[a] < s.flowSeq[b]
}

func (s *sim) flowDown(i int) {
	h := s.flowHeap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && s.flowLess(h[r], h[l]) {
			m = r
		}
		if !s.flowLess(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// nextFlowArrival draws the next arrival of the flow that just arrived
// (the heap's top) and makes the earliest flow's arrival the next.
func (s *sim) nextFlowArrival() int32 {
	f := s.flowHeap[0]
	s.flowNext[f] += s.inter.Sample(s.rArr)
	s.flowSeq[f] = s.nextSeq()
	s.flowDown(0)
	s.nextArr, s.nextArrSeq = s.flowNext[s.flowHeap[0]], s.flowSeq[s.flowHeap[0]]
	return f
}

// scheduleArrival draws the next arrival after time t.
func (s *sim) scheduleArrival(t float64) {
	x := s.inter.Sample(s.rArr)
	if s.cfg.Burst.Enabled() {
		// Time change: x is operational time at unit rate; the real rate is
		// rateOn or rateOff × the mean in the current phase.
		for {
			r := s.rateOff
			if s.burstOn {
				r = s.rateOn
			}
			if capa := r * (s.burstEnd - t); x <= capa {
				t += x / r
				break
			} else {
				x -= capa
			}
			t = s.burstEnd
			s.burstOn = !s.burstOn
			if s.burstOn {
				s.burstEnd = t + s.rBurst.ExpFloat64()*s.cfg.Burst.MeanOn
			} else {
				s.burstEnd = t + s.rBurst.ExpFloat64()*s.meanOff
			}
		}
		s.nextArr = t
	} else {
		s.nextArr = t + x
	}
	s.nextArrSeq = s.nextSeq()
}

func (s *sim) run(ctx context.Context) error {
	span := float64(s.total) / s.cfg.ArrivalRate()
	horizon := 100*span + 100*s.cfg.SLO + 1e4
	var events int64
	for s.doneMeasured < s.cfg.Requests {
		if events&(1<<15-1) == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("micro: run %s seed %d: %w", s.res.Policy, s.cfg.Seed, err)
			}
		}
		// The earliest of the arrival slot, the heap and the two FIFOs.
		var best event
		best.t = math.Inf(1)
		src := 0
		if s.arrived < s.total {
			best = event{t: s.nextArr, seq: s.nextArrSeq, kind: evArrival}
			src = 1
		}
		if len(s.heap) > 0 && s.heap[0].before(&best) {
			best, src = s.heap[0], 2
		}
		if s.fD.n > 0 && s.fD.peek().before(&best) {
			best, src = *s.fD.peek(), 3
		}
		if s.f2D.n > 0 && s.f2D.peek().before(&best) {
			best, src = *s.f2D.peek(), 4
		}
		if s.fTTL.n > 0 && s.fTTL.peek().before(&best) {
			best, src = *s.fTTL.peek(), 5
		}
		if src == 0 || best.t > horizon {
			break // nothing can progress any more
		}
		switch src {
		case 2:
			s.heap.pop()
		case 3:
			s.fD.pop()
		case 4:
			s.f2D.pop()
		case 5:
			s.fTTL.pop()
		}
		s.now = best.t
		events++
		if src == 2 || best.kind < evDispRequest || best.kind > evDispReport {
			s.process(best) // heap holds dispatcher messages only after the gateway
		} else {
			s.atDispatcher(best)
		}
	}
	s.res.Events = events
	return nil
}

// atDispatcher handles a message reaching the dispatcher: the switch acts at
// once; a software gateway queues it for one of its cores.
func (s *sim) atDispatcher(e event) {
	if !s.cfg.Gateway.Enabled() {
		s.process(e)
		return
	}
	cost := s.cfg.Gateway.PerMessage
	if e.kind == evDispReport {
		cost *= float64(s.n)
	}
	i := 0
	for j := 1; j < len(s.gwFree); j++ {
		if s.gwFree[j] < s.gwFree[i] {
			i = j
		}
	}
	e.t = max(s.now, s.gwFree[i]) + cost
	s.gwFree[i] = e.t
	s.gwBusy += cost
	s.schedule(e)
}

func (s *sim) process(e event) {
	switch e.kind {
	case evArrival:
		s.arrive()
	case evHostArrive:
		s.hostArrive(e.a, e.b)
	case evCompletion:
		if s.coreVer[e.b] == e.ver {
			s.complete(e.b)
		}
	case evDispRequest:
		s.bind(e.a)
	case evSwitchPass:
		s.switchPass(e.a)
	case evDispNotify:
		if s.cfg.Policy.Binding == Switch {
			pipeline.Release(&s.credits2[e.b], s.nowTick())
			return
		}
		if s.perCred {
			if !s.closeCredit(e.a, e.ver) {
				return // the credit already expired
			}
		} else if s.out[e.b] > 0 {
			s.out[e.b]--
		}
		s.last[e.b] = s.now
		s.drain()
	case evCreditExpire:
		if s.closeCredit(e.a, e.ver) {
			s.res.StaleResets++
			s.drain()
		}
	case evDispToken:
		s.tokens.push(e.b)
	case evDispReport:
		copy(s.view, s.snaps[e.a])
		clear(s.sentSince)
		s.freeSnaps = append(s.freeSnaps, e.a)
	case evReportTick:
		s.report()
		s.schedule(event{t: s.now + s.cfg.Refresh, kind: evReportTick})
	case evStallStart:
		s.res.Stalls++
		s.schedule(event{t: s.now + s.cfg.Stall.Duration, kind: evStallEnd, b: e.b})
		for h := e.b * s.group; h < (e.b+1)*s.group; h++ {
			s.stallStart(h)
		}
	case evStallEnd:
		for h := e.b * s.group; h < (e.b+1)*s.group; h++ {
			s.stallEnd(h)
		}
		s.schedule(event{t: s.now + s.rFault.ExpFloat64()*s.cfg.Stall.Interval, kind: evStallStart, b: e.b})
	case evMigrateTick:
		s.migrate()
		s.schedule(event{t: s.now + s.cfg.MigrateInterval, kind: evMigrateTick})
	case evConnMiss:
		if s.connHost[e.a] == e.b { // still pinned to the host that served it: not moved since by an earlier late reply
			s.handAway(e.a, e.b)
		}
	}
}

func (s *sim) arrive() {
	var r int32
	if k := len(s.free); k > 0 {
		r = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		s.reqs = append(s.reqs, request{})
		r = int32(len(s.reqs) - 1)
	}
	q := &s.reqs[r]
	*q = request{t0: s.now, svc: s.svc.Sample(s.rSvc), conn: -1, credit: -1, flow: -1}
	if s.arrived >= s.cfg.Warmup {
		q.flags = flagMeasured
	}
	if s.zipf != nil {
		q.conn = int32(s.zipf.Sample(s.rConn))
	}
	s.arrived++
	if s.flowHeap != nil {
		q.flow = s.nextFlowArrival()
	} else if s.arrived < s.total {
		s.scheduleArrival(s.now)
	}
	s.atDispatcher(event{t: s.now, kind: evDispRequest, a: r})
}

// --- dispatcher side ---

func (s *sim) send(r, h int32) {
	s.afterD(event{kind: evHostArrive, a: r, b: h})
}

func (s *sim) bind(r int32) {
	switch s.cfg.Policy.Binding {
	case Early:
		h := s.ingress(r)
		s.send(r, h)
	case JBSQ:
		if s.central.n == 0 {
			if h := s.jbsqChoose(); h >= 0 {
				s.bindTo(r, h)
				return
			}
			s.hold(r)
			return
		}
		s.hold(r)
		s.drain()
	case JIQ:
		if s.tokens.n > 0 {
			s.send(r, s.tokens.pop())
			return
		}
		s.send(r, int32(s.rPol.IntN(int(s.n))))
	case Switch:
		s.reqs[r].hash = uint16(s.rPol.Uint32())
		s.switchPass(r)
	}
}

// initSwitch sets up the switch's pool: hosts are servers 0..N−1 (one pool,
// base 0), the bound, holds and on-full of the scenario, and the credit
// clock of its TTL (silence expiry, rounded as the controller rounds it).
func (s *sim) initSwitch() error {
	c := s.cfg
	s.credits2 = make(switchCredits, s.n)
	s.pool = pipeline.Pool{Base: 0, SizeMask: uint16(s.n - 1), Policy: pipeline.PolicyJBSQ,
		Bound: uint16(s.bound), MaxHolds: 255, OnFull: pipeline.OnFullForce}
	if c.Policy.Ingress == Random {
		s.pool.Policy = pipeline.PolicyRandom
	}
	if c.SwitchMaxHolds != nil {
		s.pool.MaxHolds = uint8(*c.SwitchMaxHolds)
	}
	if c.SwitchOnFull == "nack" {
		s.pool.OnFull = pipeline.OnFullNack
	}
	if c.CreditTTL > 0 {
		tick, err := pipeline.CreditTickFor(time.Duration(c.CreditTTL * float64(time.Microsecond)))
		if err != nil {
			return fmt.Errorf("micro: %w", err)
		}
		s.pool.CreditTick = tick
	}
	s.recirc = c.Recirc
	if s.recirc == 0 {
		s.recirc = DefaultRecirc
	}
	return nil
}

// nowTick is the switch's credit clock.
func (s *sim) nowTick() uint32 { return pipeline.NowTick(uint64(s.now), s.pool.CreditTick) }

// switchCredits are the switch's credit cells, server s's at index s: the
// credit store of pipeline.Pool.Dispatch.
type switchCredits []pipeline.Credit

// Credit returns server s's credit.
func (c *switchCredits) Credit(s uint16) pipeline.Credit { return (*c)[s] }

// SetCredit stores server s's credit.
func (c *switchCredits) SetCredit(s uint16, v pipeline.Credit) { (*c)[s] = v }

// Work is 0: the simulator keeps no work counters (its switch pools are
// jbsq or random, which do not read them).
func (c *switchCredits) Work(uint16) uint64 { return 0 }

// switchPass is one pass of request r through the switch's dispatch
// (pipeline.Pool.Dispatch): bind to the first candidate that takes it, or
// recirculate as the algorithm says.
func (s *sim) switchPass(r int32) {
	q := &s.reqs[r]
	d := s.pool.Dispatch(&s.credits2, q.round, q.hash, false, q.holds, uint64(s.now))
	if d.Bound {
		if d.StaleReset {
			s.res.StaleResets++
		}
		s.send(r, int32(d.Server))
		return
	}
	switch d.Step.Kind {
	case pipeline.StepLevel, pipeline.StepForce:
		s.res.LevelRounds++
	case pipeline.StepHold, pipeline.StepLongDeferred:
		q.holds++
		q.hash = uint16(s.rPol.Uint32())
		s.res.Holds++
	case pipeline.StepNack:
		s.res.Nacks++
		if q.flags&flagMeasured != 0 {
			s.observe(math.Inf(1))
		}
		s.free = append(s.free, r)
		return
	}
	q.round = d.Step.Next()
	s.res.Recirculations++
	s.schedule(event{t: s.now + s.recirc, kind: evSwitchPass, a: r})
}

func (s *sim) hold(r int32) {
	s.central.push(r)
	s.res.Holds++
}

func (s *sim) stale(h int32) bool {
	return s.silence && s.out[h] != 0 && s.now-s.last[h] > s.cfg.CreditTTL
}

// openCredit issues a per-credit-TTL credit for request r on host h.
func (s *sim) openCredit(r, h int32) {
	var c int32
	if k := len(s.freeCr); k > 0 {
		c = s.freeCr[k-1]
		s.freeCr = s.freeCr[:k-1]
	} else {
		s.credits = append(s.credits, credit{})
		c = int32(len(s.credits) - 1)
	}
	cr := &s.credits[c]
	cr.host, cr.open = h, true
	q := &s.reqs[r]
	q.credit, q.cgen = c, cr.gen
	s.fTTL.push(event{t: s.now + s.cfg.CreditTTL, seq: s.nextSeq(), kind: evCreditExpire, a: c, ver: cr.gen})
}

// closeCredit returns credit c (generation gen) if it is still open: its
// host's counter drops by one. It reports whether it was open.
func (s *sim) closeCredit(c int32, gen uint32) bool {
	cr := &s.credits[c]
	if cr.gen != gen || !cr.open {
		return false
	}
	cr.open = false
	cr.gen++
	if s.out[cr.host] > 0 {
		s.out[cr.host]--
	}
	s.freeCr = append(s.freeCr, c)
	return true
}

// eff is the dispatcher's view of host h's outstanding count (0 once the
// credit is stale).
func (s *sim) eff(h int32) int32 {
	if s.stale(h) {
		return 0
	}
	return s.out[h]
}

func (s *sim) bindTo(r, h int32) {
	if s.stale(h) {
		s.out[h] = 0
		s.res.StaleResets++
	}
	s.out[h]++
	s.last[h] = s.now
	if s.perCred {
		s.openCredit(r, h)
	}
	s.send(r, h)
}

func (s *sim) drain() {
	for s.central.n > 0 {
		h := s.jbsqChoose()
		if h < 0 {
			return
		}
		s.bindTo(s.central.pop(), h)
	}
}

// jbsqChoose picks a host below the bound (−1 if none) with the policy's
// choice rule. With an unbounded n it draws exactly as the early-binding
// ingress of the same name would.
func (s *sim) jbsqChoose() int32 {
	n, b := s.n, s.bound
	switch s.cfg.Policy.Ingress {
	case Random:
		if b == 0 {
			return int32(s.rPol.IntN(int(n)))
		}
		c := s.candidates()
		if len(c) == 0 {
			return -1
		}
		return c[s.rPol.IntN(len(c))]
	case P2C:
		if b == 0 {
			x, y := s.two(n)
			if s.eff(y) < s.eff(x) {
				return y
			}
			return x
		}
		c := s.candidates()
		switch len(c) {
		case 0:
			return -1
		case 1:
			return c[0]
		}
		i, j := s.two(int32(len(c)))
		if s.eff(c[j]) < s.eff(c[i]) {
			return c[j]
		}
		return c[i]
	default: // Least, rotating the scan start so that ties spread
		best, bestO := int32(-1), int32(math.MaxInt32)
		h := s.rot
		if s.rot++; s.rot == n {
			s.rot = 0
		}
		for i := int32(0); i < n; i++ {
			if o := s.eff(h); (b == 0 || o < b) && o < bestO {
				best, bestO = h, o
			}
			if h++; h == n {
				h = 0
			}
		}
		return best
	}
}

func (s *sim) candidates() []int32 {
	c := s.scratch[:0]
	for h := int32(0); h < s.n; h++ {
		if s.eff(h) < s.bound {
			c = append(c, h)
		}
	}
	s.scratch = c
	return c
}

// two draws two distinct indices in [0, n) (the same one twice if n = 1).
func (s *sim) two(n int32) (int32, int32) {
	x := int32(s.rPol.IntN(int(n)))
	if n == 1 {
		return x, x
	}
	y := int32(s.rPol.IntN(int(n) - 1))
	if y >= x {
		y++
	}
	return x, y
}

// ingress is the early-binding choice.
func (s *sim) ingress(r int32) int32 {
	switch s.cfg.Policy.Ingress {
	case Hash, Passive, PassiveMiss:
		return s.connHost[s.reqs[r].conn]
	case Migrate:
		c := s.reqs[r].conn
		s.connCount[c]++
		return s.connHost[c]
	case P2C:
		x, y := s.two(s.n)
		h := x
		if s.view[y]+s.sentSince[y] < s.view[x]+s.sentSince[x] {
			h = y
		}
		if !s.cfg.StaleReports {
			s.sentSince[h]++
		}
		return h
	case JSW:
		best, bestW := int32(-1), math.Inf(1)
		h := s.rot
		if s.rot++; s.rot == s.n {
			s.rot = 0
		}
		for i := int32(0); i < s.n; i++ {
			if w := s.view[h] + s.sentSince[h]*s.meanS; w < bestW {
				best, bestW = h, w
			}
			if h++; h == s.n {
				h = 0
			}
		}
		if !s.cfg.StaleReports {
			s.sentSince[best]++
		}
		return best
	default:
		if f := s.reqs[r].flow; f >= 0 {
			return s.flowServer[f] // the flow's hash
		}
		return int32(s.rPol.IntN(int(s.n)))
	}
}

// report snapshots every host's load (requests in system for P2C, remaining
// work for JSW); the snapshot reaches the ingress one delay later.
func (s *sim) report() {
	var slot int32
	if k := len(s.freeSnaps); k > 0 {
		slot = s.freeSnaps[k-1]
		s.freeSnaps = s.freeSnaps[:k-1]
	} else {
		s.snaps = append(s.snaps, make([]float64, s.n))
		slot = int32(len(s.snaps) - 1)
	}
	snap := s.snaps[slot]
	jsw := s.cfg.Policy.Ingress == JSW
	for h := range s.hosts {
		hs := &s.hosts[h]
		if !jsw {
			snap[h] = float64(hs.queue.n) + float64(hs.busy)
			continue
		}
		w := hs.qwork
		base := h * int(s.m)
		for c := base; c < base+int(s.m); c++ {
			if s.coreReq[c] >= 0 {
				w += s.coreEnd[c] - s.now
			}
		}
		snap[h] = w
	}
	s.res.ControlMessages += int64(s.n)
	s.afterD(event{kind: evDispReport, a: slot})
}

// migrate moves one connection from the host that received the most
// requests since the last tick to the one that received the fewest, choosing
// the busiest connection that does not overshoot (at most half the gap).
func (s *sim) migrate() {
	clear(s.hostCount)
	for c, k := range s.connCount {
		s.hostCount[s.connHost[c]] += k
	}
	hi, lo := int32(0), int32(0)
	for h := int32(1); h < s.n; h++ {
		if s.hostCount[h] > s.hostCount[hi] {
			hi = h
		}
		if s.hostCount[h] < s.hostCount[lo] {
			lo = h
		}
	}
	gap := s.hostCount[hi] - s.hostCount[lo]
	bestC, bestK := -1, int32(0)
	for c, k := range s.connCount {
		if s.connHost[c] == hi && k > bestK && 2*k <= gap {
			bestC, bestK = c, k
		}
	}
	if bestC >= 0 && hi != lo {
		s.connHost[bestC] = lo
		s.res.Migrations++
		s.res.ControlMessages += 2 // tell the old and the new host
	}
	clear(s.connCount)
}

// handAway moves connection c from host h to a uniformly random other
// host (passive migration): the old and the new host exchange 2 messages.
func (s *sim) handAway(c, h int32) {
	g := int32(s.rPol.IntN(int(s.n) - 1))
	if g >= h {
		g++
	}
	s.connHost[c] = g
	s.res.Migrations++
	s.res.ControlMessages += 2
}

// --- host side ---

func (s *sim) popIdle(h int32) int32 {
	hs := &s.hosts[h]
	hs.idleN--
	c := s.idleStack[h*s.m+hs.idleN]
	if hs.idleN == 0 && s.cfg.Policy.Movement == Ideal {
		s.idleHosts.remove(h)
	}
	return c
}

func (s *sim) start(r, h, c int32) {
	s.coreReq[c] = r
	end := s.now + s.reqs[r].svc
	s.coreEnd[c] = end
	s.hosts[h].busy++
	s.schedule(event{t: end, kind: evCompletion, b: c, ver: s.coreVer[c]})
}

func (s *sim) enqueue(r, h int32) {
	hs := &s.hosts[h]
	hs.queue.push(r)
	hs.qwork += s.reqs[r].svc
	if hs.queue.n == 1 && s.cfg.Policy.Movement == Ideal {
		s.waitHosts.add(h)
	}
}

func (s *sim) dequeue(h int32) int32 {
	hs := &s.hosts[h]
	r := hs.queue.pop()
	hs.qwork -= s.reqs[r].svc
	if hs.queue.n == 0 {
		hs.qwork = 0 // no drift from rounding
		if s.cfg.Policy.Movement == Ideal {
			s.waitHosts.remove(h)
		}
	}
	return r
}

func (s *sim) hostArrive(r, h int32) {
	hs := &s.hosts[h]
	if !hs.stalled && hs.idleN > 0 {
		s.start(r, h, s.popIdle(h))
		return
	}
	if s.cfg.Policy.Ingress == Passive && s.cfg.Policy.Binding == Early && hs.queue.n >= s.thr && s.n > 1 {
		if c := s.reqs[r].conn; c >= 0 && s.connHost[c] == h {
			s.handAway(c, h)
		}
	}
	switch s.cfg.Policy.Movement {
	case Ideal:
		if len(s.idleHosts.items) > 0 {
			g := s.idleHosts.items[0]
			s.res.Moved++
			s.start(r, g, s.popIdle(g))
			return
		}
	case Forward:
		q := &s.reqs[r]
		if int(q.hops) < s.hops && hs.queue.n >= s.thr {
			if q.hops < math.MaxUint8 {
				q.hops++
			}
			g := int32(s.rPol.IntN(int(s.n) - 1))
			if g >= h {
				g++
			}
			s.res.Forwarded++
			s.res.ControlMessages++
			s.f2D.push(event{t: s.now + s.fwdD, seq: s.nextSeq(), kind: evHostArrive, a: r, b: g})
			return
		}
	}
	s.enqueue(r, h)
}

// oldestWaiting is the host whose head-of-line request arrived first (−1 if
// nothing waits anywhere).
func (s *sim) oldestWaiting() int32 {
	best, bestT := int32(-1), math.Inf(1)
	for _, h := range s.waitHosts.items {
		if t := s.reqs[*s.hosts[h].queue.peek()].t0; t < bestT {
			best, bestT = h, t
		}
	}
	return best
}

func (s *sim) complete(c int32) {
	h := c / s.m
	r := s.coreReq[c]
	s.hosts[h].busy--
	q := &s.reqs[r]
	if q.flags&flagMeasured != 0 {
		lat := s.now + s.cfg.Delay - q.t0
		s.latSum += lat
		s.waitSum += lat - 2*s.cfg.Delay - q.svc
		s.observe(lat)
	}
	if s.cfg.Policy.Ingress == PassiveMiss && s.cfg.Policy.Binding == Early && q.conn >= 0 && s.n > 1 &&
		s.now+s.cfg.Delay-q.t0 > s.cfg.SLO {
		s.afterD(event{kind: evConnMiss, a: q.conn, b: h})
	}
	if s.cfg.Policy.Binding == JBSQ || s.cfg.Policy.Binding == Switch {
		s.res.ControlMessages++
		if s.cfg.NotifyLoss > 0 && s.rFault.Float64() < s.cfg.NotifyLoss {
			s.res.LostNotifications++
		} else {
			s.afterD(event{kind: evDispNotify, b: h, a: q.credit, ver: q.cgen})
		}
	}
	s.free = append(s.free, r)
	s.coreFree(h, c)
}

// coreFree gives core c of host h its next request, or marks it idle.
func (s *sim) coreFree(h, c int32) {
	hs := &s.hosts[h]
	s.coreReq[c] = -1
	if hs.stalled {
		s.markIdle(h, c)
		return
	}
	if hs.queue.n > 0 {
		s.start(s.dequeue(h), h, c)
		return
	}
	if s.cfg.Policy.Movement == Ideal {
		if g := s.oldestWaiting(); g >= 0 {
			s.res.Moved++
			s.start(s.dequeue(g), h, c)
			return
		}
	}
	s.markIdle(h, c)
	if s.cfg.Policy.Binding == JIQ {
		s.res.ControlMessages++
		s.afterD(event{kind: evDispToken, b: h})
	}
}

func (s *sim) markIdle(h, c int32) {
	hs := &s.hosts[h]
	s.idleStack[h*s.m+hs.idleN] = c
	hs.idleN++
	if !hs.stalled && s.cfg.Policy.Movement == Ideal {
		s.idleHosts.add(h)
	}
}

func (s *sim) stallStart(h int32) {
	hs := &s.hosts[h]
	d := s.cfg.Stall.Duration
	hs.stalled = true
	base := h * s.m
	for c := base; c < base+s.m; c++ {
		if s.coreReq[c] >= 0 {
			s.coreVer[c]++
			s.coreEnd[c] += d
			s.schedule(event{t: s.coreEnd[c], kind: evCompletion, b: c, ver: s.coreVer[c]})
		}
	}
	if s.cfg.Policy.Movement == Ideal {
		s.idleHosts.remove(h)
		for hs.queue.n > 0 && len(s.idleHosts.items) > 0 {
			g := s.idleHosts.items[0]
			s.res.Moved++
			s.start(s.dequeue(h), g, s.popIdle(g))
		}
	}
}

func (s *sim) stallEnd(h int32) {
	hs := &s.hosts[h]
	hs.stalled = false
	for hs.idleN > 0 && hs.queue.n > 0 {
		s.start(s.dequeue(h), h, s.popIdle(h))
	}
	if s.cfg.Policy.Movement == Ideal {
		for hs.idleN > 0 {
			g := s.oldestWaiting()
			if g < 0 {
				break
			}
			s.res.Moved++
			s.start(s.dequeue(g), h, s.popIdle(h))
		}
		if hs.idleN > 0 {
			s.idleHosts.add(h)
		}
	}
}

// observe records the latency of a measured request (+Inf for one that
// never completes): the histogram, the per-request SLO and, when the SLO
// is windowed, the current window.
func (s *sim) observe(lat float64) {
	s.hist.add(lat)
	if lat > s.cfg.SLO {
		s.res.Violations++
	}
	s.doneMeasured++
	if w := s.cfg.SLOWindow; w > 0 {
		if s.now >= s.winEnd {
			if len(s.win) > 0 {
				s.closeWindow()
			}
			s.winEnd = (math.Floor(s.now/w) + 1) * w
		}
		s.win = append(s.win, lat)
	}
}

// closeWindow judges the current window: it violates when its SLO quantile
// exceeds the SLO. Windows without completions are not judged.
func (s *sim) closeWindow() {
	n := len(s.win)
	k := int(math.Ceil(s.cfg.SLOQuantileOrDefault()*float64(n))) - 1
	if selectKth(s.win, max(0, min(k, n-1))) > s.cfg.SLO {
		s.winViol++
	}
	s.windows++
	s.winTotal += n
	s.win = s.win[:0]
}

// selectKth returns the k-th smallest element of xs (0-based), reordering
// xs in place (Hoare's selection; no allocation).
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

func (s *sim) result() RunResult {
	r := s.res
	r.Requests = s.cfg.Requests
	r.Incomplete = s.cfg.Requests - s.doneMeasured
	r.Violations += r.Incomplete
	r.ViolationRate = float64(r.Violations) / float64(r.Requests)
	r.RequestViolationRate = r.ViolationRate
	if s.cfg.SLOWindow > 0 {
		// The last window is judged when it is at least half full (or
		// holds requests that never completed); a shorter tail is dropped.
		for i := 0; i < r.Incomplete; i++ {
			s.win = append(s.win, math.Inf(1))
		}
		if n := len(s.win); n > 0 && (r.Incomplete > 0 || s.windows == 0 || 2*n >= s.winTotal/s.windows) {
			s.closeWindow()
		}
		r.Windows, r.WindowViolations = s.windows, s.winViol
		if s.windows > 0 {
			r.ViolationRate = float64(s.winViol) / float64(s.windows)
		}
	}
	if s.doneMeasured > 0 {
		r.MeanLatency = s.latSum / float64(s.doneMeasured)
		r.MeanWait = s.waitSum / float64(s.doneMeasured)
	}
	for i := 0; i < r.Incomplete; i++ {
		s.hist.add(math.Inf(1))
	}
	q := func(p float64) float64 {
		if v := s.hist.quantile(p); !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v
		}
		return -1
	}
	r.P50, r.P99, r.P999 = q(0.5), q(0.99), q(0.999)
	all := float64(max(1, s.arrived))
	r.HoldRate = float64(r.Holds) / all
	r.RecircPerRPC = float64(r.Recirculations) / all
	r.MessagesPerRPC = float64(r.ControlMessages) / all
	r.SimTime = s.now
	if s.cfg.Gateway.Enabled() && s.now > 0 {
		r.GatewayUtilization = math.Min(1, s.gwBusy/(float64(s.cfg.Gateway.Cores)*s.now))
	}
	return r
}
