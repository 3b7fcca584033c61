package micro

import (
	"math"
	"math/bits"
)

// RunResult is what one simulated run measured. Latencies are in µs.
// Counters (holds, messages, …) cover every request of the run, warm-up
// included; per-RPC ratios divide by all requests.
type RunResult struct {
	Policy string `json:"policy"`
	Seed   uint64 `json:"seed"`
	// Bound is the JBSQ bound used (0 = unbounded or not JBSQ).
	Bound int `json:"bound,omitempty"`
	// Requests measured (after warm-up) and how many exceeded the SLO.
	Requests   int `json:"requests"`
	Violations int `json:"violations"`
	// ViolationRate is the SLO's verdict: the fraction of requests slower
	// than the SLO, or, with a windowed SLO (Config.SLOWindow), the
	// fraction of windows whose quantile exceeds it.
	ViolationRate float64 `json:"violation_rate"`
	// RequestViolationRate is always the per-request fraction.
	RequestViolationRate float64 `json:"request_violation_rate"`
	// Windows judged and how many violated (windowed SLO only).
	Windows          int `json:"windows,omitempty"`
	WindowViolations int `json:"window_violations,omitempty"`
	// Incomplete counts measured requests that never completed (a dispatcher
	// starved by leaked credits); they count as violations.
	Incomplete  int     `json:"incomplete,omitempty"`
	MeanLatency float64 `json:"mean_latency_us"`
	// MeanWait is latency minus the base round trip 2D and the service
	// time: central holds, forwarding detours and host queueing.
	MeanWait float64 `json:"mean_wait_us"`
	// Quantiles of latency (bucket midpoints, < 0.1 % error); −1 when the
	// quantile falls among incomplete requests.
	P50  float64 `json:"p50_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p999_us"`
	// Holds are requests the dispatcher had to queue centrally (switch
	// policies: resampling holds).
	Holds    int64   `json:"holds"`
	HoldRate float64 `json:"hold_rate"`
	// Switch policies: Recirculations counts every pass after a request's
	// first (level rounds, holds, forced rounds), RecircPerRPC divides by
	// all requests; LevelRounds and Nacks count those outcomes.
	Recirculations int64   `json:"recirculations,omitempty"`
	RecircPerRPC   float64 `json:"recirc_per_rpc,omitempty"`
	LevelRounds    int64   `json:"level_rounds,omitempty"`
	Nacks          int64   `json:"nacks,omitempty"`
	// Forwarded and Moved count requests forwarded between hosts and moved
	// by ideal movement.
	Forwarded int64 `json:"forwarded,omitempty"`
	Moved     int64 `json:"moved,omitempty"`
	// ControlMessages are messages beyond the request and its reply:
	// completion notifications, idle tokens, load reports, forwards and
	// migration messages. MessagesPerRPC divides by all requests.
	ControlMessages int64   `json:"control_messages"`
	MessagesPerRPC  float64 `json:"messages_per_rpc"`
	// StaleResets counts credits given up by the TTL: binds that found a
	// silent host's counter stale, or expired per-request credits.
	StaleResets int64 `json:"stale_resets,omitempty"`
	// LostNotifications are completion notifications dropped (NotifyLoss).
	LostNotifications int64 `json:"lost_notifications,omitempty"`
	Stalls            int64 `json:"stalls,omitempty"`
	Migrations        int64 `json:"migrations,omitempty"`
	// GatewayUtilization is the busy fraction of the software dispatcher's
	// cores (0 for the switch).
	GatewayUtilization float64 `json:"gateway_utilization,omitempty"`
	// Events processed and simulated time.
	Events  int64   `json:"events"`
	SimTime float64 `json:"sim_time_us"`
}

// histogram is a log-linear latency histogram: 1/16 µs resolution below
// 128 µs, then 1024 sub-buckets per power of two (relative error < 0.1 %).
type histogram struct {
	counts []uint32
	n      uint64
}

const (
	histUnit   = 16.0 // buckets per µs in the linear part
	histLinear = 2048
	histSub    = 1024
	histOct    = 40
)

func newHistogram() histogram {
	return histogram{counts: make([]uint32, histLinear+histOct*histSub+1)}
}

func histIndex(v float64) int {
	if !(v < 1<<40) {
		return histLinear + histOct*histSub
	}
	u := uint64(v * histUnit)
	if u < histLinear {
		return int(u)
	}
	e := bits.Len64(u) - 11 // u>>e in [1024, 2048)
	return histLinear + (e-1)*histSub + int(u>>uint(e)) - histSub
}

// histLower is the lower edge of bucket i in µs.
func histLower(i int) float64 {
	if i < histLinear {
		return float64(i) / histUnit
	}
	if i >= histLinear+histOct*histSub {
		return math.Inf(1)
	}
	j := i - histLinear
	e := j/histSub + 1
	m := uint64(j%histSub + histSub)
	return float64(m<<uint(e)) / histUnit
}

func (h *histogram) add(v float64) {
	h.counts[histIndex(v)]++
	h.n++
}

// quantile returns the midpoint of the bucket holding the q-quantile.
func (h *histogram) quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(1, rank)
	var c uint64
	for i, k := range h.counts {
		c += uint64(k)
		if c >= rank {
			lo, hi := histLower(i), histLower(i+1)
			if math.IsInf(lo, 1) || math.IsInf(hi, 1) {
				return lo
			}
			return (lo + hi) / 2
		}
	}
	return math.Inf(1)
}
