package config

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// builtinProfiles lists the names of the built-in latency profiles.
func builtinProfiles() []string { return []string{"mumbai"} }

// builtinProfile returns a built-in latency profile (pkg/regions) keyed by
// region id.
func builtinProfile(name string) (map[string]Latency, bool) {
	var s *regions.Site
	switch name {
	case "mumbai":
		s = regions.Mumbai()
	default:
		return nil, false
	}
	out := map[string]Latency{}
	for _, l := range s.Latencies() {
		r, _ := regions.RegionAt(l.Region)
		v := Latency{P95: l.P95Ms}
		if l.HasCold {
			cold := l.ColdMs
			v.Cold = &cold
		}
		out[r.ID] = v
	}
	return out, true
}

// Pool is the set of configured regions (their catalog indices).
func (c *Config) Pool() regions.RegionSet {
	var set regions.RegionSet
	for _, r := range c.Regions {
		if cr, ok := catalogRegion(r.ID); ok {
			set = set.Add(cr.Index)
		}
	}
	return set
}

// RegionIndex returns the data-plane (catalog) index of a configured region.
func (c *Config) RegionIndex(r Region) (regions.Index, bool) {
	cr, ok := catalogRegion(r.ID)
	return cr.Index, ok
}

// Zone returns the grid zone a region's carbon is read from: the region's
// zone override, else the catalog's.
func (c *Config) Zone(r Region) string {
	if r.Zone != "" {
		return r.Zone
	}
	cr, _ := catalogRegion(r.ID)
	return cr.Zone
}

// SiteLatency returns site s's latency to every configured region: the
// site's built-in profile overlaid with its latency map. Regions without a
// latency are absent (Validate reports them).
func (c *Config) SiteLatency(s Site) map[string]Latency {
	out := make(map[string]Latency, len(c.Regions))
	prof, _ := builtinProfile(s.Profile)
	for _, r := range c.Regions {
		if l, ok := s.Latency[r.ID]; ok {
			out[r.ID] = l
		} else if l, ok := prof[r.ID]; ok {
			out[r.ID] = l
		}
	}
	return out
}

// RoutingSite builds the pkg/regions site (latency profile over the configured
// regions, source prefixes) of configured site s.
func (c *Config) RoutingSite(s Site) (*regions.Site, error) {
	lat := c.SiteLatency(s)
	ids := make([]string, 0, len(lat))
	for id := range lat {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	rl := make([]regions.RegionLatency, 0, len(ids))
	for _, id := range ids {
		cr, ok := catalogRegion(id)
		if !ok {
			return nil, fmt.Errorf("site %s: unknown region %q", s.Name, id)
		}
		l := lat[id]
		v := regions.RegionLatency{Region: cr.Index, P95Ms: l.P95}
		if l.Cold != nil {
			v.ColdMs, v.HasCold = *l.Cold, true
		}
		rl = append(rl, v)
	}
	pfx := make([]netip.Prefix, 0, len(s.Prefixes))
	for _, p := range s.Prefixes {
		pfx = append(pfx, p.Prefix)
	}
	rs, err := regions.NewSite(s.Name, rl, pfx...)
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", s.Name, err)
	}
	return rs, nil
}

// RoutingSites builds every configured site, in configuration order.
func (c *Config) RoutingSites() ([]*regions.Site, error) {
	out := make([]*regions.Site, len(c.Sites))
	for i, s := range c.Sites {
		rs, err := c.RoutingSite(s)
		if err != nil {
			return nil, err
		}
		out[i] = rs
	}
	return out, nil
}

// RoutingPolicy returns the configured policy as a pkg/regions Policy.
func (c *Config) RoutingPolicy() (regions.Policy, error) {
	name, ok := CanonicalPolicy(c.Policy.Name)
	if !ok {
		return 0, fmt.Errorf("unknown policy %q", c.Policy.Name)
	}
	return regions.ParsePolicy(name)
}

// Options returns the policy parameters as pkg/regions Options.
func (c *Config) Options() regions.Options {
	o := regions.DefaultOptions()
	o.Alpha = c.Policy.AlphaOrDefault()
	o.W = c.Policy.WeightOrDefault()
	if cm, err := regions.ParseColdMissing(c.Policy.ColdMissing); err == nil {
		o.ColdMissing = cm
	}
	return o
}

// CarbonSignal is the kind of numbers the carbon source gives:
// marginal for watttime-api, else carbon.signal (default lca, an average
// intensity).
func (c *Config) CarbonSignal() regions.Signal {
	if c.Carbon.Source == SourceWattTimeAPI {
		return regions.SignalMarginal
	}
	s, err := regions.ParseSignal(c.Carbon.Signal)
	if err != nil {
		return regions.SignalLCA // Validate rejects it
	}
	return s
}

// RoutingHysteresis returns policy.hysteresis with its defaults filled in
// (regions.DefaultHysteresis), or nil when the configuration has none:
// then the ranking follows each hour's carbon alone.
func (c *Config) RoutingHysteresis() *regions.Hysteresis {
	h := c.Policy.Hysteresis
	if h == nil {
		return nil
	}
	out := regions.DefaultHysteresis()
	if h.MinGain != nil {
		out.MinGain = *h.MinGain
	}
	if h.MinHold != nil {
		out.MinHold = int(h.MinHold.Duration / time.Hour)
	}
	if h.Horizon != nil {
		out.Horizon = int(h.Horizon.Duration / time.Hour)
	}
	return &out
}

// Live reports whether the source is a live API (electricitymaps-api,
// watttime-api), polled by the daemon rather than opened as a trace.
func (c Carbon) Live() bool {
	return c.Source == SourceElectricityMapsAPI || c.Source == SourceWattTimeAPI
}

// OpenCarbon opens the configured carbon source: the offline synthetic
// model (no files) or CSV traces under Carbon.Dir. The API sources are run
// by the daemon (p4ctl run), which polls them; OpenCarbon reports that they
// cannot be opened as a static source.
func (c *Config) OpenCarbon() (regions.CarbonSource, error) {
	return c.OpenCarbonContext(context.Background())
}

// OpenCarbonContext is OpenCarbon reading trace files under ctx.
func (c *Config) OpenCarbonContext(ctx context.Context) (regions.CarbonSource, error) {
	cb := c.Carbon
	switch cb.Source {
	case SourceOffline:
		src, err := regions.NewSynthetic(cb.Seed, regions.DefaultSyntheticPeriod())
		if err != nil {
			return nil, fmt.Errorf("carbon: %w", err)
		}
		return src, nil
	case SourceCSV, SourceElectricityMapsCSV:
		sig, err := regions.ParseSignal(cb.Signal)
		if err != nil {
			return nil, fmt.Errorf("carbon.signal: %w", err)
		}
		m := sig.Metric()
		f, err := regions.ParseFill(cb.Fill)
		if err != nil {
			return nil, fmt.Errorf("carbon.fill: %w", err)
		}
		src, err := regions.LoadTracesContext(ctx, c.Path(cb.Dir), regions.LoadOptions{Metric: m, Fill: f})
		if err != nil {
			return nil, fmt.Errorf("carbon: %w", err)
		}
		return src, nil
	case SourceElectricityMapsAPI, SourceWattTimeAPI:
		return nil, fmt.Errorf("carbon source %s is live: it is polled by p4ctl run, not opened as a trace", cb.Source)
	}
	return nil, fmt.Errorf("unknown carbon source %q", cb.Source)
}
