package testbed

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
)

// HeadroomSigmas is the headroom Size adds above the mean number of
// requests in flight at a pool: that many standard deviations of it. The
// number in flight at a pool fed by Poisson arrivals is Poisson distributed
// (M/G/∞), with standard deviation √L; an arrival finds all k·n slots busy
// with probability P(N ≥ k·n), which at L + 5√L is below 3·10⁻⁷ — none in
// a run of tens of thousands of requests.
const HeadroomSigmas = 5

// DefaultOverheadAllowance is the time Size adds to every request's slot
// holding time for what the testbed itself adds (BMv2's two passes, veths,
// hosts, the server's scheduling): well above the measured median, covering
// the tail of a loaded two-core machine (mininet/README.md).
const DefaultOverheadAllowance = 50 * time.Millisecond

// Load is the offered load of a testbed run: every site's client sends
// Rate requests/s with SLAs and exec classes drawn from the mixes; latencies
// and execution times are scaled by Scale.
type Load struct {
	Rate    float64
	SLAMix  loadgen.Mix[uint16]
	ExecMix loadgen.Mix[uint8]
	Scale   float64
	// Overhead is added to every request's slot holding time (see
	// DefaultOverheadAllowance).
	Overhead time.Duration
}

// PoolSize is the Little's-law sizing of one local pool. The switch takes a
// slot when it binds a request and frees it when the server's reply passes
// back, so a request holds its slot for the whole emulated round trip plus
// its execution: L = λ·T requests are in flight at the pool on average
// (Little's law), and the per-server bound n must satisfy
// n ≥ (L + HeadroomSigmas·√L) / servers for requests never to find every
// slot taken (then the switch holds them, and after max_holds forces or
// nacks them).
type PoolSize struct {
	Region  string `json:"region"`
	Servers int    `json:"servers"`
	Bound   int    `json:"bound"` // configured n (0 = unbounded)
	// Hour is the hour (of those sized) with the most requests in flight.
	Hour time.Time `json:"hour"`
	// RatePerS is λ, the requests/s the plan of Hour routes to the pool.
	RatePerS float64 `json:"rate_per_s"`
	// HoldMs is T, the mean time a request holds its slot: the scaled
	// site→region P95 of its site, the scaled mean execution time and the
	// overhead allowance, averaged over the requests routed here.
	HoldMs float64 `json:"hold_ms"`
	// InFlight is L = λ·T.
	InFlight float64 `json:"in_flight"`
	// Need is the smallest per-server bound with the headroom:
	// ceil((L + HeadroomSigmas·√L) / Servers), at least 1.
	Need int  `json:"need"`
	OK   bool `json:"ok"` // Bound ≥ Need, or the pool is unbounded
}

// Size computes the Little's-law sizing of every local pool of cfg for load
// under each of the compiled hours, keeping each pool's busiest hour.
// Requests a plan routes by fallback or to a remote region do not load a
// local pool and are not counted.
func Size(cfg *config.Config, hours []*Compiled, load Load) ([]PoolSize, error) {
	if len(hours) == 0 {
		return nil, fmt.Errorf("size: no hours")
	}
	if !(load.Rate > 0) || !(load.Scale >= 0) {
		return nil, fmt.Errorf("size: rate %v and scale %v: want rate > 0 and scale ≥ 0", load.Rate, load.Scale)
	}
	if err := load.SLAMix.Validate(); err != nil {
		return nil, fmt.Errorf("size: SLA %w", err)
	}
	if err := load.ExecMix.Validate(); err != nil {
		return nil, fmt.Errorf("size: exec-class %w", err)
	}
	cost := map[uint8]float64{}
	for _, e := range cfg.ExecClasses {
		cost[uint8(e.ID)] = float64(e.CostUS) / 1000
	}
	var execMs, execW float64
	for _, s := range load.ExecMix {
		c, ok := cost[s.Value]
		if !ok {
			return nil, fmt.Errorf("size: exec class %d is not in the configuration's exec_classes", s.Value)
		}
		execMs += s.Weight * c
		execW += s.Weight
	}
	execMs = execMs / execW * load.Scale
	overMs := float64(load.Overhead) / float64(time.Millisecond)
	var slaW float64
	for _, s := range load.SLAMix {
		slaW += s.Weight
	}

	regionID := map[uint8]string{}
	for _, r := range cfg.Regions {
		if idx, ok := cfg.RegionIndex(r); ok {
			regionID[uint8(idx)] = r.ID
		}
	}
	type pool struct {
		size PoolSize
		idx  uint8
	}
	var pools []*pool
	for _, r := range cfg.Regions {
		l := r.NextHop.Local
		if l == nil {
			continue
		}
		idx, _ := cfg.RegionIndex(r)
		pools = append(pools, &pool{idx: uint8(idx), size: PoolSize{Region: r.ID, Servers: len(l.Servers), Bound: l.Bound, InFlight: -1}})
	}
	for _, h := range hours {
		rt := compiler.NewRouter(h.State)
		rate := map[uint8]float64{}
		work := map[uint8]float64{} // Σ λ·T, requests in flight
		for _, s := range cfg.Sites {
			lat := cfg.SiteLatency(s)
			for _, c := range load.SLAMix {
				d := rt.Route(uint16(s.ID), c.Value, 0)
				if d.Fallback {
					continue
				}
				id, ok := regionID[d.Region]
				if !ok {
					continue
				}
				l, ok := lat[id]
				if !ok {
					return nil, fmt.Errorf("size: the plan of %s routes site %s to %s, for which it has no latency", h.Hour.Format(time.RFC3339), s.Name, id)
				}
				lambda := load.Rate * c.Weight / slaW
				rate[d.Region] += lambda
				work[d.Region] += lambda * (l.P95*load.Scale + execMs + overMs) / 1000
			}
		}
		for _, p := range pools {
			if work[p.idx] > p.size.InFlight {
				p.size.Hour, p.size.RatePerS, p.size.InFlight = h.Hour, rate[p.idx], work[p.idx]
			}
		}
	}
	out := make([]PoolSize, 0, len(pools))
	for _, p := range pools {
		s := p.size
		if s.RatePerS > 0 {
			s.HoldMs = round3(1000 * s.InFlight / s.RatePerS)
		}
		need := (s.InFlight + HeadroomSigmas*math.Sqrt(s.InFlight)) / float64(max(s.Servers, 1))
		s.Need = max(1, int(math.Ceil(need)))
		s.OK = s.Bound == 0 || s.Bound >= s.Need
		s.RatePerS, s.InFlight = round3(s.RatePerS), round3(s.InFlight)
		out = append(out, s)
	}
	return out, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Sizes is Size's result with its rendering.
type Sizes []PoolSize

// Undersized returns the pools whose bound is below what the load needs.
func (ps Sizes) Undersized() []PoolSize {
	var out []PoolSize
	for _, p := range ps {
		if !p.OK {
			out = append(out, p)
		}
	}
	return out
}

// WriteText renders the sizing as a table.
func (ps Sizes) WriteText(w io.Writer) error {
	rows := make([][]string, 0, len(ps))
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, p := range ps {
		ok := "ok"
		if !p.OK {
			ok = "UNDERSIZED: expect holds"
		}
		rows = append(rows, []string{p.Region, strconv.Itoa(p.Servers), p.Hour.Format("01-02T15"), f(p.RatePerS), f(p.HoldMs), f(p.InFlight),
			strconv.Itoa(p.Need), strconv.Itoa(p.Bound), ok})
	}
	return output.WriteTable(w, []string{"pool", "servers", "busiest_hour", "req_per_s", "hold_ms", "in_flight", "need_n", "bound_n", ""}, rows)
}
