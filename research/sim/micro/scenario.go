package micro

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/p4ctl/p4ctl/research/sim/dist"
)

// Sweep holds the structural choices that say how an experiment derives
// its runs from a scenario (a single run ignores them). The zero value is
// the pooled scenario's: E2 pools each host's cores, E3 moves D at a fixed
// service mean, the gateway serves the whole cluster.
type Sweep struct {
	// E2Granularity is the granularity E2 splits the cores with ("" = the
	// scenario's own). E2 asks what intra-host pooling buys, so a scenario
	// whose early binding lands on per-core queues pools for E2.
	E2Granularity Granularity `json:"e2_granularity,omitempty"`
	// T40bGranularity is the granularity T40b pins connections with (""
	// = the scenario's own).
	T40bGranularity Granularity `json:"t40b_granularity,omitempty"`
	// E3Axis is how E3 moves D/S, E3SLO how the SLO moves along it (""
	// = the axis's own rule, E3Axis.DefaultSLO) and E3Burst whether the
	// micro-bursts' mean on-period moves with it ("" = it does not).
	E3Axis  E3Axis  `json:"e3_axis,omitempty"`
	E3SLO   E3SLO   `json:"e3_slo,omitempty"`
	E3Burst E3Burst `json:"e3_burst,omitempty"`
	// E3Points are the D/S values E3 runs (empty: its grid for the axis).
	E3Points []float64 `json:"e3_points,omitempty"`
	// TunedJBSQ adds JBSQ(n*) to E1 and runs T40b's credits at n*: the
	// bound with the lowest violation rate, chosen on seeds disjoint from
	// the scored ones (E3 always runs it).
	TunedJBSQ bool `json:"tuned_jbsq,omitempty"`
	// GatewayHosts is how many hosts one software gateway serves in the
	// gateway experiment (0 = every host of the scenario).
	GatewayHosts int `json:"gateway_hosts,omitempty"`
	// TTLChoices are the JBSQ choice rules the TTL ablation runs (empty:
	// the scenario's own, least outstanding), TTLMode the expiry it ablates
	// for them (empty: both silence and per-credit) and TTLs its TTLs
	// (empty: 25, 50, 100, 200, 500 µs).
	TTLChoices []Ingress  `json:"ttl_choices,omitempty"`
	TTLMode    TTLMode    `json:"ttl_mode,omitempty"`
	TTLs       []float64  `json:"ttls_us,omitempty"`
	TTLFaults  []TTLFault `json:"ttl_faults,omitempty"`
}

// E3Axis says how E3 sweeps the ratio D/S.
type E3Axis string

// E3 axes.
const (
	// AxisDelay moves D = x·S at the scenario's service mean; the SLO keeps
	// its slack over the base round trip (SLO + 2(D − D₀)), so D hurts only
	// through stale information, movement and credit round trips.
	AxisDelay E3Axis = "delay"
	// AxisService keeps D and the SLO and moves the service mean S = D/x:
	// the study's "service 1–10 µs" at its D = 4.5 µs spans D/S = 0.45–4.5,
	// and a faster service leaves the same absolute budget for queueing
	// and detours that now cost more service times.
	AxisService E3Axis = "service"
	// AxisProduct moves both, keeping D·S: D = √(x·D₀S₀), S = √(D₀S₀/x).
	AxisProduct E3Axis = "product"
	// AxisUnloaded moves both, keeping the unloaded latency 2D + S:
	// S = (2D₀ + S₀)/(2x + 1), D = x·S.
	AxisUnloaded E3Axis = "unloaded"
)

// E3Axes are the E3 axes, in the order the help text lists them (a new
// slice on each call).
func E3Axes() []E3Axis { return []E3Axis{AxisDelay, AxisService, AxisProduct, AxisUnloaded} }

// DefaultSLO is the SLO rule an axis uses unless told otherwise: the
// service axis keeps the SLO, the others keep its slack over the base
// round trip.
func (a E3Axis) DefaultSLO() E3SLO {
	if a == AxisService {
		return SLOFixed
	}
	return SLORoundTrip
}

// E3SLO says how the SLO moves along E3's axis. Every rule gives the
// scenario's own SLO at the scenario's point (D₀, S₀, SLO₀), so every axis
// passes through E1.
type E3SLO string

// SLO rules along E3's axis.
const (
	// SLOFixed keeps SLO₀.
	SLOFixed E3SLO = "fixed"
	// SLORoundTrip keeps the slack over the base round trip:
	// SLO₀ + 2(D − D₀).
	SLORoundTrip E3SLO = "round-trip"
	// SLORoundTripHop keeps the slack over the round trip plus one
	// forwarding hop (2D more): SLO₀ + 4(D − D₀).
	SLORoundTripHop E3SLO = "round-trip-hop"
	// SLOSlack keeps the slack in service times: 2D + b·S with
	// b = (SLO₀ − 2D₀)/S₀.
	SLOSlack E3SLO = "slack"
	// SLOSlowdown is a slowdown bound: (SLO₀/S₀)·S.
	SLOSlowdown E3SLO = "slowdown"
	// SLOUnloaded is a multiple of the unloaded latency:
	// SLO₀·(2D + S)/(2D₀ + S₀).
	SLOUnloaded E3SLO = "unloaded"
)

// E3SLOs are the SLO rules, in the order the help text lists them (a new
// slice on each call).
func E3SLOs() []E3SLO {
	return []E3SLO{SLOFixed, SLORoundTrip, SLORoundTripHop, SLOSlack, SLOSlowdown, SLOUnloaded}
}

// E3Burst says whether the micro-bursts' mean on-period moves along E3's
// axis (the burst length in service times or in delays kept).
type E3Burst string

// Burst rules along E3's axis.
const (
	// BurstFixed keeps the on-period in µs.
	BurstFixed E3Burst = "fixed"
	// BurstService scales it with S (the same length in service times).
	BurstService E3Burst = "service"
	// BurstDelay scales it with D (the same length in delays).
	BurstDelay E3Burst = "delay"
)

// E3Bursts are the burst rules, in the order the help text lists them (a
// new slice on each call).
func E3Bursts() []E3Burst { return []E3Burst{BurstFixed, BurstService, BurstDelay} }

// E3Point is the scenario moved to D/S = x along the sweep's axis, with
// the SLO and the burst on-period moved by its rules. Unknown names are
// refused.
func (w Sweep) E3Point(scenario Config, x float64) (Config, error) {
	axis, rule, burst, err := w.E3Rules()
	if err != nil {
		return Config{}, err
	}
	if !(x > 0) || math.IsInf(x, 0) {
		return Config{}, fmt.Errorf("D/S %v must be > 0", x)
	}
	d0, s0, slo0 := scenario.Delay, scenario.Service.Mean, scenario.SLO
	if !(s0 > 0) || !(d0 > 0) {
		return Config{}, fmt.Errorf("E3 needs the scenario's delay and service mean > 0 (D = %v µs, S = %v µs)", d0, s0)
	}
	c := scenario
	switch axis {
	case AxisDelay:
		c.Delay = x * s0
	case AxisService:
		c.Service.Mean = d0 / x
	case AxisProduct:
		c.Delay, c.Service.Mean = math.Sqrt(x*d0*s0), math.Sqrt(d0*s0/x)
	case AxisUnloaded:
		c.Service.Mean = (2*d0 + s0) / (2*x + 1)
		c.Delay = x * c.Service.Mean
	}
	d, sv := c.Delay, c.Service.Mean
	switch rule {
	case SLOFixed:
	case SLORoundTrip:
		c.SLO = slo0 + 2*(d-d0)
	case SLORoundTripHop:
		c.SLO = slo0 + 4*(d-d0)
	case SLOSlack:
		c.SLO = 2*d + (slo0-2*d0)/s0*sv
	case SLOSlowdown:
		c.SLO = slo0 / s0 * sv
	case SLOUnloaded:
		c.SLO = slo0 * (2*d + sv) / (2*d0 + s0)
	}
	switch burst {
	case BurstService:
		c.Burst.MeanOn = scenario.Burst.MeanOn * sv / s0
	case BurstDelay:
		c.Burst.MeanOn = scenario.Burst.MeanOn * d / d0
	}
	return c, nil
}

// E3Rules resolves the sweep's axis, SLO rule and burst rule (defaults
// filled in) and refuses unknown names.
func (w Sweep) E3Rules() (E3Axis, E3SLO, E3Burst, error) {
	axis, rule, burst := w.E3Axis, w.E3SLO, w.E3Burst
	if axis == "" {
		axis = AxisDelay
	}
	if rule == "" {
		rule = axis.DefaultSLO()
	}
	if burst == "" {
		burst = BurstFixed
	}
	if !slices.Contains(E3Axes(), axis) {
		return "", "", "", fmt.Errorf("E3 axis %q: want one of %s", axis, NameList(E3Axes()))
	}
	if !slices.Contains(E3SLOs(), rule) {
		return "", "", "", fmt.Errorf("E3 SLO rule %q: want one of %s", rule, NameList(E3SLOs()))
	}
	if !slices.Contains(E3Bursts(), burst) {
		return "", "", "", fmt.Errorf("E3 burst rule %q: want one of %s", burst, NameList(E3Bursts()))
	}
	return axis, rule, burst, nil
}

// NameList joins names with commas, for help texts and errors.
func NameList[T ~string](xs []T) string {
	ss := make([]string, len(xs))
	for i, x := range xs {
		ss[i] = string(x)
	}
	return strings.Join(ss, ", ")
}

// Choice is one documented structural choice of a named scenario.
type Choice struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Fitted is a value of a scenario that was chosen by looking at results:
// what it is and which result it was chosen for. Seed figures that depend
// on it never count as reproduced.
type Fitted struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	ChosenFor string `json:"chosen_for"`
	// Affects are the prefixes of the seed figures that depend on it
	// (empty: every figure).
	Affects []string `json:"affects,omitempty"`
}

// NamedScenario is a named set of structural choices: the Config every
// experiment starts from (with its Sweep), the reasons for each choice and
// the values chosen by looking at results (none for a reproduction).
type NamedScenario struct {
	Name    string   `json:"name"`
	Summary string   `json:"summary"`
	Config  Config   `json:"config"`
	Choices []Choice `json:"choices"`
	Fitted  []Fitted `json:"fitted"`
}

// Scenario names.
const (
	ScenarioPooled = "pooled"
	ScenarioStudy  = "study"
	// ScenarioStudyBurst is the exploration the study scenario replaced:
	// bursts common to every host and a forwarding hop limit, both chosen
	// by looking at results, kept to show what they did.
	ScenarioStudyBurst = "study-burst"
)

// Scenarios returns the named scenarios, the default (pooled) first.
func Scenarios() []NamedScenario {
	out := []NamedScenario{pooledScenario(), studyScenario(), studyBurstScenario()}
	for i := range out {
		if out[i].Fitted == nil {
			out[i].Fitted = []Fitted{} // "none", printed as an empty list
		}
	}
	return out
}

// ScenarioNames lists the names Scenarios returns.
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	return out
}

// LookupScenario returns the named scenario ("" is the default, pooled).
func LookupScenario(name string) (NamedScenario, error) {
	if name == "" {
		name = ScenarioPooled
	}
	for _, s := range Scenarios() {
		if s.Name == strings.ToLower(name) {
			return s, nil
		}
	}
	names := ScenarioNames()
	sort.Strings(names)
	return NamedScenario{}, fmt.Errorf("unknown scenario %q (want %s)", name, strings.Join(names, " or "))
}

func pooledScenario() NamedScenario {
	return NamedScenario{
		Name:    ScenarioPooled,
		Summary: "the default: hosts pool their cores in one shared queue; H2 renewal arrivals CV 2; lognormal service σ = 1",
		Config:  Scenario(),
		Choices: []Choice{
			{"binding granularity", "host (one FCFS queue shared by a host's 8 cores)", "the model of decision 14: a server of set_pool is a host"},
			{"arrivals", "renewal, balanced-means H2, CV 2.0", "inside the study's CV 1.0–2.5, fixed a priori; splitting a renewal stream over hosts thins it towards Poisson"},
			{"service", "lognormal, mean 5 µs, σ = 1 (CV 1.31)", "a heavy-tailed µs RPC inside 1–10 µs, fixed a priori"},
			{"SLO", "50 µs end to end (2D included), judged per request", "a request is late when ingress → reply back exceeds 50 µs"},
			{"E3 axis", "D = x·S at S = 5 µs; SLO = 50 µs + 2(D − 4.5 µs)", "D hurts only through stale state, detours and credit round trips"},
			{"gateway", "one software dispatcher for all 128 cores", "the whole cluster behind one gateway"},
		},
	}
}

// StudyArrivalCV is the study scenario's per-flow arrival CV: the top of
// the study's CV 1.0–2.5 (study §1), the value its own burst example
// carries (a CV 2.5 micro-burst builds a local queue).
const StudyArrivalCV = 2.5

func studyScenario() NamedScenario {
	c := Scenario()
	c.Granularity = GranularityRSS
	c.ArrivalCV = StudyArrivalCV
	c.FlowsPerCore = 1
	c.StaleReports = true
	c.ForwardOneWay = true
	c.ForwardHops = ForwardUnlimited
	c.Sweep = Sweep{
		E2Granularity:   GranularityHost,
		T40bGranularity: GranularityHost,
		E3Axis:          AxisService,
		E3SLO:           SLOFixed,
		TunedJBSQ:       true,
		TTLChoices:      []Ingress{Random, P2C},
		TTLMode:         TTLCredit,
		TTLs:            []float64{25, 50, 100, 200},
		TTLFaults:       []TTLFault{LossFault(0.001), LossFault(0.01), StallFault(2000, 100)},
	}
	return NamedScenario{
		Name: ScenarioStudy,
		Summary: "the late-binding study's documented model: one renewal flow of CV 2.5 per core, hashed to its core (the random baseline); " +
			"early binding onto per-core queues, late binding onto host queues; stale load reports; forwarding at D per move, no hop limit; " +
			"E3 at D = 4.5 µs and SLO 50 µs with S = D/x; a centralized gateway; nothing chosen by looking at results",
		Config: c,
		Choices: []Choice{
			{"arrivals", fmt.Sprintf("128 flows (one per core), each an H2 renewal process of CV %.1f and rate λ/128", StudyArrivalCV),
				"study §1: arrival CV 1.0–2.5, its burst example at 2.5; the CV is a flow's (a per-request split of one stream would thin every queue to Poisson)"},
			{"random baseline", "a request goes where its flow hashes: flow f to core f (early binding), or to that core's host",
				"study §4: \"random hash\" placement"},
			{"binding granularity", "rss: an early-bound request lands on one core's queue (no stealing); a late-bound request is bound to a host (credits and tokens per host) and taken by its first free core",
				"a host's NIC hashes a flow onto one core queue; a late-binding runtime pulls from one host queue"},
			{"service", "lognormal, mean 5 µs, σ = 1 (CV 1.31)", "study §1: 1–10 µs; the tail is the pooled scenario's, fixed before the study was read"},
			{"load reports", "p2c and JSW read the last report (every 10 µs, arriving D later) as it is: no correction for what the ingress sent since",
				"study §4: state goes stale very fast at µs scale"},
			{"forwarding", "a core with a request waiting sends a new one on to a random core of another host, again at every busy queue, no hop limit; each move costs D",
				"study §6: each move pays a one-way D"},
			{"SLO", "50 µs end to end (2D included), judged per request", "study §1: p99 ≤ 50 µs"},
			{"E2", "granularity host, m = 1 … 16, the same 128 flows", "study §5: 128 cores split m per host"},
			{"E3", "D = 4.5 µs and SLO 50 µs fixed; S = D/x for x = 0.45 … 4 (S within 1–10 µs)", "study §1 and §6: D ≈ 4.5 µs, SLO 50 µs, D/s up to 4"},
			{"JBSQ(n*)", "n* = the bound with the fewest violations, chosen on seeds disjoint from the scored ones; the Little bound beside it",
				"the study's n* is tuned (§4, §6); tuning on the scored seeds would score the tuning"},
			{"gateway", "one software dispatcher for all 128 cores, 2 messages per request (request, completion) at 200–500 ns each",
				"study §7: a centralized software gateway"},
			{"T40b", "granularity host: a connection is pinned to a host; request-level credits at n*", "a connection's 5-tuple hashes to a host"},
			{"TTL ablation", "JBSQ/random and JBSQ/p2c; per-credit expiry at 25–200 µs; lost notifications 0.1 % and 1 %, host stalls 100 µs every 2 ms: 12 cells per choice",
				"the study's 12 random and 12 p2c cells (§4); a cell counts when no TTL is worse by a one-sided Mann–Whitney U test, p < 0.05"},
		},
	}
}

// studyBurstScenario is the exploration: the study scenario with one
// aggregate arrival stream (CV 1.5, split per request) modulated by
// bursts common to every host, the ingress's correction of stale reports,
// forwarding at 2D per hop up to 8 hops and E3 moving D with the SLO
// keeping the round trip and one hop; three of its values were chosen by
// looking at results and are listed as such.
func studyBurstScenario() NamedScenario {
	st := studyScenario()
	c := st.Config
	c.ArrivalCV = 1.5
	c.FlowsPerCore = 0
	c.Burst = Burst{Factor: 1.25, OnFraction: 0.3, MeanOn: 100}
	c.StaleReports = false
	c.ForwardOneWay = false
	c.ForwardHops = 8
	c.Sweep.E3Axis, c.Sweep.E3SLO = AxisDelay, SLORoundTripHop
	c.Sweep.GatewayHosts = 1
	return NamedScenario{
		Name:    ScenarioStudyBurst,
		Summary: "exploration, not a reproduction: the study scenario as it was before issue 25 (common bursts, corrected reports, 2D forwarding up to 8 hops, E3 moving D, a gateway per host)",
		Config:  c,
		Choices: []Choice{
			{"arrivals", "one H2 renewal stream of CV 1.5 split per request, time-changed by bursts ×1.25 for 30 % of the time, mean on-period 100 µs, common to every host", "an exploration of bursts the study does not describe"},
			{"load reports", "p2c and JSW add what they sent since the last report", "a correction the study does not make"},
			{"forwarding", "2D per hop (host → switch → host), up to 8 hops", "the ≈2D reading of the study's Figure 1"},
			{"E3", "D = x·S at S = 5 µs; SLO = 50 µs + 4(D − 4.5 µs)", "the axis a structural search picked against the study's D/S = 4 figures"},
			{"gateway", "one dispatcher core per host", "a host-local software dispatcher"},
		},
		Fitted: []Fitted{
			{Name: "burst intensity", Value: "×1.25 for 30 % of the time, mean on 100 µs", ChosenFor: "E1's late binding above 2 % without pushing it past the early-binding tier"},
			{Name: "forwarding hop limit", Value: "8", ChosenFor: "forwarding losing to random on E3 (with one hop it never did)", Affects: []string{"E1 ", "E3 "}},
			{Name: "E3 SLO rule", Value: "SLO = 50 + 4(D − 4.5) µs", ChosenFor: "E3's three D/S = 4 figures (the closest of 147 combinations)", Affects: []string{"E3 "}},
			{Name: "gateway per host", Value: "1 core per 8-core host", ChosenFor: "the gateway cliff near ρ ≈ 0.65 (a centralized gateway gives 0.04–0.10)", Affects: []string{"gateway"}},
		},
	}
}

// TTLFault is one fault of the TTL ablation.
type TTLFault struct {
	// NotifyLoss is the probability a completion notification is lost.
	NotifyLoss float64 `json:"notify_loss,omitempty"`
	// Stall pauses hosts.
	Stall Stall `json:"stall,omitempty"`
}

// LossFault loses completion notifications with probability p.
func LossFault(p float64) TTLFault { return TTLFault{NotifyLoss: p} }

// StallFault pauses each host for duration µs every interval µs on average.
func StallFault(interval, duration float64) TTLFault {
	return TTLFault{Stall: Stall{Interval: interval, Duration: duration}}
}

// Name describes the fault.
func (f TTLFault) Name() string {
	if f.Stall.Interval > 0 {
		return fmt.Sprintf("host stalls %g µs / %g ms", f.Stall.Duration, f.Stall.Interval/1000)
	}
	return fmt.Sprintf("lost notifications %g %%", 100*f.NotifyLoss)
}

func (f TTLFault) apply(c *Config) {
	c.NotifyLoss = f.NotifyLoss
	c.Stall = f.Stall
}

// describeService renders a service spec for a scenario line.
func describeService(s dist.ServiceSpec) string {
	out := string(s.Kind)
	if s.Kind == dist.ServiceLognormal {
		sigma := s.Sigma
		if sigma == 0 {
			sigma = 1
		}
		out += fmt.Sprintf(" σ=%g", sigma)
	}
	return out
}
