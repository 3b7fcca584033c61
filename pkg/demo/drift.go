package demo

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// DriftOptions configure the demo's latency-drift episode (issue "close
// the loop"): mid-run, in real time, replies come back after emulated
// round trips; then one (site, region) pair that an SLA class is routed to
// slows past that class's budget, and later recovers. The switch measures
// it (latency probes, docs/PIPELINE.md), the controller learns it
// (pkg/latency), stops routing the class there and takes it back.
type DriftOptions struct {
	// AfterHour: the episode runs after this many replayed hours (default
	// half of them).
	AfterHour int
	// Rate is the episode's requests per second (default 300).
	Rate int
	// Warm is how long replies take their normal emulated round trip
	// before the drift (default: the latency window, so it holds only
	// emulated samples); Drift how long the pair is slow (default 2.5 s,
	// less than the window: re-admission of a silent pair cannot happen
	// during it); Recover how long the class has to come back afterwards
	// (default 4 windows).
	Warm, Drift, Recover time.Duration
}

// DemoLatency is the latency learning the demo uses when the
// configuration's latency.source is static: blend (the larger of profile
// and measurement, so immediate replies in the hourly replay never make a
// region look closer than its profile) with a short window and dwell that
// fit a demo.
func DemoLatency() config.LatencyLearning {
	return config.LatencyLearning{Source: "blend", Window: config.Duration{Duration: 3 * time.Second}, Buckets: 6,
		Margin: config.Duration{Duration: 5 * time.Millisecond}, MinSamples: 10, MinDwell: config.Duration{Duration: 2 * time.Second},
		Evaluate: config.Duration{Duration: 50 * time.Millisecond}, DigestTimeout: config.Duration{Duration: time.Millisecond}}
}

// Moment is one thing the episode saw, at a time since it started.
type Moment struct {
	AtS  float64 `json:"at_s"`
	What string  `json:"what"`
}

// DriftReport is what the episode measured and checked.
type DriftReport struct {
	// AfterHour: the episode ran after this many replayed hours (between
	// hour AfterHour-1 and AfterHour of the replay; the plots mark it).
	AfterHour   int      `json:"after_hour"`
	Site        string   `json:"site"`
	Class       string   `json:"class"`
	SLAms       int      `json:"sla_ms"`
	Region      string   `json:"region"`
	ProfileMS   float64  `json:"profile_ms"`
	DriftMS     float64  `json:"drift_ms"`
	Alternative string   `json:"routed_meanwhile,omitempty"` // where the class went while the region was out
	Latency     string   `json:"latency"`                    // the learner's settings
	Moments     []Moment `json:"moments"`
	// Times since the episode started (s; -1: did not happen).
	DriftAtS   float64 `json:"drift_at_s"`
	CrossAtS   float64 `json:"cross_at_s"` // the learner moved the pair past the class budget
	StopAtS    float64 `json:"stop_at_s"`  // the last request of the class routed to the region while slow
	RecoverAtS float64 `json:"recover_at_s"`
	ReturnAtS  float64 `json:"return_at_s"` // the first request of the class routed there again
	// SamplesToCross: samples of the pair from the drift to the crossing;
	// CrossP95MS the P95 that crossed; PushMS how long the recompiled
	// push took.
	SamplesToCross int     `json:"samples_to_cross"`
	CrossP95MS     float64 `json:"cross_p95_ms"`
	PushMS         float64 `json:"push_ms"`
	PushWrites     int     `json:"push_writes"`
	Requests       int     `json:"requests"`
	Nacks          int     `json:"nacks"`
	// OverBudget counts requests, sent once the estimator had converged
	// (a window after the drift began and a second after the crossing),
	// routed to a region whose measured P95 from their site exceeded their
	// SLA by more than the margin.
	OverBudget int      `json:"routed_over_budget"`
	OK         bool     `json:"ok"`
	Failed     []string `json:"failed,omitempty"`
}

// driftTarget picks the pair to slow: the first site and class (tightest
// first) routed to a region that is not the site's nearest (so that, once
// it is out, the class has somewhere else to go).
func driftTarget(cfg *config.Config, p *controller.Plan, classes []config.SLAClass) (site int, cls config.SLAClass, region regions.Index, ok bool) {
	cs := append([]config.SLAClass(nil), classes...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].MS < cs[j].MS })
	for i, s := range p.Sites() {
		near := regions.Nearest(s, cfg.Pool())
		for _, c := range cs {
			d := p.Decide(i, float64(c.MS))
			if d.Fallback || d.Region == near {
				continue
			}
			return i, c, d.Region, true
		}
	}
	return 0, config.SLAClass{}, 0, false
}

// driftMS is the slowed pair's P95: past the class budget by more than the
// margin, below the next class's budget by more than it (one boundary).
func driftMS(cls config.SLAClass, classes []config.SLAClass, margin float64) float64 {
	next := math.Inf(1)
	for _, c := range classes {
		if c.MS > cls.MS && float64(c.MS) < next {
			next = float64(c.MS)
		}
	}
	if math.IsInf(next, 1) {
		next = 2 * float64(cls.MS)
	}
	return math.Max((float64(cls.MS)+next)/2, float64(cls.MS)+4*margin)
}

// drift is a running episode.
type drift struct {
	o       DriftOptions
	cfg     *config.Config
	ctl     *controller.Controller
	lat     *controller.LatencyLearner
	sw      *dataplane.Switch
	traffic *Traffic
	sites   []*regions.Site
	classes []config.SLAClass

	start    time.Time
	onMoment func(Moment)
	mu       sync.Mutex
	rep      DriftReport
	siteID   uint16
	region   regions.Index
	crossed  bool
}

func (d *drift) since() float64 { return time.Since(d.start).Seconds() }

func (d *drift) moment(format string, a ...any) {
	m := Moment{AtS: math.Round(d.since()*1000) / 1000, What: fmt.Sprintf(format, a...)}
	d.rep.Moments = append(d.rep.Moments, m)
	if d.onMoment != nil {
		d.onMoment(m)
	}
}

// onChange is the latency loop's callback during the episode: it records
// the change and pushes the recompiled plan at once.
func (d *drift) onChange(ctx context.Context, chs []controller.LatencyChange, push func(ctx context.Context) (int, time.Duration, error)) {
	d.mu.Lock()
	target := regionName(d.region)
	for _, c := range chs {
		if c.Samples < d.lat.Config().MinSamples {
			d.moment("learned: %s→%s compiled %.0f → %.0f ms (%d samples in the window: back to the profile)", c.Site, c.Region, c.FromMS, c.ToMS, c.Samples)
		} else {
			d.moment("learned: %s→%s compiled %.0f → %.0f ms (P95 %.0f ms over %d samples)", c.Site, c.Region, c.FromMS, c.ToMS, c.P95MS, c.Samples)
		}
		if c.Site == d.rep.Site && c.Region == target && !d.crossed && c.ToMS > float64(d.rep.SLAms) {
			d.crossed = true
			d.rep.CrossAtS, d.rep.CrossP95MS, d.rep.SamplesToCross = d.since(), c.P95MS, c.Samples
		}
	}
	d.mu.Unlock()
	writes, took, err := push(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.moment("push failed: %v", err)
		return
	}
	d.moment("sla_feasibility recompiled and pushed: %d writes in %.1f ms", writes, float64(took.Microseconds())/1000)
	if d.rep.PushMS == 0 {
		d.rep.PushMS, d.rep.PushWrites = float64(took.Microseconds())/1000, writes
	}
}

// run sends the episode's requests and checks the moments.
func (d *drift) run(ctx context.Context, rng *rand.Rand, nextID func() uint32, execClass uint8) error {
	o := d.o
	margin := d.lat.Config().Margin.Seconds() * 1000
	drifted := false
	recovered := false
	var mu sync.Mutex // guards drifted, recovered for the delay func
	jitter := func() float64 { return math.Exp(0.05 * rng.NormFloat64()) }
	d.traffic.SetDelay(func(site uint16, region uint8) time.Duration {
		mu.Lock()
		slow := drifted && !recovered && site == d.siteID && regions.Index(region) == d.region
		mu.Unlock()
		ms := 0.7 * d.profile(site, regions.Index(region))
		if slow {
			ms = 0.95 * d.rep.DriftMS
		}
		return time.Duration(ms * jitter() * float64(time.Millisecond))
	})
	defer func() {
		d.traffic.SetDelay(nil)
		d.traffic.Wait()
	}()
	interval := time.Second / time.Duration(o.Rate)
	end := o.Warm + o.Drift + o.Recover
	alt := map[string]int{}
	window := d.lat.Config().Window.Seconds()
	for i := 0; ; i++ {
		due := d.start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
		t := time.Since(d.start)
		if t >= end {
			break
		}
		mu.Lock()
		if !drifted && t >= o.Warm {
			drifted = true
			d.mu.Lock()
			d.rep.DriftAtS = d.since()
			d.moment("drift: %s→%s round trip %.0f → %.0f ms (the %s class's budget is %d ms)",
				d.rep.Site, d.rep.Region, 0.7*d.rep.ProfileMS, d.rep.DriftMS, d.rep.Class, d.rep.SLAms)
			d.mu.Unlock()
		}
		if drifted && !recovered && t >= o.Warm+o.Drift {
			recovered = true
			d.mu.Lock()
			d.rep.RecoverAtS = d.since()
			d.moment("recovery: %s→%s round trip back to %.0f ms", d.rep.Site, d.rep.Region, 0.7*d.rep.ProfileMS)
			d.mu.Unlock()
		}
		isDrift, isRecovered := drifted, recovered
		mu.Unlock()

		site := rng.IntN(len(d.sites))
		cls := pickClass(rng, d.classes)
		if rng.IntN(2) == 0 { // half the requests are of the drifted site and class
			site, cls = d.siteIndex(), d.class()
		}
		out, err := Send(d.sw, d.traffic.Request(site, nextID(), uint16(cls.MS), execClass))
		if err != nil {
			return fmt.Errorf("drift episode: %w", err)
		}
		d.rep.Requests++
		if out.Verdict == program.Nacked {
			d.rep.Nacks++
			continue
		}
		got := regions.Index(out.Header.Region)
		now := d.since()
		d.mu.Lock()
		cross := d.rep.CrossAtS
		crossed := d.crossed
		d.mu.Unlock()
		if site == d.siteIndex() && cls.MS == d.rep.SLAms {
			switch {
			case isDrift && !isRecovered && got == d.region:
				d.rep.StopAtS = now
			case isDrift && !isRecovered && crossed:
				alt[regionName(got)]++
			case isRecovered && got == d.region && d.rep.ReturnAtS < 0:
				d.rep.ReturnAtS = now
				d.mu.Lock()
				d.moment("the %s class is routed to %s again", d.rep.Class, d.rep.Region)
				d.mu.Unlock()
			}
		}
		if crossed && now >= cross+1 && now >= d.rep.DriftAtS+window {
			if p95, n, ok := d.lat.P95(uint16(d.cfg.Sites[site].ID), uint8(got)); ok && n >= d.lat.Config().MinSamples && p95 > float64(cls.MS)+margin {
				d.rep.OverBudget++
			}
		}
	}
	best := 0
	for r, n := range alt {
		if n > best {
			d.rep.Alternative, best = r, n
		}
	}
	return nil
}

func (d *drift) siteIndex() int {
	for i, s := range d.cfg.Sites {
		if uint16(s.ID) == d.siteID {
			return i
		}
	}
	return 0
}

func (d *drift) class() config.SLAClass {
	for _, c := range d.classes {
		if c.MS == d.rep.SLAms {
			return c
		}
	}
	return d.classes[0]
}

// profile is the configured P95 (ms) of site id to region (the emulated
// round trip's scale).
func (d *drift) profile(site uint16, region regions.Index) float64 {
	for i, s := range d.cfg.Sites {
		if uint16(s.ID) == site {
			if v, ok := d.sites[i].P95(region); ok {
				return v
			}
		}
	}
	return 50
}

// check fills OK and Failed: the class left the region within a second of
// the crossing, came back after recovery, and no request went over budget
// once the estimator had converged.
func (d *drift) check() {
	r := &d.rep
	fail := func(format string, a ...any) { r.Failed = append(r.Failed, fmt.Sprintf(format, a...)) }
	switch {
	case r.CrossAtS < 0:
		fail("the measured P95 of %s→%s never crossed the %s class's budget", r.Site, r.Region, r.Class)
	case r.StopAtS-r.CrossAtS > 1:
		fail("the %s class was still routed to %s %.2f s after the crossing (want ≤ 1 s)", r.Class, r.Region, r.StopAtS-r.CrossAtS)
	}
	if r.ReturnAtS < 0 {
		fail("the %s class did not come back to %s within %.1f s of the recovery", r.Class, r.Region, d.o.Recover.Seconds())
	}
	if r.OverBudget > 0 {
		fail("%d requests went to a region whose measured P95 exceeded their SLA by more than the margin", r.OverBudget)
	}
	r.OK = len(r.Failed) == 0
}

// WriteDriftHeader introduces the episode (before its moments).
func WriteDriftHeader(w io.Writer, r *DriftReport) error {
	_, err := fmt.Fprintf(w, "\nlatency drift (real time; %s):\n  %s→%s carries the %s class (%d ms): profile %.0f ms, slowed to %.0f ms\n",
		r.Latency, r.Site, r.Region, r.Class, r.SLAms, r.ProfileMS, r.DriftMS)
	return err
}

// MomentLine renders one moment of the episode.
func MomentLine(m Moment) string { return fmt.Sprintf("  %7.3fs  %s", m.AtS, m.What) }

// WriteDrift renders the episode: its header and moments (unless they were
// streamed) and the summary with the checks.
func WriteDrift(w io.Writer, r *DriftReport, moments bool) error {
	if moments {
		if err := WriteDriftHeader(w, r); err != nil {
			return err
		}
		for _, m := range r.Moments {
			fmt.Fprintln(w, MomentLine(m))
		}
	}
	status := "ok"
	if !r.OK {
		status = "FAILED: " + fmt.Sprint(r.Failed)
	}
	stop := "-"
	if r.CrossAtS >= 0 && r.StopAtS >= 0 {
		stop = fmt.Sprintf("%.3f s", math.Max(0, r.StopAtS-r.CrossAtS))
	}
	back := "-"
	if r.ReturnAtS >= 0 {
		back = fmt.Sprintf("%.2f s", r.ReturnAtS-r.RecoverAtS)
	}
	// Its nacks are counted once, in the totals (which say how many of
	// them fell in the episode).
	_, err := fmt.Fprintf(w, "  latency loop: crossing after %d samples of the pair; last request of the class to %s %s after it; meanwhile routed to %s; back %s after recovery; %d requests, %d over budget after convergence: %s\n",
		r.SamplesToCross, r.Region, stop, orDash(r.Alternative), back, r.Requests, r.OverBudget, status)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runDrift runs the episode on the running demo: the target from the
// current plan, the emulated round trips on the traffic, the latency loop's
// changes recorded through ep.
func runDrift(ctx context.Context, o DriftOptions, cfg *config.Config, ctl *controller.Controller, sw *dataplane.Switch,
	traffic *Traffic, sites []*regions.Site, classes []config.SLAClass, rng *rand.Rand, nextID func() uint32, execClass uint8,
	ep interface{ Store(*drift) }, onStart func(*DriftReport), onMoment func(Moment)) (*DriftReport, error) {
	lat := ctl.Latency()
	if lat == nil {
		return nil, fmt.Errorf("demo: the drift episode needs latency learning (latency.source measured or blend)")
	}
	lc := lat.Config()
	if o.Rate <= 0 {
		o.Rate = 300
	}
	if o.Warm <= 0 {
		o.Warm = lc.Window.Duration
	}
	if o.Drift <= 0 {
		o.Drift = 2500 * time.Millisecond
	}
	if o.Recover <= 0 {
		o.Recover = 4 * lc.Window.Duration
	}
	p := ctl.Current()
	if p == nil {
		return nil, fmt.Errorf("demo: drift episode before the first plan")
	}
	si, cls, region, ok := driftTarget(cfg, p, classes)
	if !ok {
		return nil, fmt.Errorf("demo: drift episode: no SLA class of any site is routed to a region other than the site's nearest in the hour %s", p.Hour.Format(time.RFC3339))
	}
	d := &drift{o: o, cfg: cfg, ctl: ctl, lat: lat, sw: sw, traffic: traffic, sites: sites, classes: classes,
		siteID: uint16(cfg.Sites[si].ID), region: region}
	prof, _ := sites[si].P95(region)
	d.rep = DriftReport{AfterHour: o.AfterHour, Site: sites[si].Name(), Class: cls.Name, SLAms: cls.MS, Region: regionName(region), ProfileMS: prof,
		DriftMS:  driftMS(cls, classes, lc.Margin.Seconds()*1000),
		Latency:  fmt.Sprintf("latency %s, window %s, margin %s, min samples %d, min dwell %s", lc.Source, lc.Window.Duration, lc.Margin.Duration, lc.MinSamples, lc.MinDwell.Duration),
		DriftAtS: -1, CrossAtS: -1, StopAtS: -1, RecoverAtS: -1, ReturnAtS: -1}
	d.onMoment = onMoment
	if onStart != nil {
		onStart(&d.rep)
	}
	d.start = time.Now()
	ep.Store(d)
	defer ep.Store(nil)
	err := d.run(ctx, rng, nextID, execClass)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.check()
	rep := d.rep
	return &rep, err
}
