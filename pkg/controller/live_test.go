package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// fakeClock is a settable clock: the live source's Now, and a
// controller.Clock whose SleepUntil returns once Set moves it far enough.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	wake chan struct{} // closed and replaced by every Set
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	if c.wake != nil {
		close(c.wake)
	}
	c.wake = make(chan struct{})
	c.mu.Unlock()
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	for {
		c.mu.Lock()
		if !c.t.Before(t) {
			c.mu.Unlock()
			return ctx.Err()
		}
		if c.wake == nil {
			c.wake = make(chan struct{})
		}
		w := c.wake
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w:
		}
	}
}

// The daemon's live path against an httptest server speaking Electricity
// Maps v3: the controller refreshes the source before planning, compiles
// policy C from the served values and pushes it; when the API goes down
// and the last values age past the staleness bound, the next step compiles
// the safe policy A and the switch routes every request to its site's
// nearest region; when the API is back, C returns. No network beyond
// loopback.
func TestLiveCarbonSourceAndStaleness(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 15, 10, 20, 0, 0, time.UTC)}
	var down atomic.Bool
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("auth-token") != "test-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if down.Load() {
			http.Error(w, `{"error":"maintenance"}`, http.StatusBadRequest) // not retried: fails at once
			return
		}
		zone := r.URL.Query().Get("zone")
		hour := clk.Now().Truncate(time.Hour).Format("2006-01-02T15:04:05.000Z")
		// A zone's intensity is its name's length × 40: a fixed, known ranking.
		point := fmt.Sprintf(`{"zone":%q,"carbonIntensity":%d,"datetime":%q,"updatedAt":%q,"emissionFactorType":"lifecycle","isEstimated":false}`,
			zone, 40*len(zone), hour, hour)
		switch {
		case strings.HasSuffix(r.URL.Path, "/latest"):
			fmt.Fprint(w, point)
		case strings.HasSuffix(r.URL.Path, "/history"):
			fmt.Fprintf(w, `{"zone":%q,"history":[%s]}`, zone, point)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("P4CTL_TEST_EM_TOKEN", "test-token")

	cfg := loadConfig(t)
	cfg.Carbon = config.Carbon{Source: config.SourceElectricityMapsAPI, URL: srv.URL, TokenEnv: "P4CTL_TEST_EM_TOKEN",
		StalenessBound: config.Duration{Duration: 3 * time.Hour}}
	src, err := carbonapi.FromConfig(cfg, carbonapi.Options{Now: clk.Now, Retry: carbonapi.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(src.Describe(), "test-token") {
		t.Fatal("the token leaks into the source description")
	}
	r := newRig(t, cfg)
	m := controller.NewMetrics()
	ctl, err := controller.New(controller.Options{Config: cfg, Feed: &controller.CarbonFeed{Source: src},
		Targets: []controller.Target{{Name: "sw", Client: r.srv.Dial(t, electionOne())}},
		Driver:  controller.DriverOptions{Grace: -1, Metrics: m}, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := ctl.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	p, _, err := ctl.Step(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Stale || p.Effective != regions.PolicyC || calls.Load() == 0 {
		t.Fatalf("fresh data: stale %v policy %s (%s), %d API calls", p.Stale, p.Effective, p.Reason, calls.Load())
	}
	if !strings.Contains(p.Source, "Electricity Maps") {
		t.Errorf("source %q", p.Source)
	}
	r.checkRoutes(t, cfg, p)

	// The API goes down; within the bound the last known values are used.
	down.Store(true)
	clk.Set(clk.Now().Add(2 * time.Hour))
	p, _, err = ctl.Step(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Stale || p.Effective != regions.PolicyC {
		t.Fatalf("2 h old data: stale %v policy %s (%s)", p.Stale, p.Effective, p.Reason)
	}
	// Past the bound: the safe policy.
	clk.Set(clk.Now().Add(2 * time.Hour))
	p, _, err = ctl.Step(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !p.Stale || p.Effective != controller.SafePolicy || !strings.Contains(p.Reason, "stale") {
		t.Fatalf("4 h old data: stale %v policy %s (%s)", p.Stale, p.Effective, p.Reason)
	}
	assertExactly(t, ctl.Drivers()[0], p)
	sites, _ := cfg.RoutingSites()
	for i := range cfg.Sites {
		for _, sla := range slas {
			if got, want := r.route(t, i, uint32(sla), sla), regions.Nearest(sites[i], cfg.Pool()); got != uint8(want) {
				t.Fatalf("safe policy: site %d sla %d → %d, nearest %d", i, sla, got, want)
			}
		}
	}
	body := gather(t, m)
	for _, want := range []string{"p4ctl_carbon_stale 1", `p4ctl_policy{configured="C",effective="A"} 1`, `p4ctl_carbon_zone_stale{zone="IN-WE"} 1`} {
		if !hasLine(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The API is back: policy C again.
	down.Store(false)
	clk.Set(clk.Now().Add(time.Hour))
	p, _, err = ctl.Step(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.Stale || p.Effective != regions.PolicyC {
		t.Fatalf("recovered: stale %v policy %s (%s)", p.Stale, p.Effective, p.Reason)
	}
	assertExactly(t, ctl.Drivers()[0], p)
	r.checkRoutes(t, cfg, p)
}

func electionOne() p4rt.Option { return p4rt.WithElectionID(p4rt.Election(1)) }

// gather renders the metrics in the Prometheus text format.
func gather(t *testing.T, m *controller.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// Staleness is judged on the clock, not after a refresh returns: with an
// Electricity Maps endpoint that hangs (every request waits until the
// client gives up), the daemon compiles the safe policy within a second of
// the cached data crossing the staleness bound although a refresh is in
// flight, and p4ctl_carbon_stale says so at once.
func TestStaleWhileRefreshHangs(t *testing.T) {
	clk := &fakeClock{}
	clk.Set(time.Date(2025, 1, 15, 10, 20, 0, 0, time.UTC))
	// The newest value is from 07:30: 2h50m old at 10:20, past the 3 h
	// bound at 10:30, well before the next hourly tick (11:00).
	dataTime := time.Date(2025, 1, 15, 7, 30, 0, 0, time.UTC)
	var hang atomic.Bool
	release := make(chan struct{})
	hung := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			select {
			case hung <- struct{}{}:
			default:
			}
			select { // hang until the client gives up (or the test ends)
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		zone := r.URL.Query().Get("zone")
		point := fmt.Sprintf(`{"zone":%q,"carbonIntensity":%d,"datetime":%q,"emissionFactorType":"lifecycle","isEstimated":false}`,
			zone, 40*len(zone), dataTime.Format(time.RFC3339))
		switch {
		case strings.HasSuffix(r.URL.Path, "/latest"):
			fmt.Fprint(w, point)
		case strings.HasSuffix(r.URL.Path, "/history"):
			fmt.Fprintf(w, `{"zone":%q,"history":[%s]}`, zone, point)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close: handlers return
	t.Setenv("P4CTL_TEST_EM_TOKEN", "test-token")

	cfg := loadConfig(t)
	cfg.Carbon = config.Carbon{Source: config.SourceElectricityMapsAPI, URL: srv.URL, TokenEnv: "P4CTL_TEST_EM_TOKEN",
		StalenessBound: config.Duration{Duration: 3 * time.Hour}}
	// The production defaults for timeouts and retries: a refresh against
	// the hanging API would take minutes.
	src, err := carbonapi.FromConfig(cfg, carbonapi.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, cfg)
	m := controller.NewMetrics()
	ctl, err := controller.New(controller.Options{Config: cfg, Feed: &controller.CarbonFeed{Source: src},
		Targets: []controller.Target{{Name: "sw", Client: r.srv.Dial(t, electionOne())}},
		Clock:   clk, RefreshInterval: 5 * time.Minute,
		Driver: controller.DriverOptions{Grace: -1, Metrics: m}, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	d := ctl.Drivers()[0]
	waitFor(t, "policy C on the switch", 10*time.Second, func() bool {
		p := ctl.Current()
		return p != nil && p.Effective == regions.PolicyC && d.Client().State().Primary && inState(ctx, d, p)
	})

	// The API hangs; the next refresh (due at 10:25) starts and hangs.
	hang.Store(true)
	clk.Set(time.Date(2025, 1, 15, 10, 26, 0, 0, time.UTC))
	select {
	case <-hung:
	case <-time.After(10 * time.Second):
		t.Fatal("no refresh started after the refresh interval")
	}
	// The data crosses the bound (10:30) while the refresh is in flight.
	clk.Set(time.Date(2025, 1, 15, 10, 30, 1, 0, time.UTC))
	crossed := time.Now()
	deadline := crossed.Add(time.Second)
	for {
		p := ctl.Current()
		if p.Stale && p.Effective == controller.SafePolicy && hasLine(gather(t, m), "p4ctl_carbon_stale 1") && inState(ctx, d, p) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("1 s after the bound was crossed: plan stale %v policy %s (%s)", p.Stale, p.Effective, p.Reason)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("safe policy on the switch and p4ctl_carbon_stale 1 %s after the bound was crossed", time.Since(crossed).Round(time.Millisecond))
	sites, _ := cfg.RoutingSites()
	for i := range cfg.Sites {
		for _, sla := range slas {
			if got, want := r.route(t, i, uint32(sla), sla), regions.Nearest(sites[i], cfg.Pool()); got != uint8(want) {
				t.Fatalf("safe policy: site %d sla %d → %d, nearest %d", i, sla, got, want)
			}
		}
	}
}
