package compiler

import (
	"fmt"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Normalize returns e in the form Compile produces, so that an entry read
// back from a switch (decoded by name) compares equal to the desired one:
// match fields in the table's key order, fields P4Runtime omits as "don't
// care" restored explicitly (ternary mask 0, LPM /0, range 0..max), ternary
// values masked, and every value checked against its bit width.
func Normalize(e Entry) (Entry, error) {
	t, ok := pipeline.LookupTable(e.Table)
	if !ok {
		return Entry{}, fmt.Errorf("normalize: unknown table %q", e.Table)
	}
	if e.Default {
		if len(e.Match) > 0 || e.Priority != 0 {
			return Entry{}, fmt.Errorf("normalize: default entry of %s with match fields or priority", e.Table)
		}
	} else {
		given := make(map[string]Match, len(e.Match))
		for _, m := range e.Match {
			if _, dup := given[m.Field]; dup {
				return Entry{}, fmt.Errorf("normalize: %s: field %s given twice", e.Table, m.Field)
			}
			given[m.Field] = m
		}
		ms := make([]Match, 0, len(t.Keys))
		for _, k := range t.Keys {
			max := uint64(1)<<k.Width - 1
			m, ok := given[k.Name]
			delete(given, k.Name)
			if !ok {
				switch k.Kind {
				case pipeline.Ternary, pipeline.LPM, pipeline.Optional:
					m = Match{Field: k.Name, Kind: k.Kind}
				case pipeline.Range:
					m = Match{Field: k.Name, Kind: k.Kind, High: max}
				default:
					return Entry{}, fmt.Errorf("normalize: %s: exact field %s missing", e.Table, k.Name)
				}
			}
			if m.Kind != k.Kind {
				return Entry{}, fmt.Errorf("normalize: %s: field %s is %s, not %s", e.Table, k.Name, k.Kind, m.Kind)
			}
			if m.Value > max || m.Mask > max || m.High > max || m.PrefixLen < 0 || m.PrefixLen > k.Width {
				return Entry{}, fmt.Errorf("normalize: %s: field %s does not fit in %d bits", e.Table, k.Name, k.Width)
			}
			if m.Kind == pipeline.Ternary {
				m.Value &= m.Mask
			}
			ms = append(ms, m)
		}
		for f := range given {
			return Entry{}, fmt.Errorf("normalize: %s has no field %s", e.Table, f)
		}
		e.Match = ms
	}
	a, ok := pipeline.LookupAction(e.Action)
	if !ok {
		return Entry{}, fmt.Errorf("normalize: unknown action %q", e.Action)
	}
	vals := make(map[string]uint64, len(e.Params))
	for _, p := range e.Params {
		vals[p.Name] = p.Value
	}
	ps := make([]Param, 0, len(a.Params))
	for _, p := range a.Params {
		v, ok := vals[p.Name]
		if !ok {
			return Entry{}, fmt.Errorf("normalize: %s: parameter %s missing", e.Action, p.Name)
		}
		if v > uint64(1)<<p.Width-1 {
			return Entry{}, fmt.Errorf("normalize: %s: parameter %s = %d does not fit in %d bits", e.Action, p.Name, v, p.Width)
		}
		ps = append(ps, Param{p.Name, v})
	}
	if len(vals) != len(ps) {
		return Entry{}, fmt.Errorf("normalize: %s: unknown parameters", e.Action)
	}
	if len(ps) == 0 {
		ps = nil
	}
	e.Params = ps
	return e, nil
}
