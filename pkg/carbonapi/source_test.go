package carbonapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

func newEMSource(t *testing.T, srv *emServer, clk *clock, zones []string, bound time.Duration) *Source {
	t.Helper()
	s, err := New(Config{Kind: config.SourceElectricityMapsAPI, BaseURL: srv.srv.URL, Token: NewSecret(emTestToken),
		Zones: zones, StalenessBound: bound}, testOptions(clk, &sleeper{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSourceStalenessTransitions(t *testing.T) {
	clk := newClock(tRef()) // 10:20
	srv := newEMServer(t, clk.Now)
	src := newEMSource(t, srv, clk, []string{"DE", "IE"}, 3*time.Hour)
	ctx := context.Background()

	// Never fetched: stale, with no value at all.
	err := src.Check()
	var se *StaleError
	if !errors.Is(err, ErrStale) || !errors.As(err, &se) || se.Age >= 0 {
		t.Fatalf("before any fetch: %v, want a StaleError without a value", err)
	}
	if st := src.Status()[0]; st.HasData || !st.Stale || !math.IsInf(st.AgeSeconds(), 1) {
		t.Errorf("status before any fetch: %+v", st)
	}

	if err := src.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	h10 := tRef().Truncate(time.Hour)
	v10 := emValue("DE", h10)
	if v, err := src.Intensity("DE", clk.Now()); err != nil || v != v10 {
		t.Fatalf("fresh: %v %v, want %v", v, err, v10)
	}
	if err := src.Check(); err != nil {
		t.Errorf("fresh: Check = %v", err)
	}
	st := src.Status()[0]
	if st.Zone != "DE" || !st.HasData || st.Stale || st.Age != 20*time.Minute || !st.FetchedAt.Equal(tRef()) || st.LastError != "" {
		t.Errorf("fresh status %+v", st)
	}

	// The API goes down: every request fails with 500.
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	for _, c := range []struct {
		at    time.Duration // after 10:20
		stale bool
	}{
		{1 * time.Hour, false},                // 11:20, hour 10 is 1h20m old: last known value
		{2*time.Hour + 39*time.Minute, false}, // 12:59
		{2*time.Hour + 40*time.Minute, false}, // 13:00 exactly 3h: still within the bound
		{2*time.Hour + 41*time.Minute, true},  // 13:01: 3h01m > 3h
		{5 * time.Hour, true},
	} {
		clk.Set(tRef().Add(c.at))
		if err := src.Refresh(ctx); err == nil {
			t.Fatal("refresh against a failing API succeeded")
		}
		v, err := src.Intensity("DE", clk.Now())
		if !c.stale {
			if err != nil || v != v10 {
				t.Errorf("at +%v: %v %v, want the last known value %v", c.at, v, err, v10)
			}
			continue
		}
		if !errors.Is(err, ErrStale) || !errors.As(err, &se) {
			t.Fatalf("at +%v: %v, want ErrStale", c.at, err)
		}
		if se.Zone != "DE" || se.Bound != 3*time.Hour || se.Age != clk.Now().Sub(h10) || !se.Hour.Equal(h10) {
			t.Errorf("at +%v: %+v", c.at, se)
		}
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != 500 {
			t.Errorf("stale error does not carry the last fetch error: %v", err)
		}
		if !strings.Contains(err.Error(), "zone DE: newest value (hour 2025-01-15T10:00Z) is") {
			t.Errorf("message: %v", err)
		}
		if err := src.Check(); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "zone IE") {
			t.Errorf("Check at +%v: %v", c.at, err)
		}
		st := src.Status()[0]
		if !st.HasData || !st.Stale || st.Age <= 3*time.Hour || !strings.Contains(st.LastError, "500") || !st.FetchedAt.Equal(tRef()) {
			t.Errorf("stale status %+v", st)
		}
	}
	// Past hours stay servable as recorded, stale or not.
	if v, err := src.Intensity("DE", h10.Add(-5*time.Hour)); err != nil || v != emValue("DE", h10.Add(-5*time.Hour)) {
		t.Errorf("past hour: %v %v", v, err)
	}

	// Recovery.
	srv.setHandler(srv.handle)
	if err := src.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := src.Check(); err != nil {
		t.Errorf("after recovery: %v", err)
	}
	nowH := clk.Now().Truncate(time.Hour)
	if v, _ := src.Intensity("IE", clk.Now()); v != emValue("IE", nowH) {
		t.Errorf("after recovery: %v, want the new hour's %v", v, emValue("IE", nowH))
	}
}

func TestSourceHistoryPeriodAndTable(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	zones := []string{"IN-WE", "SG", "IE"}
	src := newEMSource(t, srv, clk, zones, 0)
	if src.StalenessBound() != config.DefaultStalenessBound {
		t.Errorf("default bound %v", src.StalenessBound())
	}
	ctx := context.Background()
	if err := src.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if err := src.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/v3/carbon-intensity/history"); n != len(zones) {
		t.Errorf("%d history requests, want one per zone (first refresh only)", n)
	}
	if n := srv.count("/v3/carbon-intensity/latest"); n != 2*len(zones) {
		t.Errorf("%d latest requests, want %d", n, 2*len(zones))
	}
	if n := srv.count("/v3/carbon-intensity/forecast"); n != 0 {
		t.Errorf("forecast fetched without Config.Forecast")
	}
	nowH := clk.Now().Truncate(time.Hour)
	p := src.Period()
	want := regions.Period{From: tRef().Truncate(time.Hour).Add(-24 * time.Hour), To: nowH.Add(time.Hour)}
	if p != want {
		t.Errorf("period %v, want %v", p, want)
	}
	if got := len(src.Cached("SG")); got != 26 {
		t.Errorf("%d cached hours, want 26 (24 history + 2 latest)", got)
	}

	// The daemon's use: a carbon table for the current hour.
	set := regions.SetOf(0, 1, 3) // Mumbai, Singapore, Ireland
	tab, err := regions.NewCarbonTable(src, set, regions.Period{From: nowH, To: nowH.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	hc, _ := tab.At(clk.Now())
	for i, z := range map[regions.Index]string{0: "IN-WE", 1: "SG", 3: "IE"} {
		if hc[i] != emValue(z, nowH) {
			t.Errorf("table %s = %v, want %v", z, hc[i], emValue(z, nowH))
		}
	}
	// A whole day back works too (history).
	if _, err := regions.NewCarbonTable(src, set, regions.Period{From: want.From, To: nowH}); err != nil {
		t.Errorf("history table: %v", err)
	}
	// Stale: NewCarbonTable's error is still ErrStale.
	clk.Add(4 * time.Hour)
	nowH = clk.Now().Truncate(time.Hour)
	_, err = regions.NewCarbonTable(src, set, regions.Period{From: nowH, To: nowH.Add(time.Hour)})
	if !errors.Is(err, ErrStale) {
		t.Errorf("stale table: %v, want ErrStale", err)
	}
	// Future hours and unknown zones are errors, not stale.
	if _, err := src.Intensity("SG", clk.Now().Add(time.Hour)); err == nil || errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "future hour") {
		t.Errorf("future: %v", err)
	}
	if _, err := src.Intensity("FR", clk.Now()); err == nil || errors.Is(err, ErrStale) {
		t.Errorf("unknown zone: %v", err)
	}
	// A past hour with no value.
	if _, err := src.Intensity("SG", want.From.Add(-time.Hour)); !errors.Is(err, ErrNoData) {
		t.Errorf("missing past hour: %v, want ErrNoData", err)
	}
	if src.Zones()[0] != "IE" || len(src.Zones()) != 3 {
		t.Errorf("zones %v", src.Zones())
	}
	if d := src.Describe(); !strings.Contains(d, "Electricity Maps API v3") || !strings.Contains(d, "lifecycle") || !strings.Contains(d, "3h0m0s") {
		t.Errorf("describe %q", d)
	}
}

func TestSourceRetention(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	src := newEMSource(t, srv, clk, []string{"DE"}, 0)
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Add(30 * time.Hour)
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range src.Cached("DE") {
		if clk.Now().Sub(r.Hour) > Retention {
			t.Errorf("hour %v kept beyond the retention", r.Hour)
		}
	}
}

func TestSourceHistoryFailureRetried(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push("/v3/carbon-intensity/history", canned{status: 404})
	src := newEMSource(t, srv, clk, []string{"DE"}, 0)
	err := src.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), "history (retried next refresh)") {
		t.Errorf("refresh: %v", err)
	}
	if err := src.Check(); err != nil {
		t.Errorf("latest arrived, yet Check = %v", err)
	}
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/v3/carbon-intensity/history"); n != 2 {
		t.Errorf("%d history requests, want 2", n)
	}
	if st := src.Status()[0]; st.LastError != "" {
		t.Errorf("last error kept after success: %q", st.LastError)
	}
}

func TestSourceForecast(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	src, err := New(Config{Kind: config.SourceElectricityMapsAPI, BaseURL: srv.srv.URL, Token: NewSecret(emTestToken),
		Zones: []string{"DE"}, Forecast: true}, testOptions(clk, &sleeper{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	fc := src.Forecast("DE")
	if len(fc) != 6 {
		t.Fatalf("forecast %+v", fc)
	}
	h11 := tRef().Truncate(time.Hour).Add(time.Hour)
	if !fc[0].Hour.Equal(h11) || fc[0].Value != emValue("DE", h11) || !fc[0].Forecast {
		t.Errorf("forecast[0] %+v", fc[0])
	}
	// Routing never reads forecasts.
	if _, err := src.Intensity("DE", h11); err == nil {
		t.Error("Intensity served a forecast hour")
	}
}

func TestWattTimeSource(t *testing.T) {
	clk := newClock(tRef()) // 10:20
	srv := newWTServer(t, clk.Now)
	srv.lbs = func(region string, ts time.Time) float64 {
		if region == "IE" {
			return 1000 + float64(ts.Hour())
		}
		return 500
	}
	src, err := New(Config{Kind: config.SourceWattTimeAPI, BaseURL: srv.srv.URL, Username: wtTestUser, Token: NewSecret(wtTestPass),
		Zones: []string{"IE", "DE", "US-MIDA-PJM"}, WattTimeRegions: map[string]string{"US-MIDA-PJM": "PJM_NJ"}}, testOptions(clk, &sleeper{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/login"); n != 1 {
		t.Errorf("%d logins for 3 zones, want 1", n)
	}
	v, err := src.Intensity("IE", clk.Now())
	if want := 1010 * LbsPerMWhInGPerKWh; err != nil || math.Abs(v-want) > 1e-9 {
		t.Errorf("IE now: %v %v, want %v", v, err, want)
	}
	found := false
	for _, q := range srv.queries {
		found = found || strings.Contains(q, "region=PJM_NJ")
	}
	if !found {
		t.Errorf("override not used: %v", srv.queries)
	}
	// The rest of the forecast is exposed, not routed.
	if fc := src.Forecast("IE"); len(fc) < 2 || !fc[0].Forecast || math.Abs(fc[0].Value-1011*LbsPerMWhInGPerKWh) > 1e-9 {
		t.Errorf("forecast %+v", fc)
	}
	// The API fails; the cached forecast covers the next hour (40 min old):
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	clk.Set(tRef().Add(40 * time.Minute)) // 11:00
	_ = src.Refresh(context.Background())
	v, err = src.Intensity("IE", clk.Now())
	if want := 1011 * LbsPerMWhInGPerKWh; err != nil || math.Abs(v-want) > 1e-9 {
		t.Errorf("IE 11:00 from the cached forecast: %v %v, want %v", v, err, want)
	}
	// Beyond the bound from generated_at (10:20): stale.
	clk.Set(tRef().Add(3*time.Hour + time.Minute))
	if _, err := src.Intensity("IE", clk.Now()); !errors.Is(err, ErrStale) {
		t.Errorf("13:21: %v, want ErrStale", err)
	}
	if d := src.Describe(); !strings.Contains(d, "marginal") || !strings.Contains(d, "0.453592") {
		t.Errorf("describe %q", d)
	}
}

func TestWattTimeSourceNeedsRegions(t *testing.T) {
	_, err := New(Config{Kind: config.SourceWattTimeAPI, Username: "u", Token: NewSecret("pw-long"), Zones: []string{"FR", "IE", "XX"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no WattTime region for zone(s) FR, XX") {
		t.Errorf("got %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Config{Kind: config.SourceElectricityMapsAPI, Token: NewSecret("abcd")}, Options{}); err == nil {
		t.Error("no zones accepted")
	}
	if _, err := New(Config{Kind: "csv", Token: NewSecret("abcd"), Zones: []string{"DE"}}, Options{}); err == nil {
		t.Error("kind csv accepted")
	}
}

func TestRefreshConcurrencyAndCancel(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	src := newEMSource(t, srv, clk, regions.Zones(), 0)
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := src.Check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := src.Refresh(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled refresh: %v", err)
	}
	if err := src.Check(); err != nil {
		t.Errorf("a cancelled refresh made the cache stale: %v", err)
	}
}

// StaleAt is the instant Check starts reporting stale data when nothing
// new arrives: the last instant before it is fresh, it is stale — for the
// last known value of Electricity Maps and for WattTime forecast hours,
// which carry the forecast's generation time into later hours.
func TestSourceStaleAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(t *testing.T, clk *clock) *Source
		want time.Time
	}{
		{"electricity maps, hour 10 published at 10:00", func(t *testing.T, clk *clock) *Source {
			return newEMSource(t, newEMServer(t, clk.Now), clk, []string{"DE", "IE"}, 3*time.Hour)
		}, time.Date(2025, 1, 15, 13, 0, 0, 1, time.UTC)},
		{"watttime, forecast generated at 10:20 for hours 10..13", func(t *testing.T, clk *clock) *Source {
			srv := newWTServer(t, clk.Now)
			s, err := New(Config{Kind: config.SourceWattTimeAPI, BaseURL: srv.srv.URL, Username: wtTestUser, Token: NewSecret(wtTestPass),
				Zones: []string{"IE"}, StalenessBound: 3 * time.Hour}, testOptions(clk, &sleeper{}, nil))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, time.Date(2025, 1, 15, 13, 20, 0, 1, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock(tRef())
			src := tc.src(t, clk)
			if _, ok := src.StaleAt(); ok {
				t.Fatal("never fetched: StaleAt says fresh")
			}
			if err := src.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			at, ok := src.StaleAt()
			if !ok || !at.Equal(tc.want) {
				t.Fatalf("StaleAt %s %v, want %s", at, ok, tc.want)
			}
			clk.Set(at.Add(-1))
			if err := src.Check(); err != nil {
				t.Errorf("just before StaleAt: %v", err)
			}
			if got, ok := src.StaleAt(); !ok || !got.Equal(at) {
				t.Errorf("just before StaleAt, StaleAt moved to %s %v", got, ok)
			}
			clk.Set(at)
			if err := src.Check(); !errors.Is(err, ErrStale) {
				t.Errorf("at StaleAt: Check = %v, want ErrStale", err)
			}
			if _, ok := src.StaleAt(); ok {
				t.Error("at StaleAt: still fresh")
			}
		})
	}
}

// A refresh against an API that never answers ends at its overall
// deadline, long before the per-attempt timeout, with ErrRefreshTimeout;
// the zones keep their cache.
func TestRefreshDeadline(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	o := testOptions(clk, &sleeper{}, nil)
	o.Timeout = time.Minute // one attempt alone would outlast the test
	o.RefreshTimeout = 50 * time.Millisecond
	src, err := New(Config{Kind: config.SourceElectricityMapsAPI, BaseURL: srv.srv.URL, Token: NewSecret(emTestToken),
		Zones: []string{"DE", "IE", "SG", "FR", "KR"}, StalenessBound: 3 * time.Hour}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.setHandler(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	start := time.Now()
	err = src.Refresh(context.Background())
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("refresh took %s: the overall deadline did not apply", el)
	}
	if !errors.Is(err, ErrRefreshTimeout) || !strings.Contains(err.Error(), "50ms") {
		t.Fatalf("refresh against a hanging API: %v, want ErrRefreshTimeout naming the deadline", err)
	}
	if err := src.Check(); err != nil {
		t.Errorf("the cache was lost: %v", err)
	}
	// A caller's own cancellation is not reported as the deadline.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.Refresh(ctx); errors.Is(err, ErrRefreshTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled refresh: %v", err)
	}
}
