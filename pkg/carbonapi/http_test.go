package carbonapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const latestPath = "/v3/carbon-intensity/latest"

func TestRetryAfterThenSuccess(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push(latestPath, canned{status: 429, header: map[string]string{"Retry-After": "2"}, body: `{"message":"Too many requests"}`})
	sl := &sleeper{}
	c := newEMClient(t, srv.srv.URL, testOptions(clk, sl, nil))
	p, err := c.Latest(context.Background(), "DE")
	if err != nil {
		t.Fatal(err)
	}
	if p.Value != emValue("DE", tRef().Truncate(time.Hour)) {
		t.Errorf("value %v", p.Value)
	}
	if got := sl.got(); len(got) != 1 || got[0] != 2*time.Second {
		t.Errorf("waits %v, want exactly the Retry-After [2s]", got)
	}
	if n := srv.count(latestPath); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push(latestPath, canned{status: 503, header: map[string]string{"Retry-After": tRef().Add(7 * time.Second).Format(http.TimeFormat)}})
	sl := &sleeper{}
	c := newEMClient(t, srv.srv.URL, testOptions(clk, sl, nil))
	if _, err := c.Latest(context.Background(), "DE"); err != nil {
		t.Fatal(err)
	}
	if got := sl.got(); len(got) != 1 || got[0] != 7*time.Second {
		t.Errorf("waits %v, want [7s] from the HTTP date", got)
	}
}

func TestServerErrorBackoff(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push(latestPath, canned{status: 500}, canned{status: 502}, canned{status: 503})
	sl := &sleeper{}
	o := testOptions(clk, sl, nil)
	c := newEMClient(t, srv.srv.URL, o)
	if _, err := c.Latest(context.Background(), "DE"); err != nil {
		t.Fatal(err)
	}
	got := sl.got()
	if len(got) != 3 {
		t.Fatalf("waits %v, want 3", got)
	}
	for i, w := range got {
		full := o.Retry.Base << i
		if w < full/2 || w > full {
			t.Errorf("wait %d = %v, want in [%v, %v] (exponential with jitter)", i, w, full/2, full)
		}
	}

	// Every attempt failing: the last status is returned after Attempts calls.
	srv.push(latestPath, canned{status: 500}, canned{status: 500}, canned{status: 500}, canned{status: 504, body: "gateway"})
	before := srv.count(latestPath)
	_, err := c.Latest(context.Background(), "DE")
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 504 || !strings.Contains(err.Error(), "504 Gateway Timeout: gateway") {
		t.Errorf("got %v, want the final 504", err)
	}
	if n := srv.count(latestPath) - before; n != o.Retry.Attempts {
		t.Errorf("%d attempts, want %d", n, o.Retry.Attempts)
	}
}

func TestBackoffCapped(t *testing.T) {
	d := &doer{o: Options{Retry: Retry{Base: time.Second, Max: 5 * time.Second}}}
	for attempt := range 70 { // large attempts must not overflow
		w := d.backoff(attempt)
		if w < 0 || w > 5*time.Second {
			t.Fatalf("attempt %d: wait %v outside [0, 5s]", attempt, w)
		}
		if attempt >= 3 && w < 2500*time.Millisecond {
			t.Fatalf("attempt %d: wait %v below half the cap", attempt, w)
		}
	}
}

func TestLongRetryAfterBlocks(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push(latestPath, canned{status: 429, header: map[string]string{"Retry-After": "3600"}})
	sl := &sleeper{}
	c := newEMClient(t, srv.srv.URL, testOptions(clk, sl, nil))
	_, err := c.Latest(context.Background(), "DE")
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("got %v, want ErrRateLimited", err)
	}
	if len(sl.got()) != 0 {
		t.Errorf("waited %v for a Retry-After beyond Retry.Max", sl.got())
	}
	// Within the hour: no request is sent at all.
	clk.Add(30 * time.Minute)
	_, err = c.Latest(context.Background(), "IE")
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "not sent before 2025-01-15T11:20:00Z") {
		t.Errorf("got %v, want a fast rate-limit failure", err)
	}
	if n := srv.count(latestPath); n != 1 {
		t.Errorf("%d calls while blocked, want 1", n)
	}
	// After it: requests flow again.
	clk.Add(31 * time.Minute)
	if _, err := c.Latest(context.Background(), "IE"); err != nil {
		t.Errorf("after Retry-After: %v", err)
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	sl := &sleeper{}
	c := newEMClient(t, srv.srv.URL, testOptions(clk, sl, nil))
	for _, status := range []int{400, 403, 404} {
		srv.push(latestPath, canned{status: status, body: `{"message":"no"}`})
		before := srv.count(latestPath)
		_, err := c.Latest(context.Background(), "DE")
		var he *HTTPError
		if !errors.As(err, &he) || he.Status != status {
			t.Errorf("%d: got %v", status, err)
		}
		if n := srv.count(latestPath) - before; n != 1 {
			t.Errorf("%d retried: %d calls", status, n)
		}
	}
	// 401 is ErrAuth, not retried.
	bad, _ := NewElectricityMaps(ElectricityMapsConfig{BaseURL: srv.srv.URL, Token: NewSecret("wrong-token")}, testOptions(clk, sl, nil))
	before := srv.count(latestPath)
	if _, err := bad.Latest(context.Background(), "DE"); !errors.Is(err, ErrAuth) {
		t.Errorf("wrong token: got %v, want ErrAuth", err)
	}
	if n := srv.count(latestPath) - before; n != 1 {
		t.Errorf("401 retried: %d calls", n)
	}
	if len(sl.got()) != 0 {
		t.Errorf("waited %v on client errors", sl.got())
	}
}

func TestDeadlineStopsRetries(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	srv.push(latestPath, canned{status: 503, header: map[string]string{"Retry-After": "5"}})
	sl := &sleeper{}
	c := newEMClient(t, srv.srv.URL, testOptions(clk, sl, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Latest(ctx, "DE")
	if err == nil || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Errorf("got %v, want a refusal to wait past the deadline", err)
	}
	if len(sl.got()) != 0 {
		t.Errorf("waited %v", sl.got())
	}
}

func TestAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		select { // hang until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	o := testOptions(newClock(tRef()), &sleeper{}, nil)
	o.Timeout = 50 * time.Millisecond
	o.Retry.Attempts = 2
	c := newEMClient(t, srv.srv.URL, o)
	start := time.Now()
	_, err := c.Latest(context.Background(), "DE")
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("got %v, want a timeout", err)
	}
	if n := srv.count(latestPath); n != 2 {
		t.Errorf("%d attempts, want 2 (a timeout is retried)", n)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}
}

func TestCancelledContext(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	c := newEMClient(t, srv.srv.URL, testOptions(clk, &sleeper{}, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Latest(ctx, "DE"); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := tRef()
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-3", 0},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{"soon", 0},
		{"99999999999", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
	}
}
