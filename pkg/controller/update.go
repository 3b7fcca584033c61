package controller

import (
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// OpRuns splits updates into maximal runs of one operation: each run is one
// Write call, so a server that reorders updates inside a batch can never
// apply a DELETE before the INSERT it makes room for. A run is also cut
// where inserts reach region_next_hop, the table that makes requests
// routable: when a switch is provisioned (compiler.PlanUpdate orders its
// tables), next hops are written only once the sites, feasibility and
// ranking that decide a request's region are all on the switch, whatever
// order a server applies one Write's updates in.
func OpRuns(us []compiler.Update) [][]compiler.Update {
	var out [][]compiler.Update
	for i := 0; i < len(us); {
		j := i + 1
		for j < len(us) && us[j].Op == us[i].Op && !enablesRouting(us[j-1], us[j]) {
			j++
		}
		out = append(out, us[i:j])
		i = j
	}
	return out
}

// enablesRouting reports whether an insert run goes from another table to
// region_next_hop between prev and u.
func enablesRouting(prev, u compiler.Update) bool {
	return u.Op == compiler.Insert && u.Entry.Table == pipeline.TableRegionNextHop && prev.Entry.Table != pipeline.TableRegionNextHop
}
