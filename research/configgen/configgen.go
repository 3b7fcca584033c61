// Package configgen generates large, realistic controller configurations
// for scale tests and planning (p4ctl gen config, docs/SCALING.md): N client
// sites clustered around real metropolitan areas, the first R catalog
// regions, S switches, with every site's latency profile derived from
// geography — great-circle distance to each region through the latency
// model of research/geo fitted to the paper's measured Mumbai profile, plus a
// per-site access term — and cold-start latencies for the regions the paper
// measured them for. Everything it generates is labelled as generated (the
// YAML header, site names); none of it is a measurement.
package configgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/geo"
)

// Limits of what Generate makes (the data plane's own: 16-bit site ids,
// a 32-bit region bitmap).
const (
	MaxSites    = 65535
	MaxSwitches = 10000
)

// AccessSpread is the relative spread of the per-site access term: a
// site's access is the model's AccessMs × U(1−AccessSpread, 1+AccessSpread)
// (last-mile and PoP differences; generated, not measured).
const AccessSpread = 0.25

// MetroRadiusKm is how far from its metro's centre a generated site may
// lie (uniform over the disc): PoPs and customer prefixes of one metro.
const MetroRadiusKm = 100

// Options say what to generate. Zero values take the defaults noted.
type Options struct {
	Sites    int    // client sites, 1..MaxSites
	Regions  int    // the first Regions catalog regions, 1..32 (5, 12: the paper's pools)
	Switches int    // targets, 0..MaxSwitches (0: none, for plan-only use)
	Policy   string // default C
	Seed     uint64 // default 1; the same seed gives the same file
	// Partition gives each switch the sites it serves (targets[].sites),
	// as edge switches see the clients of their own location: switches
	// are placed in the metros in proportion to the sites there, a
	// metro's sites are dealt among its switches in turn, and the sites
	// of a metro without a switch go to the nearest metro with one.
	// Without it every switch holds every site.
	Partition bool
	// Model, when set, replaces PaperModel's fit.
	Model *geo.Model
}

// Report says what was generated and from what.
type Report struct {
	Sites    int       `json:"sites"`
	Regions  int       `json:"regions"`
	Switches int       `json:"switches"`
	Metros   int       `json:"metros"`
	Policy   string    `json:"policy"`
	Seed     uint64    `json:"seed"`
	Model    geo.Model `json:"latency_model"`
	// ProxyZones are the configured zones whose offline carbon is the
	// proxy model (regions.IsProxyZone).
	ProxyZones []string `json:"proxy_carbon_zones,omitempty"`
	// ColdRegions are the regions generated sites have a cold-start
	// latency for (those the paper measured from Mumbai).
	ColdRegions []string `json:"cold_regions"`
	// SitesPerSwitch is the fewest and most sites a switch serves when
	// the sites are partitioned (Options.Partition); zero otherwise.
	SitesPerSwitch [2]int `json:"sites_per_switch,omitzero"`
}

// PaperModel fits the geographic latency model (research/geo) to the paper's
// Mumbai profile (regions.Mumbai: P95 to 12 regions) with the catalog's
// coordinates: the only measured profile the project has. It is computed,
// never typed in.
func PaperModel() (geo.Model, error) {
	m := regions.Mumbai()
	mumbai, _ := regions.RegionAt(0)
	from := geo.Point{Lat: mumbai.Lat, Lon: mumbai.Lon}
	var s []geo.Sample
	for _, l := range m.Latencies() {
		r, _ := regions.RegionAt(l.Region)
		s = append(s, geo.Sample{DistanceKm: geo.DistanceKm(from, geo.Point{Lat: r.Lat, Lon: r.Lon}), P95Ms: l.P95Ms})
	}
	fit, err := geo.Fit(s)
	if err != nil {
		return geo.Model{}, fmt.Errorf("configgen: latency model: %w", err)
	}
	fit.Fit = fmt.Sprintf("least squares on the paper's Mumbai P95 profile (%d regions), great-circle distances from Mumbai", len(s))
	return fit, nil
}

// Generate builds the configuration. The result passes config validation
// (it is re-parsed in tests); table sizes are the compiler's to check per
// target, so large configurations are generated whether or not a switch
// could hold them.
func Generate(o Options) (*config.Config, Report, error) {
	if o.Policy == "" {
		o.Policy = config.PolicyC
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	switch {
	case o.Sites < 1 || o.Sites > MaxSites:
		return nil, Report{}, fmt.Errorf("configgen: %d sites: want 1..%d (16-bit site ids)", o.Sites, MaxSites)
	case o.Regions < 1 || o.Regions > regions.NumRegions:
		return nil, Report{}, fmt.Errorf("configgen: %d regions: want 1..%d (the catalog)", o.Regions, regions.NumRegions)
	case o.Switches < 0 || o.Switches > MaxSwitches:
		return nil, Report{}, fmt.Errorf("configgen: %d switches: want 0..%d", o.Switches, MaxSwitches)
	case o.Partition && o.Switches > o.Sites:
		return nil, Report{}, fmt.Errorf("configgen: partitioning %d sites among %d switches: every switch needs a site", o.Sites, o.Switches)
	}
	policy, ok := config.CanonicalPolicy(o.Policy)
	if !ok {
		return nil, Report{}, fmt.Errorf("configgen: unknown policy %q (want A, B, C, C+, D or C-cap)", o.Policy)
	}
	model := o.Model
	if model == nil {
		m, err := PaperModel()
		if err != nil {
			return nil, Report{}, err
		}
		model = &m
	}
	rep := Report{Sites: o.Sites, Regions: o.Regions, Switches: o.Switches, Policy: policy, Seed: o.Seed, Model: *model}
	rng := rand.New(rand.NewPCG(o.Seed, 0x70_63_74_6c))
	cat := regions.Catalog()[:o.Regions]
	cfg := &config.Config{Policy: config.Policy{Name: policy}, Carbon: config.Carbon{Source: config.SourceOffline, Seed: 1}}
	for i := range o.Switches {
		cfg.Targets = append(cfg.Targets, config.Target{Name: fmt.Sprintf("edge-%04d", i), GRPCAddr: fmt.Sprintf("127.0.0.1:%d", 50000+i), DeviceID: 1, ElectionID: config.ElectionID{Low: 1}})
	}
	for i, r := range cat {
		mac := config.MAC(0x02_00_0a_65_00_01 | uint64(i)<<8)
		cfg.Regions = append(cfg.Regions, config.Region{ID: r.ID, NextHop: config.NextHop{Remote: &config.Remote{
			Port: 1 + i, MAC: mac, IP: config.IPv4{Addr: netip.AddrFrom4([4]byte{10, 101, byte(i), 1})}}}})
		if regions.IsProxyZone(r.Zone) {
			rep.ProxyZones = append(rep.ProxyZones, r.Zone)
		}
	}
	// The region's cold-start overhead as the paper measured it from
	// Mumbai (cold − P95): a property of the region's serverless platform,
	// carried over to every site; regions without it stay without.
	mumbai := regions.Mumbai()
	coldOverhead := map[regions.Index]float64{}
	for _, r := range cat {
		if c, ok := mumbai.Cold(r.Index); ok {
			p, _ := mumbai.P95(r.Index)
			coldOverhead[r.Index] = c - p
			rep.ColdRegions = append(rep.ColdRegions, r.ID)
		}
	}
	counts := share(o.Sites)
	used := 0
	id := 0
	for mi, n := range counts {
		if n > 0 {
			used++
		}
		m := metros[mi]
		for k := range n {
			id++
			at := scatter(rng, m.at)
			access := model.AccessMs * (1 - AccessSpread + 2*AccessSpread*rng.Float64())
			site := config.Site{Name: fmt.Sprintf("gen-%05d-%s-%d", id, m.name, k+1), ID: id,
				Prefixes: []config.Prefix{{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(id >> 8), byte(id), 0}), 24)}},
				Latency:  make(map[string]config.Latency, len(cat))}
			for _, r := range cat {
				d := geo.DistanceKm(at, geo.Point{Lat: r.Lat, Lon: r.Lon})
				p95 := round1(access + model.Stretch*geo.FibreRTTMs(d))
				l := config.Latency{P95: p95}
				if oh, ok := coldOverhead[r.Index]; ok {
					c := round1(p95 + oh)
					l.Cold = &c
				}
				site.Latency[r.ID] = l
			}
			cfg.Sites = append(cfg.Sites, site)
		}
	}
	rep.Metros = used
	if o.Partition && o.Switches > 0 {
		partition(cfg, counts, share(o.Switches))
		rep.SitesPerSwitch = [2]int{len(cfg.Targets[0].Sites), 0}
		for _, t := range cfg.Targets {
			rep.SitesPerSwitch[0] = min(rep.SitesPerSwitch[0], len(t.Sites))
			rep.SitesPerSwitch[1] = max(rep.SitesPerSwitch[1], len(t.Sites))
		}
	}
	cfg.SLAClasses = []config.SLAClass{{Name: "interactive", MS: 300, Share: 0.2}, {Name: "fast", MS: 500, Share: 0.3},
		{Name: "standard", MS: 800, Share: 0.2}, {Name: "relaxed", MS: 1000, Share: 0.2}, {Name: "batch", MS: 3000, Share: 0.1}}
	if err := cfg.Validate(); err != nil {
		return nil, Report{}, fmt.Errorf("configgen: generated an invalid configuration (a bug): %w", err)
	}
	return cfg, rep, nil
}

// partition deals the sites (generated metro by metro, sitesPer[m] of
// metro m, in order) among the targets (switchesPer[m] placed in metro m,
// in order): each metro's sites round-robin among its switches, or among
// those of the nearest metro that has some.
func partition(cfg *config.Config, sitesPer, switchesPer []int) {
	first := make([]int, len(metros)) // the index of metro m's first switch
	next := 0
	for m, n := range switchesPer {
		first[m] = next
		next += n
	}
	turn := make([]int, len(metros)) // the next switch, per serving metro
	site := 0
	for m, n := range sitesPer {
		host := m
		if switchesPer[m] == 0 {
			best := -1.0
			for h, k := range switchesPer {
				if d := geo.DistanceKm(metros[m].at, metros[h].at); k > 0 && (best < 0 || d < best) {
					host, best = h, d
				}
			}
		}
		for range n {
			t := &cfg.Targets[first[host]+turn[host]%switchesPer[host]]
			turn[host]++
			t.Sites = append(t.Sites, cfg.Sites[site].Name)
			site++
		}
	}
	// Rounding can leave a switch without sites (an empty list would mean
	// every site): it takes the last site of the switch that has the most.
	for i := range cfg.Targets {
		if len(cfg.Targets[i].Sites) > 0 {
			continue
		}
		most := 0
		for j := range cfg.Targets {
			if len(cfg.Targets[j].Sites) > len(cfg.Targets[most].Sites) {
				most = j
			}
		}
		from := &cfg.Targets[most]
		cfg.Targets[i].Sites = []string{from.Sites[len(from.Sites)-1]}
		from.Sites = from.Sites[:len(from.Sites)-1]
	}
}

// share divides n sites among the metros in proportion to their weights
// (largest remainders; ties to the earlier metro), so that every metro
// gets a site before any gets a second only when n is small.
func share(n int) []int {
	var total float64
	for _, m := range metros {
		total += m.weight
	}
	out := make([]int, len(metros))
	rem := make([]float64, len(metros))
	given := 0
	for i, m := range metros {
		q := float64(n) * m.weight / total
		out[i] = int(q)
		rem[i] = q - float64(out[i])
		given += out[i]
	}
	for given < n {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
		given++
	}
	return out
}

// scatter places a point uniformly in the disc of MetroRadiusKm around c.
func scatter(rng *rand.Rand, c geo.Point) geo.Point {
	r := MetroRadiusKm * math.Sqrt(rng.Float64())
	th := 2 * math.Pi * rng.Float64()
	dLat := r * math.Cos(th) / 111.2
	dLon := r * math.Sin(th) / (111.2 * math.Max(0.05, math.Cos(c.Lat*math.Pi/180)))
	return geo.Point{Lat: c.Lat + dLat, Lon: c.Lon + dLon}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// ErrTooLarge marks a rendered configuration larger than inputfile.MaxSize,
// which no p4ctl command would read.
var ErrTooLarge = errors.New("too large for p4ctl to read")

// Built is a generated configuration: Generate's result and, from
// Build, the file Write writes.
type Built struct {
	Config *config.Config
	Report Report
	YAML   []byte
}

// Build generates the configuration of o and, with render, encodes it
// as Write does. Validating and encoding tens of thousands of sites takes
// a minute and cannot be cut short, so it runs in the background: when ctx
// ends first (Ctrl-C) Build returns at once with ctx's error, nothing
// having been written. A file larger than inputfile.MaxSize (every command
// refuses to read it) is an ErrTooLarge error naming its size.
func Build(ctx context.Context, o Options, render bool) (*Built, error) {
	type result struct {
		b   *Built
		err error
	}
	if render {
		// Refused before a minute of encoding when even the estimate
		// is well over what p4ctl reads; near the limit the exact size
		// decides below.
		if est, ok := EstimateSize(o); ok && est > inputfile.MaxSize+inputfile.MaxSize/10 {
			return nil, fmt.Errorf("the configuration of %d sites and %d regions would be about %d MiB (estimated from %d sites), above the %d MiB every p4ctl command reads: %w (fewer sites or regions; 10000 sites × 32 regions is 14 MB)",
				o.Sites, o.Regions, est>>20, estimateSites(o), inputfile.MaxSize>>20, ErrTooLarge)
		}
	}
	ch := make(chan result, 1)
	go func() {
		cfg, rep, err := Generate(o)
		b := &Built{Config: cfg, Report: rep}
		if err == nil && render {
			var buf bytes.Buffer
			err = Write(&buf, cfg, rep)
			b.YAML = buf.Bytes()
		}
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err == nil && len(r.b.YAML) > inputfile.MaxSize {
			return nil, fmt.Errorf("the configuration of %d sites and %d regions is %d MiB, above the %d MiB every p4ctl command reads: %w (fewer sites or regions; 10000 sites × 32 regions is 14 MB)",
				o.Sites, o.Regions, len(r.b.YAML)>>20, inputfile.MaxSize>>20, ErrTooLarge)
		}
		return r.b, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("configgen: interrupted while generating %d sites, nothing written: %w", o.Sites, ctx.Err())
	}
}

// EstimateSize extrapolates the size of o's rendered configuration from
// two small renders of the same options (n and 2n sites, n =
// estimateSites(o)): the file grows by one block per site. ok is false when
// o is that small already, or the small renders fail (Build reports why).
func EstimateSize(o Options) (size int, ok bool) {
	n := estimateSites(o)
	if o.Sites <= 2*n {
		return 0, false
	}
	render := func(sites int) (int, bool) {
		small := o
		small.Sites = sites
		cfg, rep, err := Generate(small)
		if err != nil {
			return 0, false
		}
		var buf bytes.Buffer
		if err := Write(&buf, cfg, rep); err != nil {
			return 0, false
		}
		return buf.Len(), true
	}
	a, okA := render(n)
	b, okB := render(2 * n)
	if !okA || !okB || b <= a {
		return 0, false
	}
	return a + (o.Sites-n)*(b-a)/n, true
}

// estimateSites is the smaller of EstimateSize's renders: 64 sites, or
// one per switch when the sites are partitioned among more.
func estimateSites(o Options) int {
	if o.Partition && o.Switches > 64 {
		return o.Switches
	}
	return 64
}

// Write writes cfg as controller YAML (docs/CONFIG.md) after a header
// that labels it as generated and says from what. config.Parse reads it
// back unchanged.
func Write(w io.Writer, cfg *config.Config, rep Report) error {
	if cfg == nil {
		return errors.New("configgen: no configuration")
	}
	body, err := yaml.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("configgen: encode: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# GENERATED by p4ctl gen config (research/configgen), seed %d: not measurements.\n", rep.Seed)
	fmt.Fprintf(&b, "# %d sites around %d metropolitan areas (within %d km of the centre), the first %d catalog regions, %d switches, policy %s.\n",
		rep.Sites, rep.Metros, MetroRadiusKm, rep.Regions, rep.Switches, rep.Policy)
	fmt.Fprintf(&b, "# Latency: P95 = access + %.3g x great-circle fibre RTT (2d / %.1f km/ms); access %.1f ms x U(%.2f, %.2f) per site.\n",
		rep.Model.Stretch, geo.FibreKmPerMs, rep.Model.AccessMs, 1-AccessSpread, 1+AccessSpread)
	fmt.Fprintf(&b, "# Model fit: %s; RMS residual %.0f ms.\n", rep.Model.Fit, rep.Model.RMSMs)
	if len(rep.ColdRegions) > 0 {
		fmt.Fprintf(&b, "# Cold starts: P95 + the region's cold overhead measured from Mumbai, for %s only.\n", strings.Join(rep.ColdRegions, ", "))
	}
	if len(rep.ProxyZones) > 0 {
		fmt.Fprintf(&b, "# Carbon (offline): zones %s use the proxy model, not measured data (%s).\n", strings.Join(rep.ProxyZones, ", "), regions.ProxyBasis)
	}
	b.Write(body)
	_, err = w.Write(b.Bytes())
	return err
}
