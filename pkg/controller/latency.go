package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/latency"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// LatencyLearner is the controller's latency loop (docs/CONFIG.md
// "latency"): the switches' latency_sample digests feed a sliding-window
// P95 per (site, region) (pkg/latency); every evaluation the hysteretic
// learner decides which pairs' compiled latencies move, and the planner
// compiles sla_feasibility from them. It is safe for concurrent use.
type LatencyLearner struct {
	cfg     config.LatencyLearning // defaults applied
	est     *latency.Estimator
	learner *latency.Learner
	priors  map[latency.Key]float64 // profile P95 (ms) of every configured pair
	names   map[latency.Key][2]string
	now     func() time.Time
	log     *slog.Logger

	mu      sync.Mutex
	changes []LatencyChange // the last MaxLatencyChanges, oldest first
	ups     uint64          // changes that made a pair slower (possibly infeasible)
	downs   uint64          // changes that made a pair faster (possibly feasible again)
	ignored uint64          // samples for pairs no site profile has
	lost    uint64
}

// MaxLatencyChanges is how many feasibility changes LatencyLearner keeps for
// `p4ctl get latency`.
const MaxLatencyChanges = 64

// LatencyChange is one move of a pair's compiled latency.
type LatencyChange struct {
	At     time.Time `json:"at"`
	Site   string    `json:"site"`
	Region string    `json:"region"`
	FromMS float64   `json:"from_ms"`
	ToMS   float64   `json:"to_ms"`
	P95MS  float64   `json:"p95_ms"`
	// Samples in the window the decision rested on.
	Samples int `json:"samples"`
}

// NewLatencyLearner returns the latency loop of cfg, or nil when cfg's
// latency source is static. sites are the configuration's routing sites
// (their profiles are the priors).
func NewLatencyLearner(cfg *config.Config, sites []*regions.Site, log *slog.Logger) (*LatencyLearner, error) {
	if !cfg.Latency.Learning() {
		return nil, nil
	}
	lc := cfg.Latency.WithDefaults()
	var classes []float64
	for _, c := range cfg.SLAClasses {
		classes = append(classes, float64(c.MS))
	}
	if len(classes) == 0 {
		return nil, fmt.Errorf("latency.source %s: the configuration needs sla_classes (their budgets are the boundaries a measured P95 must cross)", lc.Source)
	}
	est, err := latency.NewEstimator(lc.Window.Duration, lc.Buckets)
	if err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	ln, err := latency.NewLearner(lc.LearnerConfig(), est, classes)
	if err != nil {
		return nil, fmt.Errorf("latency: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &LatencyLearner{cfg: lc, est: est, learner: ln, priors: map[latency.Key]float64{}, names: map[latency.Key][2]string{},
		now: time.Now, log: log}
	for i, s := range sites {
		for _, rl := range s.Latencies() {
			k := latency.Key{Site: uint16(cfg.Sites[i].ID), Region: uint8(rl.Region)}
			l.priors[k] = rl.P95Ms
			reg, _ := regions.RegionAt(rl.Region)
			l.names[k] = [2]string{s.Name(), reg.ID}
		}
	}
	return l, nil
}

// DigestConfig is the DigestEntry configuration the drivers write.
func (l *LatencyLearner) DigestConfig() p4rt.DigestConfig {
	return p4rt.DigestConfig{MaxTimeoutNs: l.cfg.DigestTimeout.Nanoseconds(), MaxListSize: int32(l.cfg.DigestListSize),
		AckTimeoutNs: l.cfg.AckTimeout.Nanoseconds()}
}

// EvaluateEvery is how often Evaluate should run.
func (l *LatencyLearner) EvaluateEvery() time.Duration { return l.cfg.Evaluate.Duration }

// Observe records one digest of a switch of architecture arch (its rtt is
// in that architecture's clock units).
func (l *LatencyLearner) Observe(arch pipeline.Arch, s pipeline.LatencySample) {
	k := latency.Key{Site: s.Site, Region: s.Region}
	if _, ok := l.priors[k]; !ok {
		l.mu.Lock()
		l.ignored++
		l.mu.Unlock()
		return
	}
	if s.Lost {
		l.mu.Lock()
		l.lost++
		l.mu.Unlock()
	}
	rtt := time.Duration(float64(s.RTT) * arch.ClockNanos())
	if rtt <= 0 {
		rtt = time.Nanosecond // a round trip within one clock unit
	}
	_ = l.est.Observe(k, rtt, l.now())
}

// Evaluate runs the learner at now and returns the pairs whose compiled
// latency moved (then the plan must be compiled again).
func (l *LatencyLearner) Evaluate(now time.Time) []LatencyChange {
	chs := l.learner.Update(l.priors, now)
	if len(chs) == 0 {
		return nil
	}
	out := make([]LatencyChange, 0, len(chs))
	for _, c := range chs {
		n := l.names[c.Key]
		lc := LatencyChange{At: now, Site: n[0], Region: n[1], FromMS: c.FromMS, ToMS: c.ToMS, P95MS: c.P95ms, Samples: c.Samples}
		out = append(out, lc)
		l.log.Info("measured latency crossed an SLA class boundary: recompiling feasibility",
			"site", lc.Site, "region", lc.Region, "from_ms", lc.FromMS, "to_ms", lc.ToMS, "samples", lc.Samples)
	}
	l.mu.Lock()
	for _, c := range out {
		if c.ToMS > c.FromMS {
			l.ups++
		} else {
			l.downs++
		}
	}
	l.changes = append(l.changes, out...)
	if n := len(l.changes) - MaxLatencyChanges; n > 0 {
		l.changes = append([]LatencyChange(nil), l.changes[n:]...)
	}
	l.mu.Unlock()
	return out
}

// Sites returns sites with the learned latencies in place of the profile
// values (configuration order; ids are the configured site ids).
func (l *LatencyLearner) Sites(cfg *config.Config, sites []*regions.Site) ([]*regions.Site, error) {
	out := make([]*regions.Site, len(sites))
	for i, s := range sites {
		id := uint16(cfg.Sites[i].ID)
		ns, err := s.WithLatencies(func(r regions.Index, p95 float64) float64 {
			return l.learner.Latency(latency.Key{Site: id, Region: uint8(r)}, p95)
		})
		if err != nil {
			return nil, fmt.Errorf("latency: site %s: %w", s.Name(), err)
		}
		out[i] = ns
	}
	return out, nil
}

// LatencyPair is one (site, region) row of the learned table.
type LatencyPair struct {
	Site        string  `json:"site"`
	SiteID      uint16  `json:"site_id"`
	Region      string  `json:"region"`
	RegionIndex uint8   `json:"region_index"`
	ProfileMS   float64 `json:"profile_ms"`
	P95MS       float64 `json:"p95_ms,omitempty"` // measured, over the window; 0 without samples
	Samples     int     `json:"samples_in_window"`
	Total       uint64  `json:"samples_total"`
	CompiledMS  float64 `json:"compiled_ms"`
	Learned     bool    `json:"learned"` // CompiledMS comes from measurements
}

// LatencyTable is what `p4ctl get latency` shows.
type LatencyTable struct {
	Source     string          `json:"source"`
	Window     string          `json:"window"`
	Margin     string          `json:"margin"`
	MinSamples int             `json:"min_samples"`
	MinDwell   string          `json:"min_dwell"`
	Pairs      []LatencyPair   `json:"pairs"`
	Changes    []LatencyChange `json:"changes,omitempty"`
	Rises      uint64          `json:"rises"`      // compiled latencies moved up (all time)
	Recoveries uint64          `json:"recoveries"` // moved down
	Lost       uint64          `json:"lost_samples"`
	Ignored    uint64          `json:"ignored_samples"` // pairs no profile has
}

// Table returns the learned table at now.
func (l *LatencyLearner) Table(now time.Time) LatencyTable {
	t := LatencyTable{Source: l.cfg.Source, Window: l.cfg.Window.String(), Margin: l.cfg.Margin.String(),
		MinSamples: l.cfg.MinSamples, MinDwell: l.cfg.MinDwell.String()}
	est := map[latency.Key]latency.Estimate{}
	for _, e := range l.est.Snapshot(now) {
		est[e.Key] = e
	}
	for k, prior := range l.priors {
		e := est[k]
		n := l.names[k]
		c := l.learner.Latency(k, prior)
		t.Pairs = append(t.Pairs, LatencyPair{Site: n[0], SiteID: k.Site, Region: n[1], RegionIndex: k.Region, ProfileMS: prior,
			P95MS: e.P95ms, Samples: e.Samples, Total: e.Total, CompiledMS: c, Learned: l.learner.Learned(k)})
	}
	sort.Slice(t.Pairs, func(i, j int) bool {
		a, b := t.Pairs[i], t.Pairs[j]
		return a.SiteID < b.SiteID || a.SiteID == b.SiteID && a.RegionIndex < b.RegionIndex
	})
	l.mu.Lock()
	t.Changes = append([]LatencyChange(nil), l.changes...)
	t.Lost, t.Ignored, t.Rises, t.Recoveries = l.lost, l.ignored, l.ups, l.downs
	l.mu.Unlock()
	return t
}

// LatencyPath is where the metrics server serves the learned table (JSON).
const LatencyPath = "/latency"

// Handler serves Table as JSON.
func (l *LatencyLearner) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(l.Table(l.now()))
	})
}

// Describe implements prometheus.Collector.
func (l *LatencyLearner) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLatencyP95, descLatencySamples, descLatencyTotal, descLatencyCompiled, descLatencyChanges} {
		ch <- d
	}
}

var (
	descLatencyP95      = prometheus.NewDesc("p4ctl_latency_p95_ms", "Measured P95 round trip of each (site, region) over the window, from the switches' latency_sample digests.", []string{"site", "region"}, nil)
	descLatencySamples  = prometheus.NewDesc("p4ctl_latency_samples_in_window", "Samples in the window of each (site, region).", []string{"site", "region"}, nil)
	descLatencyTotal    = prometheus.NewDesc("p4ctl_latency_samples_total", "Samples received for each (site, region).", []string{"site", "region"}, nil)
	descLatencyCompiled = prometheus.NewDesc("p4ctl_latency_compiled_ms", "The latency sla_feasibility is compiled from for each (site, region): the profile until learned.", []string{"site", "region"}, nil)
	descLatencyChanges  = prometheus.NewDesc("p4ctl_latency_feasibility_changes_total", "Moves of compiled latencies across an SLA class boundary (recompilations of sla_feasibility), by direction.", []string{"direction"}, nil)
)

// Collect implements prometheus.Collector.
func (l *LatencyLearner) Collect(ch chan<- prometheus.Metric) {
	t := l.Table(l.now())
	for _, p := range t.Pairs {
		if p.Total > 0 {
			ch <- prometheus.MustNewConstMetric(descLatencyP95, prometheus.GaugeValue, p.P95MS, p.Site, p.Region)
		}
		ch <- prometheus.MustNewConstMetric(descLatencySamples, prometheus.GaugeValue, float64(p.Samples), p.Site, p.Region)
		ch <- prometheus.MustNewConstMetric(descLatencyTotal, prometheus.CounterValue, float64(p.Total), p.Site, p.Region)
		ch <- prometheus.MustNewConstMetric(descLatencyCompiled, prometheus.GaugeValue, p.CompiledMS, p.Site, p.Region)
	}
	l.mu.Lock()
	up, down := l.ups, l.downs
	l.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descLatencyChanges, prometheus.CounterValue, float64(up), "infeasible")
	ch <- prometheus.MustNewConstMetric(descLatencyChanges, prometheus.CounterValue, float64(down), "feasible")
}

// digestSamples decodes a DigestList of latency samples; lists of other
// digests yield none.
func digestSamples(idx *p4rt.Index, l *p4v1.DigestList) ([]pipeline.LatencySample, error) {
	id, err := idx.DigestID(pipeline.DigestLatencySample)
	if err != nil || l.GetDigestId() != id {
		return nil, nil
	}
	out := make([]pipeline.LatencySample, 0, len(l.GetData()))
	for i, d := range l.GetData() {
		v, err := p4rt.DecodeStruct(d, pipeline.DigestWidths())
		if err == nil {
			var s pipeline.LatencySample
			if s, err = pipeline.SampleFromMembers(v); err == nil {
				out = append(out, s)
				continue
			}
		}
		return out, fmt.Errorf("digest list %d, item %d: %w", l.GetListId(), i, err)
	}
	return out, nil
}

// RunLatency runs the latency loop until ctx is done: every driver's
// digests are consumed, and every EvaluateEvery the learner is evaluated;
// when compiled latencies moved, onChange is called (Run re-plans the
// current hour and submits it; a caller driving Step, like the demo, pushes
// synchronously). It returns at once when latency is not learned.
func (c *Controller) RunLatency(ctx context.Context, onChange func(ctx context.Context, changes []LatencyChange)) {
	if c.latency == nil {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, d := range c.drivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.ConsumeDigests(ctx)
		}()
	}
	t := time.NewTicker(c.latency.EvaluateEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if chs := c.latency.Evaluate(c.latency.now()); len(chs) > 0 {
			onChange(ctx, chs)
		}
	}
}

// relatency re-plans the current plan's hour with the latencies learned now
// and submits it.
func (c *Controller) relatency() {
	cur := c.Current()
	if cur == nil {
		return // nothing pushed yet: the first plan will use them
	}
	p := c.planner.Plan(cur.Hour)
	c.setCurrent(p)
	for _, d := range c.drivers {
		d.Submit(p)
	}
}

// TableHeaders implements output.Tabular.
func (t LatencyTable) TableHeaders() []string {
	return []string{"site", "region", "profile_ms", "p95_ms", "samples", "total", "compiled_ms", "learned"}
}

// TableRows implements output.Tabular.
func (t LatencyTable) TableRows() [][]string {
	ms := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	rows := make([][]string, 0, len(t.Pairs))
	for _, p := range t.Pairs {
		rows = append(rows, []string{p.Site, p.Region, ms(p.ProfileMS), ms(p.P95MS), strconv.Itoa(p.Samples),
			strconv.FormatUint(p.Total, 10), ms(p.CompiledMS), strconv.FormatBool(p.Learned)})
	}
	return rows
}

// WriteText implements output.TextWriter: the settings, the pairs, and the
// recent feasibility changes.
func (t LatencyTable) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "latency source %s, window %s, margin %s, min samples %d, min dwell %s; %d rises, %d recoveries, %d lost samples\n\n",
		t.Source, t.Window, t.Margin, t.MinSamples, t.MinDwell, t.Rises, t.Recoveries, t.Lost)
	if err := output.WriteTable(w, t.TableHeaders(), t.TableRows()); err != nil {
		return err
	}
	if len(t.Changes) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nrecent changes of compiled latency:")
	rows := make([][]string, 0, len(t.Changes))
	for _, c := range t.Changes {
		rows = append(rows, []string{c.At.UTC().Format(time.RFC3339Nano), c.Site, c.Region,
			strconv.FormatFloat(c.FromMS, 'f', 1, 64), strconv.FormatFloat(c.ToMS, 'f', 1, 64), strconv.Itoa(c.Samples)})
	}
	return output.WriteTable(w, []string{"at", "site", "region", "from_ms", "to_ms", "samples"}, rows)
}

// FetchLatency reads the learned table from a controller's metrics server
// (p4ctl run --metrics-addr) at addr (host:port).
func FetchLatency(ctx context.Context, addr string) (LatencyTable, error) {
	var t LatencyTable
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+LatencyPath, nil)
	if err != nil {
		return t, fmt.Errorf("get latency from %s: %w", addr, err)
	}
	// The switch commands' connect timeout: an address that accepts and
	// never answers fails within it, not after the whole --timeout.
	client := &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: p4rt.ConnectTimeout}).DialContext,
		ResponseHeaderTimeout: p4rt.ConnectTimeout,
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			return t, fmt.Errorf("get latency from the controller at %s (p4ctl run --metrics-addr): connected, but no HTTP answer within %v: is it a p4ctl run metrics address? %w", addr, p4rt.ConnectTimeout, err)
		}
		return t, fmt.Errorf("get latency from the controller at %s (p4ctl run --metrics-addr): %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return t, fmt.Errorf("the controller at %s does not learn latency (its configuration has latency.source static)", addr)
	}
	if resp.StatusCode != http.StatusOK {
		return t, fmt.Errorf("get latency from %s: HTTP %s", addr, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil {
		return t, fmt.Errorf("get latency from %s: decode: %w", addr, err)
	}
	return t, nil
}

// P95 returns the measured P95 (ms) of (site id, region) over the window
// ending now, and how many samples it rests on.
func (l *LatencyLearner) P95(site uint16, region uint8) (ms float64, samples int, ok bool) {
	return l.est.P95(latency.Key{Site: site, Region: region}, l.now())
}

// Config returns the latency settings in force (defaults applied).
func (l *LatencyLearner) Config() config.LatencyLearning { return l.cfg }
