package compiler

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Carbon is the carbon snapshot a state is compiled for: one hour's
// intensity of every configured region.
type Carbon struct {
	// Hour is the UTC hour the values belong to.
	Hour time.Time
	// Source describes where the numbers come from (CarbonSource.Describe).
	Source string
	// Intensity is gCO2eq/kWh by region index; regions outside the
	// configuration are +Inf.
	Intensity regions.HourCarbon
}

// Snapshot reads the intensity of every configured region (its zone, see
// config.Zone) for the hour containing t from src. It only reads src.
func Snapshot(cfg *config.Config, src regions.CarbonSource, t time.Time) (Carbon, error) {
	c := Carbon{Hour: t.UTC().Truncate(time.Hour), Source: src.Describe()}
	if zd, ok := src.(interface{ DescribeZones([]string) string }); ok {
		zones := make([]string, len(cfg.Regions))
		for i, r := range cfg.Regions {
			zones[i] = cfg.Zone(r)
		}
		c.Source = zd.DescribeZones(zones) // names the proxy-modelled zones, if any
	}
	for i := range c.Intensity {
		c.Intensity[i] = math.Inf(1)
	}
	for _, r := range cfg.Regions {
		idx, ok := cfg.RegionIndex(r)
		if !ok {
			return Carbon{}, fmt.Errorf("carbon: unknown region %q", r.ID)
		}
		v, err := src.Intensity(cfg.Zone(r), c.Hour)
		if err != nil {
			return Carbon{}, fmt.Errorf("carbon of region %s (zone %s) at %s: %w", r.ID, cfg.Zone(r), c.Hour.Format(time.RFC3339), err)
		}
		c.Intensity[idx] = v
	}
	return c, nil
}

// HourIn maps t into period p: t itself when p contains it, otherwise the
// same month, day and hour (UTC) shifted by whole years into p (29 February
// becomes 28 February). It reports false when no such hour lies in p. The
// offline model covers one year; the daemon and `p4ctl plan` use this to
// read it at any date.
func HourIn(p regions.Period, t time.Time) (time.Time, bool) {
	t = t.UTC().Truncate(time.Hour)
	if p.Contains(t) {
		return t, true
	}
	for _, y := range []int{p.From.Year(), p.From.Year() + 1} {
		d := t.Day()
		if t.Month() == time.February && d == 29 {
			d = 28
		}
		u := time.Date(y, t.Month(), d, t.Hour(), 0, 0, 0, time.UTC)
		if p.Contains(u) {
			return u, true
		}
	}
	return time.Time{}, false
}

// PlanAt compiles cfg for the hour containing t, reading carbon from src.
// With mapYears (the offline model, which covers one year) a t outside the
// source's period is mapped into it by HourIn and the state's Meta records
// both times; otherwise t must lie in the period. policy, when not nil,
// overrides the configured policy. It only reads src.
func PlanAt(cfg *config.Config, src regions.CarbonSource, t time.Time, mapYears bool, epoch uint8, policy *regions.Policy) (*State, error) {
	t = t.UTC().Truncate(time.Hour)
	at := t
	if !src.Period().Contains(t) {
		var ok bool
		if at, ok = HourIn(src.Period(), t); !ok || !mapYears {
			return nil, fmt.Errorf("%s is outside the carbon data (%s, %s)", t.Format(time.RFC3339), src.Period(), src.Describe())
		}
	}
	c, err := Snapshot(cfg, src, at)
	if err != nil {
		return nil, err
	}
	in, err := NewInput(cfg, c, epoch)
	if err != nil {
		return nil, err
	}
	if policy != nil {
		in.Policy = *policy
	}
	st, err := Compile(in)
	if err != nil {
		return nil, err
	}
	if !at.Equal(t) {
		st.Meta.Requested = t
	}
	return st, nil
}

// Input is everything a state is compiled from.
type Input struct {
	// Config is a validated configuration (config.Load / config.Parse).
	Config *config.Config
	// Sites are the latency profiles, one per Config.Sites entry, in the
	// same order (config.RoutingSites builds them).
	Sites []*regions.Site
	// Carbon is the hour's carbon snapshot.
	Carbon Carbon
	// Policy and Options select the region-selection policy.
	Policy  regions.Policy
	Options regions.Options
	// Epoch is the generation the carbon ranking is installed under.
	Epoch uint8
	// Ranking, when set, is the carbon ranking to install, cleanest
	// first (the planner's hysteretic ranking, regions.Hysteresis): every
	// site ranks its regions in this order instead of by this hour's
	// carbon. Policies A and D ignore it. Hysteresis describes it for Meta.
	Ranking    []regions.Index
	Hysteresis string
	// Capacity is the target's table sizes the state must fit (nil: the
	// v1model program's, ProgramCapacity). Compile refuses a state that
	// overflows it with an *OverflowError naming each table, its need and
	// its limit, before building any entry; Unbounded measures.
	Capacity *Capacity
}

// NewInput builds an Input from a validated configuration: its sites,
// policy and options, the given carbon snapshot and epoch.
func NewInput(cfg *config.Config, c Carbon, epoch uint8) (Input, error) {
	sites, err := cfg.RoutingSites()
	if err != nil {
		return Input{}, err
	}
	p, err := cfg.RoutingPolicy()
	if err != nil {
		return Input{}, err
	}
	return Input{Config: cfg, Sites: sites, Carbon: c, Policy: p, Options: cfg.Options(), Epoch: epoch}, nil
}

// Meta says what a state was compiled from.
type Meta struct {
	Policy      string    `json:"policy"`
	Alpha       float64   `json:"alpha,omitempty"`
	Weight      float64   `json:"weight,omitempty"`
	ColdMissing string    `json:"cold_missing,omitempty"`
	Epoch       uint8     `json:"epoch"`
	Hour        time.Time `json:"hour"`
	// Requested is the time asked for when it was mapped into the carbon
	// source's period (PlanAt with the offline model); zero otherwise.
	Requested time.Time `json:"requested,omitzero"`
	Source    string    `json:"source"`
	// Signal is what the carbon numbers are: "average (lifecycle)",
	// "average (direct)" or "marginal (MOER)" (config.CarbonSignal).
	Signal string `json:"signal"`
	// Hysteresis describes the hysteretic ranking installed (Input.Ranking;
	// "" when the ranking follows this hour's carbon).
	Hysteresis string `json:"hysteresis,omitempty"`
	// Ranking is the site-independent carbon ranking, best first (for D:
	// the ranking shared by the most sites).
	Ranking []RankedRegion `json:"ranking"`
	// SiteRankings counts sites with their own ranking entries (D, or
	// carbon ties broken differently by latency).
	SiteRankings int `json:"site_rankings"`
	// TiesByIndex is set when per-site tie-breaking entries did not fit
	// carbon_rank and carbon ties are broken by region index instead.
	TiesByIndex bool `json:"ties_by_index,omitempty"`
}

// RankedRegion is one place of a ranking.
type RankedRegion struct {
	Rank   int     `json:"rank"`
	Index  uint8   `json:"index"`
	Region string  `json:"region"`
	Carbon float64 `json:"gco2_per_kwh"`
}

func (m Meta) clone() Meta {
	m.Ranking = slices.Clone(m.Ranking)
	return m
}

// Priorities of carbon_rank entries: rank k of the site-independent
// ranking has priority pipeline.MaxRegions−k; rank k of a site's own
// ranking has 2·pipeline.MaxRegions−k, so it always beats the shared one.
const (
	sharedRankBase = pipeline.MaxRegions
	siteRankBase   = 2 * pipeline.MaxRegions
	// rankTableSize is carbon_rank's size (pipeline.Schema).
	rankTableSize = pipeline.SizeCarbonRank
	// maxSLA is the largest SLA the 16-bit sla_ms key can carry.
	maxSLA = 1<<pipeline.WidthSLA - 1
	// FeasibilityPriority is the priority of every sla_feasibility entry
	// (a range table needs one; a site's intervals never overlap).
	FeasibilityPriority = 1
)

// Compile computes the desired switch state. The result is deterministic
// and sorted (see Compare).
func Compile(in Input) (*State, error) {
	cfg := in.Config
	if cfg == nil {
		return nil, errors.New("compile: no configuration")
	}
	if len(in.Sites) != len(cfg.Sites) {
		return nil, fmt.Errorf("compile: %d latency profiles for %d sites", len(in.Sites), len(cfg.Sites))
	}
	pool := cfg.Pool()
	if pool == 0 {
		return nil, errors.New("compile: no regions")
	}
	if in.Policy == regions.PolicyCPlusWarm {
		return nil, errors.New("compile: C+warm is stateful and cannot be compiled into table contents")
	}
	for _, r := range cfg.Regions {
		if l := r.NextHop.Local; l != nil && l.Tune != nil {
			return nil, fmt.Errorf("compile: region %s: the pool's tune block is not resolved into a bound (research/tuning.Resolve)", r.ID)
		}
	}
	// First the per-site decisions (feasibility intervals, rankings), then
	// the entries, in one exactly sized allocation.
	ivs := make([]interval, 0, len(cfg.Sites)*(pool.Len()+1))
	ivEnd := make([]int, len(cfg.Sites))
	nearest := make([]regions.Index, len(cfg.Sites))
	nPrefixes := 0
	for i, s := range cfg.Sites {
		site := in.Sites[i]
		if nearest[i] = regions.Nearest(site, pool); nearest[i] == regions.NoRegion {
			return nil, fmt.Errorf("compile: site %s has no latency to any configured region", s.Name)
		}
		var err error
		if ivs, err = feasibility(ivs, in.Policy, site, pool, in.Options); err != nil {
			return nil, fmt.Errorf("compile: site %s: %w", s.Name, err)
		}
		ivEnd[i] = len(ivs)
		nPrefixes += len(s.Prefixes)
	}
	capacity := ProgramCapacity(pipeline.V1Model)
	if in.Capacity != nil {
		capacity = *in.Capacity
	}
	shared, own := rankings(in, pool)
	nRank := len(shared)
	nOwn := 0
	for _, o := range own {
		nRank += len(o)
		if o != nil {
			nOwn++
		}
	}
	// Two generations must fit carbon_rank during an update. Per-site
	// rankings that only break carbon ties differently are dropped when they
	// would not fit (ties then go to the lower index, as in the shared
	// ranking); D's are required, and an overflow below reports them.
	tiesDropped := false
	if rankLimit, ok := capacity.Limit(pipeline.TableCarbonRank); ok && 2*nRank > rankLimit && in.Policy != regions.PolicyD {
		own, nRank, nOwn, tiesDropped = make([][]regions.Index, len(own)), len(shared), 0, true
	}
	nServers, nPools := 0, 0
	for _, r := range cfg.Regions {
		if l := r.NextHop.Local; l != nil {
			nServers += len(l.Servers)
			nPools++
		}
	}
	nR, nRoutes := len(cfg.Regions), len(cfg.Routes.L3)+len(cfg.Routes.L2)
	// Refuse what does not fit before building any entry.
	need := map[string]int{
		pipeline.TableClientSite: nPrefixes, pipeline.TableSLAFeasibility: len(ivs), pipeline.TableCarbonRank: 2 * nRank,
		pipeline.TableRegionNextHop: nR, pipeline.TableServerPool: nPools, pipeline.TableServerEndpoint: nServers,
		pipeline.TableReplySource: nServers, pipeline.TableExecClassCost: len(cfg.ExecClasses),
		pipeline.TableL3Forward: len(cfg.Routes.L3), pipeline.TableL2Forward: len(cfg.Routes.L2),
	}
	maxIv := 0
	for i := range ivEnd {
		lo := 0
		if i > 0 {
			lo = ivEnd[i-1]
		}
		maxIv = max(maxIv, ivEnd[i]-lo)
	}
	why := map[string]string{
		pipeline.TableClientSite:     plural(nPrefixes, "prefix") + " of " + plural(len(cfg.Sites), "site"),
		pipeline.TableSLAFeasibility: fmt.Sprintf("%s × up to %d SLA intervals each over %s", plural(len(cfg.Sites), "site"), maxIv, plural(nR, "region")),
		pipeline.TableCarbonRank:     fmt.Sprintf("2 generations × (%d shared + %s with their own ranking × %d)", len(shared), plural(nOwn, "site"), pool.Len()),
		pipeline.TableServerEndpoint: plural(nServers, "server"),
		pipeline.TableReplySource:    plural(nServers, "server"),
		pipeline.TableL3Forward:      plural(len(cfg.Routes.L3), "route"),
		pipeline.TableL2Forward:      plural(len(cfg.Routes.L2), "route"),
	}
	if err := capacity.check(need, why); err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	a := &arena{
		m: make([]Match, 0, nPrefixes+2*len(ivs)+3*nRank+nR+nServers+len(cfg.ExecClasses)+nRoutes),
		p: make([]Param, 0, nPrefixes+2*len(ivs)+1+nRank+4*nR+9*nR+3*nServers+2*len(cfg.ExecClasses)+nRoutes),
	}
	st := &State{Entries: make([]Entry, 0, nPrefixes+len(ivs)+1+nRank+2*nR+nServers+len(cfg.ExecClasses)+nRoutes)}
	add := func(e Entry) { st.Entries = append(st.Entries, e) }

	// client_site
	for _, s := range cfg.Sites {
		for _, p := range s.Prefixes {
			add(Entry{Table: pipeline.TableClientSite,
				Match:  a.matches(Match{Field: pipeline.FieldSrcAddr, Kind: pipeline.LPM, Value: uint64(p.Uint32()), PrefixLen: p.Bits()}),
				Action: pipeline.ActionSetClientSite, Params: a.params(Param{pipeline.ParamSite, uint64(s.ID)})})
		}
	}

	// sla_feasibility
	for i, s := range cfg.Sites {
		lo := 0
		if i > 0 {
			lo = ivEnd[i-1]
		}
		for _, iv := range ivs[lo:ivEnd[i]] {
			add(Entry{Table: pipeline.TableSLAFeasibility,
				Match: a.matches(
					Match{Field: pipeline.FieldSite, Kind: pipeline.Exact, Value: uint64(s.ID)},
					Match{Field: pipeline.FieldSLA, Kind: pipeline.Range, Value: uint64(iv.lo), High: uint64(iv.hi)}),
				Priority: FeasibilityPriority,
				Action:   pipeline.ActionSetFeasible,
				Params:   a.params(Param{pipeline.ParamFeasible, uint64(iv.set)}, Param{pipeline.ParamNearest, uint64(nearest[i])})})
		}
	}

	// active_epoch
	add(Entry{Table: pipeline.TableActiveEpoch, Default: true, Action: pipeline.ActionSetActiveEpoch,
		Params: a.params(Param{pipeline.ParamEpoch, uint64(in.Epoch)})})

	// carbon_rank
	rankEntry := func(siteVal, siteMask uint64, base int, k int, r regions.Index) Entry {
		return Entry{Table: pipeline.TableCarbonRank,
			Match: a.matches(
				Match{Field: pipeline.FieldEpoch, Kind: pipeline.Exact, Value: uint64(in.Epoch)},
				Match{Field: pipeline.FieldSite, Kind: pipeline.Ternary, Value: siteVal, Mask: siteMask},
				Match{Field: pipeline.FieldFeasible, Kind: pipeline.Ternary, Value: 1 << r, Mask: 1 << r}),
			Priority: int32(base - k),
			Action:   pipeline.ActionRouteToRegion, Params: a.params(Param{pipeline.ParamRegion, uint64(r)})}
	}
	for k, r := range shared {
		add(rankEntry(0, 0, sharedRankBase, k, r))
	}
	for i, order := range own {
		if order == nil {
			continue
		}
		for k, r := range order {
			add(rankEntry(uint64(cfg.Sites[i].ID), 1<<pipeline.WidthSite-1, siteRankBase, k, r))
		}
	}

	// region_next_hop, server_pool, server_endpoint
	for _, r := range cfg.Regions {
		idx, _ := cfg.RegionIndex(r)
		key := a.matches(Match{Field: pipeline.FieldRegion, Kind: pipeline.Exact, Value: uint64(idx)})
		if l := r.NextHop.Local; l != nil {
			add(Entry{Table: pipeline.TableRegionNextHop, Match: key, Action: pipeline.ActionDispatchLocal,
				Params: a.params(Param{pipeline.ParamCapacity, uint64(l.Capacity)})})
			pol, _ := pipeline.ParsePolicy(l.Policy)
			onFull := pipeline.OnFullNack
			if l.OnFull == "force" {
				onFull = pipeline.OnFullForce
			}
			base := l.Servers[0].ID
			for _, s := range l.Servers {
				base = min(base, s.ID)
			}
			tick, err := pipeline.CreditTickFor(l.CreditTTL.Duration)
			if err != nil {
				return nil, fmt.Errorf("compile: region %s: %w", r.ID, err)
			}
			add(Entry{Table: pipeline.TableServerPool, Match: key, Action: pipeline.ActionSetPool,
				Params: a.params(
					Param{pipeline.ParamBase, uint64(base)}, Param{pipeline.ParamSizeMask, uint64(len(l.Servers) - 1)},
					Param{pipeline.ParamPolicy, uint64(pol)}, Param{pipeline.ParamBound, uint64(l.Bound)},
					Param{pipeline.ParamMaxHolds, uint64(l.MaxHolds)}, Param{pipeline.ParamOnFull, uint64(onFull)},
					Param{pipeline.ParamCreditTick, uint64(tick)},
					Param{pipeline.ParamLongReserve, uint64(l.LongReserve)}, Param{pipeline.ParamLongMaxHolds, uint64(l.LongMaxHolds)})})
			for _, s := range l.Servers {
				key := a.matches(Match{Field: pipeline.FieldServer, Kind: pipeline.Exact, Value: uint64(s.ID)})
				add(Entry{Table: pipeline.TableServerEndpoint, Match: key,
					Action: pipeline.ActionSetServerEndpoint,
					Params: a.params(Param{pipeline.ParamPort, uint64(s.Port)}, Param{pipeline.ParamDMAC, uint64(s.MAC)}, Param{pipeline.ParamAddr, uint64(s.IP.Uint32())})})
				add(Entry{Table: pipeline.TableReplySource, Match: key,
					Action: pipeline.ActionSetReplySource, Params: a.params(Param{pipeline.ParamAddr, uint64(s.IP.Uint32())})})
			}
		} else if rm := r.NextHop.Remote; rm != nil {
			add(Entry{Table: pipeline.TableRegionNextHop, Match: key, Action: pipeline.ActionForwardRemote,
				Params: a.params(Param{pipeline.ParamPort, uint64(rm.Port)}, Param{pipeline.ParamDMAC, uint64(rm.MAC)},
					Param{pipeline.ParamAddr, uint64(rm.IP.Uint32())}, Param{pipeline.ParamCapacity, uint64(rm.Capacity)})})
		}
	}

	// exec_class_cost
	for _, e := range cfg.ExecClasses {
		long := uint64(0)
		if e.Long {
			long = 1
		}
		add(Entry{Table: pipeline.TableExecClassCost,
			Match:  a.matches(Match{Field: pipeline.FieldExecClass, Kind: pipeline.Exact, Value: uint64(e.ID)}),
			Action: pipeline.ActionSetExecCost, Params: a.params(Param{pipeline.ParamCostMicros, uint64(e.CostUS)}, Param{pipeline.ParamIsLong, long})})
	}

	// l3_forward, l2_forward
	for _, r := range cfg.Routes.L3 {
		e := Entry{Table: pipeline.TableL3Forward,
			Match:  a.matches(Match{Field: pipeline.FieldDstAddr, Kind: pipeline.LPM, Value: uint64(r.Prefix.Uint32()), PrefixLen: r.Prefix.Bits()}),
			Action: pipeline.ActionForward, Params: a.params(Param{pipeline.ParamPort, uint64(r.Port)})}
		if r.Drop {
			e.Action, e.Params = pipeline.ActionDrop, nil
		}
		add(e)
	}
	for _, r := range cfg.Routes.L2 {
		e := Entry{Table: pipeline.TableL2Forward,
			Match:  a.matches(Match{Field: pipeline.FieldDstMAC, Kind: pipeline.Exact, Value: uint64(r.MAC)}),
			Action: pipeline.ActionForward, Params: a.params(Param{pipeline.ParamPort, uint64(r.Port)})}
		if r.Drop {
			e.Action, e.Params = pipeline.ActionDrop, nil
		}
		add(e)
	}

	st.sort()
	st.Meta = meta(in, shared, own)
	st.Meta.TiesByIndex = tiesDropped
	return st, nil
}

func meta(in Input, shared []regions.Index, own [][]regions.Index) Meta {
	m := Meta{Policy: in.Policy.String(), Epoch: in.Epoch, Hour: in.Carbon.Hour, Source: in.Carbon.Source,
		Signal: in.Config.CarbonSignal().Describe()}
	if hysteretic(in) {
		m.Hysteresis = in.Hysteresis
	}
	switch in.Policy {
	case regions.PolicyCPlus:
		m.Alpha, m.ColdMissing = in.Options.Alpha, in.Options.ColdMissing.String()
	case regions.PolicyD:
		m.Weight = in.Options.W
	}
	for k, r := range shared {
		reg, _ := regions.RegionAt(r)
		m.Ranking = append(m.Ranking, RankedRegion{Rank: k, Index: uint8(r), Region: reg.ID, Carbon: in.Carbon.Intensity[r]})
	}
	for _, o := range own {
		if o != nil {
			m.SiteRankings++
		}
	}
	return m
}

// hysteretic reports whether in installs a given (hysteretic) ranking.
func hysteretic(in Input) bool {
	return in.Ranking != nil && in.Policy != regions.PolicyA && in.Policy != regions.PolicyD
}

// rankings returns the carbon ranking shared by the most sites (ties: the
// first such site's), and for each site whose own ranking differs, that
// ranking (nil for sites that use the shared one). A site's ranking is
// regions.Rank over the pool: by carbon (B, C, C+, C-cap), by D's score (D),
// or by index (A, which ignores carbon so its entries never change); with
// Input.Ranking, that ranking restricted to the site's regions.
func rankings(in Input, pool regions.RegionSet) (shared []regions.Index, own [][]regions.Index) {
	n := len(in.Sites)
	orders := make([][]regions.Index, n)
	for i, s := range in.Sites {
		switch {
		case hysteretic(in):
			set := pool & s.Regions()
			for _, r := range in.Ranking {
				if set.Has(r) {
					orders[i] = append(orders[i], r)
					set &^= regions.SetOf(r)
				}
			}
			orders[i] = append(orders[i], set.Indices()...) // regions the ranking lacks, by index
			continue
		}
		switch in.Policy {
		case regions.PolicyA:
			orders[i] = pool.Indices()
		case regions.PolicyD:
			sc := regions.ScoresD(s, pool, &in.Carbon.Intensity, in.Options)
			orders[i] = regions.Rank(s, pool&s.Regions(), &sc)
		default:
			orders[i] = regions.Rank(s, pool&s.Regions(), &in.Carbon.Intensity)
		}
	}
	if n == 0 {
		return pool.Indices(), nil
	}
	// Most common ranking (ties: the one whose first site comes first),
	// counted by key so that thousands of sites with as many distinct
	// rankings (D) cost O(sites), not O(sites²).
	type group struct{ first, count int }
	groups := make(map[string]*group, 8)
	key := make([]byte, 0, regions.MaxRegions)
	var best *group
	for i, o := range orders {
		key = key[:0]
		for _, r := range o {
			key = append(key, byte(r))
		}
		g, ok := groups[string(key)]
		if !ok {
			g = &group{first: i}
			groups[string(key)] = g
		}
		g.count++
		if best == nil || g.count > best.count || g.count == best.count && g.first < best.first {
			best = g
		}
	}
	shared = orders[best.first]
	own = make([][]regions.Index, n)
	for i := range orders {
		if !slices.Equal(orders[i], shared) {
			own[i] = orders[i]
		}
	}
	return shared, own
}

// interval is one sla_feasibility entry: SLA lo..hi → set.
type interval struct {
	lo, hi uint16
	set    regions.RegionSet
}

// feasibility appends a site's feasibility intervals to out: its intervals over every 16-bit
// SLA value: exactly regions.Candidates(p, site, pool, sla) at each sla,
// with one interval per distinct set (≤ regions+1 for monotone policies).
// Boundaries are seeded at ⌈P95⌉ or ⌈P95 + α·cold⌉ of every region (as
// the policy uses them) and every interval is verified against
// regions.Candidates at both ends; a change the seeds missed is found by
// bisection, so the result is exact for any policy whose candidate set only
// grows with the SLA.
func feasibility(out []interval, p regions.Policy, s *regions.Site, pool regions.RegionSet, o regions.Options) ([]interval, error) {
	cand := func(sla int) regions.RegionSet { return regions.Candidates(p, s, pool, float64(sla), o) }
	start := len(out) // this site's intervals are out[start:]
	var seeds [2*regions.MaxRegions + 1]int
	ns := 0
	seeds[ns] = 0
	ns++
	addSeed := func(v float64) {
		if c := math.Ceil(v); c > 0 && c <= maxSLA {
			seeds[ns] = int(c)
			ns++
		}
	}
	// Seed where the policy's candidate set can change: at ⌈P95⌉ (C, C-cap;
	// C+ for regions without a cold latency when they count as warm) and at
	// ⌈P95 + α·cold⌉ (C+). A, B and D do not depend on the SLA.
	usesP95 := p == regions.PolicyC || p == regions.PolicyCCap ||
		(p == regions.PolicyCPlus || p == regions.PolicyCPlusWarm) && o.ColdMissing == regions.ColdMissingWarm
	usesCold := p == regions.PolicyCPlus || p == regions.PolicyCPlusWarm
	for _, r := range pool.Indices() {
		l, ok := s.P95(r)
		if !ok {
			continue
		}
		if usesP95 {
			addSeed(l)
		}
		if c, ok := s.Cold(r); ok && usesCold {
			addSeed(l + o.Alpha*c)
		}
	}
	bs := seeds[:ns]
	slices.Sort(bs)
	bs = slices.Compact(bs)
	for i, lo := range bs {
		hi := maxSLA
		if i+1 < len(bs) {
			hi = bs[i+1] - 1
		}
		setLo := cand(lo)
		for {
			setHi := cand(hi)
			if setHi == setLo {
				out = appendInterval(out, start, lo, hi, setLo)
				break
			}
			// The set changes inside [lo, hi]: find the first x with
			// cand(x) != setLo (candidate sets grow with the SLA).
			a, b := lo, hi // cand(a) == setLo, cand(b) != setLo
			for b-a > 1 {
				m := a + (b-a)/2
				if cand(m) == setLo {
					a = m
				} else {
					b = m
				}
			}
			out = appendInterval(out, start, lo, a, setLo)
			lo, setLo = b, cand(b)
		}
	}
	if err := checkMonotone(out[start:]); err != nil {
		return nil, err
	}
	return out, nil
}

func appendInterval(out []interval, start, lo, hi int, set regions.RegionSet) []interval {
	if n := len(out); n > start && out[n-1].set == set && int(out[n-1].hi)+1 == lo {
		out[n-1].hi = uint16(hi)
		return out
	}
	return append(out, interval{lo: uint16(lo), hi: uint16(hi), set: set})
}

// checkMonotone verifies that each interval's set contains the previous
// one's, the property the boundary search relies on.
func checkMonotone(ivs []interval) error {
	for i := 1; i < len(ivs); i++ {
		if ivs[i].set&ivs[i-1].set != ivs[i-1].set {
			return fmt.Errorf("feasible set shrinks at SLA %d ms (%v → %v): the policy is not monotone in the SLA", ivs[i].lo, ivs[i-1].set, ivs[i].set)
		}
	}
	return nil
}

// arena hands out small Match and Param slices from shared backing arrays,
// so compiling thousands of entries costs a handful of allocations.
type arena struct {
	m []Match
	p []Param
}

func (a *arena) matches(ms ...Match) []Match {
	if cap(a.m)-len(a.m) < len(ms) {
		a.m = make([]Match, 0, max(1024, 2*cap(a.m)))
	}
	n := len(a.m)
	a.m = append(a.m, ms...)
	return a.m[n:len(a.m):len(a.m)]
}

func (a *arena) params(ps ...Param) []Param {
	if cap(a.p)-len(a.p) < len(ps) {
		a.p = make([]Param, 0, max(1024, 2*cap(a.p)))
	}
	n := len(a.p)
	a.p = append(a.p, ps...)
	return a.p[n:len(a.p):len(a.p)]
}
