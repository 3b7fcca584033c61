package controller

import "github.com/p4ctl/p4ctl/pkg/compiler"

// OpRuns splits updates into maximal runs of one operation: each run is one
// Write call, so a server that reorders updates inside a batch can never
// apply a DELETE before the INSERT it makes room for.
func OpRuns(us []compiler.Update) [][]compiler.Update {
	var out [][]compiler.Update
	for i := 0; i < len(us); {
		j := i + 1
		for j < len(us) && us[j].Op == us[i].Op {
			j++
		}
		out = append(out, us[i:j])
		i = j
	}
	return out
}
