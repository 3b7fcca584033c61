package compiler

import (
	"net/netip"
	"slices"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// Router evaluates a state's region-selection tables exactly as the data
// plane does (docs/PIPELINE.md, ingress step 5): client_site LPM →
// sla_feasibility (exact site, range SLA; highest priority) → active_epoch →
// mask out full regions → carbon_rank (exact epoch, ternary site and
// feasible; highest priority wins) → on a miss, the site's nearest region.
// It is the reference the compiled tables are tested against, and what
// `p4ctl plan` uses to explain a state.
type Router struct {
	sites []Entry // client_site, longest prefix first
	feas  map[uint64][]Entry
	epoch uint8
	rank  []Entry // carbon_rank entries of the active epoch, highest priority first
}

// NewRouter indexes a state for evaluation.
func NewRouter(s *State) *Router {
	r := &Router{feas: map[uint64][]Entry{}, epoch: s.ActiveEpoch()}
	for _, e := range s.Entries {
		switch e.Table {
		case pipeline.TableClientSite:
			r.sites = append(r.sites, e)
		case pipeline.TableSLAFeasibility:
			m, _ := e.Field(pipeline.FieldSite)
			r.feas[m.Value] = append(r.feas[m.Value], e)
		case pipeline.TableCarbonRank:
			if entryEpoch(&e) == r.epoch {
				r.rank = append(r.rank, e)
			}
		}
	}
	slices.SortStableFunc(r.sites, func(a, b Entry) int { return b.Match[0].PrefixLen - a.Match[0].PrefixLen })
	byPrio := func(a, b Entry) int { return int(b.Priority) - int(a.Priority) }
	for k := range r.feas {
		slices.SortStableFunc(r.feas[k], byPrio)
	}
	slices.SortStableFunc(r.rank, byPrio)
	return r
}

// Site returns the site id of a source address (0 on a miss, as the data
// plane does) and whether an entry matched.
func (r *Router) Site(src netip.Addr) (uint16, bool) {
	if !src.Is4() {
		return 0, false
	}
	b := src.As4()
	a := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	for _, e := range r.sites {
		m := e.Match[0]
		mask := uint64(0)
		if m.PrefixLen > 0 {
			mask = (uint64(1)<<32 - 1) &^ (uint64(1)<<(32-m.PrefixLen) - 1)
		}
		if a&mask == m.Value&mask {
			v, _ := e.Param(pipeline.ParamSite)
			return uint16(v), true
		}
	}
	return 0, false
}

// Decision is the data plane's region selection for one request.
type Decision struct {
	Region   uint8             `json:"region"`
	Fallback bool              `json:"fallback,omitempty"` // carbon_rank missed: nearest region
	Spilled  bool              `json:"spilled,omitempty"`  // a full feasible region was masked out
	Feasible regions.RegionSet `json:"feasible"`           // sla_feasibility's bitmap
}

// Route selects the region for a request of site with SLA sla, with the
// regions in full at capacity (the switch refuses their acquire and spills).
func (r *Router) Route(site uint16, sla uint16, full regions.RegionSet) Decision {
	var feasible, nearest uint64
	for _, e := range r.feas[uint64(site)] {
		m, _ := e.Field(pipeline.FieldSLA)
		if uint64(sla) >= m.Value && uint64(sla) <= m.High {
			feasible, _ = e.Param(pipeline.ParamFeasible)
			nearest, _ = e.Param(pipeline.ParamNearest)
			break
		}
	}
	d := Decision{Feasible: regions.RegionSet(feasible)}
	cand := feasible &^ uint64(full)
	if cand == 0 {
		cand = feasible
	} else if cand != feasible {
		d.Spilled = true
	}
	for _, e := range r.rank {
		ms, _ := e.Field(pipeline.FieldSite)
		mf, _ := e.Field(pipeline.FieldFeasible)
		if uint64(site)&ms.Mask == ms.Value&ms.Mask && cand&mf.Mask == mf.Value&mf.Mask {
			v, _ := e.Param(pipeline.ParamRegion)
			d.Region = uint8(v)
			return d
		}
	}
	d.Region, d.Fallback = uint8(nearest), true
	return d
}
