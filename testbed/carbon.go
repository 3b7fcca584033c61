package testbed

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// CarbonReport is the carbon accounting of requests the switch routed: the
// mean grid intensity of the regions that served them against the
// nearest-region baseline (policy A: each request served in its site's
// lowest-latency region), each request at the intensities of the hour whose
// tables decided it. It also checks every decision against the compiled
// plan of that hour (compiler.Router).
type CarbonReport struct {
	Hour     time.Time `json:"hour"` // the first hour
	Source   string    `json:"source"`
	Policy   string    `json:"policy"`
	Requests int       `json:"requests"` // answered requests (replies and nacks)
	// MeanGCO2 is the mean intensity (gCO2eq/kWh) of the chosen regions,
	// BaselineGCO2 that of the sites' nearest regions, SavingPct the
	// relative reduction.
	MeanGCO2     float64 `json:"mean_gco2_per_kwh"`
	BaselineGCO2 float64 `json:"baseline_gco2_per_kwh"`
	SavingPct    float64 `json:"saving_pct"`
	// PlanAgree counts requests routed to the region the compiled plan
	// predicts for their (site, SLA); PlanDisagree the others (requests
	// flagged spilled are excluded: capacity state changes the answer).
	// InFlip counts requests sent while the daemon flipped from one hour
	// to the next: they agree when either hour's plan predicts their
	// region.
	PlanAgree    int            `json:"plan_agree"`
	PlanDisagree int            `json:"plan_disagree"`
	Spilled      int            `json:"spilled"`
	InFlip       int            `json:"in_flip"`
	Regions      []RegionCarbon `json:"regions"`
	Sites        []SiteCarbon   `json:"sites"`
	Hours        []HourCarbon   `json:"hours,omitempty"`
}

// RegionCarbon is one region's share and intensity (of the first hour).
type RegionCarbon struct {
	Index    int     `json:"index"`
	Region   string  `json:"region"`
	GCO2     float64 `json:"gco2_per_kwh"`
	Requests int     `json:"requests"`
	SharePct float64 `json:"share_pct"`
}

// SiteCarbon is one site's carbon accounting.
type SiteCarbon struct {
	Site         string  `json:"site"`
	ID           int     `json:"id"`
	Nearest      string  `json:"nearest"`
	Requests     int     `json:"requests"`
	MeanGCO2     float64 `json:"mean_gco2_per_kwh"`
	BaselineGCO2 float64 `json:"baseline_gco2_per_kwh"`
	SavingPct    float64 `json:"saving_pct"`
}

// HourCarbon is one hour's carbon accounting.
type HourCarbon struct {
	Hour         time.Time `json:"hour"`
	Requests     int       `json:"requests"`
	MeanGCO2     float64   `json:"mean_gco2_per_kwh"`
	BaselineGCO2 float64   `json:"baseline_gco2_per_kwh"`
	SavingPct    float64   `json:"saving_pct"`
	PlanAgree    int       `json:"plan_agree"`
	PlanDisagree int       `json:"plan_disagree"`
}

// Carbon accounts records (from one or more load generators) routed by a
// switch holding c, compiled from cfg.
func Carbon(cfg *config.Config, c *Compiled, records []loadgen.Record) (*CarbonReport, error) {
	return CarbonHours(cfg, []*Compiled{c}, records, nil)
}

// CarbonHours accounts records routed by a switch that held the compiled
// hours one after the other: candidates[i] lists the hours (indices into
// hours, earlier first) whose tables may have decided records[i] — one, or
// two when it was sent during a flip (Schedule.At). A nil candidates means
// hours[0] for every record.
func CarbonHours(cfg *config.Config, hours []*Compiled, records []loadgen.Record, candidates [][]int) (*CarbonReport, error) {
	if len(hours) == 0 {
		return nil, fmt.Errorf("carbon: no hours")
	}
	if candidates != nil && len(candidates) != len(records) {
		return nil, fmt.Errorf("carbon: %d candidate lists for %d records", len(candidates), len(records))
	}
	routers := make([]*compiler.Router, len(hours))
	for i, h := range hours {
		routers[i] = compiler.NewRouter(h.State)
	}
	pool := cfg.Pool()
	type siteInfo struct {
		name    string
		nearest regions.Index
		n       int
		sum     float64
		base    float64
	}
	sites := map[uint16]*siteInfo{}
	for _, s := range cfg.Sites {
		rs, err := cfg.RoutingSite(s)
		if err != nil {
			return nil, err
		}
		sites[uint16(s.ID)] = &siteInfo{name: s.Name, nearest: regions.Nearest(rs, pool)}
	}
	rep := &CarbonReport{Hour: hours[0].Hour, Source: hours[0].Carbon.Source, Policy: hours[0].State.Meta.Policy}
	perHour := make([]struct {
		n, agree, disagree int
		sum, base          float64
	}, len(hours))
	perRegion := map[int]int{}
	var sum, base float64
	one := []int{0}
	for i, r := range records {
		if r.Outcome != loadgen.OK && r.Outcome != loadgen.Nack {
			continue
		}
		si, ok := sites[r.Site]
		if !ok {
			return nil, fmt.Errorf("carbon: request %d carries site %d, which the configuration does not have", r.ID, r.Site)
		}
		cands := one
		if candidates != nil {
			cands = candidates[i]
		}
		if len(cands) == 0 {
			return nil, fmt.Errorf("carbon: request %d: no hour", r.ID)
		}
		// The hour that decided the request: the latest candidate whose
		// plan predicts its region, else the latest.
		h, agree := cands[len(cands)-1], false
		for k := len(cands) - 1; k >= 0; k-- {
			if cands[k] < 0 || cands[k] >= len(hours) {
				return nil, fmt.Errorf("carbon: request %d: hour %d of %d", r.ID, cands[k], len(hours))
			}
			if routers[cands[k]].Route(r.Site, r.SLAms, 0).Region == r.Region {
				h, agree = cands[k], true
				break
			}
		}
		intensity := hours[h].Carbon.Intensity
		if int(r.Region) >= len(intensity) || math.IsInf(intensity[r.Region], 0) {
			return nil, fmt.Errorf("carbon: request %d was routed to region %d, which the configuration does not have", r.ID, r.Region)
		}
		g, b := intensity[r.Region], intensity[si.nearest]
		rep.Requests++
		sum += g
		base += b
		si.n++
		si.sum += g
		si.base += b
		perRegion[int(r.Region)]++
		ph := &perHour[h]
		ph.n++
		ph.sum += g
		ph.base += b
		if len(cands) > 1 {
			rep.InFlip++
		}
		switch {
		case r.Flags&wire.FlagSpilled != 0:
			rep.Spilled++
		case agree:
			rep.PlanAgree++
			ph.agree++
		default:
			rep.PlanDisagree++
			ph.disagree++
		}
	}
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	saving := func(mean, baseline float64) float64 {
		if baseline == 0 {
			return 0
		}
		return round(100 * (1 - mean/baseline))
	}
	if rep.Requests > 0 {
		rep.MeanGCO2 = round(sum / float64(rep.Requests))
		rep.BaselineGCO2 = round(base / float64(rep.Requests))
		rep.SavingPct = saving(sum, base)
	}
	first := hours[0].Carbon.Intensity
	for _, r := range cfg.Regions {
		idx, _ := cfg.RegionIndex(r)
		n := perRegion[int(idx)]
		share := 0.0
		if rep.Requests > 0 {
			share = round(100 * float64(n) / float64(rep.Requests))
		}
		rep.Regions = append(rep.Regions, RegionCarbon{Index: int(idx), Region: r.ID, GCO2: round(first[idx]), Requests: n, SharePct: share})
	}
	slices.SortFunc(rep.Regions, func(a, b RegionCarbon) int { return a.Index - b.Index })
	for _, s := range cfg.Sites {
		si := sites[uint16(s.ID)]
		sc := SiteCarbon{Site: si.name, ID: s.ID, Nearest: loadgen.RegionName(uint8(si.nearest)), Requests: si.n}
		if si.n > 0 {
			sc.MeanGCO2 = round(si.sum / float64(si.n))
			sc.BaselineGCO2 = round(si.base / float64(si.n))
			sc.SavingPct = saving(si.sum, si.base)
		}
		rep.Sites = append(rep.Sites, sc)
	}
	if len(hours) > 1 {
		for i, ph := range perHour {
			hc := HourCarbon{Hour: hours[i].Hour, Requests: ph.n, PlanAgree: ph.agree, PlanDisagree: ph.disagree}
			if ph.n > 0 {
				hc.MeanGCO2 = round(ph.sum / float64(ph.n))
				hc.BaselineGCO2 = round(ph.base / float64(ph.n))
				hc.SavingPct = saving(ph.sum, ph.base)
			}
			rep.Hours = append(rep.Hours, hc)
		}
	}
	return rep, nil
}

// WriteText renders the report (`-o table`).
func (r *CarbonReport) WriteText(w io.Writer) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	fmt.Fprintf(w, "carbon at %s (%s), policy %s: %d requests, mean %s gCO2eq/kWh vs %s nearest-region baseline: saving %s %%\n",
		r.Hour.Format(time.RFC3339), r.Source, r.Policy, r.Requests, f(r.MeanGCO2), f(r.BaselineGCO2), f(r.SavingPct))
	fmt.Fprintf(w, "decisions matching the compiled plan: %d of %d (%d spilled, not compared; %d sent during a flip, compared with both hours)\n\n",
		r.PlanAgree, r.PlanAgree+r.PlanDisagree, r.Spilled, r.InFlip)
	if len(r.Hours) > 0 {
		rows := make([][]string, 0, len(r.Hours))
		for _, h := range r.Hours {
			rows = append(rows, []string{h.Hour.Format(time.RFC3339), strconv.Itoa(h.Requests), f(h.MeanGCO2), f(h.BaselineGCO2), f(h.SavingPct),
				strconv.Itoa(h.PlanAgree), strconv.Itoa(h.PlanDisagree)})
		}
		if err := output.WriteTable(w, []string{"hour", "requests", "mean_gco2", "baseline_gco2", "saving_%", "plan_agree", "plan_disagree"}, rows); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	rows := make([][]string, 0, len(r.Regions))
	for _, g := range r.Regions {
		rows = append(rows, []string{strconv.Itoa(g.Index), g.Region, f(g.GCO2), strconv.Itoa(g.Requests), f(g.SharePct)})
	}
	gHead := "gco2_per_kwh"
	if len(r.Hours) > 0 {
		gHead = "gco2_first_hour"
	}
	if err := output.WriteTable(w, []string{"region", "name", gHead, "requests", "share_%"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rows = rows[:0]
	for _, s := range r.Sites {
		rows = append(rows, []string{s.Site, s.Nearest, strconv.Itoa(s.Requests), f(s.MeanGCO2), f(s.BaselineGCO2), f(s.SavingPct)})
	}
	return output.WriteTable(w, []string{"site", "nearest", "requests", "mean_gco2", "baseline_gco2", "saving_%"}, rows)
}
