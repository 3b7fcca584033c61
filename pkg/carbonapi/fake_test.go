package carbonapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// sleeper records waits instead of sleeping.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// canned is one scripted answer.
type canned struct {
	status int
	header map[string]string
	body   string
}

// fakeAPI is an httptest server speaking one API. Scripted answers (per
// path) are served first; then handler answers.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	script  map[string][]canned
	calls   map[string]int
	queries []string
	handler func(w http.ResponseWriter, r *http.Request)
}

func newFakeAPI(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *fakeAPI {
	f := &fakeAPI{t: t, script: map[string][]canned{}, calls: map[string]int{}, handler: handler}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	f.queries = append(f.queries, r.URL.RequestURI())
	var c *canned
	if q := f.script[r.URL.Path]; len(q) > 0 {
		c = &q[0]
		f.script[r.URL.Path] = q[1:]
	}
	h := f.handler
	f.mu.Unlock()
	if c != nil {
		for k, v := range c.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(c.status)
		_, _ = w.Write([]byte(c.body))
		return
	}
	h(w, r)
}

// push queues scripted answers for path.
func (f *fakeAPI) push(path string, cs ...canned) {
	f.mu.Lock()
	f.script[path] = append(f.script[path], cs...)
	f.mu.Unlock()
}

func (f *fakeAPI) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeAPI) setHandler(h func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	f.handler = h
	f.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// emServer is a fake Electricity Maps API. Its values follow the fake
// clock: latest is the clock's hour, history the 24 hours before it,
// forecast the 6 after. value(zone, hour) gives the numbers.
type emServer struct {
	*fakeAPI
	token string
	now   func() time.Time
	value func(zone string, h time.Time) float64
	// echo makes error bodies quote the token the request carried (a
	// careless server), to test redaction.
	echo bool
}

const emTestToken = "em-tok-7Hq2-SECRET"

func emValue(zone string, h time.Time) float64 {
	v := 100.0
	for _, c := range zone {
		v += float64(c % 50)
	}
	return v + float64(h.Hour())
}

func newEMServer(t *testing.T, now func() time.Time) *emServer {
	s := &emServer{token: emTestToken, now: now, value: emValue}
	s.fakeAPI = newFakeAPI(t, s.handle)
	return s
}

func (s *emServer) handle(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("auth-token"); got != s.token {
		w.WriteHeader(http.StatusUnauthorized)
		msg := "invalid auth-token"
		if s.echo {
			msg += " " + got
		}
		writeJSON(w, map[string]string{"message": msg})
		return
	}
	zone := r.URL.Query().Get("zone")
	factor := r.URL.Query().Get("emissionFactorType")
	if factor == "" {
		factor = Lifecycle
	}
	nowH := s.now().UTC().Truncate(time.Hour)
	obj := func(h time.Time, forecast bool) map[string]any {
		m := map[string]any{"carbonIntensity": s.value(zone, h), "datetime": h.Format("2006-01-02T15:04:05.000Z")}
		if !forecast {
			m["zone"] = zone
			m["updatedAt"] = h.Add(20 * time.Minute).Format(time.RFC3339Nano)
			m["emissionFactorType"] = factor
			m["isEstimated"] = h.Equal(nowH)
		}
		return m
	}
	switch r.URL.Path {
	case "/v3/carbon-intensity/latest":
		writeJSON(w, obj(nowH, false))
	case "/v3/carbon-intensity/history":
		var hist []map[string]any
		for h := nowH.Add(-24 * time.Hour); h.Before(nowH); h = h.Add(time.Hour) {
			hist = append(hist, obj(h, false))
		}
		writeJSON(w, map[string]any{"zone": zone, "history": hist})
	case "/v3/carbon-intensity/forecast":
		var fc []map[string]any
		for h := nowH.Add(time.Hour); h.Before(nowH.Add(7 * time.Hour)); h = h.Add(time.Hour) {
			fc = append(fc, obj(h, true))
		}
		writeJSON(w, map[string]any{"zone": zone, "forecast": fc, "updatedAt": nowH.Format(time.RFC3339)})
	default:
		http.NotFound(w, r)
	}
}

// wtServer is a fake WattTime API: Basic-auth login issuing numbered
// tokens, and forecasts that follow the fake clock.
type wtServer struct {
	*fakeAPI
	user, pass string
	now        func() time.Time
	lbs        func(region string, t time.Time) float64

	mu     sync.Mutex
	issued int
	valid  map[string]bool
	echo   bool
}

const (
	wtTestUser = "p4ctl-ci"
	wtTestPass = "wt-pass-Zx91-SECRET"
)

func newWTServer(t *testing.T, now func() time.Time) *wtServer {
	s := &wtServer{user: wtTestUser, pass: wtTestPass, now: now, valid: map[string]bool{},
		lbs: func(string, time.Time) float64 { return 1000 }}
	s.fakeAPI = newFakeAPI(t, s.handle)
	return s
}

// revoke invalidates every issued token (the next data request gets 401).
func (s *wtServer) revoke() {
	s.mu.Lock()
	s.valid = map[string]bool{}
	s.mu.Unlock()
}

func (s *wtServer) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/login" {
		u, p, ok := r.BasicAuth()
		if !ok || u != s.user || p != s.pass {
			w.WriteHeader(http.StatusUnauthorized)
			msg := "invalid credentials"
			if s.echo {
				msg += " for " + r.Header.Get("Authorization") + " " + p
			}
			writeJSON(w, map[string]string{"error": msg})
			return
		}
		s.mu.Lock()
		s.issued++
		tok := fmt.Sprintf("wt-session-%d-SECRET", s.issued)
		s.valid[tok] = true
		s.mu.Unlock()
		writeJSON(w, map[string]string{"token": tok})
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	ok := s.valid[tok]
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		msg := "token expired"
		if s.echo {
			msg += ": " + tok
		}
		writeJSON(w, map[string]string{"error": msg})
		return
	}
	region := r.URL.Query().Get("region")
	if r.URL.Query().Get("signal_type") != "co2_moer" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	now := s.now().UTC().Truncate(5 * time.Minute)
	meta := map[string]any{"region": region, "signal_type": "co2_moer", "data_point_period_seconds": 300, "warnings": []any{}}
	switch r.URL.Path {
	case "/v3/signal-index":
		meta["units"] = "percentile"
		writeJSON(w, map[string]any{"data": []any{map[string]any{"point_time": now.Format(time.RFC3339), "value": 42.0}}, "meta": meta})
	case "/v3/forecast":
		meta["units"] = "lbs_co2_per_mwh"
		meta["generated_at"] = now.Format(time.RFC3339)
		var data []any
		for t := now; t.Before(now.Add(3 * time.Hour)); t = t.Add(5 * time.Minute) {
			data = append(data, map[string]any{"point_time": t.Format(time.RFC3339), "value": s.lbs(region, t)})
		}
		writeJSON(w, map[string]any{"data": data, "meta": meta})
	default:
		http.NotFound(w, r)
	}
}

// testOptions returns Options with the fake clock, a recording sleeper and
// a logger writing into buf.
func testOptions(c *clock, sl *sleeper, buf *bytes.Buffer) Options {
	o := Options{Now: c.Now, Retry: Retry{Attempts: 4, Base: 100 * time.Millisecond, Max: 10 * time.Second}, Timeout: 5 * time.Second}
	if sl != nil {
		o.sleep = sl.sleep
	}
	if buf != nil {
		o.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// tRef is the tests' reference time: 2025-01-15 10:20 UTC.
func tRef() time.Time { return time.Date(2025, 1, 15, 10, 20, 0, 0, time.UTC) }
