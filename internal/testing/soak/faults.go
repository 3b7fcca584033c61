package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// lockedRand is a random source shared by goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newRand(seed uint64) *lockedRand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, 0x50a4))}
}

// Float64 returns a number uniform in [0, 1).
func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// Between returns a duration uniform in [lo, hi).
func (l *lockedRand) Between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return lo + time.Duration(l.r.Int64N(int64(hi-lo)))
}

// IntN returns a number uniform in [0, n).
func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

// carbonAPI is a loopback Electricity Maps v3 endpoint serving the
// synthetic carbon model at the soak's replayed hour, which drops a share
// of its responses (the connection is closed without an answer) and goes
// down entirely for outages.
type carbonAPI struct {
	srv   *httptest.Server
	model regions.CarbonSource
	now   func() time.Time
	rnd   *lockedRand

	mu          sync.Mutex
	drop        float64   // share of responses dropped
	outageUntil time.Time // replayed time until which every response is dropped

	requests, dropped atomic.Int64
}

// token is the API token the soak's carbon source sends (not a secret: a
// loopback fake checks it).
const token = "soak-token"

func newCarbonAPI(model regions.CarbonSource, now func() time.Time, rnd *lockedRand, drop float64) *carbonAPI {
	a := &carbonAPI{model: model, now: now, rnd: rnd, drop: drop}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

// URL is the API's base URL (loopback).
func (a *carbonAPI) URL() string { return a.srv.URL }

// Close stops the API's server.
func (a *carbonAPI) Close() { a.srv.Close() }

// setDrop sets the share of dropped responses.
func (a *carbonAPI) setDrop(p float64) {
	a.mu.Lock()
	a.drop = p
	a.mu.Unlock()
}

// outage drops every response until replayed time t (zero: none).
func (a *carbonAPI) outage(until time.Time) {
	a.mu.Lock()
	a.outageUntil = until
	a.mu.Unlock()
}

func (a *carbonAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.requests.Add(1)
	now := a.now()
	a.mu.Lock()
	drop := now.Before(a.outageUntil) || a.rnd.Float64() < a.drop
	a.mu.Unlock()
	if drop {
		a.dropped.Add(1)
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close() // no answer at all: a transport error, retried
				return
			}
		}
		http.Error(w, "dropped", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("auth-token") != token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	zone := r.URL.Query().Get("zone")
	hour := now.UTC().Truncate(time.Hour)
	point := func(h time.Time) (string, error) {
		mh, ok := compiler.HourIn(a.model.Period(), h)
		if !ok {
			mh = h
		}
		v, err := a.model.Intensity(zone, mh)
		if err != nil {
			return "", err
		}
		ts := h.Format("2006-01-02T15:04:05.000Z")
		return fmt.Sprintf(`{"zone":%q,"carbonIntensity":%.1f,"datetime":%q,"updatedAt":%q,"emissionFactorType":"lifecycle","isEstimated":false}`,
			zone, v, ts, ts), nil
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/latest"):
		p, err := point(hour)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		fmt.Fprint(w, p)
	case strings.HasSuffix(r.URL.Path, "/history"):
		var pts []string
		for h := hour.Add(-23 * time.Hour); !h.After(hour); h = h.Add(time.Hour) {
			p, err := point(h)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			pts = append(pts, p)
		}
		fmt.Fprintf(w, `{"zone":%q,"history":[%s]}`, zone, strings.Join(pts, ","))
	default:
		http.NotFound(w, r)
	}
}

// rpcDelay delays a share of the controller's P4Runtime calls, before the
// call leaves and after its answer arrives, as a slow network or a busy
// switch would.
type rpcDelay struct {
	rnd *lockedRand

	mu    sync.Mutex
	share float64
	max   time.Duration

	calls, delayed atomic.Int64
}

func (d *rpcDelay) set(share float64, max time.Duration) {
	d.mu.Lock()
	d.share, d.max = share, max
	d.mu.Unlock()
}

// pause sleeps a random delay for a share of the calls; false when ctx
// ended meanwhile.
func (d *rpcDelay) pause(ctx context.Context) bool {
	d.mu.Lock()
	share, max := d.share, d.max
	d.mu.Unlock()
	if share <= 0 || max <= 0 || d.rnd.Float64() >= share {
		return true
	}
	d.delayed.Add(1)
	t := time.NewTimer(d.rnd.Between(0, max))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// streamInterceptor delays the opening of streams: Read (a server
// stream in P4Runtime) and the arbitration stream.
func (d *rpcDelay) streamInterceptor() grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		d.calls.Add(1)
		if !d.pause(ctx) {
			return nil, ctx.Err()
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
}

// interceptor is the gRPC client interceptor adding the delays to unary
// calls (Write, pipeline calls, Capabilities).
func (d *rpcDelay) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		d.calls.Add(1)
		if !d.pause(ctx) {
			return ctx.Err()
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		d.pause(ctx)
		return err
	}
}
