package carbonapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func newEMClient(t *testing.T, base string, o Options) *ElectricityMaps {
	t.Helper()
	c, err := NewElectricityMaps(ElectricityMapsConfig{BaseURL: base, Token: NewSecret(emTestToken)}, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fixtureServer serves testdata files by path and checks the auth-token.
func fixtureServer(t *testing.T, files map[string]string) *fakeAPI {
	return newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("auth-token") != emTestToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		name, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(fixture(t, name))
	})
}

func TestElectricityMapsFixtures(t *testing.T) {
	srv := fixtureServer(t, map[string]string{
		"/v3/carbon-intensity/latest":   "em_latest.json",
		"/v3/carbon-intensity/history":  "em_history.json",
		"/v3/carbon-intensity/forecast": "em_forecast.json",
	})
	c := newEMClient(t, srv.srv.URL, testOptions(newClock(tRef()), nil, nil))
	ctx := context.Background()

	p, err := c.Latest(ctx, "DE")
	if err != nil {
		t.Fatal(err)
	}
	want := Point{Time: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC), Value: 412,
		UpdatedAt: time.Date(2025, 1, 15, 10, 41, 7, 123e6, time.UTC), Estimated: true}
	if p != want {
		t.Errorf("latest %+v, want %+v", p, want)
	}

	hist, err := c.History(ctx, "DE")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 11 { // 12 hours, one null
		t.Fatalf("history: %d points, want 11 (the null hour left out)", len(hist))
	}
	if hist[0].Value != 388 || !hist[0].Time.Equal(time.Date(2025, 1, 14, 12, 0, 0, 0, time.UTC)) || hist[0].Estimated {
		t.Errorf("history[0] = %+v", hist[0])
	}
	last := hist[len(hist)-1]
	if last.Value != 411 || last.Time.Hour() != 23 || !last.Estimated {
		t.Errorf("history last = %+v", last)
	}
	for _, p := range hist {
		if p.Time.Hour() == 22 {
			t.Errorf("the null hour 22:00 is in the history: %+v", p)
		}
	}

	fc, upd, err := c.Forecast(ctx, "DE")
	if err != nil {
		t.Fatal(err)
	}
	if len(fc) != 6 || fc[0].Value != 409 || fc[5].Value != 425 || fc[0].Time.Hour() != 11 {
		t.Errorf("forecast %+v", fc)
	}
	if !upd.Equal(time.Date(2025, 1, 15, 10, 5, 31, 870e6, time.UTC)) {
		t.Errorf("forecast updatedAt %v", upd)
	}

	// Every request named the zone and the emission factor.
	for _, q := range srv.queries {
		if !strings.Contains(q, "zone=DE") || !strings.Contains(q, "emissionFactorType=lifecycle") {
			t.Errorf("request %s lacks zone or emissionFactorType", q)
		}
	}
}

func TestElectricityMapsDirect(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	c, err := NewElectricityMaps(ElectricityMapsConfig{BaseURL: srv.srv.URL, Token: NewSecret(emTestToken), EmissionFactor: Direct}, testOptions(clk, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Latest(context.Background(), "IE"); err != nil {
		t.Fatal(err)
	}
	if q := srv.queries[0]; !strings.Contains(q, "emissionFactorType=direct") {
		t.Errorf("request %s did not ask for direct", q)
	}
	// A server that ignores the parameter is caught.
	lifecycle := fixtureServer(t, map[string]string{"/v3/carbon-intensity/latest": "em_latest.json"})
	c2, _ := NewElectricityMaps(ElectricityMapsConfig{BaseURL: lifecycle.srv.URL, Token: NewSecret(emTestToken), EmissionFactor: Direct}, testOptions(clk, nil, nil))
	_, err = c2.Latest(context.Background(), "DE")
	if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), `emissionFactorType "lifecycle", asked for "direct"`) {
		t.Errorf("got %v, want a bad-response error about the emission factor", err)
	}
}

func TestElectricityMapsConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  ElectricityMapsConfig
		want string
	}{
		{ElectricityMapsConfig{Token: NewSecret("x")}, ""},
		{ElectricityMapsConfig{}, "empty token"},
		{ElectricityMapsConfig{Token: NewSecret("abcd"), EmissionFactor: "lca"}, `emission factor "lca"`},
		{ElectricityMapsConfig{Token: NewSecret("abcd"), BaseURL: "ftp://x"}, "want http(s)"},
		{ElectricityMapsConfig{Token: NewSecret("abcd"), BaseURL: "https://u:pw@host"}, "credentials in the URL"},
		{ElectricityMapsConfig{Token: NewSecret("abcd"), BaseURL: "https://host/?k=v"}, "no query"},
	} {
		_, err := NewElectricityMaps(c.cfg, Options{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.cfg.BaseURL, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.cfg.BaseURL, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("error quotes the URL's password: %v", err)
		}
	}
}

func TestElectricityMapsMalformed(t *testing.T) {
	type parse func([]byte) error
	latest := func(b []byte) error { _, err := parseEMLatest(b, "DE", Lifecycle); return err }
	history := func(b []byte) error { _, err := parseEMHistory(b, "DE", Lifecycle); return err }
	forecast := func(b []byte) error { _, _, err := parseEMForecast(b, "DE", Lifecycle); return err }
	ok := `"datetime":"2025-01-15T10:00:00.000Z"`
	for _, c := range []struct {
		name string
		p    parse
		body string
		want string
	}{
		{"not json", latest, `<html>502</html>`, "invalid character"},
		{"truncated", latest, `{"zone":"DE","carbonIntensity":4`, "unexpected end"},
		{"wrong type", latest, `{"zone":"DE","carbonIntensity":"412",` + ok + `}`, "cannot unmarshal"},
		{"wrong zone", latest, `{"zone":"FR","carbonIntensity":41,` + ok + `}`, `answer is for zone "FR"`},
		{"no zone", latest, `{"carbonIntensity":41,` + ok + `}`, `answer is for zone ""`},
		{"null intensity", latest, `{"zone":"DE","carbonIntensity":null,` + ok + `}`, "no carbonIntensity"},
		{"negative", latest, `{"zone":"DE","carbonIntensity":-1,` + ok + `}`, "outside [0, 2000]"},
		{"absurd", latest, `{"zone":"DE","carbonIntensity":412000,` + ok + `}`, "outside [0, 2000]"},
		{"bad datetime", latest, `{"zone":"DE","carbonIntensity":41,"datetime":"15/01/2025 10:00"}`, "not RFC 3339"},
		{"no datetime", latest, `{"zone":"DE","carbonIntensity":41}`, "not RFC 3339"},
		{"bad updatedAt", latest, `{"zone":"DE","carbonIntensity":41,` + ok + `,"updatedAt":"yesterday"}`, "updatedAt"},
		{"history wrong zone", history, `{"zone":"FR","history":[]}`, `answer is for zone "FR"`},
		{"history no array", history, `{"zone":"DE"}`, "no history array"},
		{"history item zone", history, `{"zone":"DE","history":[{"zone":"FR","carbonIntensity":1,` + ok + `}]}`, `item 0 is for zone "FR"`},
		{"history unsorted", history, `{"zone":"DE","history":[{"carbonIntensity":1,"datetime":"2025-01-15T10:00:00Z"},{"carbonIntensity":1,"datetime":"2025-01-15T09:00:00Z"}]}`, "not after the previous"},
		{"history duplicate", history, `{"zone":"DE","history":[{"carbonIntensity":1,` + ok + `},{"carbonIntensity":2,` + ok + `}]}`, "not after the previous"},
		{"forecast no array", forecast, `{"zone":"DE","forecast":null}`, "no forecast array"},
		{"forecast bad updatedAt", forecast, `{"zone":"DE","forecast":[],"updatedAt":"soon"}`, "updatedAt"},
		{"forecast absurd", forecast, `{"zone":"DE","forecast":[{"carbonIntensity":1e300,` + ok + `}]}`, "outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.p([]byte(c.body))
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrBadResponse mentioning %q", err, c.want)
			}
		})
	}
}

func TestElectricityMapsWrongZoneOverHTTP(t *testing.T) {
	srv := fixtureServer(t, map[string]string{"/v3/carbon-intensity/latest": "em_latest.json"})
	c := newEMClient(t, srv.srv.URL, testOptions(newClock(tRef()), nil, nil))
	_, err := c.Latest(context.Background(), "FR")
	if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), `zone FR`) || !strings.Contains(err.Error(), `answer is for zone "DE"`) {
		t.Errorf("got %v", err)
	}
	if n := srv.count("/v3/carbon-intensity/latest"); n != 1 {
		t.Errorf("a bad 200 answer was retried: %d calls", n)
	}
}

func TestPointsFinite(t *testing.T) {
	// JSON cannot carry NaN, but the check must hold for any value.
	p := emPoint{Zone: "DE", CarbonIntensity: new(math.NaN()), Datetime: "2025-01-15T10:00:00Z"}
	if _, err := p.point("DE", "latest", Lifecycle); !errors.Is(err, ErrBadResponse) {
		t.Errorf("NaN accepted: %v", err)
	}
}
