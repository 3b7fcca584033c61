// Package demo is `p4ctl demo`: the whole product on one machine with no
// switch, no root and no API key. It starts the embedded switch with its
// P4Runtime server in-process, runs the controller (pkg/controller) in
// replay over a day of the configured carbon source, drives the mixed SLA
// workload through the data plane with simulated servers answering, and
// reports per hour what the controller wrote and where requests went —
// read back from the switch's counters over P4Runtime and checked against
// what pkg/regions' policy decides for the same requests.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Defaults.
const (
	DefaultHours           = 24
	DefaultRequestsPerHour = 5000 // the paper's mixed run: 5000 requests
	DefaultSpeed           = 3 * 3600
	DefaultGrace           = 10 * time.Millisecond
)

// PaperClasses are the paper's SLA classes and mixed-traffic shares, used
// when the configuration has no sla_classes.
var paperClasses = []config.SLAClass{
	{Name: "300ms", MS: 300, Share: 0.2}, {Name: "500ms", MS: 500, Share: 0.3}, {Name: "800ms", MS: 800, Share: 0.2},
	{Name: "1000ms", MS: 1000, Share: 0.2}, {Name: "3000ms", MS: 3000, Share: 0.1},
}

// Options configure a demo run.
type Options struct {
	// Config is a validated configuration; ConfigName names it in output.
	Config     *config.Config
	ConfigName string
	// Start is the first replayed hour (default: the schedule's replay
	// start, else the carbon source's first hour).
	Start time.Time
	// Hours replayed (default 24) and requests sent per hour (default 5000).
	Hours           int
	RequestsPerHour int
	// Speed is the replay speed factor (3600 = one hour per second; 0 =
	// as fast as the work allows).
	Speed float64
	// Seed draws the workload.
	Seed uint64
	// Grace is the controller's grace period before deleting an old
	// generation (default 10 ms: the embedded target holds a packet's whole
	// pass under one lock, so nothing is in flight across a write).
	Grace time.Duration
	// EnergyPerRequestWh is the assumed energy of a request for the gCO2
	// estimate (default controller.DefaultEnergyPerRequestWh).
	EnergyPerRequestWh float64
	// GRPCAddr serves the switch's P4Runtime on this loopback address
	// instead of in memory (then `p4ctl get` can watch it).
	GRPCAddr string
	// OnStart is called once the switch and controller are up, with the
	// run's description filled in; OnHour after each hour (for streaming
	// output); Progress with hours done and total.
	OnStart  func(*Result)
	OnHour   func(Hour)
	Progress func(done, total int)
	// Log receives the controller's log (default: discarded).
	Log *slog.Logger
	// Drift, when set, runs the latency-drift episode mid-run (real time,
	// about 15 s): the closed latency loop, measured and checked. The
	// configuration's latency block is used when it learns, DemoLatency
	// otherwise. OnDriftStart is called when it starts (with its target),
	// OnMoment with each moment as it happens.
	Drift        *DriftOptions
	OnDriftStart func(*DriftReport)
	OnMoment     func(Moment)
}

// Counts are what an hour and the totals both report.
type Counts struct {
	Writes int `json:"entries_written"`
	// Requests sent; Routed by region as read back from the switch's
	// region_routed counter; Predicted by region from pkg/regions.
	Requests  int            `json:"requests"`
	Routed    map[string]int `json:"routed"`
	Predicted map[string]int `json:"predicted"`
	// CountersMatch: Routed == Predicted; HeaderMismatches counts requests
	// whose region (in the header the switch wrote) differs from the
	// prediction.
	CountersMatch    bool `json:"counters_match"`
	HeaderMismatches int  `json:"header_mismatches"`
	// Estimated grams of the routed requests and of the nearest-region
	// baseline, and the saving.
	GCO2         float64 `json:"gco2_grams"`
	BaselineGCO2 float64 `json:"baseline_gco2_grams"`
	SavingPct    float64 `json:"saving_pct"`
	// SLAViolations: requests routed to a region whose P95 from the site
	// exceeds the SLA; Fallbacks: nothing was feasible (nearest region).
	SLAViolations int `json:"sla_violations"`
	Fallbacks     int `json:"fallbacks"`
	// Nacks counts every nack of the run: the hourly traffic's and, in
	// the totals, the latency-drift episode's (DriftNacks of them).
	Nacks      int `json:"nacks"`
	DriftNacks int `json:"drift_nacks,omitempty"`
}

// add sums c into t (Routed and Predicted by region).
func (t *Counts) add(c Counts) {
	t.Requests += c.Requests
	t.Writes += c.Writes
	t.GCO2 += c.GCO2
	t.BaselineGCO2 += c.BaselineGCO2
	t.SLAViolations += c.SLAViolations
	t.Fallbacks += c.Fallbacks
	t.Nacks += c.Nacks
	t.HeaderMismatches += c.HeaderMismatches
	t.CountersMatch = t.CountersMatch && c.CountersMatch
	for r, v := range c.Routed {
		t.Routed[r] += v
	}
	for r, v := range c.Predicted {
		t.Predicted[r] += v
	}
}

// Hour is one replayed hour.
type Hour struct {
	Hour    time.Time `json:"hour"`
	Policy  string    `json:"policy"`
	Stale   bool      `json:"stale,omitempty"`
	Epoch   uint8     `json:"epoch"`
	Ranking []Ranked  `json:"ranking"`
	Counts
	// Mean intensity of the chosen regions and of the nearest-region
	// baseline (gCO2eq/kWh).
	MeanIntensity     float64 `json:"mean_gco2_per_kwh"`
	BaselineIntensity float64 `json:"baseline_gco2_per_kwh"`
}

// Ranked is one place of an hour's carbon ranking.
type Ranked struct {
	Region string  `json:"region"`
	GCO2   float64 `json:"gco2_per_kwh"`
}

// Result is the demo's summary.
type Result struct {
	Config       string `json:"config"`
	CarbonSource string `json:"carbon_source"`
	// Signal is what the carbon numbers are (average or marginal).
	Signal string `json:"signal"`
	// Hysteresis describes policy.hysteresis ("" when off).
	Hysteresis string    `json:"hysteresis,omitempty"`
	Policy     string    `json:"policy"`
	Switch     string    `json:"switch"`
	Start      time.Time `json:"start"`
	Speed      float64   `json:"speed"`
	EnergyWh   float64   `json:"energy_per_request_wh"`
	Hours      []Hour    `json:"hours"`
	Totals     Totals    `json:"totals"`
	Plots      []string  `json:"plots,omitempty"`
	// Drift is the latency-drift episode (Options.Drift).
	Drift       *DriftReport `json:"latency_drift,omitempty"`
	WallSeconds float64      `json:"wall_seconds"`
	// Interrupted says, when the run ended early (Ctrl-C, an error), after
	// how many of the hours asked for: the totals cover those hours.
	Interrupted string `json:"interrupted,omitempty"`

	streamed bool // the drift's moments were streamed (OnMoment): totals print only its summary
}

// Totals sum the hours.
type Totals struct {
	Counts
	StaleHours int `json:"stale_hours"`
}

// ErrMismatch is returned (with the full result) when the switch's counters
// or headers disagree with pkg/regions' decisions.
var ErrMismatch = errors.New("routed requests read back from the switch differ from what pkg/regions decides")

// ErrDrift is returned (with the full result) when the latency-drift
// episode's checks fail (DriftReport.Failed).
var ErrDrift = errors.New("the latency loop did not follow the drift")

// Run runs the demo.
func Run(ctx context.Context, o Options) (*Result, error) {
	wall := time.Now()
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("demo: no configuration")
	}
	if o.Hours <= 0 {
		o.Hours = DefaultHours
	}
	if o.RequestsPerHour <= 0 {
		o.RequestsPerHour = DefaultRequestsPerHour
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.Drift != nil {
		d := *o.Drift
		if d.AfterHour <= 0 || d.AfterHour > o.Hours {
			d.AfterHour = max(1, o.Hours/2)
		}
		o.Drift = &d
	}
	if o.EnergyPerRequestWh <= 0 {
		o.EnergyPerRequestWh = controller.DefaultEnergyPerRequestWh
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Drift != nil && !cfg.Latency.Learning() {
		c := *cfg
		c.Latency = DemoLatency()
		cfg = &c
	}
	src, err := cfg.OpenCarbon()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if o.Start.IsZero() {
		if r := cfg.Schedule.Replay; r != nil {
			o.Start = r.Start
		} else {
			o.Start = src.Period().From
		}
	}
	o.Start = o.Start.UTC().Truncate(time.Hour)
	classes := cfg.SLAClasses
	if len(classes) == 0 {
		classes = paperClasses
	}
	sites, err := cfg.RoutingSites()
	if err != nil {
		return nil, err
	}

	// The switch, its P4Runtime server, and the servers answering requests.
	emb, err := dataplane.Start(dataplane.Options{}, o.GRPCAddr)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer emb.Stop()
	traffic, err := NewTraffic(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer traffic.Serve(emb.Switch)()
	client, closeClient, err := emb.Client(p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer closeClient()
	swDesc := "embedded p4ctl switch, P4Runtime in memory (bufconn)"
	if emb.Addr() != "" {
		swDesc = "embedded p4ctl switch, P4Runtime on " + emb.Addr()
	}

	// The controller, in replay.
	clk, err := controller.NewReplayClock(o.Start, o.Speed)
	if err != nil {
		return nil, err
	}
	ctl, err := controller.New(controller.Options{Config: cfg, Feed: controller.NewCarbonFeed(src),
		Targets: []controller.Target{{Name: "embedded", Client: client}}, Clock: clk,
		Driver: controller.DriverOptions{Grace: o.Grace, EnergyPerRequestWh: o.EnergyPerRequestWh, Log: log}, Log: log})
	if err != nil {
		return nil, err
	}
	if err := ctl.Connect(ctx); err != nil {
		return nil, err
	}
	// The latency loop: digests in, learned latencies out; a change pushes
	// the current hour again at once (drift episode).
	var curHour atomic.Pointer[time.Time]
	var ep atomic.Pointer[drift]
	lctx, lstop := context.WithCancel(ctx)
	var lwg sync.WaitGroup
	defer func() { lstop(); lwg.Wait() }()
	lwg.Add(1)
	go func() {
		defer lwg.Done()
		ctl.RunLatency(lctx, func(ctx context.Context, chs []controller.LatencyChange) {
			push := func(ctx context.Context) (int, time.Duration, error) {
				at := curHour.Load()
				if at == nil {
					return 0, 0, nil
				}
				start := time.Now()
				_, reps, err := ctl.Step(ctx, *at)
				n := 0
				for _, r := range reps {
					n += r.Writes
				}
				return n, time.Since(start), err
			}
			if d := ep.Load(); d != nil {
				d.onChange(ctx, chs, push)
				return
			}
			_, _, _ = push(ctx)
		})
	}()
	pol, _ := cfg.RoutingPolicy()
	res := &Result{Config: o.ConfigName, CarbonSource: src.Describe(), Signal: cfg.CarbonSignal().Describe(), Policy: pol.String(), Switch: swDesc,
		Start: o.Start, Speed: o.Speed, EnergyWh: o.EnergyPerRequestWh,
		Totals: Totals{Counts: Counts{Routed: map[string]int{}, Predicted: map[string]int{}, CountersMatch: true}}}
	if h := cfg.RoutingHysteresis(); h != nil {
		res.Hysteresis = h.String()
	}
	if o.OnStart != nil {
		o.OnStart(res)
	}
	// However the run ends, the totals are those of the hours it ran.
	defer func() {
		res.Totals.SavingPct = saving(res.Totals.GCO2, res.Totals.BaselineGCO2)
		res.WallSeconds = time.Since(wall).Seconds()
		if len(res.Hours) < o.Hours {
			res.Interrupted = fmt.Sprintf("after %d of %d hours", len(res.Hours), o.Hours)
		}
	}()
	kwh := o.EnergyPerRequestWh / 1000
	prev := map[string]int{}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	execClass := uint8(0)
	if len(cfg.ExecClasses) > 0 {
		execClass = uint8(cfg.ExecClasses[0].ID)
	}
	var id uint32
	for h := range o.Hours {
		at := o.Start.Add(time.Duration(h) * time.Hour)
		if err := clk.SleepUntil(ctx, at); err != nil {
			return res, err
		}
		curHour.Store(&at)
		plan, reps, err := ctl.Step(ctx, at)
		if err != nil {
			return res, fmt.Errorf("demo: hour %s: %w", at.Format(time.RFC3339), err)
		}
		hr := Hour{Hour: at, Policy: plan.Effective.String(), Stale: plan.Stale, Epoch: reps[0].To, Ranking: ranking(cfg, plan),
			Counts: Counts{Writes: reps[0].Writes, Requests: o.RequestsPerHour, Predicted: map[string]int{}}}
		var sumI, sumB float64
		for range o.RequestsPerHour {
			id++
			cls := pickClass(rng, classes)
			site := rng.IntN(len(sites))
			out, err := Send(emb.Switch, traffic.Request(site, id, uint16(cls.MS), execClass))
			if err != nil {
				return res, fmt.Errorf("demo: request %d: %w", id, err)
			}
			d := plan.Decide(site, float64(cls.MS))
			hr.Predicted[regionName(d.Region)]++
			got := regions.Index(out.Header.Region)
			if got != d.Region {
				hr.HeaderMismatches++
			}
			if out.Verdict == program.Nacked {
				hr.Nacks++
			}
			if out.Header.Flags&wire.FlagFallback != 0 {
				hr.Fallbacks++
			}
			if p95, ok := sites[site].P95(got); !ok || p95 > float64(cls.MS) {
				hr.SLAViolations++
			}
			sumI += plan.Intensity(got)
			sumB += plan.Intensity(regions.Nearest(sites[site], cfg.Pool()))
		}
		// What the switch counted, read back over P4Runtime.
		cells, err := client.ReadCounter(ctx, pipeline.CounterRegionRouted, -1)
		if err != nil {
			return res, fmt.Errorf("demo: read region_routed: %w", err)
		}
		now := map[string]int{}
		for _, c := range cells {
			if c.Packets > 0 {
				now[regionName(regions.Index(c.Index))] = int(c.Packets)
			}
		}
		hr.Routed = map[string]int{}
		for r, v := range now {
			if d := v - prev[r]; d > 0 {
				hr.Routed[r] = d
			}
		}
		prev = now
		hr.CountersMatch = sameCounts(hr.Routed, hr.Predicted)
		n := float64(o.RequestsPerHour)
		hr.MeanIntensity, hr.BaselineIntensity = sumI/n, sumB/n
		hr.GCO2, hr.BaselineGCO2 = sumI*kwh, sumB*kwh
		hr.SavingPct = saving(sumI, sumB)
		res.Hours = append(res.Hours, hr)
		res.Totals.add(hr.Counts)
		if hr.Stale {
			res.Totals.StaleHours++
		}
		if o.OnHour != nil {
			o.OnHour(hr)
		}
		if o.Drift != nil && h+1 == o.Drift.AfterHour {
			rep, err := runDrift(ctx, *o.Drift, cfg, ctl, emb.Switch, traffic, sites, classes, rng, func() uint32 { id++; return id }, execClass, &ep, o.OnDriftStart, o.OnMoment)
			if err != nil {
				return res, err
			}
			res.Drift, res.streamed = rep, o.OnMoment != nil
			// One count of nacks, in the totals (the episode's are not an
			// hour's, so they were not in any hour's counts).
			res.Totals.Nacks += rep.Nacks
			res.Totals.DriftNacks += rep.Nacks
			// The episode's requests are not this hour's: count from here.
			cells, err := client.ReadCounter(ctx, pipeline.CounterRegionRouted, -1)
			if err != nil {
				return res, fmt.Errorf("demo: read region_routed: %w", err)
			}
			prev = map[string]int{}
			for _, c := range cells {
				if c.Packets > 0 {
					prev[regionName(regions.Index(c.Index))] = int(c.Packets)
				}
			}
		}
		if o.Progress != nil {
			o.Progress(h+1, o.Hours)
		}
	}
	res.Totals.CountersMatch = res.Totals.CountersMatch && sameCounts(res.Totals.Routed, res.Totals.Predicted)
	if !res.Totals.CountersMatch || res.Totals.HeaderMismatches > 0 {
		return res, ErrMismatch
	}
	if res.Drift != nil && !res.Drift.OK {
		return res, ErrDrift
	}
	return res, nil
}

func saving(x, base float64) float64 {
	if base == 0 {
		return 0
	}
	return 100 * (1 - x/base)
}

func sameCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func pickClass(r *rand.Rand, cls []config.SLAClass) config.SLAClass {
	x := r.Float64()
	for _, c := range cls {
		if x < c.Share {
			return c
		}
		x -= c.Share
	}
	return cls[len(cls)-1]
}

func regionName(i regions.Index) string {
	if r, ok := regions.RegionAt(i); ok {
		return r.ID
	}
	return fmt.Sprintf("region-%d", i)
}

// ranking is the plan's carbon ranking of the configured regions, cleanest
// first (ties by index, as the switch's shared ranking breaks them).
func ranking(cfg *config.Config, p *controller.Plan) []Ranked {
	idx := cfg.Pool().Indices()
	sort.SliceStable(idx, func(a, b int) bool { return p.Intensity(idx[a]) < p.Intensity(idx[b]) })
	out := make([]Ranked, len(idx))
	for i, r := range idx {
		out[i] = Ranked{Region: regionName(r), GCO2: p.Intensity(r)}
	}
	return out
}
