package carbonapi

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func newWTClient(t *testing.T, base, pass string, o Options) *WattTime {
	t.Helper()
	c, err := NewWattTime(WattTimeConfig{BaseURL: base, Username: wtTestUser, Password: NewSecret(pass)}, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWattTimeFixtures(t *testing.T) {
	f, err := parseWTForecast(fixture(t, "wt_forecast.json"), "IE")
	if err != nil {
		t.Fatal(err)
	}
	if !f.GeneratedAt.Equal(time.Date(2025, 1, 15, 10, 35, 0, 0, time.UTC)) || f.Period != 5*time.Minute || len(f.Points) != 19 {
		t.Fatalf("forecast %v %v %d points", f.GeneratedAt, f.Period, len(f.Points))
	}
	// 900 lbs/MWh is 408.2328 gCO2/kWh.
	if got, want := f.Points[0].Value, 900*0.453592; math.Abs(got-want) > 1e-9 {
		t.Errorf("first point %v g/kWh, want %v", got, want)
	}
	hours := hourlyMeans(f)
	want := []struct {
		hour     int
		lbs      float64
		forecast bool
	}{
		{10, (900 + 910 + 920 + 930 + 940) / 5.0, false}, // the hour of generated_at: real-time
		{11, (950 + 11*1000) / 12.0, true},
		{12, (1000 + 800) / 2.0, true},
	}
	if len(hours) != len(want) {
		t.Fatalf("hours %+v", hours)
	}
	for i, w := range want {
		h := hours[i]
		if h.Hour.Hour() != w.hour || math.Abs(h.Value-w.lbs*LbsPerMWhInGPerKWh) > 1e-9 || h.Forecast != w.forecast || !h.Estimated || !h.DataTime.Equal(f.GeneratedAt) {
			t.Errorf("hour %d: %+v, want %.4f g/kWh forecast=%v", w.hour, h, w.lbs*LbsPerMWhInGPerKWh, w.forecast)
		}
	}

	idx, err := parseWTIndex(fixture(t, "wt_signal_index.json"), "CAISO_NORTH")
	if err != nil {
		t.Fatal(err)
	}
	if idx.Percentile != 37 || idx.Region != "CAISO_NORTH" || idx.Time.Minute() != 35 {
		t.Errorf("index %+v", idx)
	}
	tok, err := parseWTLogin(fixture(t, "wt_login.json"))
	if err != nil || tok.v() != "fixture-token-not-real" {
		t.Errorf("login: %v", err)
	}
}

func TestUnitConversion(t *testing.T) {
	for _, c := range []struct{ lbs, g float64 }{
		{0, 0},
		{1, 0.453592},
		{1000, 453.592},
		{2204.6226218, 1000}, // 1 t/MWh
	} {
		body := `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":` + fmtF(c.lbs) + `}],"meta":{"region":"IE","signal_type":"co2_moer","units":"lbs_co2_per_mwh","generated_at":"2025-01-15T10:00:00Z"}}`
		f, err := parseWTForecast([]byte(body), "IE")
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Points[0].Value; math.Abs(got-c.g) > 1e-3 {
			t.Errorf("%v lbs/MWh = %v g/kWh, want %v", c.lbs, got, c.g)
		}
	}
	// More than regions.MaxIntensity g/kWh after conversion is a unit error.
	body := `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":5000}],"meta":{"region":"IE","units":"lbs_co2_per_mwh"}}`
	if _, err := parseWTForecast([]byte(body), "IE"); !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), "5000 lbs/MWh = 2268.0 g/kWh") {
		t.Errorf("got %v (MaxIntensity %d)", err, regions.MaxIntensity)
	}
}

func TestWattTimeMalformed(t *testing.T) {
	index := func(b []byte) error { _, err := parseWTIndex(b, "IE"); return err }
	forecast := func(b []byte) error { _, err := parseWTForecast(b, "IE"); return err }
	login := func(b []byte) error { _, err := parseWTLogin(b); return err }
	meta := func(units string) string {
		return `"meta":{"region":"IE","signal_type":"co2_moer","units":"` + units + `"}`
	}
	pt := `{"point_time":"2025-01-15T10:00:00Z","value":50}`
	for _, c := range []struct {
		name string
		p    func([]byte) error
		body string
		want string
	}{
		{"not json", forecast, `Service Unavailable`, "invalid character"},
		{"no meta", forecast, `{"data":[` + pt + `]}`, "no meta"},
		{"wrong region", forecast, `{"data":[` + pt + `],"meta":{"region":"DE","units":"lbs_co2_per_mwh"}}`, `asked for region IE, answer is for "DE"`},
		{"wrong signal", forecast, `{"data":[` + pt + `],"meta":{"region":"IE","signal_type":"health_damage","units":"lbs_co2_per_mwh"}}`, `signal_type "health_damage"`},
		{"percentile as intensity", forecast, `{"data":[` + pt + `],` + meta("percentile") + `}`, `units "percentile", want "lbs_co2_per_mwh"`},
		{"unknown units", forecast, `{"data":[` + pt + `],` + meta("kg_co2_per_mwh") + `}`, `units "kg_co2_per_mwh"`},
		{"no data", forecast, `{"data":[],` + meta("lbs_co2_per_mwh") + `}`, "no data points"},
		{"null value", forecast, `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":null}],` + meta("lbs_co2_per_mwh") + `}`, "no value"},
		{"negative", forecast, `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":-5}],` + meta("lbs_co2_per_mwh") + `}`, "outside"},
		{"bad time", forecast, `{"data":[{"point_time":"10:00","value":5}],` + meta("lbs_co2_per_mwh") + `}`, "not RFC 3339"},
		{"unsorted", forecast, `{"data":[{"point_time":"2025-01-15T10:05:00Z","value":5},` + pt + `],` + meta("lbs_co2_per_mwh") + `}`, "not after the previous"},
		{"bad generated_at", forecast, `{"data":[` + pt + `],"meta":{"region":"IE","units":"lbs_co2_per_mwh","generated_at":"now"}}`, "not RFC 3339"},
		{"index as MOER", index, `{"data":[` + pt + `],` + meta("lbs_co2_per_mwh") + `}`, `want "percentile"`},
		{"index over 100", index, `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":101}],` + meta("percentile") + `}`, "outside [0, 100]"},
		{"index null", index, `{"data":[{"point_time":"2025-01-15T10:00:00Z"}],` + meta("percentile") + `}`, "no value"},
		{"login no token", login, `{"tok":"x"}`, "no token"},
		{"login not json", login, `token=abc`, "not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.p([]byte(c.body))
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrBadResponse mentioning %q", err, c.want)
			}
		})
	}
}

func TestWattTimeLoginReuseAndExpiry(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	c := newWTClient(t, srv.srv.URL, wtTestPass, testOptions(clk, &sleeper{}, nil))
	ctx := context.Background()
	for range 3 {
		if _, err := c.Forecast(ctx, "IE"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SignalIndex(ctx, "IE"); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/login"); n != 1 {
		t.Errorf("%d logins for 4 requests, want 1 (token reused)", n)
	}
	clk.Add(DefaultWattTimeTokenTTL + time.Second)
	if _, err := c.Forecast(ctx, "IE"); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/login"); n != 2 {
		t.Errorf("%d logins after the token's lifetime, want 2", n)
	}
}

func TestWattTime401Relogin(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	c := newWTClient(t, srv.srv.URL, wtTestPass, testOptions(clk, &sleeper{}, nil))
	ctx := context.Background()
	if _, err := c.Forecast(ctx, "IE"); err != nil {
		t.Fatal(err)
	}
	srv.revoke() // the server forgets the token before its expiry
	f, err := c.Forecast(ctx, "IE")
	if err != nil {
		t.Fatalf("after revocation: %v", err)
	}
	if len(f.Points) == 0 {
		t.Error("no points")
	}
	if n := srv.count("/login"); n != 2 {
		t.Errorf("%d logins, want 2 (one re-login after the 401)", n)
	}
	if n := srv.count("/v3/forecast"); n != 3 {
		t.Errorf("%d forecast requests, want 3 (ok, 401, ok)", n)
	}
}

func TestWattTimeBadCredentials(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	c := newWTClient(t, srv.srv.URL, "not-the-password", testOptions(clk, &sleeper{}, nil))
	_, err := c.Forecast(context.Background(), "IE")
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("got %v, want ErrAuth", err)
	}
	if n := srv.count("/v3/forecast"); n != 0 {
		t.Errorf("%d data requests without a token", n)
	}
	if n := srv.count("/login"); n != 1 {
		t.Errorf("%d logins, want 1 (a 401 login is not retried)", n)
	}
}

func TestWattTimePersistent401(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	c := newWTClient(t, srv.srv.URL, wtTestPass, testOptions(clk, &sleeper{}, nil))
	srv.push("/v3/forecast", canned{status: 401}, canned{status: 401}, canned{status: 401})
	_, err := c.Forecast(context.Background(), "IE")
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("got %v, want ErrAuth", err)
	}
	if n := srv.count("/login"); n != 2 {
		t.Errorf("%d logins, want 2 (one re-login, then give up)", n)
	}
}

func TestWattTimeLoginRateLimited(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	srv.push("/login", canned{status: 429, header: map[string]string{"Retry-After": "1"}})
	sl := &sleeper{}
	c := newWTClient(t, srv.srv.URL, wtTestPass, testOptions(clk, sl, nil))
	if _, err := c.SignalIndex(context.Background(), "CAISO_NORTH"); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); len(got) != 1 || got[0] != time.Second {
		t.Errorf("waits %v, want [1s]", got)
	}
}

func TestWattTimeRequests(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	c := newWTClient(t, srv.srv.URL, wtTestPass, testOptions(clk, &sleeper{}, nil))
	if _, err := c.SignalIndex(context.Background(), "CAISO_NORTH"); err != nil {
		t.Fatal(err)
	}
	want := []string{"/login", "/v3/signal-index?region=CAISO_NORTH&signal_type=co2_moer"}
	if strings.Join(srv.queries, " ") != strings.Join(want, " ") {
		t.Errorf("requests %v, want %v", srv.queries, want)
	}
}

func TestWattTimeRegionsCoverCatalog(t *testing.T) {
	m := WattTimeRegions()
	// The paper's twelve zones have a built-in WattTime region; the zones
	// appended by issue 14 need carbon.watttime_regions (FromConfig says
	// so, naming them), because their WattTime names were not checked.
	if len(m) != regions.MeasuredRegions {
		t.Fatalf("%d mappings, want one per measured catalog region (%d)", len(m), regions.MeasuredRegions)
	}
	seen := map[string]bool{}
	for _, z := range regions.Zones()[:regions.MeasuredRegions] {
		r, ok := WattTimeRegionOf(z, nil)
		if !ok || r == "" {
			t.Errorf("zone %s has no WattTime region", z)
		}
		if seen[r] {
			t.Errorf("WattTime region %s used twice", r)
		}
		seen[r] = true
	}
	for _, e := range m {
		if e.Match == "" {
			t.Errorf("%s: no match note", e.Zone)
		}
	}
	if r, _ := WattTimeRegionOf("US-MIDA-PJM", map[string]string{"US-MIDA-PJM": "PJM_NJ"}); r != "PJM_NJ" {
		t.Errorf("override ignored: %s", r)
	}
	if _, ok := WattTimeRegionOf("FR", nil); ok {
		t.Error("FR mapped without an override")
	}
	if r, ok := WattTimeRegionOf("FR", map[string]string{"FR": "FR"}); !ok || r != "FR" {
		t.Error("override for a non-catalog zone ignored")
	}
}

func TestWattTimeConfigErrors(t *testing.T) {
	if _, err := NewWattTime(WattTimeConfig{Username: "u"}, Options{}); err == nil {
		t.Error("no password accepted")
	}
	if _, err := NewWattTime(WattTimeConfig{Password: NewSecret("pw-long")}, Options{}); err == nil {
		t.Error("no username accepted")
	}
	c, err := NewWattTime(WattTimeConfig{Username: "u", Password: NewSecret("pw-long")}, Options{})
	if err != nil || c.BaseURL() != DefaultWattTimeURL {
		t.Errorf("defaults: %v %v", err, c)
	}
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
