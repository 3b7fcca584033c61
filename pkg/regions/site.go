package regions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/yamldoc"
)

// MaxLatencyMs bounds latencies: the switch matches SLAs with a 16-bit range
// key (pipeline.WidthSLA), so anything at or above it cannot be expressed.
const MaxLatencyMs = 65535

// RegionLatency is one entry of a site's latency profile.
type RegionLatency struct {
	Region Index   `json:"region"`
	P95Ms  float64 `json:"p95_ms"` // P95 round-trip time from the site, ms
	// ColdMs is the first-invocation (cold-start) latency in ms; meaningful
	// only when HasCold. A missing value is never silently zero: policies
	// that need it follow Options.ColdMissing.
	ColdMs  float64 `json:"cold_ms,omitempty"`
	HasCold bool    `json:"has_cold"`
}

// Site is a client site and its latency profile. It is immutable after
// NewSite; the per-region arrays are precomputed so decisions are a loop
// over fixed arrays.
type Site struct {
	name      string
	prefixes  []netip.Prefix
	known     RegionSet // regions with a P95
	coldKnown RegionSet // regions with a cold latency
	p95       [MaxRegions]float64
	cold      [MaxRegions]float64
	order     [MaxRegions]Index // known regions sorted by (P95, index): nearest first
	n         int               // len of order
}

// NewSite validates a latency profile and builds a Site. P95 values must be
// finite, > 0 and < MaxLatencyMs; cold values finite and >= 0; each region at
// most once and in the catalog.
func NewSite(name string, lat []RegionLatency, prefixes ...netip.Prefix) (*Site, error) {
	if name == "" {
		return nil, errors.New("site: empty name")
	}
	s := &Site{name: name, prefixes: append([]netip.Prefix(nil), prefixes...)}
	for _, l := range lat {
		r, ok := RegionAt(l.Region)
		if !ok {
			return nil, fmt.Errorf("site %q: region index %d not in the catalog", name, l.Region)
		}
		if s.known.Has(l.Region) {
			return nil, fmt.Errorf("site %q: region %s listed twice", name, r.ID)
		}
		if !(l.P95Ms > 0 && l.P95Ms < MaxLatencyMs) {
			return nil, fmt.Errorf("site %q: region %s: p95_ms %v out of range (0, %d)", name, r.ID, l.P95Ms, MaxLatencyMs)
		}
		if l.HasCold && !(l.ColdMs >= 0 && l.ColdMs < MaxLatencyMs) {
			return nil, fmt.Errorf("site %q: region %s: cold_ms %v out of range [0, %d)", name, r.ID, l.ColdMs, MaxLatencyMs)
		}
		s.known = s.known.Add(l.Region)
		s.p95[l.Region] = l.P95Ms
		if l.HasCold {
			s.coldKnown = s.coldKnown.Add(l.Region)
			s.cold[l.Region] = l.ColdMs
		}
	}
	if s.known == 0 {
		return nil, fmt.Errorf("site %q: no region latencies", name)
	}
	idx := s.known.Indices()
	sort.SliceStable(idx, func(a, b int) bool { return s.p95[idx[a]] < s.p95[idx[b]] })
	s.n = copy(s.order[:], idx)
	return s, nil
}

// Name is the site's name.
func (s *Site) Name() string { return s.name }

// Prefixes are the client IPv4/IPv6 prefixes that belong to the site (the
// compiler's client_site LPM entries); possibly empty.
func (s *Site) Prefixes() []netip.Prefix { return append([]netip.Prefix(nil), s.prefixes...) }

// Regions is the set of regions the site has a P95 latency for.
func (s *Site) Regions() RegionSet { return s.known }

// P95 returns the site's P95 RTT to region i, and false if unknown.
func (s *Site) P95(i Index) (float64, bool) {
	if !s.known.Has(i) {
		return 0, false
	}
	return s.p95[i], true
}

// Cold returns the site's first-invocation latency to region i, and false
// when the profile has none (the paper gives cold values for 5 regions only).
func (s *Site) Cold(i Index) (float64, bool) {
	if !s.coldKnown.Has(i) {
		return 0, false
	}
	return s.cold[i], true
}

// ColdKnown is the set of regions with a cold latency.
func (s *Site) ColdKnown() RegionSet { return s.coldKnown }

// ByLatency lists the site's regions within pool, nearest first; ties in P95
// are broken by lower index (the order every policy uses for tie-breaking).
func (s *Site) ByLatency(pool RegionSet) []Index {
	out := make([]Index, 0, s.n)
	for _, i := range s.order[:s.n] {
		if pool.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// Latencies returns the profile in index order.
func (s *Site) Latencies() []RegionLatency {
	var out []RegionLatency
	for _, i := range s.known.Indices() {
		out = append(out, RegionLatency{Region: i, P95Ms: s.p95[i], ColdMs: s.cold[i], HasCold: s.coldKnown.Has(i)})
	}
	return out
}

// Mumbai returns the built-in site "mumbai" with the paper's measurements
// from a Mumbai client: P95 RTT for all 12 regions and first-invocation
// latency for the 5-region pool. The paper reports no first-invocation latency
// for Tokyo, Seoul, Frankfurt, Stockholm, Cape Town, Oregon and São Paulo:
// those regions have HasCold = false (see Options.ColdMissing for what C+
// does with them).
func Mumbai() *Site {
	type row struct {
		id        string
		p95, cold float64
	}
	rows := []row{
		{"ap-south-1", 196, 423},
		{"ap-southeast-1", 367, 391},
		{"ap-southeast-2", 634, 952},
		{"eu-west-1", 979, 1108},
		{"us-east-1", 1491, 1626},
		{"ap-northeast-1", 600, math.NaN()},
		{"ap-northeast-2", 620, math.NaN()},
		{"eu-central-1", 720, math.NaN()},
		{"eu-north-1", 780, math.NaN()},
		{"af-south-1", 950, math.NaN()},
		{"us-west-2", 1050, math.NaN()},
		{"sa-east-1", 1150, math.NaN()},
	}
	lat := make([]RegionLatency, 0, len(rows))
	for _, r := range rows {
		reg, _ := LookupRegion(r.id)
		l := RegionLatency{Region: reg.Index, P95Ms: r.p95}
		if !math.IsNaN(r.cold) {
			l.ColdMs, l.HasCold = r.cold, true
		}
		lat = append(lat, l)
	}
	s, err := NewSite("mumbai", lat)
	if err != nil {
		panic("regions: built-in site invalid: " + err.Error()) // a programming error, covered by tests
	}
	return s
}

// LoadSites reads client sites from a YAML file:
//
//	sites:
//	  - name: mumbai
//	    prefixes: [10.1.0.0/16]        # optional
//	    latencies:
//	      - {region: ap-south-1, p95_ms: 196, cold_ms: 423}
//	      - {region: ap-northeast-1, p95_ms: 600}   # no cold_ms: unknown
//
// region is an AWS id, city or zone (LookupRegion). Errors name file:line.
func LoadSites(path string) ([]*Site, error) {
	return LoadSitesContext(context.Background(), path)
}

// LoadSitesContext is LoadSites reading the file under ctx, at most
// inputfile.MaxSize bytes of it.
func LoadSitesContext(ctx context.Context, path string) ([]*Site, error) {
	b, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("load sites: %w", err)
	}
	return ParseSites(path, b)
}

// SitesFormat says in one line what a sites file holds, for errors that
// meet another format (a controller configuration's sites: block).
const SitesFormat = "a sites file lists each site's latencies as latencies: [{region: ap-south-1, p95_ms: 196, cold_ms: 423}, …] under a top-level sites: (docs/CONFIG.md, \"eval carbon --sites\")"

// ErrConfigSchema marks a site written in the controller configuration's
// sites: schema (id, latency map, profile) where a sites file was expected.
var ErrConfigSchema = errors.New("the controller configuration's sites: schema")

// ParseSites parses the LoadSites format; name is used in error messages.
func ParseSites(name string, data []byte) ([]*Site, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if line, what := yamldoc.Trailing(data); what != "" {
		return nil, fmt.Errorf("%s:%d: %s", name, line, what)
	}
	errAt := func(n *yaml.Node, format string, a ...any) error {
		return fmt.Errorf("%s:%d: "+format, append([]any{name, n.Line}, a...)...) // %w in format wraps
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: empty document (want a top-level 'sites:' list)", name)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errAt(root, "top level must be a mapping with key 'sites'")
	}
	var list *yaml.Node
	for k := 0; k+1 < len(root.Content); k += 2 {
		key, val := root.Content[k], root.Content[k+1]
		if key.Value != "sites" {
			return nil, errAt(key, "unknown key %q (want 'sites')", key.Value)
		}
		list = val
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, errAt(root, "'sites' must be a list")
	}
	var out []*Site
	seen := map[string]int{}
	for _, sn := range list.Content {
		s, err := parseSite(sn, errAt)
		if err != nil {
			return nil, err
		}
		if line, dup := seen[s.name]; dup {
			return nil, errAt(sn, "site %q already defined at line %d", s.name, line)
		}
		seen[s.name] = sn.Line
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errAt(list, "no sites")
	}
	return out, nil
}

type errAtFunc func(n *yaml.Node, format string, a ...any) error

func parseSite(sn *yaml.Node, errAt errAtFunc) (*Site, error) {
	if sn.Kind != yaml.MappingNode {
		return nil, errAt(sn, "a site must be a mapping with name and latencies")
	}
	var name string
	var prefixes []netip.Prefix
	var lat []RegionLatency
	var latNode *yaml.Node
	for k := 0; k+1 < len(sn.Content); k += 2 {
		key, val := sn.Content[k], sn.Content[k+1]
		switch key.Value {
		case "name":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				return nil, errAt(val, "name must be a non-empty string")
			}
			name = val.Value
		case "prefixes":
			if val.Kind != yaml.SequenceNode {
				return nil, errAt(val, "prefixes must be a list of CIDR prefixes")
			}
			for _, pn := range val.Content {
				p, err := netip.ParsePrefix(pn.Value)
				if err != nil {
					return nil, errAt(pn, "prefix %q: %v", pn.Value, err)
				}
				prefixes = append(prefixes, p)
			}
		case "latencies":
			if val.Kind != yaml.SequenceNode {
				return nil, errAt(val, "latencies must be a list")
			}
			latNode = val
			seen := map[Index]int{}
			for _, ln := range val.Content {
				l, err := parseLatency(ln, errAt)
				if err != nil {
					return nil, err
				}
				if line, dup := seen[l.Region]; dup {
					return nil, errAt(ln, "region %s already listed at line %d", catalog[l.Region].ID, line)
				}
				seen[l.Region] = ln.Line
				lat = append(lat, l)
			}
		case "id", "latency", "profile":
			return nil, errAt(key, "site key %q is %w, not the sites file's (name, prefixes, latencies): %s", key.Value, ErrConfigSchema, SitesFormat)
		default:
			return nil, errAt(key, "unknown site key %q (want name, prefixes, latencies)", key.Value)
		}
	}
	if name == "" {
		return nil, errAt(sn, "site without a name")
	}
	if latNode == nil || len(lat) == 0 {
		return nil, errAt(sn, "site %q has no latencies", name)
	}
	s, err := NewSite(name, lat, prefixes...)
	if err != nil {
		return nil, errAt(latNode, "%v", err)
	}
	return s, nil
}

func parseLatency(ln *yaml.Node, errAt errAtFunc) (RegionLatency, error) {
	var l RegionLatency
	if ln.Kind != yaml.MappingNode {
		return l, errAt(ln, "a latency entry must be a mapping {region, p95_ms, cold_ms}")
	}
	var haveRegion, haveP95 bool
	for k := 0; k+1 < len(ln.Content); k += 2 {
		key, val := ln.Content[k], ln.Content[k+1]
		switch key.Value {
		case "region":
			r, ok := LookupRegion(val.Value)
			if !ok {
				return l, errAt(val, "unknown region %q", val.Value)
			}
			l.Region, haveRegion = r.Index, true
		case "p95_ms", "cold_ms":
			var v float64
			if val.Kind != yaml.ScalarNode || val.Decode(&v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return l, errAt(val, "%s: %q is not a number of milliseconds", key.Value, val.Value)
			}
			if key.Value == "p95_ms" {
				if !(v > 0 && v < MaxLatencyMs) {
					return l, errAt(val, "p95_ms %v out of range (0, %d)", v, MaxLatencyMs)
				}
				l.P95Ms, haveP95 = v, true
			} else {
				if !(v >= 0 && v < MaxLatencyMs) {
					return l, errAt(val, "cold_ms %v out of range [0, %d)", v, MaxLatencyMs)
				}
				l.ColdMs, l.HasCold = v, true
			}
		default:
			return l, errAt(key, "unknown latency key %q (want region, p95_ms, cold_ms)", key.Value)
		}
	}
	if !haveRegion {
		return l, errAt(ln, "latency entry without region")
	}
	if !haveP95 {
		return l, errAt(ln, "latency entry for %s without p95_ms", catalog[l.Region].ID)
	}
	return l, nil
}

// WithLatencies returns a copy of s whose P95 to each region of its profile
// is f(region, the profile's P95), clamped into (0, MaxLatencyMs): the
// controller's learned latencies (pkg/latency) over the configured profile.
func (s *Site) WithLatencies(f func(r Index, p95Ms float64) float64) (*Site, error) {
	lat := s.Latencies()
	for i := range lat {
		v := f(lat[i].Region, lat[i].P95Ms)
		if math.IsNaN(v) || v <= 0 {
			v = lat[i].P95Ms
		}
		lat[i].P95Ms = math.Min(v, MaxLatencyMs-1)
	}
	return NewSite(s.name, lat, s.prefixes...)
}
