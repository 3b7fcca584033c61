package testbed

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
)

// SLAReport is the SLA accounting of a testbed run, separating what routing
// controls from what the testbed adds. For every reply:
//
//   - the emulated latency is what the emulated system would have measured:
//     the configured site→region delay of the region the switch chose
//     (P95 × latency scale) plus the server's time on the request as its
//     timing record reports it: the queue wait for a worker and the
//     execution time drawn from the exec class;
//   - the raw RTT is what the client measured;
//   - the testbed overhead is raw RTT − emulated latency: BMv2's two passes,
//     the veths, the hosts' scheduling, and the servers' timer slack (a
//     sleep of d returns after d + slack on a loaded host; the record's
//     measured execution and delay times show it, reported apart as
//     ServerSlack).
//
// Region selection only picks regions whose P95 fits the SLA, so at the
// emulated latencies a policy-C run must have no violation; the raw RTT
// also carries the overhead, which on a loaded machine can exceed the
// margin between a region's P95 and the SLA. Both are reported.
type SLAReport struct {
	Scale      float64 `json:"latency_scale"`
	Sent       int     `json:"sent"`
	Replied    int     `json:"replied"`
	Unanswered int     `json:"unanswered"` // nacked, timed out or never sent: a violation under both measures
	// Untimed counts replies without the server's timing record; their
	// emulated latency is the path delay alone.
	Untimed int `json:"untimed"`
	// EmulatedViolations counts requests over budget at the emulated
	// latency, plus the unanswered ones; RawOverBudget those over budget
	// by their measured RTT, plus the unanswered ones.
	EmulatedViolations int `json:"emulated_violations"`
	RawOverBudget      int `json:"raw_over_budget"`
	// Emulated, Raw and Overhead are the distributions over replies (ms).
	Emulated loadgen.Percentiles `json:"emulated"`
	Raw      loadgen.Percentiles `json:"raw"`
	Overhead loadgen.Percentiles `json:"overhead"`
	// ServerSlack is the part of the overhead spent in the servers' sleeps
	// beyond what they were asked to sleep (measured − drawn execution,
	// measured − configured delay where the server applies it), Outside
	// the rest: switch, veths, kernel, client (timed replies only).
	ServerSlack loadgen.Percentiles `json:"server_slack"`
	Outside     loadgen.Percentiles `json:"outside_server"`
	Classes     []SLAClass          `json:"classes"`
	Paths       []PathOverhead      `json:"paths"`
}

// SLAClass is the accounting of one SLA class.
type SLAClass struct {
	SLAms              uint16  `json:"sla_ms"`
	BudgetMs           float64 `json:"budget_ms"` // SLA × latency scale
	Sent               int     `json:"sent"`
	Unanswered         int     `json:"unanswered"`
	EmulatedViolations int     `json:"emulated_violations"`
	RawOverBudget      int     `json:"raw_over_budget"`
	// MinMarginMs is the smallest budget − emulated latency of a reply:
	// how much overhead the class tolerates before a raw miss.
	MinMarginMs float64 `json:"min_margin_ms"`
	EmulatedMax float64 `json:"emulated_max_ms"`
	RawP99      float64 `json:"raw_p99_ms"`
	RawMax      float64 `json:"raw_max_ms"`
}

// PathOverhead is the testbed overhead on one (site, region) path.
type PathOverhead struct {
	Site          int                 `json:"site"`
	Region        string              `json:"region"`
	DelayMs       float64             `json:"emulated_delay_ms"`
	Replies       int                 `json:"replies"`
	RawOverBudget int                 `json:"raw_over_budget"`
	Overhead      loadgen.Percentiles `json:"overhead"`
}

// PathDelays returns the emulated delay (ms) of every (site id, region
// index) path of the topology.
func (t *Topology) PathDelays() map[[2]int]float64 {
	siteID := map[string]int{}
	for _, c := range t.Clients {
		siteID[c.Site] = c.SiteID
	}
	out := map[[2]int]float64{}
	for _, s := range t.Servers {
		for _, d := range s.Delays {
			out[[2]int{siteID[d.Site], s.RegionIndex}] = d.DelayMs
		}
	}
	return out
}

// SLA accounts records against SLA × the topology's latency scale.
func SLA(t *Topology, records []loadgen.Record) (*SLAReport, error) {
	delays := t.PathDelays()
	scale := t.LatencyScale
	rep := &SLAReport{Scale: scale}
	classes := map[uint16]*SLAClass{}
	type acc struct{ emu, raw []float64 }
	classAcc := map[uint16]*acc{}
	type pathAcc struct {
		over []float64
		late int
	}
	paths := map[[2]int]*pathAcc{}
	var emu, raw, over, slack, outside []float64
	for _, r := range records {
		rep.Sent++
		c := classes[r.SLAms]
		if c == nil {
			c = &SLAClass{SLAms: r.SLAms, BudgetMs: float64(r.SLAms) * scale, MinMarginMs: math.Inf(1)}
			classes[r.SLAms] = c
			classAcc[r.SLAms] = &acc{}
		}
		c.Sent++
		if r.Outcome != loadgen.OK {
			rep.Unanswered++
			c.Unanswered++
			continue
		}
		rep.Replied++
		key := [2]int{int(r.Site), int(r.Region)}
		d, ok := delays[key]
		if !ok {
			return nil, fmt.Errorf("sla: request %d was answered from region %d for site %d, a path the topology has no delay for", r.ID, r.Region, r.Site)
		}
		e, rt := d, ms(r.RTT)
		if r.Timed {
			e += ms(r.ServerQueue + r.ServerDrawn)
			sl := ms(r.ServerExec - r.ServerDrawn)
			if r.ServerDelay > 0 { // the server slept the delay (serve --delay)
				sl += ms(r.ServerDelay) - d
			}
			slack, outside = append(slack, sl), append(outside, rt-e-sl)
		} else {
			rep.Untimed++
		}
		if e > c.BudgetMs {
			c.EmulatedViolations++
		}
		if rt > c.BudgetMs {
			c.RawOverBudget++
		}
		c.MinMarginMs = math.Min(c.MinMarginMs, c.BudgetMs-e)
		emu, raw, over = append(emu, e), append(raw, rt), append(over, rt-e)
		a := classAcc[r.SLAms]
		a.emu, a.raw = append(a.emu, e), append(a.raw, rt)
		p := paths[key]
		if p == nil {
			p = &pathAcc{}
			paths[key] = p
		}
		p.over = append(p.over, rt-e)
		if rt > c.BudgetMs {
			p.late++
		}
	}
	rep.Emulated, rep.Raw, rep.Overhead = loadgen.PercentilesOf(emu), loadgen.PercentilesOf(raw), loadgen.PercentilesOf(over)
	rep.ServerSlack, rep.Outside = loadgen.PercentilesOf(slack), loadgen.PercentilesOf(outside)
	for sla, c := range classes {
		c.EmulatedViolations += c.Unanswered
		c.RawOverBudget += c.Unanswered
		rep.EmulatedViolations += c.EmulatedViolations
		rep.RawOverBudget += c.RawOverBudget
		a := classAcc[sla]
		if len(a.emu) == 0 {
			c.MinMarginMs = 0
		}
		c.MinMarginMs = round3(c.MinMarginMs)
		e, rw := loadgen.PercentilesOf(a.emu), loadgen.PercentilesOf(a.raw)
		c.EmulatedMax, c.RawP99, c.RawMax = e.Max, rw.P99, rw.Max
		rep.Classes = append(rep.Classes, *c)
	}
	slices.SortFunc(rep.Classes, func(a, b SLAClass) int { return cmp.Compare(a.SLAms, b.SLAms) })
	for k, p := range paths {
		rep.Paths = append(rep.Paths, PathOverhead{Site: k[0], Region: loadgen.RegionName(uint8(k[1])), DelayMs: delays[k],
			Replies: len(p.over), RawOverBudget: p.late, Overhead: loadgen.PercentilesOf(p.over)})
	}
	slices.SortFunc(rep.Paths, func(a, b PathOverhead) int {
		return cmp.Or(cmp.Compare(a.Site, b.Site), cmp.Compare(a.Region, b.Region))
	})
	return rep, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WriteText renders the report: the two SLA figures, the classes, the
// overhead percentiles and the per-path overhead.
func (r *SLAReport) WriteText(w io.Writer) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	fmt.Fprintf(w, "SLA violations at the emulated latencies (P95 × %g + server queue + drawn execution; what routing controls): %d of %d\n", r.Scale, r.EmulatedViolations, r.Sent)
	fmt.Fprintf(w, "raw RTT over budget (emulated latency + testbed overhead): %d of %d\n", r.RawOverBudget, r.Sent)
	pct := func(name string, o loadgen.Percentiles) {
		fmt.Fprintf(w, "%-44s p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (%d)\n", name, f(o.P50), f(o.P90), f(o.P99), f(o.P999), f(o.Max), o.N)
	}
	pct("testbed overhead (raw RTT − emulated), ms:", r.Overhead)
	if r.ServerSlack.N > 0 {
		pct("  of which server timer slack, ms:", r.ServerSlack)
		pct("  of which switch, veths, kernel, client, ms:", r.Outside)
	}
	if r.Unanswered > 0 || r.Untimed > 0 {
		fmt.Fprintf(w, "unanswered (nacked, timed out, not sent; a violation under both): %d; replies without server timing: %d\n", r.Unanswered, r.Untimed)
	}
	fmt.Fprintln(w)
	rows := make([][]string, 0, len(r.Classes))
	for _, c := range r.Classes {
		rows = append(rows, []string{strconv.Itoa(int(c.SLAms)), f(c.BudgetMs), strconv.Itoa(c.Sent), strconv.Itoa(c.EmulatedViolations),
			f(c.EmulatedMax), f(c.MinMarginMs), strconv.Itoa(c.RawOverBudget), f(c.RawP99), f(c.RawMax)})
	}
	if err := output.WriteTable(w, []string{"sla_ms", "budget_ms", "sent", "emulated_viol", "emulated_max", "min_margin", "raw_over", "raw_p99", "raw_max"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, p := range r.Paths {
		rows = append(rows, []string{strconv.Itoa(p.Site), p.Region, f(p.DelayMs), strconv.Itoa(p.Replies), strconv.Itoa(p.RawOverBudget),
			f(p.Overhead.P50), f(p.Overhead.P90), f(p.Overhead.P99), f(p.Overhead.P999), f(p.Overhead.Max)})
	}
	return output.WriteTable(w, []string{"site", "region", "delay_ms", "replies", "raw_over", "ovh_p50", "ovh_p90", "ovh_p99", "ovh_p99.9", "ovh_max"}, rows)
}
