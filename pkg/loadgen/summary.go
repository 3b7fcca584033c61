package loadgen

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Percentiles are RTT order statistics in milliseconds.
type Percentiles struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	Max  float64 `json:"max_ms"`
}

// PercentilesOf returns the order statistics of ms (milliseconds),
// rounded to µs; it sorts ms.
func PercentilesOf(ms []float64) Percentiles {
	p := Percentiles{N: len(ms)}
	if len(ms) == 0 {
		return p
	}
	slices.Sort(ms)
	var sum float64
	for _, v := range ms {
		sum += v
	}
	r := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	p.Mean = r(sum / float64(len(ms)))
	p.P50 = r(stats.QuantileSorted(ms, 0.50))
	p.P90 = r(stats.QuantileSorted(ms, 0.90))
	p.P95 = r(stats.QuantileSorted(ms, 0.95))
	p.P99 = r(stats.QuantileSorted(ms, 0.99))
	p.P999 = r(stats.QuantileSorted(ms, 0.999))
	p.Max = r(ms[len(ms)-1])
	return p
}

// ClassSummary is the SLA accounting of one SLA class.
type ClassSummary struct {
	SLAms    uint16      `json:"sla_ms"`
	BudgetMs float64     `json:"budget_ms"` // SLAms × SLA scale
	Sent     int         `json:"sent"`
	Met      int         `json:"met"`
	Late     int         `json:"late"` // replied after the budget
	Nacked   int         `json:"nacked"`
	TimedOut int         `json:"timed_out"`
	MetPct   float64     `json:"met_pct"`
	RTT      Percentiles `json:"rtt"`
}

// Count is how many answered requests went to one key (region, server,
// site) and their share of all answered requests.
type Count struct {
	Key   int     `json:"key"`
	Name  string  `json:"name,omitempty"`
	N     int     `json:"n"`
	Share float64 `json:"share"`
}

// Summary is what a run (or several merged runs) measured.
type Summary struct {
	Target string `json:"target,omitempty"`
	// StartedAt is the wall-clock start of the run (a merged summary has
	// none): request i was sent at StartedAt + records[i].Sent.
	StartedAt    time.Time `json:"started_at,omitzero"`
	Local        string    `json:"local,omitempty"`
	OfferedRate  float64   `json:"offered_rate,omitempty"` // req/s requested
	CV           float64   `json:"cv"`
	ElapsedS     float64   `json:"elapsed_s"`
	SendRate     float64   `json:"send_rate"`  // requests sent per second of the window
	ReplyRate    float64   `json:"reply_rate"` // replies per second of the window
	SLAScale     float64   `json:"sla_scale"`
	Sent         int       `json:"sent"`
	Replied      int       `json:"replied"`
	Nacked       int       `json:"nacked"`
	TimedOut     int       `json:"timed_out"`
	SendErrors   int       `json:"send_errors"`
	Unmatched    int       `json:"unmatched"`
	Malformed    int       `json:"malformed"`
	MaxSendLagMs float64   `json:"max_send_lag_ms"`
	Interrupted  bool      `json:"interrupted,omitempty"`

	RTT Percentiles `json:"rtt"` // replied requests
	// SLA accounting over all sent requests: met = replied within the
	// budget; late = replied after it; nacks and timeouts also miss it.
	SLAMet    int            `json:"sla_met"`
	SLALate   int            `json:"sla_late"`
	SLAMetPct float64        `json:"sla_met_pct"`
	Classes   []ClassSummary `json:"classes"`

	// Unrouted counts answered requests whose header no switch stamped
	// (their region is still wire.NoRegion, as sent): the target was a
	// server, not a service address behind a p4ctl switch. They are left
	// out of the routing shares.
	Unrouted int `json:"unrouted,omitempty"`

	// Routing shares over answered, routed requests (replies and nacks).
	Regions []Count        `json:"regions"`
	Servers []Count        `json:"servers"` // share of replies
	Sites   []Count        `json:"sites"`
	Flags   map[string]int `json:"flags"` // requests with each decision flag
}

// Summarize computes the summary of records sent over elapsed, judged
// against SLA × slaScale.
func Summarize(records []Record, elapsed time.Duration, slaScale float64) *Summary {
	if slaScale == 0 {
		slaScale = 1
	}
	s := &Summary{ElapsedS: math.Round(elapsed.Seconds()*1000) / 1000, SLAScale: slaScale, Flags: map[string]int{}}
	var all []float64
	classRTT := map[uint16][]float64{}
	classes := map[uint16]*ClassSummary{}
	regionsN, serversN, sitesN := map[int]int{}, map[int]int{}, map[int]int{}
	answered := 0
	for _, r := range records {
		s.Sent++
		c := classes[r.SLAms]
		if c == nil {
			c = &ClassSummary{SLAms: r.SLAms, BudgetMs: float64(r.SLAms) * slaScale}
			classes[r.SLAms] = c
		}
		c.Sent++
		switch r.Outcome {
		case OK:
			s.Replied++
			ms := float64(r.RTT) / 1e6
			all = append(all, ms)
			classRTT[r.SLAms] = append(classRTT[r.SLAms], ms)
			if r.SLAMet {
				s.SLAMet++
				c.Met++
			} else {
				s.SLALate++
				c.Late++
			}
			if r.Server != wire.NoServer {
				serversN[int(r.Server)]++
			}
		case Nack:
			s.Nacked++
			c.Nacked++
		case Timeout:
			s.TimedOut++
			c.TimedOut++
		case SendError:
			s.SendErrors++
		}
		if (r.Outcome == OK || r.Outcome == Nack) && r.Region == wire.NoRegion {
			s.Unrouted++
		} else if r.Outcome == OK || r.Outcome == Nack {
			answered++
			regionsN[int(r.Region)]++
			sitesN[int(r.Site)]++
			for i := 0; i < 8; i++ {
				if r.Flags&(1<<i) != 0 {
					s.Flags[wire.Flags(1<<i).String()]++
				}
			}
		}
	}
	if elapsed > 0 {
		s.SendRate = math.Round(float64(s.Sent)/elapsed.Seconds()*10) / 10
		s.ReplyRate = math.Round(float64(s.Replied)/elapsed.Seconds()*10) / 10
	}
	s.RTT = PercentilesOf(all)
	if s.Sent > 0 {
		s.SLAMetPct = pct(s.SLAMet, s.Sent)
	}
	for sla, c := range classes {
		c.RTT = PercentilesOf(classRTT[sla])
		c.MetPct = pct(c.Met, c.Sent)
		s.Classes = append(s.Classes, *c)
	}
	slices.SortFunc(s.Classes, func(a, b ClassSummary) int { return cmp.Compare(a.SLAms, b.SLAms) })
	s.Regions = counts(regionsN, answered, func(k int) string { return RegionName(uint8(k)) })
	s.Servers = counts(serversN, s.Replied, nil)
	s.Sites = counts(sitesN, answered, nil)
	return s
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*1e4) / 100
}

func counts(m map[int]int, total int, name func(int) string) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		c := Count{Key: k, N: n, Share: pct(n, total)}
		if name != nil {
			c.Name = name(k)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Share returns the share (%) of answered requests routed to region i.
func (s *Summary) Share(region uint8) float64 {
	for _, c := range s.Regions {
		if c.Key == int(region) {
			return c.Share
		}
	}
	return 0
}

// WriteText renders the summary as tables (`-o table`).
func (s *Summary) WriteText(w io.Writer) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	scale := ""
	if s.SLAScale != 1 {
		scale = fmt.Sprintf(" (budgets = SLA × %g)", s.SLAScale)
	}
	offered := ""
	if s.OfferedRate > 0 {
		offered = fmt.Sprintf(", offered %.1f, arrival CV %g", s.OfferedRate, s.CV)
	}
	fmt.Fprintf(w, "sent %d in %.2fs (%.1f req/s%s); replied %d (%.1f/s), nacked %d, timed out %d, send errors %d, unmatched %d, malformed %d\n",
		s.Sent, s.ElapsedS, s.SendRate, offered, s.Replied, s.ReplyRate, s.Nacked, s.TimedOut, s.SendErrors, s.Unmatched, s.Malformed)
	fmt.Fprintf(w, "SLA met %d of %d (%.2f %%)%s; late %d\n", s.SLAMet, s.Sent, s.SLAMetPct, scale, s.SLALate)
	if s.Interrupted {
		fmt.Fprintf(w, "interrupted after %.2fs: this report (and --csv, --json) covers the %d requests sent until then; replies not back within %v count as timed out\n",
			s.ElapsedS, s.Sent, InterruptWait)
	}
	if s.Sent > 0 && s.Replied+s.Nacked == 0 {
		fmt.Fprintf(w, "warning: nothing answered any of the %d requests (is anything listening at %s?)\n", s.Sent, s.Target)
	}
	if s.Unrouted > 0 {
		fmt.Fprintf(w, "warning: %d of %d answers carry no region: no p4ctl switch stamped their header (the target answered directly; send to the service address behind a switch)\n",
			s.Unrouted, s.Replied+s.Nacked)
	}
	fmt.Fprintln(w)
	rows := [][]string{{"all", "-", strconv.Itoa(s.Sent), strconv.Itoa(s.SLAMet), f(s.SLAMetPct), f(s.RTT.P50), f(s.RTT.P95), f(s.RTT.P99), f(s.RTT.P999), f(s.RTT.Max)}}
	for _, c := range s.Classes {
		rows = append(rows, []string{strconv.Itoa(int(c.SLAms)), f(c.BudgetMs), strconv.Itoa(c.Sent), strconv.Itoa(c.Met), f(c.MetPct),
			f(c.RTT.P50), f(c.RTT.P95), f(c.RTT.P99), f(c.RTT.P999), f(c.RTT.Max)})
	}
	if err := output.WriteTable(w, []string{"sla_ms", "budget_ms", "sent", "met", "met_%", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms", "rtt_p99.9_ms", "rtt_max_ms"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, c := range s.Regions {
		rows = append(rows, []string{strconv.Itoa(c.Key), c.Name, strconv.Itoa(c.N), f(c.Share)})
	}
	if err := output.WriteTable(w, []string{"region", "name", "requests", "share_%"}, rows); err != nil {
		return err
	}
	if len(s.Servers) > 0 {
		fmt.Fprintln(w)
		rows = rows[:0]
		for _, c := range s.Servers {
			rows = append(rows, []string{strconv.Itoa(c.Key), strconv.Itoa(c.N), f(c.Share)})
		}
		if err := output.WriteTable(w, []string{"server", "replies", "share_%"}, rows); err != nil {
			return err
		}
	}
	if len(s.Flags) > 0 {
		fmt.Fprintln(w)
		keys := make([]string, 0, len(s.Flags))
		for k := range s.Flags {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "flag %s: %d\n", k, s.Flags[k])
		}
	}
	return nil
}
