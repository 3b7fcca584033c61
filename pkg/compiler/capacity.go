package compiler

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Capacity is how many entries each table of a target holds: the sizes its
// P4 compiler gave the tables (the P4Info's table `size`), which BMv2 and
// the embedded target enforce — a write beyond them fails with
// RESOURCE_EXHAUSTED halfway through an update — and bf-p4c allocates
// memory for on Tofino. Compile refuses a state that does not fit, before
// anything is written, naming the table, the need and the limit
// (docs/SCALING.md lists the limits and what to change to go beyond them).
type Capacity struct {
	// Target says whose sizes these are, for messages (e.g. "the v1model
	// program (BMv2, embedded target)" or "switch edge-1's P4Info").
	Target string `json:"target"`
	// Sizes maps a table name to the entries it holds; a table that is
	// absent, or 0, is not bounded.
	Sizes map[string]int `json:"sizes,omitempty"`
}

// ProgramCapacity is the capacity of arch's p4ctl program as declared in
// pkg/pipeline (the sizes p4c and bf-p4c are given; the committed P4Infos
// of p4src/build carry the same).
func ProgramCapacity(arch pipeline.Arch) Capacity {
	c := Capacity{Target: "the " + string(arch) + " program", Sizes: map[string]int{}}
	switch arch {
	case pipeline.V1Model:
		c.Target += " (BMv2, embedded target)"
	case pipeline.TNA:
		c.Target += " (Tofino)"
	}
	for _, t := range pipeline.SchemaFor(arch).Tables {
		c.Sizes[t.Name] = t.Size
	}
	return c
}

// Unbounded is a capacity without limits: for measuring how large a state
// grows (benchmarks, p4ctl gen, docs/SCALING.md), never for a switch.
func Unbounded() Capacity { return Capacity{Target: "unbounded (measurement only)"} }

// Limit returns table's size and whether it is bounded.
func (c Capacity) Limit(table string) (int, bool) {
	n, ok := c.Sizes[table]
	return n, ok && n > 0
}

// Versioned reports whether table holds two generations during an update
// (carbon_rank: the next generation is installed beside the active one
// before the flip), so that it needs twice a state's entries.
func Versioned(table string) bool { return table == pipeline.TableCarbonRank }

// Need returns the entries st needs in each table: its entries (default
// actions take none), twice over for versioned tables.
func Need(st *State) map[string]int {
	need := map[string]int{}
	for i := range st.Entries {
		if e := &st.Entries[i]; !e.Default {
			need[e.Table]++
		}
	}
	for t := range need {
		if Versioned(t) {
			need[t] *= 2
		}
	}
	return need
}

// Overflow is one table a state does not fit in.
type Overflow struct {
	Table string `json:"table"`
	// Need is the entries the state needs (both generations for
	// carbon_rank), Limit the table's size.
	Need  int `json:"need"`
	Limit int `json:"limit"`
	// Why says what the need is made of (sites, regions, intervals).
	Why string `json:"why,omitempty"`
}

// OverflowError is returned by Compile and Capacity.Check for a state that
// does not fit a target's tables; it lists every table that overflows, in
// table order. Callers test for it with errors.As.
type OverflowError struct {
	Target    string     `json:"target"`
	Overflows []Overflow `json:"overflows"`
}

// Error names each table, its need and its limit.
func (e *OverflowError) Error() string {
	var b strings.Builder
	b.WriteString("the compiled state does not fit ")
	b.WriteString(e.Target)
	b.WriteString(": ")
	for i, o := range e.Overflows {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(shortTable(o.Table))
		b.WriteString(" needs ")
		b.WriteString(strconv.Itoa(o.Need))
		b.WriteString(" entries")
		if o.Why != "" {
			b.WriteString(" (" + o.Why + ")")
		}
		b.WriteString(", the table holds ")
		b.WriteString(strconv.Itoa(o.Limit))
	}
	b.WriteString(" (docs/SCALING.md: what to change to go beyond)")
	return b.String()
}

// Check returns an *OverflowError when st needs more entries in some table
// than c holds, nil otherwise. It does not say why (Compile does).
func (c Capacity) Check(st *State) error {
	return c.check(Need(st), nil)
}

func (c Capacity) check(need map[string]int, why map[string]string) error {
	var over []Overflow
	for _, t := range slices.Sorted(maps.Keys(need)) {
		if lim, ok := c.Limit(t); ok && need[t] > lim {
			over = append(over, Overflow{Table: t, Need: need[t], Limit: lim, Why: why[t]})
		}
	}
	if len(over) == 0 {
		return nil
	}
	return &OverflowError{Target: c.Target, Overflows: over}
}

// shortTable drops the control name: "P4ctlIngress.client_site" → "client_site".
func shortTable(name string) string {
	return strings.TrimPrefix(name, pipeline.Control+".")
}

// plural formats n and a noun, "1 site", "2 sites".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "x") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
