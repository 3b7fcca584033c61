package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// DefaultMetricsAddr is where `p4ctl run` serves /metrics and /healthz:
// loopback only unless asked otherwise.
const DefaultMetricsAddr = "127.0.0.1:9464"

// DefaultEnergyPerRequestWh is the energy one request is assumed to use when
// estimating grams of CO2: an illustrative 1 Wh, not a measurement. Only
// the absolute grams depend on it; the saving ratio does not.
const DefaultEnergyPerRequestWh = 1.0

// Metrics are the controller's Prometheus metrics. All live in one
// registry (no global state); Handler serves it.
type Metrics struct {
	reg *prometheus.Registry

	pushes      *prometheus.CounterVec
	writes      *prometheus.CounterVec
	pushLatency *prometheus.HistogramVec
	epoch       *prometheus.GaugeVec
	primary     *prometheus.GaugeVec
	connected   *prometheus.GaugeVec
	dataAge     prometheus.Gauge
	stale       prometheus.Gauge
	policy      *prometheus.GaugeVec
	planHour    prometheus.Gauge
	notHitless  *prometheus.CounterVec
	zoneAge     *prometheus.GaugeVec
	zoneStale   *prometheus.GaugeVec
	repairs     *prometheus.CounterVec
	lag         *prometheus.GaugeVec
	appliedHour *prometheus.GaugeVec

	mu sync.Mutex
	// planAt is the hour of the current plan, firstPlan the first one seen;
	// applied is the hour of the plan last applied per target (absent: none
	// yet). They give p4ctl_target_lag_hours.
	planAt, firstPlan time.Time
	applied           map[string]time.Time
	known             map[string]bool
	// backup marks targets this replica is connected to as a backup: the
	// primary applies plans there, so this replica reports no lag for them
	// (it would grow by one an hour and look like a switch that is down).
	backup   map[string]bool
	routed   map[[2]string]float64 // (target, region) → requests, as read from region_routed
	gco2     map[string]float64    // target → estimated grams
	baseline map[string]float64    // target → grams under the nearest-region baseline
}

// NewMetrics returns the controller's metrics, registered with Go runtime
// and process collectors in a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), routed: map[[2]string]float64{}, gco2: map[string]float64{}, baseline: map[string]float64{},
		applied: map[string]time.Time{}, known: map[string]bool{}, backup: map[string]bool{}}
	m.pushes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "p4ctl_pushes_total",
		Help: "Plan pushes (syncs) per target and result: ok, noop (switch already held the plan), error."}, []string{"target", "result"})
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "p4ctl_writes_total",
		Help: "P4Runtime table updates written, per target and operation."}, []string{"target", "op"})
	m.pushLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "p4ctl_push_duration_seconds",
		Help:    "Time from the start of a push to its last write (the grace period before cleanup excluded).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"target"})
	m.epoch = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_active_epoch",
		Help: "The active_epoch the controller last set on the target."}, []string{"target"})
	m.primary = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_primary",
		Help: "1 while this replica is the target's primary controller."}, []string{"target"})
	m.connected = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_connected",
		Help: "1 while the P4Runtime stream to the target is open and arbitrated."}, []string{"target"})
	m.dataAge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "p4ctl_carbon_data_age_seconds",
		Help: "Age of the carbon data of the current plan (-1: none)."})
	m.stale = prometheus.NewGauge(prometheus.GaugeOpts{Name: "p4ctl_carbon_stale",
		Help: "1 while carbon data is stale or missing and the safe policy (A, nearest region) is compiled."})
	m.policy = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_policy",
		Help: "1 for the policy compiled now (effective) beside the configured one."}, []string{"configured", "effective"})
	m.planHour = prometheus.NewGauge(prometheus.GaugeOpts{Name: "p4ctl_plan_hour_seconds",
		Help: "Unix time of the hour the current plan is for (schedule time; replay time in replay mode)."})
	m.notHitless = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "p4ctl_updates_not_hitless_total",
		Help: "Updates whose non-versioned changes could not be ordered so that every request keeps an old- or new-plan decision."}, []string{"target"})
	m.zoneAge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_carbon_zone_age_seconds",
		Help: "Live carbon sources: age of each zone's value for the current hour (now − the data's timestamp; +Inf: none)."}, []string{"zone"})
	m.zoneStale = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_carbon_zone_stale",
		Help: "Live carbon sources: 1 when a zone has no value within the staleness bound."}, []string{"zone"})
	m.repairs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "p4ctl_drift_repairs_total",
		Help: "Drift found on a target and repaired, by kind: pipeline (none or another one: pushed again), active_epoch (not the epoch last set), entries (table entries missing, extra or different)."}, []string{"target", "kind"})
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_target_lag_hours",
		Help: "Hours the target is behind the current plan: the current plan's hour minus the hour of the plan last applied to it (a target never synced counts from the first plan, plus one). 0 for every target in step; an unreachable switch's grows by one an hour. Not reported by a replica that is a backup of the target (its primary applies the plans)."}, []string{"target"})
	m.appliedHour = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "p4ctl_applied_plan_hour_seconds",
		Help: "Unix time of the hour of the plan last applied to the target."}, []string{"target"})
	m.reg.MustRegister(m.lag, m.appliedHour, m.repairs, m.zoneAge, m.zoneStale, m.pushes, m.writes, m.pushLatency, m.epoch, m.primary, m.connected, m.dataAge, m.stale, m.policy,
		m.planHour, m.notHitless, (*readBack)(m),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// registerLatency exports the latency loop's metrics (LatencyLearner is a
// collector).
func (m *Metrics) registerLatency(l *LatencyLearner) {
	if m != nil {
		m.reg.MustRegister(l)
	}
}

// Registry returns the registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// readBack exports the values read back from switches as const metrics.
type readBack Metrics

var (
	descRouted   = prometheus.NewDesc("p4ctl_routed_requests_total", "Requests routed to each region, read back from the switch's region_routed counter.", []string{"target", "region"}, nil)
	descGCO2     = prometheus.NewDesc("p4ctl_estimated_gco2_grams_total", "Estimated grams of CO2eq of the routed requests: region_routed deltas × the region's carbon intensity of the hour × the assumed energy per request.", []string{"target"}, nil)
	descBaseline = prometheus.NewDesc("p4ctl_baseline_gco2_grams_total", "The same requests' estimated grams had each gone to its site's nearest region (sites weighted evenly).", []string{"target"}, nil)
	descSaving   = prometheus.NewDesc("p4ctl_carbon_saving_ratio", "1 − estimated/baseline grams since start.", []string{"target"}, nil)
)

func (r *readBack) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRouted
	ch <- descGCO2
	ch <- descBaseline
	ch <- descSaving
}

func (r *readBack) Collect(ch chan<- prometheus.Metric) {
	m := (*Metrics)(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.routed {
		ch <- prometheus.MustNewConstMetric(descRouted, prometheus.CounterValue, v, k[0], k[1])
	}
	for t, v := range m.gco2 {
		ch <- prometheus.MustNewConstMetric(descGCO2, prometheus.CounterValue, v, t)
		b := m.baseline[t]
		ch <- prometheus.MustNewConstMetric(descBaseline, prometheus.CounterValue, b, t)
		if b > 0 {
			ch <- prometheus.MustNewConstMetric(descSaving, prometheus.GaugeValue, 1-v/b, t)
		}
	}
}

func (m *Metrics) observePush(target string, rep Report, err error) {
	if m == nil {
		return
	}
	switch {
	case err != nil:
		m.pushes.WithLabelValues(target, "error").Inc()
	case rep.Writes == 0:
		m.pushes.WithLabelValues(target, "noop").Inc()
	default:
		m.pushes.WithLabelValues(target, "ok").Inc()
	}
	for op, n := range rep.ByOp {
		m.writes.WithLabelValues(target, op).Add(float64(n))
	}
	if err == nil && !rep.Hour.IsZero() {
		m.mu.Lock()
		m.applied[target] = rep.Hour
		m.known[target] = true
		m.updateLag(target)
		m.mu.Unlock()
		m.appliedHour.WithLabelValues(target).Set(float64(rep.Hour.Unix()))
	}
	if err == nil {
		m.pushLatency.WithLabelValues(target).Observe(rep.Duration.Seconds())
		m.epoch.WithLabelValues(target).Set(float64(rep.To))
		if !rep.Hitless {
			m.notHitless.WithLabelValues(target).Inc()
		}
	}
}

// Kinds of drift the controller repairs: the kind label of
// p4ctl_drift_repairs_total.
const (
	// RepairPipeline: the switch, read back after a reconnection or an
	// error, ran no pipeline or another one than Target.Pipeline; it was
	// pushed again (a push at the first connection is not counted).
	RepairPipeline = "pipeline"
	// RepairActiveEpoch: active_epoch was not the epoch the controller
	// set last (another client wrote it).
	RepairActiveEpoch = "active_epoch"
	// RepairEntries: table entries were missing, extra or different.
	RepairEntries = "entries"
)

func (m *Metrics) observeRepair(target, kind string) {
	if m == nil {
		return
	}
	m.repairs.WithLabelValues(target, kind).Inc()
}

func (m *Metrics) observeArbitration(target string, connected, primary bool) {
	if m == nil {
		return
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	m.connected.WithLabelValues(target).Set(b(connected))
	m.mu.Lock()
	m.known[target] = true
	m.backup[target] = connected && !primary
	m.updateLag(target)
	m.mu.Unlock()
	m.primary.WithLabelValues(target).Set(b(primary))
}

// updateLag sets target's lag from the current plan (none on a backup);
// m.mu is held.
func (m *Metrics) updateLag(target string) {
	if m.backup[target] {
		m.lag.DeleteLabelValues(target)
		return
	}
	if m.planAt.IsZero() {
		return
	}
	at, ok := m.applied[target]
	if !ok {
		at = m.firstPlan.Add(-time.Hour)
	}
	m.lag.WithLabelValues(target).Set(max(0, m.planAt.Sub(at).Hours()))
}

// Lag returns p4ctl_target_lag_hours of every target seen, by name (not
// those this replica is a backup of).
func (m *Metrics) Lag() map[string]float64 {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]float64{}
	for t := range m.known {
		if m.backup[t] {
			continue
		}
		at, ok := m.applied[t]
		if !ok {
			at = m.firstPlan.Add(-time.Hour)
		}
		if !m.planAt.IsZero() {
			out[t] = max(0, m.planAt.Sub(at).Hours())
		}
	}
	return out
}

// ObservePlan records the current plan's policy and carbon freshness.
func (m *Metrics) ObservePlan(p *Plan) {
	if m == nil {
		return
	}
	m.mu.Lock()
	if m.firstPlan.IsZero() || p.Hour.Before(m.firstPlan) {
		m.firstPlan = p.Hour
	}
	m.planAt = p.Hour
	for t := range m.known {
		m.updateLag(t)
	}
	m.mu.Unlock()
	age := p.DataAge.Seconds()
	if p.DataAge < 0 {
		age = -1
	}
	m.dataAge.Set(age)
	if p.Stale {
		m.stale.Set(1)
	} else {
		m.stale.Set(0)
	}
	m.policy.Reset()
	m.policy.WithLabelValues(p.Configured.String(), p.Effective.String()).Set(1)
	m.planHour.Set(float64(p.Hour.Unix()))
}

// ObserveZones records a live carbon source's per-zone freshness.
func (m *Metrics) ObserveZones(zs []carbonapi.ZoneStatus) {
	if m == nil {
		return
	}
	for _, z := range zs {
		m.zoneAge.WithLabelValues(z.Zone).Set(z.AgeSeconds())
		v := 0.0
		if z.Stale {
			v = 1
		}
		m.zoneStale.WithLabelValues(z.Zone).Set(v)
	}
}

// observeRouted records region_routed values read back from target and the
// carbon estimate of their increase.
// observeRouted records a target's region counters and prices the new
// requests with plan p (nil: not priced); sites are the target's (nil:
// every site), over which the nearest-region baseline is taken.
func (m *Metrics) observeRouted(target string, sites []string, values map[regions.Index]uint64, deltas map[regions.Index]uint64, p *Plan, energyKWh float64) {
	if m == nil {
		return
	}
	var base float64
	if p != nil {
		base = p.BaselineIntensityFor(sites) // outside m.mu: memoised per plan, but the first call walks every site
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for r, v := range values {
		m.routed[[2]string{target, regionName(r)}] = float64(v)
	}
	if p == nil {
		return
	}
	for r, d := range deltas {
		m.gco2[target] += float64(d) * p.Intensity(r) * energyKWh
		m.baseline[target] += float64(d) * base * energyKWh
	}
	if _, ok := m.gco2[target]; !ok {
		m.gco2[target] = 0
	}
}

func regionName(r regions.Index) string {
	if reg, ok := regions.RegionAt(r); ok {
		return reg.ID
	}
	return strconv.Itoa(int(r))
}

// Health is what /healthz and /livez report.
type Health struct {
	// OK (/healthz answers 200) while the control loop runs and every
	// target is in, or on its way to, the desired state.
	OK bool `json:"ok"`
	// Live (/livez answers 200) while the control loop runs: a target the
	// controller cannot bring to the desired state is not a reason to
	// restart the controller.
	Live bool `json:"live"`
	// Reason says why not OK.
	Reason  string         `json:"reason,omitempty"`
	Targets []TargetHealth `json:"targets"`
}

// TargetHealth is one target's state in /healthz.
type TargetHealth struct {
	Name string `json:"name"`
	// OK is false while the controller cannot bring the target to the
	// desired state: disconnected, this primary's last push failed
	// (LastError; a failed verification is followed by a push), or no
	// controller is primary for it. A backup of a live primary is OK (the
	// primary drives the switch).
	OK        bool   `json:"ok"`
	Reason    string `json:"reason,omitempty"`
	Connected bool   `json:"connected"`
	Primary   bool   `json:"primary"`
	Epoch     uint8  `json:"epoch"`
	LastSync  string `json:"last_sync,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Server serves /metrics and /healthz.
type Server struct {
	srv *http.Server
	lis net.Listener
}

// NewServer listens on addr (host:port; "" = DefaultMetricsAddr) and serves
// the metrics, /healthz (200 while Health.OK: every target in or on its way
// to the desired state; a readiness probe) and /livez (200 while
// Health.Live: the control loop runs; a liveness probe). health returns the
// controller's view; a nil health func reports ok. routes are served too
// (path → handler; the daemon adds LatencyPath).
func NewServer(addr string, m *Metrics, health func() Health, routes map[string]http.Handler) (*Server, error) {
	if addr == "" {
		addr = DefaultMetricsAddr
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	serve := func(ok func(Health) bool) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			h := Health{OK: true, Live: true}
			if health != nil {
				h = health()
			}
			sort.Slice(h.Targets, func(i, j int) bool { return h.Targets[i].Name < h.Targets[j].Name })
			w.Header().Set("Content-Type", "application/json")
			if !ok(h) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			_ = json.NewEncoder(w).Encode(h)
		}
	}
	mux.HandleFunc("/healthz", serve(func(h Health) bool { return h.OK }))
	mux.HandleFunc("/livez", serve(func(h Health) bool { return h.Live }))
	for path, h := range routes {
		mux.Handle(path, h)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	return &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, lis: lis}, nil
}

// Addr returns the listening address.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Serve serves until ctx is done.
func (s *Server) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
	}()
	err := s.srv.Serve(s.lis)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
