package micro

import (
	"context"
	"math"
	"testing"

	"github.com/p4ctl/p4ctl/research/sim/dist"
)

// flowIntervals draws n arrivals from cfg's flows (in time order, as a
// run takes them) and returns each flow's inter-arrival times.
func flowIntervals(t *testing.T, cfg Config, n int) [][]float64 {
	t.Helper()
	s, err := newSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	last := make([]float64, len(s.flowNext))
	per := make([][]float64, len(s.flowNext))
	prev := 0.0
	for range n {
		f := s.flowHeap[0]
		at := s.flowNext[f]
		if at < prev {
			t.Fatalf("arrivals out of order: %g after %g", at, prev)
		}
		prev = at
		per[f] = append(per[f], at-last[f])
		last[f] = at
		s.nextFlowArrival()
	}
	return per
}

func cvOf(xs []float64) (mean, cv float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	n := float64(len(xs))
	mean = s / n
	return mean, math.Sqrt(s2/n-mean*mean) / mean
}

// TestFlowArrivalCV: each flow is a renewal stream of the requested CV
// (within 5 % over 10^5 arrivals) and rate λ/flows, for one flow alone
// and for 16 flows sharing the run.
func TestFlowArrivalCV(t *testing.T) {
	for _, kind := range []string{"h2", "gamma"} {
		for _, cv := range []float64{1, 1.5, 2.5} {
			one := DefaultConfig()
			one.Hosts, one.CoresPerHost, one.FlowsPerCore, one.ArrivalCV = 1, 1, 1, cv
			one.ArrivalKind = dist.ArrivalKind(kind)
			per := flowIntervals(t, one, 100000)
			mean, got := cvOf(per[0])
			if math.Abs(got-cv) > 0.05*cv {
				t.Errorf("%s CV %g, one flow: measured %.4f", kind, cv, got)
			}
			if want := one.Service.Mean / one.Load; math.Abs(mean-want) > 0.05*want {
				t.Errorf("%s CV %g, one flow: mean interval %.4f µs, want %.4f", kind, cv, mean, want)
			}

			many := one
			many.Hosts, many.CoresPerHost = 2, 8 // 16 flows
			per = flowIntervals(t, many, 100000)
			var all []float64
			for f, xs := range per {
				if len(xs) < 100000/16/2 {
					t.Errorf("%s CV %g: flow %d has %d of 100 000 arrivals", kind, cv, f, len(xs))
				}
				all = append(all, xs...)
			}
			mean, got = cvOf(all)
			if math.Abs(got-cv) > 0.05*cv {
				t.Errorf("%s CV %g, 16 flows: per-flow CV %.4f", kind, cv, got)
			}
			if want := 16 * many.Service.Mean / (many.Load * 16); math.Abs(mean-want) > 0.05*want {
				t.Errorf("%s CV %g, 16 flows: mean interval per flow %.4f µs, want %.4f", kind, cv, mean, want)
			}
		}
	}
}

// TestFlowsHashToTheirServer: the random ingress sends a flow's requests
// where the flow hashes (its core, or that core's host), and the other
// ingresses ignore flows.
func TestFlowsHashToTheirServer(t *testing.T) {
	for _, c := range []struct {
		g    Granularity
		want func(f int) int32
	}{
		{GranularityRSS, func(f int) int32 { return int32(f) }},
		{GranularityCore, func(f int) int32 { return int32(f) }},
		{GranularityHost, func(f int) int32 { return int32(f / 8) }},
	} {
		cfg := DefaultConfig()
		cfg.Granularity, cfg.FlowsPerCore, cfg.Policy = c.g, 1, MustPolicy("random")
		s, err := newSim(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for f, h := range s.flowServer {
			if h != c.want(f) {
				t.Fatalf("%s: flow %d → server %d, want %d", c.g, f, h, c.want(f))
			}
		}
	}
	// A run with flows completes every request.
	cfg := quickCfg("random")
	cfg.FlowsPerCore = 1
	r, err := Run(context.Background(), cfg)
	if err != nil || r.Requests != cfg.Requests {
		t.Fatalf("%v: %+v", err, r)
	}
}
