package serverless

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/research/sim/serverless/eventq"
)

// Policy is a dispatch policy.
type Policy uint8

// Dispatch policies.
const (
	// LateBinding keeps one central FCFS queue; a stage binds to a pod only
	// when the pod is idle (the scheduler learns of it NotifyDelay after it
	// frees). With NotifyDelay 0 this is the M/G/c FCFS queue.
	LateBinding Policy = iota
	// EarlyBinding binds each stage at arrival, round-robin over the pods;
	// each pod serves its own FCFS queue.
	EarlyBinding
	// EarlyRandom binds each stage at arrival to a uniformly random pod.
	EarlyRandom
	// EarlyExecTime binds each stage at arrival to the pod with the smaller
	// expected remaining work of two sampled at random (power of two
	// choices). A pod's expected remaining work is the sum of the class
	// estimates of its outstanding stages, as the switch's server_work_us.
	EarlyExecTime
	// PathFinder (PathFinder §2.4, §3.1–§3.3) holds every stage in the
	// activator for the wait of its class, on a timer: a stage binds when
	// its timer expires, never earlier, so a shorter class arriving later
	// binds first (in-scheduler preemption, the stage overtaking older held
	// ones); it then binds like EarlyExecTime, to the pod of two sampled
	// with the smaller expected remaining work. A class with wait 0 binds
	// at once.
	PathFinder
	// PathFinderIdle is the earlier reading kept as a labelled variant:
	// while held, a stage also binds to the first pod that becomes idle
	// (the central queue ordered by class, short first), which makes it
	// late binding with class priority.
	PathFinderIdle
)

// Policies returns the policies of the study, in reporting order.
func Policies() []Policy { return []Policy{LateBinding, EarlyBinding, EarlyExecTime, PathFinder} }

// AllPolicies returns every policy, the variants included.
func AllPolicies() []Policy {
	return []Policy{LateBinding, EarlyBinding, EarlyRandom, EarlyExecTime, PathFinder, PathFinderIdle}
}

// String returns the policy's CLI name.
func (p Policy) String() string {
	switch p {
	case LateBinding:
		return "late"
	case EarlyBinding:
		return "early"
	case EarlyRandom:
		return "early-random"
	case EarlyExecTime:
		return "early-exec"
	case PathFinder:
		return "pathfinder"
	case PathFinderIdle:
		return "pathfinder-idle"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// MarshalText implements encoding.TextMarshaler.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ParsePolicy parses a CLI policy name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range AllPolicies() {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown policy %q (want late, early, early-random, early-exec, pathfinder or pathfinder-idle)", s)
}

// central: the policy binds from a central queue to pods it learns are
// idle.
func (p Policy) central() bool { return p == LateBinding || p == PathFinderIdle }

// held: the policy holds stages in per-class queues with a timer.
func (p Policy) held() bool { return p == PathFinder || p == PathFinderIdle }

// RunConfig is everything a run needs besides its workload.
type RunConfig struct {
	Policy Policy
	Pods   int
	// Bounds[k] is the wait (ms) of class k (PathFinder only).
	Bounds []float64
	// NotifyDelay (ms) is how long after a pod frees the central scheduler
	// learns it is idle (late binding and PathFinder's central queue).
	NotifyDelay float64
	// Slots is how many stages a pod runs at once (Knative's
	// containerConcurrency; 0 or 1: one). A stage occupies a slot for its
	// execution time; slots do not slow each other down (execution times
	// are wall-clock durations, mostly waiting on I/O).
	Slots int
	// ForwardDelay (ms) is how long a bound stage takes to reach its pod
	// (the activator → queue-proxy hop): NotifyDelay + ForwardDelay is the
	// per-bind round trip of a central queue.
	ForwardDelay float64
	// Timeout (ms): a request whose latency (end to end) exceeds it counts
	// as a timeout (it still completes; 0 disables).
	Timeout float64
	// Warmup is the fraction of the requests, in arrival order, left out of
	// the metrics.
	Warmup float64
	// Seed drives the policy's random choices (sampling pods).
	Seed uint64
	// KeepSamples keeps the per-request latencies and response times.
	KeepSamples bool
}

// RunResult is what one run measured over its requests after warm-up. Times
// are in ms and named as PathFinder §4.2 and §5.5 name them: latency is
// end to end, arrival at the activator to completion; response time is
// arrival to start of execution (for a chain, summed over its stages: the
// time it was not executing).
type RunResult struct {
	Requests     int     `json:"requests"`
	P99Latency   float64 `json:"p99_latency_ms"`
	P50Latency   float64 `json:"p50_latency_ms"`
	MeanLatency  float64 `json:"mean_latency_ms"`
	P99Response  float64 `json:"p99_response_ms"`
	P50Response  float64 `json:"p50_response_ms"`
	MeanResponse float64 `json:"mean_response_ms"`
	// OvertakeRate is the fraction of stages that, when bound, bypassed an
	// older held stage (a shorter class overtaking a longer one:
	// PathFinder's in-scheduler preemption, its "preemption rate"). FCFS
	// queues never overtake, so it is 0 for every other policy.
	OvertakeRate float64 `json:"overtake_rate"`
	// ForcedRate is the fraction of stages bound because their wait bound
	// expired (PathFinder).
	ForcedRate float64 `json:"forced_rate"`
	// MaxHoldExcess is the largest (time held unbound − class bound) of any
	// held stage; <= 0 when no stage waited beyond its bound.
	MaxHoldExcess float64 `json:"max_hold_excess_ms"`
	// MeanQueue is the time-averaged number of stages waiting (central and
	// pod queues, not in service) over the measurement window; MaxQueue its
	// largest value.
	MeanQueue   float64 `json:"mean_queue"`
	MaxQueue    int     `json:"max_queue"`
	TimeoutRate float64 `json:"timeout_rate"`
	// Throughput is requests completed per second within the window.
	Throughput float64 `json:"throughput_rps"`
	// Utilization is the mean busy fraction of the pods in the window and
	// BusyCoV the coefficient of variation of per-pod busy time (load
	// balance: 0 is perfectly even).
	Utilization float64   `json:"utilization"`
	BusyCoV     float64   `json:"busy_cov"`
	Events      int       `json:"events"`
	Latencies   []float64 `json:"-"`
	Responses   []float64 `json:"-"`
}

// Event kinds.
const (
	evArrival uint8 = iota
	evDone
	evDeadline
	evNotice
	evReach // a bound stage reaches its pod
)

// Stage states.
const (
	stNew uint8 = iota
	stPending
	stBound
)

type fifo struct {
	buf  []int32
	head int
}

func (f *fifo) len() int { return len(f.buf) - f.head }

func (f *fifo) push(v int32) { f.buf = append(f.buf, v) }

func (f *fifo) peek() int32 { return f.buf[f.head] }

func (f *fifo) pop() int32 {
	v := f.buf[f.head]
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	} else if f.head >= 1024 && f.head*2 >= len(f.buf) {
		n := copy(f.buf, f.buf[f.head:])
		f.buf, f.head = f.buf[:n], 0
	}
	return v
}

type pod struct {
	local   fifo
	running int32 // stages executing
	known   int32 // free slots the central scheduler knows of
	epoch   uint32
	out     int32
	work    float64
	since   float64 // last change of running
	// busyTime integrates running/slots over the measurement window.
	busyTime float64
}

type idleEntry struct {
	pod   int32
	epoch uint32
}

type sim struct {
	w   *Workload
	cfg RunConfig
	q   eventq.Queue
	rng *rand.Rand
	now float64

	pods    []pod
	slots   int32
	podOf   []int32 // pod of each bound stage
	rr      int
	central fifo   // late binding
	pending []fifo // PathFinder, per class
	pendAll fifo   // PathFinder: every held stage in ready order (lazy)
	nPend   int
	idle    []idleEntry
	idleH   int

	state  []uint8
	ready  []float64
	waited []float64 // per request

	// measurement
	tw, te         float64
	firstMeasured  int
	nWaiting       int
	lastT, area    float64
	maxQueue       int
	completedInWin int
	overtakes      int
	forced         int
	holdExcess     float64
	lat, resp      []float64
	timeouts       int
	events         int
}

// Run simulates w under cfg.
func Run(ctx context.Context, w *Workload, cfg RunConfig) (RunResult, error) {
	if err := validateRun(w, cfg); err != nil {
		return RunResult{}, err
	}
	n := len(w.Arrival)
	s := &sim{
		w: w, cfg: cfg,
		rng:        rand.New(rand.NewPCG(cfg.Seed, streamPolicy)),
		pods:       make([]pod, cfg.Pods),
		slots:      int32(max(1, cfg.Slots)),
		podOf:      make([]int32, w.Stages()),
		state:      make([]uint8, w.Stages()),
		ready:      make([]float64, w.Stages()),
		waited:     make([]float64, n),
		holdExcess: math.Inf(-1),
	}
	s.firstMeasured = min(n-1, int(cfg.Warmup*float64(n)))
	s.tw, s.te = w.Arrival[s.firstMeasured], w.Arrival[n-1]
	m := n - s.firstMeasured
	s.lat, s.resp = make([]float64, 0, m), make([]float64, 0, m)
	if cfg.Policy.held() {
		s.pending = make([]fifo, w.Classes.Len())
	}
	if cfg.Policy.central() {
		s.idle = make([]idleEntry, 0, cfg.Pods*int(s.slots))
		for k := int32(0); k < s.slots; k++ {
			for i := range s.pods {
				s.pods[i].known = s.slots
				s.idle = append(s.idle, idleEntry{int32(i), 0})
			}
		}
	}
	s.q.Push(w.Arrival[0], evArrival, 0)
	for {
		ev, ok := s.q.Pop()
		if !ok {
			break
		}
		s.events++
		if s.events&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return RunResult{}, fmt.Errorf("simulate %s: %w", cfg.Policy, err)
			}
		}
		s.now = ev.T
		switch ev.Kind {
		case evArrival:
			r := ev.ID
			if int(r)+1 < n {
				s.q.Push(w.Arrival[r+1], evArrival, r+1)
			}
			s.stageReady(w.First[r])
		case evDone:
			s.done(ev.ID)
		case evDeadline:
			s.deadline(ev.ID)
		case evNotice:
			s.notice(ev.ID)
		case evReach:
			s.reach(ev.ID)
		}
	}
	return s.result()
}

func validateRun(w *Workload, cfg RunConfig) error {
	switch {
	case w == nil || len(w.Arrival) == 0:
		return fmt.Errorf("simulate: empty workload")
	case cfg.Pods < 1:
		return fmt.Errorf("simulate: %d pods, need >= 1", cfg.Pods)
	case cfg.Policy > PathFinderIdle:
		return fmt.Errorf("simulate: unknown policy %d", cfg.Policy)
	case cfg.Policy.held() && len(cfg.Bounds) != w.Classes.Len():
		return fmt.Errorf("simulate: pathfinder needs %d class bounds, have %d", w.Classes.Len(), len(cfg.Bounds))
	case cfg.NotifyDelay < 0 || cfg.Timeout < 0 || cfg.ForwardDelay < 0 || math.IsNaN(cfg.NotifyDelay+cfg.Timeout+cfg.ForwardDelay) || math.IsInf(cfg.ForwardDelay, 0):
		return fmt.Errorf("simulate: notify delay, forward delay and timeout must be >= 0")
	case cfg.Slots < 0 || cfg.Slots > 1<<16:
		return fmt.Errorf("simulate: %d slots per pod, need 0..65536", cfg.Slots)
	case !(cfg.Warmup >= 0 && cfg.Warmup < 1):
		return fmt.Errorf("simulate: warm-up fraction %g must be in [0, 1)", cfg.Warmup)
	}
	for k, b := range cfg.Bounds {
		if !(b >= 0) || math.IsInf(b, 0) {
			return fmt.Errorf("simulate: bound of class %d is %g ms, need finite >= 0", k, b)
		}
	}
	return nil
}

// waiting changes the number of waiting stages, integrating it over the
// measurement window.
func (s *sim) waiting(delta int) {
	a, b := math.Max(s.lastT, s.tw), math.Min(s.now, s.te)
	if b > a {
		s.area += float64(s.nWaiting) * (b - a)
	}
	s.lastT = s.now
	s.nWaiting += delta
	if s.now >= s.tw && s.now <= s.te && s.nWaiting > s.maxQueue {
		s.maxQueue = s.nWaiting
	}
}

func (s *sim) stageReady(st int32) {
	s.ready[st] = s.now
	switch s.cfg.Policy {
	case LateBinding:
		if p, ok := s.popIdle(); ok {
			s.bind(p, st)
			return
		}
		s.central.push(st)
		s.state[st] = stPending
		s.waiting(+1)
	case EarlyBinding:
		p := s.rr
		s.rr++
		if s.rr == len(s.pods) {
			s.rr = 0
		}
		s.bind(p, st)
	case EarlyRandom:
		s.bind(s.rng.IntN(len(s.pods)), st)
	case EarlyExecTime:
		s.bind(s.p2c(), st)
	case PathFinder, PathFinderIdle:
		c := s.w.Class[st]
		bound := s.cfg.Bounds[c]
		if bound <= 0 {
			s.bind(s.p2c(), st)
			return
		}
		if s.cfg.Policy == PathFinderIdle {
			if p, ok := s.popIdle(); ok {
				s.bind(p, st)
				return
			}
		}
		s.pending[c].push(st)
		s.pendAll.push(st)
		s.nPend++
		s.state[st] = stPending
		s.waiting(+1)
		s.q.Push(s.now+bound, evDeadline, st)
	}
}

// p2c samples two distinct pods and returns the one with less expected
// remaining work (then fewer outstanding stages, then the first sampled).
func (s *sim) p2c() int {
	n := len(s.pods)
	if n == 1 {
		return 0
	}
	i := s.rng.IntN(n)
	j := s.rng.IntN(n - 1)
	if j >= i {
		j++
	}
	a, b := &s.pods[i], &s.pods[j]
	if b.work < a.work || (b.work == a.work && b.out < a.out) {
		return j
	}
	return i
}

func (s *sim) popIdle() (int, bool) {
	for s.idleH < len(s.idle) {
		e := s.idle[s.idleH]
		s.idleH++
		if s.idleH == len(s.idle) {
			s.idle, s.idleH = s.idle[:0], 0
		}
		p := &s.pods[e.pod]
		if p.known > 0 && p.epoch == e.epoch && p.running < s.slots {
			p.known--
			return int(e.pod), true
		}
	}
	return 0, false
}

// bind assigns stage st to pod p; it reaches the pod ForwardDelay later.
func (s *sim) bind(p int, st int32) {
	pd := &s.pods[p]
	pd.out++
	pd.work += s.w.Classes.Estimate[s.w.Class[st]]
	s.state[st] = stBound
	s.podOf[st] = int32(p)
	if s.cfg.ForwardDelay > 0 {
		s.q.Push(s.now+s.cfg.ForwardDelay, evReach, st)
		return
	}
	s.reach(st)
}

// reach: stage st arrives at its pod: it starts at once if a slot is
// free, else it joins the pod's FCFS queue.
func (s *sim) reach(st int32) {
	p := int(s.podOf[st])
	if s.pods[p].running < s.slots {
		s.start(p, st)
		return
	}
	s.pods[p].local.push(st)
	s.waiting(+1)
}

// track integrates pod p's busy slots up to now.
func (s *sim) track(pd *pod) {
	if a, b := math.Max(pd.since, s.tw), math.Min(s.now, s.te); b > a {
		pd.busyTime += float64(pd.running) * (b - a) / float64(s.slots)
	}
	pd.since = s.now
}

func (s *sim) start(p int, st int32) {
	pd := &s.pods[p]
	s.track(pd)
	pd.running++
	if free := s.slots - pd.running; pd.known > free {
		// A slot the scheduler knew free was taken here: its tokens are
		// void; the ones still free are issued again.
		pd.epoch++
		pd.known = free
		for range free {
			s.idle = append(s.idle, idleEntry{int32(p), pd.epoch})
		}
	}
	r := s.w.Req[st]
	s.waited[r] += s.now - s.ready[st]
	s.q.Push(s.now+s.w.Exec[st], evDone, st)
}

func (s *sim) done(st int32) {
	p32 := s.podOf[st]
	p := int(p32)
	pd := &s.pods[p]
	s.track(pd)
	pd.running--
	pd.out--
	pd.work -= s.w.Classes.Estimate[s.w.Class[st]]
	if pd.out == 0 || pd.work < 0 { // no float residue on an empty pod
		pd.work = 0
	}
	// The pod takes its next work first, then the chain's next stage
	// becomes ready (so a freed pod serves older waiting stages first).
	if pd.local.len() > 0 {
		s.waiting(-1)
		s.start(p, pd.local.pop())
	} else if s.cfg.Policy.central() {
		if s.cfg.NotifyDelay > 0 {
			s.q.Push(s.now+s.cfg.NotifyDelay, evNotice, p32)
		} else {
			s.notice(p32)
		}
	}
	r := s.w.Req[st]
	if next := st + 1; next < s.w.First[r+1] {
		s.stageReady(next)
		return
	}
	if int(r) >= s.firstMeasured {
		lat := s.now - s.w.Arrival[r]
		s.lat = append(s.lat, lat)
		s.resp = append(s.resp, s.waited[r])
		if s.cfg.Timeout > 0 && lat > s.cfg.Timeout {
			s.timeouts++
		}
	}
	if s.now >= s.tw && s.now <= s.te {
		s.completedInWin++
	}
}

// notice: the central scheduler learns that a slot of pod p is free and
// gives it the best held stage, or records it as free.
func (s *sim) notice(p32 int32) {
	pd := &s.pods[p32]
	if s.slots-pd.running <= pd.known || pd.local.len() > 0 {
		return
	}
	if st, ok := s.takeCentral(); ok {
		s.bind(int(p32), st)
		return
	}
	pd.known++
	s.idle = append(s.idle, idleEntry{p32, pd.epoch})
}

// takeCentral removes the stage the central queue dispatches next: the
// oldest (late binding) or the oldest of the shortest class (PathFinder).
func (s *sim) takeCentral() (int32, bool) {
	if s.cfg.Policy == LateBinding {
		if s.central.len() == 0 {
			return 0, false
		}
		s.waiting(-1)
		return s.central.pop(), true
	}
	if s.nPend == 0 {
		return 0, false
	}
	best := -1
	oldest := math.Inf(1)
	for k := range s.pending {
		f := &s.pending[k]
		for f.len() > 0 && s.state[f.peek()] != stPending {
			f.pop()
		}
		if f.len() == 0 {
			continue
		}
		if best < 0 {
			best = k
		}
		oldest = math.Min(oldest, s.ready[f.peek()])
	}
	st := s.pending[best].pop()
	if s.ready[st] > oldest {
		s.overtakes++
	}
	s.unpend(st)
	return st, true
}

func (s *sim) unpend(st int32) {
	s.nPend--
	s.waiting(-1)
	held := s.now - s.ready[st]
	s.holdExcess = math.Max(s.holdExcess, held-s.cfg.Bounds[s.w.Class[st]])
}

// deadline: stage st's wait expired; if still held, bind it like
// EarlyExecTime. It overtakes when an older stage is still held.
func (s *sim) deadline(st int32) {
	if s.state[st] != stPending {
		return
	}
	s.state[st] = stNew // leaves the central queue (skipped lazily)
	for s.pendAll.len() > 0 && s.state[s.pendAll.peek()] != stPending {
		s.pendAll.pop()
	}
	if s.pendAll.len() > 0 && s.ready[s.pendAll.peek()] < s.ready[st] {
		s.overtakes++
	}
	s.unpend(st)
	s.forced++
	s.bind(s.p2c(), st)
}

func (s *sim) result() (RunResult, error) {
	if len(s.resp) == 0 {
		return RunResult{}, fmt.Errorf("simulate: no request completed")
	}
	win := s.te - s.tw
	res := RunResult{Requests: len(s.resp), MaxQueue: s.maxQueue, Events: s.events}
	lat := slices.Clone(s.lat)
	rsp := slices.Clone(s.resp)
	slices.Sort(lat)
	slices.Sort(rsp)
	res.P99Latency, res.P50Latency = stats.QuantileSorted(lat, 0.99), stats.QuantileSorted(lat, 0.5)
	res.P99Response, res.P50Response = stats.QuantileSorted(rsp, 0.99), stats.QuantileSorted(rsp, 0.5)
	res.MeanLatency, res.MeanResponse = mean(lat), mean(rsp)
	stages := s.w.Stages()
	res.OvertakeRate = float64(s.overtakes) / float64(stages)
	res.ForcedRate = float64(s.forced) / float64(stages)
	if !math.IsInf(s.holdExcess, -1) {
		res.MaxHoldExcess = s.holdExcess
	}
	res.TimeoutRate = float64(s.timeouts) / float64(len(s.resp))
	if win > 0 {
		res.MeanQueue = s.area / win
		res.Throughput = float64(s.completedInWin) / win * 1000
		busy := make([]float64, len(s.pods))
		for i := range s.pods {
			busy[i] = s.pods[i].busyTime / win
		}
		sum := stats.Summarize(busy)
		res.Utilization = sum.Mean
		if sum.Mean > 0 {
			res.BusyCoV = sum.Std / sum.Mean
		}
	}
	if s.cfg.KeepSamples {
		res.Latencies, res.Responses = s.lat, s.resp
	}
	return res, nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// PolicyList parses a comma-separated list of policies.
func PolicyList(s string) ([]Policy, error) {
	var out []Policy
	for f := range strings.SplitSeq(s, ",") {
		p, err := ParsePolicy(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}
