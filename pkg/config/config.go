// Package config is the p4ctl controller configuration: the YAML file that
// names the switches to drive, the regions and their next hops (a local server
// pool or a remote gateway), the client sites with their latency profiles, the
// SLA and execution classes, the routing policy, the carbon source, the
// recompute schedule and plain L2/L3 routes.
//
// Load reads and validates a file; every problem is reported before anything
// touches a switch, as "file:line: yaml.path: what is wrong". docs/CONFIG.md
// documents every field. The YAML is decoded with sigs.k8s.io/yaml (json
// tags); go.yaml.in/yaml/v3 is only used to find the line of a YAML path.
package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Config is a whole controller configuration file.
type Config struct {
	// Targets are the switches this controller drives (P4Runtime servers).
	Targets []Target `json:"targets,omitempty"`
	// Regions are the cloud regions requests may be routed to, each with
	// its data-plane index (bit in the feasibility bitmap) and next hop.
	Regions []Region `json:"regions"`
	// Sites are the client sites: source prefixes and latency profiles.
	Sites []Site `json:"sites"`
	// SLAClasses are the request classes (SLA budget in ms and traffic
	// share); the compiled tables cover every SLA value, the classes drive
	// reports and the demo workload.
	SLAClasses []SLAClass `json:"sla_classes,omitempty"`
	// ExecClasses fill exec_class_cost: expected service time per class.
	ExecClasses []ExecClass `json:"exec_classes,omitempty"`
	// Policy is the region-selection policy compiled into the tables.
	Policy Policy `json:"policy"`
	// Carbon selects where hourly carbon intensity comes from.
	Carbon Carbon `json:"carbon"`
	// Schedule says when the controller recomputes (real time or replay).
	Schedule Schedule `json:"schedule,omitzero"`
	// Routes are plain forwarding entries for non-p4ctl traffic and replies.
	Routes Routes `json:"routes,omitzero"`
	// Latency says whether and how the controller learns latency from the
	// data plane (default: static profiles only).
	Latency LatencyLearning `json:"latency,omitzero"`

	// Dir is the directory of the file the configuration was loaded from;
	// relative paths in it are resolved against Dir ("" = working dir).
	Dir string `json:"-"`
}

// Target is one P4Runtime switch.
type Target struct {
	// Name identifies the target in logs and metrics; unique.
	Name string `json:"name"`
	// GRPCAddr is host:port of the P4Runtime server.
	GRPCAddr string `json:"grpc_addr"`
	// DeviceID is the P4Runtime device id.
	DeviceID uint64 `json:"device_id"`
	// ElectionID is the election id: a number (the low 64 bits) or
	// HIGH,LOW; ≥ 1. Replicas of one controller use distinct values
	// (command-line flag).
	ElectionID ElectionID `json:"election_id"`
	// TLS, when set, enables TLS (and mTLS when Cert and Key are set).
	TLS *TLS `json:"tls,omitempty"`
	// Arch is the P4 architecture of the target's program: v1model (BMv2,
	// the embedded switch; the default) or tna (Tofino). The controller
	// refuses pools a target's architecture cannot run.
	Arch string `json:"arch,omitempty"`
	// Sites, when set, are the names of the sites this switch serves (an
	// edge switch sees the clients of its own location): its tables hold
	// those sites only, and a request from another site misses client_site
	// as one from an unknown source does. Empty: every site.
	Sites []string `json:"sites,omitempty"`
}

// TLS holds TLS file paths, relative to the config file's directory.
type TLS struct {
	// CA is the PEM bundle that verifies the switch's certificate.
	CA string `json:"ca,omitempty"`
	// Cert and Key are the client certificate and key for mTLS.
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
	// ServerName overrides the name checked in the switch certificate.
	ServerName string `json:"server_name,omitempty"`
}

// Region is a region the controller may route to.
type Region struct {
	// ID is the catalog id, e.g. "ap-south-1".
	ID string `json:"id"`
	// Index is the region's data-plane index 0..31: its bit in the
	// feasibility bitmap and its key in region_next_hop/server_pool. It is
	// always the catalog index (pkg/regions); when given it must match.
	Index *int `json:"index,omitempty"`
	// Zone overrides the catalog's grid zone used to look up carbon.
	Zone string `json:"zone,omitempty"`
	// NextHop is where requests routed to the region go.
	NextHop NextHop `json:"next_hop"`
}

// NextHop is exactly one of Local or Remote.
type NextHop struct {
	// Local dispatches into a server pool attached to this switch.
	Local *LocalPool `json:"local,omitempty"`
	// Remote forwards toward the region's gateway.
	Remote *Remote `json:"remote,omitempty"`
}

// LocalPool is a region's server pool: contiguous server ids, a power-of-two
// count, the first id a multiple of min(count, 4) (docs/PIPELINE.md "Pool
// layout").
type LocalPool struct {
	// Servers are the pool's servers.
	Servers []Server `json:"servers"`
	// Policy is the dispatch policy: random, p2c, p2c-work, jbsq, jiq.
	Policy string `json:"policy"`
	// Bound is JBSQ's n: a server takes a request only while it has fewer
	// than Bound outstanding (0 = unbounded; jiq always uses 1).
	Bound int `json:"bound,omitempty"`
	// Tune, instead of Bound (policy jbsq only), has the controller choose
	// the bound by simulation when it loads the configuration: the
	// smallest n meeting the SLO target, as `p4ctl tune jbsq` computes it
	// for this pool's server count (research/tuning resolves it into Bound).
	Tune *PoolTune `json:"tune,omitempty"`
	// MaxHolds is how many times an unbindable request is recirculated.
	MaxHolds int `json:"max_holds,omitempty"`
	// OnFull is what happens after MaxHolds: "nack" (default) or "force".
	OnFull string `json:"on_full,omitempty"`
	// CreditTTL expires a server's credit not moved for this long (0 =
	// never). The data plane counts in ticks: a credit expires between
	// credit_ttl and 2.6 × credit_ttl after its last bind or release
	// (pipeline.CreditTickFor).
	CreditTTL Duration `json:"credit_ttl,omitzero"`
	// LongReserve slots stay free for short requests (bounded preemption).
	LongReserve int `json:"long_reserve,omitempty"`
	// LongMaxHolds bounds how long a long request waits for the reserve.
	LongMaxHolds int `json:"long_max_holds,omitempty"`
	// Capacity is the region's outstanding-request capacity (0 = unlimited);
	// a full region is masked out of the feasible set (spill).
	Capacity int64 `json:"capacity,omitempty"`
}

// PoolTune describes a pool's workload for choosing its JBSQ bound by
// simulation (`p4ctl tune jbsq`, whose flags the fields mirror; hosts are
// the pool's servers). Zero fields take the tune command's defaults
// (DefaultTune* below; TuneOrDefault fills them, except Seeds and
// Requests, whose defaults belong to the simulator).
type PoolTune struct {
	// CoresPerServer is m, the cores behind each server's one FCFS queue.
	CoresPerServer int `json:"cores_per_server,omitempty"`
	// Load is the offered load ρ in (0, 1).
	Load float64 `json:"load,omitempty"`
	// ArrivalCV is the coefficient of variation of inter-arrival times.
	ArrivalCV float64 `json:"arrival_cv,omitempty"`
	// Service is the service-time distribution: fixed, exp, bimodal or
	// lognormal.
	Service string `json:"service,omitempty"`
	// ServiceMean is the mean service time S (µs resolution or finer).
	ServiceMean Duration `json:"service_mean,omitzero"`
	// Sigma is σ of ln(service time) for lognormal service.
	Sigma float64 `json:"sigma,omitempty"`
	// BimodalP and BimodalRatio shape bimodal service: the probability of
	// a long request and the long/short time ratio.
	BimodalP     float64 `json:"bimodal_p,omitempty"`
	BimodalRatio float64 `json:"bimodal_ratio,omitempty"`
	// Delay is the one-way network delay D between switch and server; nil
	// takes the default (0 is a valid delay, so it is a pointer).
	Delay *Duration `json:"delay,omitempty"`
	// SLO is the end-to-end latency objective.
	SLO Duration `json:"slo,omitzero"`
	// Target is the largest acceptable SLO violation rate, in (0, 1).
	Target float64 `json:"target,omitempty"`
	// Seed is the first simulation seed; the same seed gives the same bound.
	Seed uint64 `json:"seed,omitempty"`
	// Seeds and Requests size the simulation: seeds per bound and measured
	// requests per run (0 = the tune command's 3 × 100 000).
	Seeds    int `json:"seeds,omitempty"`
	Requests int `json:"requests,omitempty"`
}

// Defaults of PoolTune: those of `p4ctl tune jbsq` (research/sim/micro's
// Scenario and TuneJBSQ; research/tuning's tests keep them equal).
const (
	DefaultTuneCoresPerServer = 8
	DefaultTuneLoad           = 0.85
	DefaultTuneArrivalCV      = 2.0
	DefaultTuneService        = "lognormal"
	DefaultTuneServiceMean    = 5 * time.Microsecond
	DefaultTuneSigma          = 1.0
	DefaultTuneBimodalP       = 0.1
	DefaultTuneBimodalRatio   = 10.0
	DefaultTuneDelay          = 4500 * time.Nanosecond
	DefaultTuneSLO            = 50 * time.Microsecond
	DefaultTuneTarget         = 0.05
	DefaultTuneSeed           = 1
)

// TuneOrDefault returns t with every unset field at its default.
func (t PoolTune) TuneOrDefault() PoolTune {
	if t.CoresPerServer == 0 {
		t.CoresPerServer = DefaultTuneCoresPerServer
	}
	if t.Load == 0 {
		t.Load = DefaultTuneLoad
	}
	if t.ArrivalCV == 0 {
		t.ArrivalCV = DefaultTuneArrivalCV
	}
	if t.Service == "" {
		t.Service = DefaultTuneService
	}
	if t.ServiceMean.Duration == 0 {
		t.ServiceMean.Duration = DefaultTuneServiceMean
	}
	if t.Sigma == 0 {
		t.Sigma = DefaultTuneSigma
	}
	if t.BimodalP == 0 {
		t.BimodalP = DefaultTuneBimodalP
	}
	if t.BimodalRatio == 0 {
		t.BimodalRatio = DefaultTuneBimodalRatio
	}
	if t.Delay == nil {
		t.Delay = &Duration{DefaultTuneDelay}
	}
	if t.SLO.Duration == 0 {
		t.SLO.Duration = DefaultTuneSLO
	}
	if t.Target == 0 {
		t.Target = DefaultTuneTarget
	}
	if t.Seed == 0 {
		t.Seed = DefaultTuneSeed
	}
	return t
}

// Server is one server of a local pool.
type Server struct {
	// ID is the server id 0..1023 (register index, server_endpoint key).
	ID int `json:"id"`
	// Port is the switch egress port (9 bits).
	Port int `json:"port"`
	// MAC and IP are written into requests bound to the server; replies
	// must come from IP.
	MAC MAC  `json:"mac"`
	IP  IPv4 `json:"ip"`
}

// Remote is a region reached through a gateway. Capacity is passed to
// forward_remote but the current program does not use it (only local pools
// count outstanding requests).
type Remote struct {
	Port     int   `json:"port"`
	MAC      MAC   `json:"mac"`
	IP       IPv4  `json:"ip"`
	Capacity int64 `json:"capacity,omitempty"`
}

// Site is a client site.
type Site struct {
	// Name is unique; it names the site in reports.
	Name string `json:"name"`
	// ID is the site id 1..65535 written into requests (0 = unknown site).
	ID int `json:"id"`
	// Prefixes are the site's source IPv4 prefixes (client_site LPM).
	Prefixes []Prefix `json:"prefixes"`
	// Profile names a built-in latency profile (e.g. "mumbai").
	Profile string `json:"profile,omitempty"`
	// Latency gives or overrides per-region latency, keyed by region id.
	Latency map[string]Latency `json:"latency,omitempty"`
}

// Latency is a site's measured latency to one region.
type Latency struct {
	// P95 is the P95 round-trip time in ms.
	P95 float64 `json:"p95_ms"`
	// Cold is the first-invocation (cold start) latency in ms; nil when
	// not measured (policy C+ then applies the catalog's documented rule).
	Cold *float64 `json:"cold_ms,omitempty"`
}

// SLAClass is a request class.
type SLAClass struct {
	Name string `json:"name"`
	// MS is the SLA budget in milliseconds, 1..65535.
	MS int `json:"ms"`
	// Share is the class's fraction of traffic; shares sum to 1.
	Share float64 `json:"share"`
}

// ExecClass is an execution-time class (exec_class_cost).
type ExecClass struct {
	// ID is the class id 0..255 carried in the request header.
	ID int `json:"id"`
	// Name is optional, for reports.
	Name string `json:"name,omitempty"`
	// CostUS is the expected service time in µs.
	CostUS int64 `json:"cost_us"`
	// Long marks the class as long work (bounded preemption applies).
	Long bool `json:"long,omitempty"`
}

// Policy names.
const (
	PolicyA     = "A"     // nearest region
	PolicyB     = "B"     // lowest carbon, ignoring the SLA
	PolicyC     = "C"     // lowest carbon among regions with P95 ≤ SLA, else nearest
	PolicyCPlus = "C+"    // as C with P95 + α·cold ≤ SLA
	PolicyD     = "D"     // weighted carbon/latency score per site
	PolicyCCap  = "C-cap" // C; full regions spill (capacities from next hops)
)

// Policy selects and parameterises region selection.
type Policy struct {
	// Name is A, B, C, C+, D or C-cap.
	Name string `json:"name"`
	// Alpha weighs the cold-start latency in C+ (default 0.8).
	Alpha *float64 `json:"alpha,omitempty"`
	// Weight is D's carbon weight w in w·C + (1−w)·L (default 0.5).
	Weight *float64 `json:"weight,omitempty"`
	// ColdMissing is what C+ does with a region whose profile has no cold
	// latency: "exclude" (default: never feasible) or "warm" (no penalty).
	ColdMissing string `json:"cold_missing,omitempty"`
	// Hysteresis, when set, makes the carbon ranking hysteretic (B, C, C+,
	// C-cap): a region overtakes another only when it is cleaner by
	// MinGain and the other has held its place MinHold; nil (the default)
	// ranks by each hour's carbon alone.
	Hysteresis *Hysteresis `json:"hysteresis,omitempty"`
}

// Hysteresis configures the hysteretic carbon ranking
// (regions.Hysteresis, docs/ARCHITECTURE.md decision 42). Unset fields take
// the defaults of regions.DefaultHysteresis.
type Hysteresis struct {
	// MinGain is how much cleaner a region must be to overtake another:
	// "10%" of the other's value, or an absolute "50g/kWh".
	MinGain *regions.Gain `json:"min_gain,omitempty"`
	// MinHold is how long a region keeps a place it moved up to before
	// another may overtake it; whole hours, 0 = no hold.
	MinHold *Duration `json:"min_hold,omitempty"`
	// Horizon ranks by the mean of the next Horizon hours of forecast
	// (1h: the current hour only); whole hours.
	Horizon *Duration `json:"horizon,omitempty"`
}

// Default policy parameters.
const (
	DefaultAlpha  = 0.8
	DefaultWeight = 0.5
)

// AlphaOrDefault returns Alpha, or DefaultAlpha when unset.
func (p Policy) AlphaOrDefault() float64 {
	if p.Alpha == nil {
		return DefaultAlpha
	}
	return *p.Alpha
}

// WeightOrDefault returns Weight, or DefaultWeight when unset.
func (p Policy) WeightOrDefault() float64 {
	if p.Weight == nil {
		return DefaultWeight
	}
	return *p.Weight
}

// Carbon source kinds.
const (
	SourceOffline            = "offline"             // built-in synthetic model, no files
	SourceCSV                = "csv"                 // normalized CSV files: timestamp_utc,zone,gco2_per_kwh
	SourceElectricityMapsCSV = "electricitymaps-csv" // Electricity Maps data-portal hourly CSVs
	SourceElectricityMapsAPI = "electricitymaps-api" // Electricity Maps API v3
	SourceWattTimeAPI        = "watttime-api"        // WattTime API v3
)

// Carbon selects the carbon-intensity source.
type Carbon struct {
	// Source is offline, csv, electricitymaps-csv, electricitymaps-api or
	// watttime-api.
	Source string `json:"source"`
	// Seed makes the offline model's day-to-day noise reproducible.
	Seed uint64 `json:"seed,omitempty"`
	// Dir holds CSV traces (csv, electricitymaps-csv), relative to the
	// config file's directory.
	Dir string `json:"dir,omitempty"`
	// Signal is what the numbers are: "lca" (default: average, lifecycle)
	// or "direct" (average, direct emissions) for Electricity Maps data and
	// CSV traces of it; "marginal" for WattTime's MOER (watttime-api, where
	// it is the default and the only value) or CSV traces of marginal
	// rates.
	Signal string `json:"signal,omitempty"`
	// Fill is what to do with missing hours in traces: "none" (default:
	// an error), "previous" or "linear".
	Fill string `json:"fill,omitempty"`
	// URL overrides the API base URL (tests point it at a local server).
	URL string `json:"url,omitempty"`
	// TokenEnv names the environment variable holding the API token.
	TokenEnv string `json:"token_env,omitempty"`
	// TokenFile is a file holding the API token (relative to the config).
	// With both set, TokenEnv wins when the variable is set and not empty.
	// For watttime-api the token is the account password.
	TokenFile string `json:"token_file,omitempty"`
	// Username is the WattTime account name (watttime-api only; not a
	// secret: the password comes from TokenEnv or TokenFile).
	Username string `json:"username,omitempty"`
	// WattTimeRegions overrides the built-in zone → WattTime region map
	// (pkg/carbonapi), e.g. {"US-MIDA-PJM": "PJM_NJ"}; watttime-api
	// only.
	WattTimeRegions map[string]string `json:"watttime_regions,omitempty"`
	// StalenessBound is how old the newest value may be before the safe
	// policy applies (last known value, then latency-only). Default 3h.
	StalenessBound Duration `json:"staleness_bound,omitzero"`
}

// DefaultStalenessBound applies when Carbon.StalenessBound is zero.
const DefaultStalenessBound = 3 * time.Hour

// Schedule modes.
const (
	ScheduleHourly = "hourly" // real time: recompute at each hour (+ jitter)
	ScheduleReplay = "replay" // replay a trace from Replay.Start at Replay.Speed
)

// Schedule says when the controller recomputes the plan.
type Schedule struct {
	// Mode is hourly (default) or replay.
	Mode string `json:"mode,omitempty"`
	// Jitter delays each hourly recompute by a random amount up to Jitter,
	// so a fleet of controllers does not hit the API at the same second.
	Jitter Duration `json:"jitter,omitzero"`
	// Replay configures replay mode.
	Replay *Replay `json:"replay,omitempty"`
}

// Replay runs the schedule over a trace, faster than real time.
type Replay struct {
	// Start is the first replayed hour (RFC 3339, UTC).
	Start time.Time `json:"start"`
	// Speed is the replay speed factor (3600 = one hour per second).
	Speed float64 `json:"speed"`
	// Hours is how many hours to replay (0 = until stopped).
	Hours int `json:"hours,omitempty"`
}

// Routes are plain forwarding entries.
type Routes struct {
	L3 []L3Route `json:"l3,omitempty"`
	L2 []L2Route `json:"l2,omitempty"`
}

// L3Route forwards (or drops) IPv4 traffic to Prefix.
type L3Route struct {
	Prefix Prefix `json:"prefix"`
	// Port is the egress port; ignored when Drop.
	Port int  `json:"port,omitempty"`
	Drop bool `json:"drop,omitempty"`
}

// L2Route forwards (or drops) non-IPv4 frames to MAC.
type L2Route struct {
	MAC  MAC  `json:"mac"`
	Port int  `json:"port,omitempty"`
	Drop bool `json:"drop,omitempty"`
}

// WithSites returns a shallow copy of c that holds only the named sites, in
// configuration order, and their indices in c.Sites: the configuration an
// edge switch serving those sites is compiled from (targets[].sites).
func (c *Config) WithSites(names []string) (*Config, []int, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := *c
	out.Sites = make([]Site, 0, len(want))
	var at []int
	for i, s := range c.Sites {
		if want[s.Name] {
			out.Sites = append(out.Sites, s)
			at = append(at, i)
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		return nil, nil, fmt.Errorf("unknown sites %s", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	return &out, at, nil
}

// Target returns the configured target named name.
func (c *Config) Target(name string) (Target, bool) {
	for _, t := range c.Targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}
