package controller_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/regions/carbonapi"
)

// fakeClock is a settable clock for the live source's staleness.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

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
