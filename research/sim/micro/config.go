package micro

import (
	"errors"
	"fmt"
	"math"

	"github.com/p4ctl/p4ctl/research/sim/dist"
)

// Config is one simulated scenario. Times are in microseconds.
type Config struct {
	// Hosts and CoresPerHost: N hosts × m cores. Granularity says what a
	// policy binds a request to: by default a host, whose cores share one
	// FCFS queue.
	Hosts        int `json:"hosts"`
	CoresPerHost int `json:"cores_per_host"`
	// Granularity is what "N hosts × m cores" binds to (default
	// GranularityHost).
	Granularity Granularity `json:"granularity,omitempty"`
	// Load is ρ = λ·E[S] / (N·m).
	Load float64 `json:"load"`
	// ArrivalCV is the coefficient of variation of the renewal
	// inter-arrival times; ArrivalKind says how CV ≠ 1 is generated
	// (default h2: balanced-means hyper-exponential; gamma also available).
	ArrivalCV   float64          `json:"arrival_cv"`
	ArrivalKind dist.ArrivalKind `json:"arrival_kind"`
	// FlowsPerCore > 0 splits the arrivals into FlowsPerCore × N·m
	// independent flows, each a renewal process of rate λ/flows with the
	// coefficient of variation ArrivalCV (the burstiness is the flow's, as
	// the study gives it, not the aggregate's). An early-binding random
	// ingress places a request by its flow's hash: flow f goes to core
	// ⌊f/FlowsPerCore⌋, or that core's host when hosts are the servers.
	// 0 is one aggregate renewal stream split per request.
	FlowsPerCore int `json:"flows_per_core,omitempty"`
	// Burst optionally modulates the arrival rate on and off.
	Burst Burst `json:"burst"`
	// Service is the service-time distribution.
	Service dist.ServiceSpec `json:"service"`
	// Delay is the one-way network delay D between the ingress/dispatcher
	// and a host; every message a policy needs pays it (host → host pays 2D).
	Delay float64 `json:"delay_us"`
	// SLO on end-to-end latency: dispatcher arrival → reply back at the
	// ingress (so a request never waiting takes 2D + S).
	SLO float64 `json:"slo_us"`
	// SLOWindow > 0 judges the SLO as a tail-latency objective: the
	// measured completions are cut into windows of SLOWindow µs (by
	// completion time) and a window violates when its SLOQuantile (default
	// 0.99) latency exceeds SLO; the violation rate is then the fraction of
	// windows that violate. 0 judges every request on its own (the
	// violation rate is the fraction of requests slower than SLO).
	SLOWindow   float64 `json:"slo_window_us,omitempty"`
	SLOQuantile float64 `json:"slo_quantile,omitempty"`
	// Policy is the dispatch policy.
	Policy Policy `json:"policy"`
	// Requests are measured after Warmup requests are discarded.
	Requests int `json:"requests"`
	Warmup   int `json:"warmup"`
	// Seed selects the random streams; the same Config and Seed give the
	// same result bit for bit.
	Seed uint64 `json:"seed"`
	// Refresh is the load-report period for P2C and JSW (default 10 µs).
	Refresh float64 `json:"refresh_us"`
	// StaleReports makes P2C and JSW use the last load report as it
	// arrived: without it the ingress adds the requests it sent to each
	// server since that report (a correction the study does not make).
	StaleReports bool `json:"stale_reports,omitempty"`
	// ForwardThreshold is how many requests must be waiting at a server
	// before it forwards a new one (default ServerCores()).
	ForwardThreshold int `json:"forward_threshold"`
	// ForwardHops is how often one request may be forwarded (default 1;
	// ForwardUnlimited: no limit): a forwarded request that meets another
	// queue at or above the threshold moves on again, paying each hop.
	ForwardHops int `json:"forward_hops,omitempty"`
	// ForwardOneWay makes a forward cost one one-way delay D (host → host
	// directly, the study's "each move pays D"); without it a forward
	// costs 2D (host → switch → host).
	ForwardOneWay bool `json:"forward_one_way,omitempty"`
	// CreditTTL is the JBSQ credit time-to-live (0 = none); TTLMode says
	// what expires.
	CreditTTL float64 `json:"credit_ttl_us"`
	TTLMode   TTLMode `json:"ttl_mode,omitempty"`
	// NotifyLoss is the probability that a completion notification never
	// reaches the dispatcher (a lost reply): without a TTL its credit leaks.
	NotifyLoss float64 `json:"notify_loss"`
	// Stall injects whole-host pauses.
	Stall Stall `json:"stall"`
	// Gateway is the dispatcher's control-plane cost; the zero value is the
	// offloaded switch (no cost).
	Gateway Gateway `json:"gateway"`
	// Connections > 0 gives each request a connection drawn from a Zipf
	// distribution with exponent ZipfAlpha (needed by hash, migrate and
	// passive).
	Connections int     `json:"connections,omitempty"`
	ZipfAlpha   float64 `json:"zipf_alpha,omitempty"`
	// MigrateInterval is the period of connection migration (default 100 µs).
	MigrateInterval float64 `json:"migrate_interval_us,omitempty"`
	// Switch policies: Recirc is the time one recirculation adds to a
	// request (default DefaultRecirc); SwitchMaxHolds and SwitchOnFull are
	// the pool's max_holds and on_full (defaults, when nil and "": 255 and
	// force — the switch holds a request as long as its hold count allows,
	// then binds it anyway, so nothing is nacked).
	Recirc         float64 `json:"recirc_us,omitempty"`
	SwitchMaxHolds *int    `json:"switch_max_holds,omitempty"`
	SwitchOnFull   string  `json:"switch_on_full,omitempty"`
	// Sweep holds how experiments derive their runs from this scenario
	// (a named scenario's structural choices); Run ignores it.
	Sweep Sweep `json:"sweep"`
}

// Granularity is what a policy binds a request to.
type Granularity string

// Granularities.
const (
	// GranularityHost binds to a host; its m cores share one FCFS queue
	// (intra-host pooling, as a host runtime with a shared queue has).
	GranularityHost Granularity = "host"
	// GranularityCore binds to a core: each of the N·m cores has its own
	// FCFS queue and is a server of its own (per-core queues with no
	// stealing). A JBSQ bound is then per core, and a stall still pauses
	// all m cores of a host.
	GranularityCore Granularity = "core"
	// GranularityRSS binds where each kind of binding lands on a real
	// host: an early-bound request is steered by the NIC's receive-side
	// hash onto one core's queue (per-core queues, as GranularityCore),
	// while a late-bound request is bound to the host (its credit is the
	// host's) and taken by the first of the host's cores to free (a shared
	// host queue, as GranularityHost).
	GranularityRSS Granularity = "rss"
)

// ForwardUnlimited as Config.ForwardHops puts no limit on how often a
// request may be forwarded.
const ForwardUnlimited = -1

// DefaultRecirc is the default cost of one recirculation, in µs: a second
// trip through a Tofino pipeline and its recirculation port is of the
// order of its ~0.5–1 µs traversal; 1 µs is the conservative end.
const DefaultRecirc = 1.0

// TTLMode is how a JBSQ credit expires.
type TTLMode string

// TTL modes.
const (
	// TTLSilence is the switch's rule (set_pool.credit_ttl_us): a host whose
	// counter has not moved (no bind, no release) for longer than the TTL is
	// presumed drained, and its counter is reset on the next bind. It only
	// recovers a host whose credits have all leaked.
	TTLSilence TTLMode = "silence"
	// TTLCredit expires each credit individually TTL after it was issued
	// unless its completion was learned first (per-request state a software
	// dispatcher can keep and a switch register cannot).
	TTLCredit TTLMode = "credit"
)

// Burst is on/off modulation of the arrival rate (a Markov-modulated
// time change of the renewal process, so the mean rate and the base CV are
// kept): during "on" periods the rate is Factor × the mean; "on" covers
// OnFraction of the time in periods of mean length MeanOn (exponential);
// "off" periods carry the rest of the load. Factor ≤ 1 disables bursts.
type Burst struct {
	Factor     float64 `json:"factor"`
	OnFraction float64 `json:"on_fraction"`
	MeanOn     float64 `json:"mean_on_us"`
}

// Enabled reports whether bursts are on.
func (b Burst) Enabled() bool { return b.Factor > 1 }

// Stall is a per-host pause process: each host pauses for Duration µs, with
// exponentially distributed gaps of mean Interval µs between pauses. While
// paused no core makes progress. Interval 0 disables stalls.
type Stall struct {
	Interval float64 `json:"interval_us"`
	Duration float64 `json:"duration_us"`
}

// Gateway is a software dispatcher: Cores cores process every message the
// dispatcher receives (requests, completion notifications, idle tokens, load
// reports — a report from each host counts once) in FCFS order at PerMessage
// µs each. Cores = 0 or PerMessage = 0 is the offloaded switch.
type Gateway struct {
	Cores      int     `json:"cores"`
	PerMessage float64 `json:"per_message_us"`
}

// Enabled reports whether the gateway has a cost.
func (g Gateway) Enabled() bool { return g.Cores > 0 && g.PerMessage > 0 }

// DefaultConfig is the E1 scenario: 16 hosts × 8 cores, ρ = 0.85,
// exponential service of mean 5 µs, Poisson arrivals (CV 1), D = 4.5 µs,
// SLO 50 µs, JBSQ with the Little's-law bound, 200 000 measured requests
// after 20 000 of warm-up.
func DefaultConfig() Config {
	return Config{
		Hosts:        16,
		CoresPerHost: 8,
		Load:         0.85,
		ArrivalCV:    1,
		ArrivalKind:  dist.ArrivalH2,
		Service:      dist.ServiceSpec{Kind: dist.ServiceExponential, Mean: 5},
		Delay:        4.5,
		SLO:          50,
		Policy:       Policy{Binding: JBSQ, Ingress: Least, Bound: BoundAuto},
		Requests:     200000,
		Warmup:       20000,
		Seed:         1,
		Refresh:      10,
	}
}

// Cores is N·m.
func (c Config) Cores() int { return c.Hosts * c.CoresPerHost }

// perCore reports whether the policy's servers are single cores.
func (c Config) perCore() bool {
	switch c.Granularity {
	case GranularityCore:
		return true
	case GranularityRSS:
		return c.Policy.Binding == Early
	}
	return false
}

// Servers is the number of queues the policy binds to: N hosts, or N·m
// cores when the granularity makes every core a server.
func (c Config) Servers() int {
	if c.perCore() {
		return c.Cores()
	}
	return c.Hosts
}

// ServerCores is the number of cores behind one server: m, or 1 when every
// core is a server. JBSQ bounds (LittleBound, StabilityBound) count per
// server.
func (c Config) ServerCores() int {
	if c.perCore() {
		return 1
	}
	return c.CoresPerHost
}

// SLOQuantileOrDefault is the windowed SLO's quantile (default 0.99).
func (c Config) SLOQuantileOrDefault() float64 {
	if c.SLOQuantile == 0 {
		return 0.99
	}
	return c.SLOQuantile
}

// ArrivalRate is λ in requests per µs.
func (c Config) ArrivalRate() float64 {
	return c.Load * float64(c.Cores()) / c.Service.Mean
}

// LittleBound is the smallest per-host JBSQ bound that can keep a host's m
// cores busy across one credit round trip: by Little's law a host needs
// m·(S + 2D)/S requests outstanding (m in service, the rest in flight or
// about to be refilled) — n = ⌈m·(1 + 2D/S)⌉.
func LittleBound(coresPerHost int, delay, serviceMean float64) int {
	n := int(math.Ceil(float64(coresPerHost) * (1 + 2*delay/serviceMean)))
	return max(1, min(n, 65535))
}

// StabilityBound is the smallest per-host JBSQ bound that can carry load ρ:
// each credit cycles in at least S + 2D, so n credits complete at most
// n/(S + 2D) requests per µs, and a host must complete mρ/S — n ≥
// ⌈mρ(1 + 2D/S)⌉.
func StabilityBound(coresPerHost int, load, delay, serviceMean float64) int {
	n := int(math.Ceil(float64(coresPerHost) * load * (1 + 2*delay/serviceMean)))
	return max(1, min(n, 65535))
}

// ResolvedBound is the JBSQ bound the run uses (0 = unbounded).
func (c Config) ResolvedBound() int {
	if c.Policy.Binding != JBSQ && c.Policy.Binding != Switch {
		return 0
	}
	if c.Policy.Bound == BoundAuto {
		return LittleBound(c.ServerCores(), c.Delay, c.Service.Mean)
	}
	return c.Policy.Bound
}

func positiveFinite(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

// Validate reports the first problem with c.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Hosts < 1 || c.CoresPerHost < 1 || c.Hosts*c.CoresPerHost > 1<<20 {
		add("hosts (%d) and cores per host (%d) must be ≥ 1, at most 2^20 cores in all", c.Hosts, c.CoresPerHost)
	}
	switch c.Granularity {
	case "", GranularityHost, GranularityCore, GranularityRSS:
	default:
		add("granularity %q must be host, core or rss", c.Granularity)
	}
	if c.SLOWindow < 0 || math.IsInf(c.SLOWindow, 0) || math.IsNaN(c.SLOWindow) {
		add("SLO window %v must be ≥ 0", c.SLOWindow)
	}
	if q := c.SLOQuantile; q != 0 && !(q > 0 && q < 1) {
		add("SLO quantile %v must be in (0, 1)", q)
	}
	if c.Servers() < 2 && (c.Policy.Movement == Forward) {
		add("forwarding needs at least 2 hosts")
	}
	if !(c.Load > 0 && c.Load < 4) {
		add("load %v must be in (0, 4)", c.Load)
	}
	if _, err := dist.NewInterval(c.ArrivalKind, 1, c.ArrivalCV); err != nil {
		add("arrivals: %w", err)
	}
	if b := c.Burst; b.Enabled() {
		if !(b.OnFraction > 0 && b.OnFraction < 1) || b.Factor*b.OnFraction > 1 || !positiveFinite(b.MeanOn) {
			add("burst: need 0 < on-fraction < 1, factor × on-fraction ≤ 1 and a positive mean on-period (got %+v)", b)
		}
	}
	if _, err := dist.NewService(c.Service); err != nil {
		add("service: %w", err)
	}
	if !(c.Delay >= 0) || math.IsInf(c.Delay, 0) {
		add("delay %v must be ≥ 0", c.Delay)
	}
	if !positiveFinite(c.SLO) {
		add("slo %v must be positive", c.SLO)
	}
	if c.Requests < 1 || c.Requests > MaxRequests || c.Warmup < 0 || c.Warmup > MaxRequests {
		add("requests (%d) must be in [1, %d] and warm-up (%d) in [0, %d]", c.Requests, MaxRequests, c.Warmup, MaxRequests)
	}
	if (c.Policy.Ingress == P2C || c.Policy.Ingress == JSW) && c.Policy.Binding == Early && !positiveFinite(c.Refresh) {
		add("refresh %v must be positive for p2c and jsw", c.Refresh)
	}
	if c.ForwardThreshold < 0 {
		add("forward threshold %d must be ≥ 0", c.ForwardThreshold)
	}
	if c.ForwardHops < ForwardUnlimited || c.ForwardHops > 255 {
		add("forward hops %d must be in [0, 255] or %d (unlimited)", c.ForwardHops, ForwardUnlimited)
	}
	if c.FlowsPerCore < 0 || c.FlowsPerCore > 1024 || c.FlowsPerCore*c.Cores() > 1<<20 {
		add("flows per core %d must be in [0, 1024], at most 2^20 flows in all", c.FlowsPerCore)
	}
	if c.FlowsPerCore > 0 && c.Burst.Enabled() {
		add("per-flow arrivals and micro-bursts do not combine (bursts modulate one aggregate stream)")
	}
	if !(c.CreditTTL >= 0) || math.IsInf(c.CreditTTL, 0) {
		add("credit TTL %v must be ≥ 0", c.CreditTTL)
	}
	if c.TTLMode != "" && c.TTLMode != TTLSilence && c.TTLMode != TTLCredit {
		add("TTL mode %q must be silence or credit", c.TTLMode)
	}
	if !(c.NotifyLoss >= 0 && c.NotifyLoss < 1) {
		add("notification loss %v must be in [0, 1)", c.NotifyLoss)
	}
	if c.Stall.Interval != 0 && (!positiveFinite(c.Stall.Interval) || !positiveFinite(c.Stall.Duration)) {
		add("stalls need a positive interval and duration (got %+v)", c.Stall)
	}
	if c.Gateway.Cores < 0 || c.Gateway.Cores > 1024 || !(c.Gateway.PerMessage >= 0) || math.IsInf(c.Gateway.PerMessage, 0) {
		add("gateway cores (%d) must be in [0, 1024] and cost per message (%v) ≥ 0", c.Gateway.Cores, c.Gateway.PerMessage)
	}
	if c.Policy.Binding == Early && (c.Policy.Ingress == Hash || c.Policy.Ingress == Migrate || c.Policy.Ingress == Passive || c.Policy.Ingress == PassiveMiss) && c.Connections < 1 {
		add("policy %s needs connections ≥ 1", c.Policy)
	}
	if c.Connections < 0 || c.Connections > 1<<24 {
		add("connections %d must be in [0, 2^24]", c.Connections)
	}
	if c.Connections > 0 && (!(c.ZipfAlpha >= 0) || c.ZipfAlpha > 10) {
		add("zipf alpha %v must be in [0, 10]", c.ZipfAlpha)
	}
	if c.Policy.Binding == Early && c.Policy.Ingress == PassiveMiss && c.Policy.Movement != NoMovement {
		add("passive-miss takes no movement (+fwd, +ideal): a request served away from its connection's host cannot hand the connection away")
	}
	if c.MigrateInterval < 0 || math.IsInf(c.MigrateInterval, 0) {
		add("migrate interval %v must be ≥ 0", c.MigrateInterval)
	}
	if c.Policy.Binding == Early && c.Policy.Ingress == Least {
		add("ingress least needs JBSQ (use jsq)")
	}
	if c.Policy.Binding == Switch {
		if n := c.Servers(); n&(n-1) != 0 || n > 1<<16 {
			add("policy %s: servers (%d) must be a power of two up to 65536 (the switch's pool layout)", c.Policy, n)
		}
		if !(c.Recirc >= 0) || math.IsInf(c.Recirc, 0) {
			add("recirculation time %v must be ≥ 0", c.Recirc)
		}
		if h := c.SwitchMaxHolds; h != nil && (*h < 0 || *h > 255) {
			add("switch max holds %d must be in [0, 255]", *h)
		}
		if c.SwitchOnFull != "" && c.SwitchOnFull != "force" && c.SwitchOnFull != "nack" {
			add("switch on-full %q must be force or nack", c.SwitchOnFull)
		}
		if c.TTLMode == TTLCredit {
			add("the switch's credits expire by silence (ttl mode silence), not per credit")
		}
	}
	return errors.Join(errs...)
}
