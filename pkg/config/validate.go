package config

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	yamlv3 "go.yaml.in/yaml/v3"
)

// Limits of the data-plane program the configuration must fit in.
const (
	maxPort    = 1<<pipeline.WidthPort - 1
	maxSiteID  = 1<<pipeline.WidthSite - 1
	maxSLA     = 1<<pipeline.WidthSLA - 1
	maxU8      = 1<<8 - 1
	maxU16     = 1<<16 - 1
	maxU32     = 1<<32 - 1
	shareSlack = 1e-6
	maxJitter  = time.Hour
	maxExecID  = 1<<pipeline.WidthExecClass - 1
	maxLatency = regions.MaxLatencyMs // ms, exclusive: SLAs are 16-bit
)

// Table sizes are not checked here: how many entries a configuration needs
// depends on the policy and the latencies (A needs one sla_feasibility
// entry per site, C up to regions+1), and what a switch holds on its
// program (its P4Info). compiler.Compile counts the need exactly and
// refuses a state that overflows the target's capacity, naming the table,
// the need and the limit (docs/ARCHITECTURE.md decision 47).

type problems struct{ list []Problem }

func (p *problems) add(path, format string, a ...any) {
	p.list = append(p.list, Problem{Path: path, Msg: fmt.Sprintf(format, a...)})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: p.list}
}

func idx(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// CanonicalPolicy maps a policy name (any case) to its canonical spelling.
func CanonicalPolicy(name string) (string, bool) {
	for _, p := range []string{PolicyA, PolicyB, PolicyC, PolicyCPlus, PolicyD, PolicyCCap} {
		if strings.EqualFold(name, p) {
			return p, true
		}
	}
	return "", false
}

// Validate checks the configuration against the region catalog
// (pkg/regions) and the data-plane program's limits. It does no I/O. The returned *ValidationError lists
// every problem with its YAML path.
func (c *Config) Validate() error {
	var p problems
	c.validateTargets(&p)
	regionByID := c.validateRegions(&p)
	c.validateSites(&p, regionByID)
	c.validateClasses(&p)
	c.validatePolicy(&p)
	c.validateCarbon(&p)
	c.validateSchedule(&p)
	c.validateRoutes(&p)
	c.validateLatency(&p)
	c.validateArch(&p)
	return p.err()
}

func (c *Config) validateTargets(p *problems) {
	names := map[string]int{}
	devs := map[string]int{}
	for i, t := range c.Targets {
		path := idx("targets", i)
		if t.Name == "" {
			p.add(path+".name", "required")
		} else if j, dup := names[t.Name]; dup {
			p.add(path+".name", "duplicate target name %q (also targets[%d])", t.Name, j)
		} else {
			names[t.Name] = i
		}
		if t.GRPCAddr == "" {
			p.add(path+".grpc_addr", "required (host:port of the P4Runtime server)")
		} else if host, port, err := net.SplitHostPort(t.GRPCAddr); err != nil || host == "" {
			p.add(path+".grpc_addr", "want host:port, got %q", t.GRPCAddr)
		} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.add(path+".grpc_addr", "bad port %q", port)
		}
		key := t.GRPCAddr + "#" + strconv.FormatUint(t.DeviceID, 10)
		if j, dup := devs[key]; dup && t.GRPCAddr != "" {
			p.add(path, "same grpc_addr and device_id as targets[%d]", j)
		} else {
			devs[key] = i
		}
		if t.ElectionID.IsZero() {
			p.add(path+".election_id", "must be ≥ 1 (0 cannot become primary)")
		}
		if t.TLS != nil && (t.TLS.Cert == "") != (t.TLS.Key == "") {
			p.add(path+".tls", "cert and key go together (mTLS)")
		}
		if _, err := pipeline.ParseArch(t.Arch); err != nil {
			p.add(path+".arch", "%v", err)
		}
		c.validateTargetSites(p, path, t.Sites)
	}
	c.validateSiteSplit(p)
}

// nestedPrefix is a site prefix inside another site's.
type nestedPrefix struct {
	outer, inner       string // site names
	outerNet, innerNet netip.Prefix
}

// nestedPrefixes returns every pair of prefixes of different sites one of
// which lies inside the other.
func (c *Config) nestedPrefixes() []nestedPrefix {
	type owned struct {
		site string
		net  netip.Prefix
	}
	byLen := map[int]map[netip.Addr]owned{}
	for _, s := range c.Sites {
		for _, pr := range s.Prefixes {
			q := pr.Prefix.Masked()
			if byLen[q.Bits()] == nil {
				byLen[q.Bits()] = map[netip.Addr]owned{}
			}
			byLen[q.Bits()][q.Addr()] = owned{s.Name, q}
		}
	}
	var out []nestedPrefix
	for _, s := range c.Sites {
		for _, pr := range s.Prefixes {
			q := pr.Prefix.Masked()
			for l := range q.Bits() {
				outer, err := q.Addr().Prefix(l)
				if err != nil {
					continue
				}
				if o, ok := byLen[l][outer.Addr()]; ok && o.site != s.Name {
					out = append(out, nestedPrefix{outer: o.site, inner: s.Name, outerNet: o.net, innerNet: q})
				}
			}
		}
	}
	return out
}

// validateSiteSplit refuses a target that holds a site but not another
// site whose prefix lies inside the first's: the switch would match the
// inner site's clients on the outer prefix and route them as the outer
// site's, where a site it does not hold must be an unknown source.
func (c *Config) validateSiteSplit(p *problems) {
	var nested []nestedPrefix
	computed := false
	for i, t := range c.Targets {
		if len(t.Sites) == 0 {
			continue
		}
		if !computed {
			nested, computed = c.nestedPrefixes(), true
		}
		held := make(map[string]bool, len(t.Sites))
		for _, s := range t.Sites {
			held[s] = true
		}
		for _, n := range nested {
			if held[n.outer] && !held[n.inner] {
				p.add(idx("targets", i)+".sites", "holds %s (%s) but not %s (%s), which lies inside it: the switch would route %s's clients as %s's; add %s to the list or split the prefix",
					n.outer, n.outerNet, n.inner, n.innerNet, n.inner, n.outer, n.inner)
			}
		}
	}
}

// validateTargetSites checks a target's site list: configured names, each
// once.
func (c *Config) validateTargetSites(p *problems, path string, sites []string) {
	if len(sites) == 0 {
		return
	}
	known := make(map[string]bool, len(c.Sites))
	for _, s := range c.Sites {
		known[s.Name] = true
	}
	seen := make(map[string]int, len(sites))
	for k, name := range sites {
		at := idx(path+".sites", k)
		if j, dup := seen[name]; dup {
			p.add(at, "duplicate site %q (also %s)", name, idx(path+".sites", j))
			continue
		}
		seen[name] = k
		if !known[name] {
			p.add(at, "unknown site %q (not in sites:)", name)
		}
	}
}

// validateArch refuses pools whose policy a target's architecture cannot
// run (pipeline.Arch.Supports): the controller writes the same pools to
// every target.
func (c *Config) validateArch(p *problems) {
	for i, t := range c.Targets {
		arch, err := pipeline.ParseArch(t.Arch)
		if err != nil {
			continue
		}
		for j, r := range c.Regions {
			l := r.NextHop.Local
			if l == nil {
				continue
			}
			pol, ok := pipeline.ParsePolicy(l.Policy)
			if !ok {
				continue
			}
			if err := arch.Supports(pol); err != nil {
				p.add(idx("regions", j)+".next_hop.local.policy", "target %s (targets[%d], arch %s): %v", t.Name, i, arch, err)
			}
			if tick, err := pipeline.CreditTickFor(l.CreditTTL.Duration); err == nil && tick > arch.MaxCreditTick() {
				p.add(idx("regions", j)+".next_hop.local.credit_ttl", "%s: target %s (targets[%d], arch %s) supports credit TTLs up to about %s (credit_tick %d; this one needs %d)",
					l.CreditTTL.Duration, t.Name, i, arch, maxTTL(arch), arch.MaxCreditTick(), tick)
			}
		}
	}
}

// maxTTL is the longest credit TTL arch's credit clock can express.
func maxTTL(arch pipeline.Arch) time.Duration {
	lo, _ := pipeline.TTLRange(arch.MaxCreditTick())
	return lo
}

func (c *Config) validateRegions(p *problems) map[string]int {
	byID := map[string]int{}
	byIndex := map[int]int{}
	servers := map[int]string{}
	if len(c.Regions) == 0 {
		p.add("regions", "at least one region is required")
	}
	if len(c.Regions) > pipeline.MaxRegions {
		p.add("regions", "%d regions, the data plane holds at most %d", len(c.Regions), pipeline.MaxRegions)
	}
	for i, r := range c.Regions {
		path := idx("regions", i)
		cr, known := catalogRegion(r.ID)
		switch {
		case r.ID == "":
			p.add(path+".id", "required")
		case !known:
			p.add(path+".id", "unknown region %q (catalog: %s)", r.ID, strings.Join(catalogIDs(), ", "))
		}
		if j, dup := byID[r.ID]; dup && r.ID != "" {
			p.add(path+".id", "duplicate region %q (also regions[%d])", r.ID, j)
		} else if r.ID != "" {
			byID[r.ID] = i
		}
		if r.Index != nil {
			switch {
			case *r.Index < 0 || *r.Index >= pipeline.MaxRegions:
				p.add(path+".index", "region index %d out of range 0..%d", *r.Index, pipeline.MaxRegions-1)
			case known && *r.Index != int(cr.Index):
				p.add(path+".index", "%s has catalog index %d, not %d (the data plane uses catalog indices; leave index out)", r.ID, cr.Index, *r.Index)
			}
		}
		if known {
			if j, dup := byIndex[int(cr.Index)]; dup {
				p.add(path+".index", "duplicate region index %d (also regions[%d], %s)", cr.Index, j, c.Regions[j].ID)
			} else {
				byIndex[int(cr.Index)] = i
			}
		}
		nh := path + ".next_hop"
		switch {
		case r.NextHop.Local == nil && r.NextHop.Remote == nil:
			p.add(nh, "want exactly one of local or remote")
		case r.NextHop.Local != nil && r.NextHop.Remote != nil:
			p.add(nh, "want exactly one of local or remote, got both")
		case r.NextHop.Local != nil:
			validatePool(p, nh+".local", r.NextHop.Local, servers, r.ID)
		default:
			rm := r.NextHop.Remote
			checkPort(p, nh+".remote.port", rm.Port)
			if !rm.IP.IsValid() {
				p.add(nh+".remote.ip", "required")
			}
			checkRange(p, nh+".remote.capacity", rm.Capacity, 0, maxU32)
		}
	}
	return byID
}

// catalogRegion finds a catalog region by its AWS id (exactly; cities and
// zones are not accepted in the controller config).
func catalogRegion(id string) (regions.Region, bool) {
	r, ok := regions.LookupRegion(id)
	if !ok || r.ID != id {
		return regions.Region{}, false
	}
	return r, true
}

func catalogIDs() []string {
	var ids []string
	for _, r := range regions.Catalog() {
		ids = append(ids, r.ID)
	}
	return ids
}

func checkPort(p *problems, path string, port int) {
	if port < 0 || port > maxPort {
		p.add(path, "port %d out of range 0..%d (9 bits)", port, maxPort)
	}
}

func checkRange(p *problems, path string, v, lo, hi int64) {
	if v < lo || v > hi {
		p.add(path, "%d out of range %d..%d", v, lo, hi)
	}
}

func validatePool(p *problems, path string, pool *LocalPool, seen map[int]string, region string) {
	if len(pool.Servers) == 0 {
		p.add(path+".servers", "a local pool needs at least one server")
	}
	ids := make([]int, 0, len(pool.Servers))
	for i, s := range pool.Servers {
		sp := idx(path+".servers", i)
		if s.ID < 0 || s.ID >= pipeline.MaxServers {
			p.add(sp+".id", "server id %d out of range 0..%d", s.ID, pipeline.MaxServers-1)
			continue
		}
		if other, dup := seen[s.ID]; dup {
			p.add(sp+".id", "duplicate server id %d (also in region %s)", s.ID, other)
			continue
		}
		seen[s.ID] = region
		ids = append(ids, s.ID)
		checkPort(p, sp+".port", s.Port)
		if !s.IP.IsValid() {
			p.add(sp+".ip", "required")
		}
	}
	if len(ids) == len(pool.Servers) && len(ids) > 0 {
		sort.Ints(ids)
		base, n := ids[0], len(ids)
		for k, id := range ids {
			if id != base+k {
				p.add(path+".servers", "server ids must be contiguous: %s (missing %d)", intList(ids), base+k)
				break
			}
		}
		if n&(n-1) != 0 {
			p.add(path+".servers", "pool of %d servers: the size must be a power of two (1, 2, 4, 8, …)", n)
		} else if align := min(n, pipeline.Candidates); base%align != 0 {
			p.add(path+".servers", "pool of %d servers starts at id %d: the first id must be a multiple of %d (pools are aligned to min(size, 4))", n, base, align)
		}
	}
	if _, ok := pipeline.ParsePolicy(pool.Policy); !ok {
		p.add(path+".policy", "unknown dispatch policy %q (want random, p2c, p2c-work, jbsq or jiq)", pool.Policy)
	}
	checkRange(p, path+".bound", int64(pool.Bound), 0, maxU16)
	if pool.Tune != nil {
		validateTune(p, path+".tune", pool)
	}
	checkRange(p, path+".max_holds", int64(pool.MaxHolds), 0, maxU8)
	switch pool.OnFull {
	case "", "nack", "force":
	default:
		p.add(path+".on_full", "want nack or force, got %q", pool.OnFull)
	}
	if pool.CreditTTL.Duration > 0 && pool.CreditTTL.Duration < time.Microsecond {
		p.add(path+".credit_ttl", "%s is below the data plane's 1 µs resolution", pool.CreditTTL.Duration)
	} else if _, err := pipeline.CreditTickFor(pool.CreditTTL.Duration); err != nil {
		p.add(path+".credit_ttl", "%v", err)
	}
	checkRange(p, path+".long_reserve", int64(pool.LongReserve), 0, maxU16)
	checkRange(p, path+".long_max_holds", int64(pool.LongMaxHolds), 0, maxU8)
	if pool.LongReserve > 0 && pool.Bound > 0 && pool.LongReserve >= pool.Bound && pool.Policy != "jiq" {
		p.add(path+".long_reserve", "long_reserve %d must be below bound %d, or every long request waits max holds", pool.LongReserve, pool.Bound)
	}
	checkRange(p, path+".capacity", pool.Capacity, 0, maxU32)
}

// validateTune checks a pool's tune block (research/tuning simulates it; the
// ranges here are the simulator's, so a valid block always runs).
func validateTune(p *problems, path string, pool *LocalPool) {
	if pool.Policy != "jbsq" {
		p.add(path, "tune chooses a JBSQ bound: only for policy jbsq, not %q", pool.Policy)
	}
	if pool.Bound != 0 {
		p.add(path, "give bound or tune, not both (tune computes the bound)")
	}
	t := pool.Tune.TuneOrDefault()
	checkRange(p, path+".cores_per_server", int64(t.CoresPerServer), 1, 1024)
	if !(t.Load > 0 && t.Load < 1) {
		p.add(path+".load", "load %v out of range (0, 1)", t.Load)
	}
	if !(t.ArrivalCV > 0 && t.ArrivalCV <= 20) {
		p.add(path+".arrival_cv", "arrival CV %v out of range (0, 20]", t.ArrivalCV)
	}
	switch t.Service {
	case "fixed", "exp", "bimodal", "lognormal":
	default:
		p.add(path+".service", "unknown service distribution %q (want fixed, exp, bimodal or lognormal)", t.Service)
	}
	if t.ServiceMean.Duration < time.Nanosecond || t.ServiceMean.Duration > time.Second {
		p.add(path+".service_mean", "%s out of range 1ns..1s", t.ServiceMean.Duration)
	}
	if !(t.Sigma > 0 && t.Sigma <= 4) {
		p.add(path+".sigma", "sigma %v out of range (0, 4]", t.Sigma)
	}
	if !(t.BimodalP > 0 && t.BimodalP < 1) {
		p.add(path+".bimodal_p", "%v out of range (0, 1)", t.BimodalP)
	}
	if !(t.BimodalRatio >= 1 && t.BimodalRatio <= 1000) {
		p.add(path+".bimodal_ratio", "%v out of range [1, 1000]", t.BimodalRatio)
	}
	if t.Delay.Duration > time.Second {
		p.add(path+".delay", "%s out of range 0..1s", t.Delay.Duration)
	}
	if t.SLO.Duration <= 0 || t.SLO.Duration > time.Minute {
		p.add(path+".slo", "%s out of range (0, 1m]", t.SLO.Duration)
	}
	if !(t.Target > 0 && t.Target < 1) {
		p.add(path+".target", "target violation rate %v out of range (0, 1)", t.Target)
	}
	checkRange(p, path+".seeds", int64(t.Seeds), 0, 1000)
	checkRange(p, path+".requests", int64(t.Requests), 0, 10_000_000)
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func (c *Config) validateSites(p *problems, regionByID map[string]int) {
	if len(c.Sites) == 0 {
		p.add("sites", "at least one client site is required")
	}
	names := map[string]int{}
	ids := map[int]int{}
	prefixes := map[string]string{}
	for i, s := range c.Sites {
		path := idx("sites", i)
		if s.Name == "" {
			p.add(path+".name", "required")
		} else if j, dup := names[s.Name]; dup {
			p.add(path+".name", "duplicate site name %q (also sites[%d])", s.Name, j)
		} else {
			names[s.Name] = i
		}
		if s.ID < 1 || s.ID > maxSiteID {
			p.add(path+".id", "site id %d out of range 1..%d (0 means unknown site)", s.ID, maxSiteID)
		} else if j, dup := ids[s.ID]; dup {
			p.add(path+".id", "duplicate site id %d (also sites[%d], %s)", s.ID, j, c.Sites[j].Name)
		} else {
			ids[s.ID] = i
		}
		if len(s.Prefixes) == 0 {
			p.add(path+".prefixes", "at least one source prefix is required")
		}
		for k, pf := range s.Prefixes {
			pp := idx(path+".prefixes", k)
			if !pf.IsValid() {
				p.add(pp, "invalid prefix")
				continue
			}
			key := pf.String()
			if other, dup := prefixes[key]; dup {
				p.add(pp, "duplicate prefix %s (also %s)", key, other)
				continue
			}
			prefixes[key] = pp
		}
		var prof map[string]Latency
		if s.Profile != "" {
			var ok bool
			if prof, ok = builtinProfile(s.Profile); !ok {
				p.add(path+".profile", "unknown latency profile %q (built-in: %s)", s.Profile, strings.Join(builtinProfiles(), ", "))
				continue
			}
		}
		for _, rid := range sortedKeys(s.Latency) {
			lp := path + ".latency." + rid
			if _, ok := catalogRegion(rid); !ok {
				p.add(lp, "latency for unknown region %q (catalog: %s)", rid, strings.Join(catalogIDs(), ", "))
			}
			l := s.Latency[rid]
			if !(l.P95 > 0) || l.P95 >= maxLatency {
				p.add(lp+".p95_ms", "P95 latency %v ms out of range (0, %d)", l.P95, maxLatency)
			}
			if l.Cold != nil && !(*l.Cold >= 0 && *l.Cold < maxLatency) {
				p.add(lp+".cold_ms", "cold latency %v ms out of range [0, %d)", *l.Cold, maxLatency)
			}
		}
		for _, r := range c.Regions {
			if r.ID == "" {
				continue
			}
			if _, ok := s.Latency[r.ID]; ok {
				continue
			}
			if _, ok := prof[r.ID]; ok {
				continue
			}
			p.add(path+".latency", "no latency for region %s (give latency.%s.p95_ms or a profile that has it)", r.ID, r.ID)
		}
	}
}

func (c *Config) validateClasses(p *problems) {
	names := map[string]int{}
	sum := 0.0
	for i, k := range c.SLAClasses {
		path := idx("sla_classes", i)
		if k.Name == "" {
			p.add(path+".name", "required")
		} else if j, dup := names[k.Name]; dup {
			p.add(path+".name", "duplicate class name %q (also sla_classes[%d])", k.Name, j)
		} else {
			names[k.Name] = i
		}
		if k.MS < 1 || k.MS > maxSLA {
			p.add(path+".ms", "SLA %d ms out of range 1..%d (16 bits)", k.MS, maxSLA)
		}
		if !(k.Share >= 0 && k.Share <= 1) {
			p.add(path+".share", "share %v out of range [0, 1]", k.Share)
		}
		sum += k.Share
	}
	if len(c.SLAClasses) > 0 && math.Abs(sum-1) > shareSlack {
		p.add("sla_classes", "shares sum to %g, want 1", sum)
	}
	ids := map[int]int{}
	for i, e := range c.ExecClasses {
		path := idx("exec_classes", i)
		if e.ID < 0 || e.ID > maxExecID {
			p.add(path+".id", "exec class id %d out of range 0..%d", e.ID, maxExecID)
		} else if j, dup := ids[e.ID]; dup {
			p.add(path+".id", "duplicate exec class id %d (also exec_classes[%d])", e.ID, j)
		} else {
			ids[e.ID] = i
		}
		checkRange(p, path+".cost_us", e.CostUS, 0, maxU32)
	}
}

func (c *Config) validatePolicy(p *problems) {
	name, ok := CanonicalPolicy(c.Policy.Name)
	switch {
	case c.Policy.Name == "":
		p.add("policy.name", "required (A, B, C, C+, D or C-cap)")
	case strings.EqualFold(c.Policy.Name, "C+warm"):
		p.add("policy.name", "C+warm is stateful (it depends on when each region last saw a request) and cannot be compiled into table contents; use C+ here, or evaluate C+warm with p4ctl eval")
	case !ok:
		p.add("policy.name", "unknown policy %q (want A, B, C, C+, D or C-cap)", c.Policy.Name)
	}
	if a := c.Policy.Alpha; a != nil && !(*a >= 0 && *a <= 100) {
		p.add("policy.alpha", "alpha %v out of range [0, 100]", *a)
	}
	if w := c.Policy.Weight; w != nil && !(*w >= 0 && *w <= 1) {
		p.add("policy.weight", "weight %v out of range [0, 1]", *w)
	}
	if _, err := regions.ParseColdMissing(c.Policy.ColdMissing); err != nil {
		p.add("policy.cold_missing", "want exclude or warm, got %q", c.Policy.ColdMissing)
	}
	if h := c.Policy.Hysteresis; h != nil {
		c.validateHysteresis(p, name, ok)
	}
}

// validateHysteresis checks policy.hysteresis: whole hours in range, a
// policy that ranks by carbon.
func (c *Config) validateHysteresis(p *problems, name string, known bool) {
	h := c.Policy.Hysteresis
	if known && name != PolicyB && name != PolicyC && name != PolicyCPlus && name != PolicyCCap {
		what := "A ignores carbon"
		if name == PolicyD {
			what = "D ranks by a normalized per-site score, for which a gain in % or g/kWh means nothing"
		}
		p.add("policy.hysteresis", "applies to the policies that rank by carbon (B, C, C+, C-cap); %s", what)
	}
	if g := h.MinGain; g != nil {
		if err := (regions.Hysteresis{MinGain: *g, Horizon: 1}).Validate(); err != nil {
			p.add("policy.hysteresis.min_gain", "%s out of range: 0%% ≤ relative < 100%%, 0 ≤ absolute ≤ %d g/kWh", g, regions.MaxAbsoluteGain)
		}
	}
	hours := func(path string, d *Duration, lo, hi int) {
		if d == nil {
			return
		}
		switch v := d.Duration; {
		case v%time.Hour != 0:
			p.add(path, "%s: want whole hours (the ranking changes once an hour)", v)
		case v < time.Duration(lo)*time.Hour || v > time.Duration(hi)*time.Hour:
			p.add(path, "%s out of range %dh..%dh", v, lo, hi)
		}
	}
	hours("policy.hysteresis.min_hold", h.MinHold, 0, regions.MaxHold)
	hours("policy.hysteresis.horizon", h.Horizon, 1, regions.MaxHorizon)
}

func (c *Config) validateCarbon(p *problems) {
	cb := c.Carbon
	switch cb.Source {
	case "":
		p.add("carbon.source", "required (offline, csv, electricitymaps-csv, electricitymaps-api or watttime-api)")
	case SourceOffline:
	case SourceCSV, SourceElectricityMapsCSV:
		if cb.Dir == "" {
			p.add("carbon.dir", "required for source %s (directory of CSV traces)", cb.Source)
		}
	case SourceElectricityMapsAPI, SourceWattTimeAPI:
		if cb.TokenEnv == "" && cb.TokenFile == "" {
			p.add("carbon", "source %s needs token_env or token_file (tokens never go in the config)", cb.Source)
		}
		if cb.URL != "" {
			if u, err := url.Parse(cb.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				p.add("carbon.url", "want an http(s) URL, got %q", cb.URL)
			} else if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				p.add("carbon.url", "want http(s)://host[/path] without credentials, query or fragment (tokens never go in the config)")
			}
		}
		if cb.Source == SourceWattTimeAPI {
			if cb.Username == "" {
				p.add("carbon", "source watttime-api needs username (the password comes from token_env or token_file)")
			}
			if cb.Signal != "" && cb.Signal != "marginal" {
				p.add("carbon.signal", "%s applies to Electricity Maps only (WattTime gives co2_moer, a marginal rate: signal marginal, the default here)", cb.Signal)
			}
			for _, z := range sortedKeys(cb.WattTimeRegions) {
				if cb.WattTimeRegions[z] == "" {
					p.add("carbon.watttime_regions."+z, "empty WattTime region")
				}
			}
		}
	default:
		p.add("carbon.source", "unknown carbon source %q (want offline, csv, electricitymaps-csv, electricitymaps-api or watttime-api)", cb.Source)
	}
	if cb.Source != SourceWattTimeAPI {
		if cb.Username != "" {
			p.add("carbon.username", "only for source watttime-api")
		}
		if len(cb.WattTimeRegions) > 0 {
			p.add("carbon.watttime_regions", "only for source watttime-api")
		}
	}
	switch cb.Signal {
	case "", "direct", "lca":
	case "marginal":
		switch cb.Source {
		case SourceWattTimeAPI, SourceCSV:
		case SourceOffline:
			p.add("carbon.signal", "marginal: the offline model is of average (lifecycle) intensities; marginal rates come from watttime-api or CSV traces of them (source csv)")
		default:
			p.add("carbon.signal", "marginal: Electricity Maps gives average intensities (lca or direct); marginal rates come from watttime-api or CSV traces of them (source csv)")
		}
	default:
		p.add("carbon.signal", "want lca, direct or marginal, got %q", cb.Signal)
	}
	if _, err := regions.ParseFill(cb.Fill); err != nil {
		p.add("carbon.fill", "want none, previous or linear, got %q", cb.Fill)
	}
	if cb.StalenessBound.Duration != 0 && cb.StalenessBound.Duration < time.Hour {
		p.add("carbon.staleness_bound", "%s is shorter than the data's 1 h resolution", cb.StalenessBound.Duration)
	}
}

func (c *Config) validateSchedule(p *problems) {
	s := c.Schedule
	switch s.Mode {
	case "", ScheduleHourly:
	case ScheduleReplay:
		if s.Replay == nil {
			p.add("schedule.replay", "required for mode replay (start, speed)")
		}
	default:
		p.add("schedule.mode", "want hourly or replay, got %q", s.Mode)
	}
	if s.Jitter.Duration >= maxJitter {
		p.add("schedule.jitter", "jitter %s must be below 1h", s.Jitter.Duration)
	}
	if r := s.Replay; r != nil {
		if r.Start.IsZero() {
			p.add("schedule.replay.start", "required (RFC 3339, e.g. 2025-01-01T00:00:00Z)")
		}
		if !(r.Speed > 0) || math.IsInf(r.Speed, 0) {
			p.add("schedule.replay.speed", "speed must be > 0 (3600 = one hour per second), got %v", r.Speed)
		}
		if r.Hours < 0 {
			p.add("schedule.replay.hours", "must be ≥ 0")
		}
	}
}

func (c *Config) validateRoutes(p *problems) {
	seen := map[string]int{}
	for i, r := range c.Routes.L3 {
		path := idx("routes.l3", i)
		if !r.Prefix.IsValid() {
			p.add(path+".prefix", "required")
			continue
		}
		if j, dup := seen[r.Prefix.String()]; dup {
			p.add(path+".prefix", "duplicate prefix %s (also routes.l3[%d])", r.Prefix, j)
		} else {
			seen[r.Prefix.String()] = i
		}
		checkPort(p, path+".port", r.Port)
		if r.Drop && r.Port != 0 {
			p.add(path, "give port or drop, not both")
		}
	}
	macs := map[MAC]int{}
	for i, r := range c.Routes.L2 {
		path := idx("routes.l2", i)
		if j, dup := macs[r.MAC]; dup {
			p.add(path+".mac", "duplicate MAC %s (also routes.l2[%d])", r.MAC, j)
		} else {
			macs[r.MAC] = i
		}
		checkPort(p, path+".port", r.Port)
		if r.Drop && r.Port != 0 {
			p.add(path, "give port or drop, not both")
		}
	}
}

// Path resolves a path from the configuration against its directory.
func (c *Config) Path(rel string) string {
	if rel == "" || filepath.IsAbs(rel) || c.Dir == "" {
		return rel
	}
	return filepath.Join(c.Dir, rel)
}

// checkFiles checks that the files the configuration references exist.
func (c *Config) checkFiles(file string, data []byte) error {
	var p problems
	exists := func(path, rel string, dir bool) {
		if rel == "" {
			return
		}
		st, err := os.Stat(c.Path(rel))
		switch {
		case err != nil:
			p.add(path, "%v", err)
		case dir && !st.IsDir():
			p.add(path, "%s is not a directory", c.Path(rel))
		case !dir && st.IsDir():
			p.add(path, "%s is a directory", c.Path(rel))
		}
	}
	for i, t := range c.Targets {
		if t.TLS != nil {
			path := idx("targets", i) + ".tls"
			exists(path+".ca", t.TLS.CA, false)
			exists(path+".cert", t.TLS.Cert, false)
			exists(path+".key", t.TLS.Key, false)
		}
	}
	if c.Carbon.Source == SourceCSV || c.Carbon.Source == SourceElectricityMapsCSV {
		exists("carbon.dir", c.Carbon.Dir, true)
	}
	exists("carbon.token_file", c.Carbon.TokenFile, false)
	if len(p.list) == 0 {
		return nil
	}
	var root yamlv3.Node
	_ = yamlv3.Unmarshal(data, &root) // already parsed once successfully
	ix := newIndex(&root)
	for i := range p.list {
		p.list[i].File = file
		p.list[i].Line = ix.line(p.list[i].Path)
	}
	return sortProblems(p.list)
}
