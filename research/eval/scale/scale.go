// Package scale measures how the compiled switch state grows with the
// number of client sites N and regions R (issue 14, docs/SCALING.md): for
// generated configurations (research/configgen) it compiles each hour without
// table limits and reports, per (N, R, policy), the entries per table,
// whether they fit each target's capacity, the hitless hourly update's
// writes (compiler.PlanUpdate from the previous hour), and how long a
// compile takes and allocates. The benchmarks of this package
// (BenchmarkScaleCompile, make bench) are where time is claimed; Measure's
// timings are the same measurement for the curves and plots.
package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/configgen"
)

// Options say what to measure.
type Options struct {
	Sites    []int     // N values (default 10, 100, 1000, 10000)
	Regions  []int     // R values (default 5, 12, 32)
	Policies []string  // default A, B, C, C+, D
	Hours    int       // hourly updates measured per point (default 24)
	Start    time.Time // first hour (default 2022-01-10T00:00Z, in the offline model's year)
	Seed     uint64    // generator seed (default 1)
	// Switches, when > 0, also measures each point as a fleet of that
	// many edge switches with the sites partitioned among them
	// (configgen Partition, targets[].sites): the largest switch's state
	// (Point.PerSwitch). Points with fewer sites than switches skip it.
	Switches int
	Progress func(done, total int)
}

// PerSwitch is a point's state per edge switch when the sites are
// partitioned among Switches switches: the most sites one serves, the
// largest need of each table over the switches, and the tables that need
// overflows in, per target.
type PerSwitch struct {
	Switches   int                 `json:"switches"`
	MaxSites   int                 `json:"max_sites"`
	MaxEntries int                 `json:"max_entries"`
	MaxNeed    map[string]int      `json:"max_need_by_table"`
	Overflows  map[string][]string `json:"overflows"`
	// TotalEntries is the entries of every switch together; CompileMs the
	// time to compile them all for one hour (one core), and StateMB the
	// Go heap the compiled states of every switch occupy together (live
	// heap after a collection with them held, minus after they are
	// dropped): what one controller holds for the fleet per generation.
	TotalEntries int     `json:"total_entries"`
	CompileMs    float64 `json:"compile_ms_all_switches"`
	StateMB      float64 `json:"state_mb_all_switches"`
}

// DefaultSites returns the default grid's site counts N (a fresh slice).
func DefaultSites() []int { return []int{10, 100, 1000, 10000} }

// DefaultRegions returns the default grid's region counts R (a fresh slice).
func DefaultRegions() []int { return []int{5, 12, 32} }

// DefaultPolicies returns the default grid's policies (a fresh slice).
func DefaultPolicies() []string { return []string{"A", "B", "C", "C+", "D"} }

// Policies returns the policies Measure accepts: those compiled into table
// contents (C+warm, stateful per request, is not; p4ctl eval carbon
// evaluates it).
func Policies() []string { return []string{"A", "B", "C", "C+", "D", "C-cap"} }

// DefaultStart is the first hour measured unless Options.Start says.
func DefaultStart() time.Time { return time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC) }

// MaxHours is the most hours Measure compiles from start: the hours of the
// carbon data (the synthetic model's year) from start on (8544 from
// DefaultStart).
func MaxHours(start time.Time) int {
	p := regions.DefaultSyntheticPeriod()
	if !p.Contains(start) {
		return 0
	}
	return int(p.To.Sub(start.Truncate(time.Hour)) / time.Hour)
}

// Validate checks the grid: N 1..65535, R 1..32 and policies of Policies,
// each once; 2..MaxHours hours (zero values are Measure's defaults).
func (o Options) Validate() error {
	if err := distinct("sites", o.Sites, func(n int) bool { return n >= 1 && n <= 65535 }, "1..65535"); err != nil {
		return err
	}
	if err := distinct("regions", o.Regions, func(r int) bool { return r >= 1 && r <= regions.MaxRegions }, fmt.Sprintf("1..%d", regions.MaxRegions)); err != nil {
		return err
	}
	if err := distinct("policy", o.Policies, func(p string) bool { return slices.Contains(Policies(), p) }, strings.Join(Policies(), ", ")+" (C+warm is stateful per request and compiles to no table contents: p4ctl eval carbon evaluates it)"); err != nil {
		return err
	}
	start := o.Start
	if start.IsZero() {
		start = DefaultStart()
	}
	if o.Hours != 0 && (o.Hours < 2 || o.Hours > MaxHours(start)) {
		return fmt.Errorf("%d hours: want 2..%d (an update needs two hours; the carbon data ends %s)", o.Hours, MaxHours(start), regions.DefaultSyntheticPeriod().To.Format(time.RFC3339))
	}
	return nil
}

// distinct checks that every value of what is valid and given once.
func distinct[T comparable](what string, vs []T, ok func(T) bool, want string) error {
	seen := map[T]bool{}
	for _, v := range vs {
		if !ok(v) {
			return fmt.Errorf("%s %v: want %s", what, v, want)
		}
		if seen[v] {
			return fmt.Errorf("%s %v given twice", what, v)
		}
		seen[v] = true
	}
	return nil
}

// Point is one (N, R, policy) of the grid.
type Point struct {
	Sites   int    `json:"sites"`
	Regions int    `json:"regions"`
	Policy  string `json:"policy"`
	// Entries is the compiled state's entries (one generation), ByTable
	// the need per table (carbon_rank: both generations; compiler.Need).
	Entries int            `json:"entries"`
	ByTable map[string]int `json:"need_by_table"`
	// Overflows names, per target, the tables the state does not fit
	// (empty: it fits).
	Overflows map[string][]string `json:"overflows"`
	// CompileMs is the median wall time of one Compile over the hours,
	// AllocsPerCompile and BytesPerCompile its mean allocations.
	CompileMs        float64 `json:"compile_ms"`
	AllocsPerCompile float64 `json:"allocs_per_compile"`
	BytesPerCompile  float64 `json:"bytes_per_compile"`
	// Hourly updates from each hour to the next: mean and largest writes,
	// and how many of the Hours−1 updates wrote anything.
	WritesMean   float64 `json:"writes_per_hour_mean"`
	WritesMax    int     `json:"writes_per_hour_max"`
	ChangedHours int     `json:"changed_hours"`
	Updates      int     `json:"updates"`
	// SiteRankings is how many sites carry their own ranking (D; ties).
	SiteRankings int `json:"site_rankings"`
	// PerSwitch is the partitioned fleet's largest switch (Options.Switches).
	PerSwitch *PerSwitch `json:"per_switch,omitempty"`
}

// Result is a whole measurement.
type Result struct {
	Machine  string    `json:"machine"`
	Date     time.Time `json:"date"`
	Go       string    `json:"go"`
	Hours    int       `json:"hours"`
	Start    time.Time `json:"start"`
	Carbon   string    `json:"carbon_source"`
	Points   []Point   `json:"points"`
	Targets  []string  `json:"targets"`
	Generate string    `json:"generated_by"`
	// Limits is, per (policy, R) and target, the most sites that fit
	// (SiteLimits computes it from Points).
	Limits []Limit `json:"limits,omitempty"`
}

// Limit is the most sites one policy with R regions fits in a target: each
// table whose need grows with N is fitted as need = a + b·N through the two
// largest N measured (the needs are linear in N: so many entries per site
// plus a shared part), and the table that runs out first binds.
type Limit struct {
	Policy  string `json:"policy"`
	Regions int    `json:"regions"`
	Target  string `json:"target"`
	// MaxSites is the most sites that fit; Table is the one that binds,
	// PerSite its entries per site.
	MaxSites int     `json:"max_sites"`
	Table    string  `json:"binding_table"`
	PerSite  float64 `json:"entries_per_site"`
}

// SiteLimits derives the site limits from the points (at least two N per
// policy and R; otherwise none).
func (r *Result) SiteLimits() []Limit {
	type key struct {
		policy  string
		regions int
	}
	byKey := map[key][]Point{}
	var keys []key
	for _, p := range r.Points {
		k := key{p.Policy, p.Regions}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], p)
	}
	var out []Limit
	for _, k := range keys {
		pts := byKey[k]
		if len(pts) < 2 {
			continue
		}
		slices.SortFunc(pts, func(a, b Point) int { return a.Sites - b.Sites })
		lo, hi := pts[len(pts)-2], pts[len(pts)-1]
		for _, capa := range Capacities() {
			l := Limit{Policy: k.policy, Regions: k.regions, Target: capa.Target, MaxSites: -1}
			for _, table := range slices.Sorted(maps.Keys(hi.ByTable)) {
				limit, bounded := capa.Limit(table)
				b := float64(hi.ByTable[table]-lo.ByTable[table]) / float64(hi.Sites-lo.Sites)
				if !bounded || b <= 0 {
					continue
				}
				a := float64(hi.ByTable[table]) - b*float64(hi.Sites)
				n := max(0, int((float64(limit)-a)/b))
				if l.MaxSites < 0 || n < l.MaxSites {
					l.MaxSites, l.Table, l.PerSite = n, strings.TrimPrefix(table, pipeline.Control+"."), b
				}
			}
			if l.MaxSites >= 0 {
				out = append(out, l)
			}
		}
	}
	return out
}

// Capacities are the targets a state is checked against: the v1model
// program (BMv2, the embedded target) and the TNA program's declared sizes.
func Capacities() []compiler.Capacity {
	return []compiler.Capacity{compiler.ProgramCapacity(pipeline.V1Model), compiler.ProgramCapacity(pipeline.TNA)}
}

// Measure runs the grid. Compiles run one at a time (the timings are per
// compile on one core); ctx stops it between points.
func Measure(ctx context.Context, o Options) (*Result, error) {
	if len(o.Sites) == 0 {
		o.Sites = DefaultSites()
	}
	if len(o.Regions) == 0 {
		o.Regions = DefaultRegions()
	}
	if len(o.Policies) == 0 {
		o.Policies = DefaultPolicies()
	}
	if o.Hours == 0 {
		o.Hours = 24
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart()
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	src, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
	if err != nil {
		return nil, err
	}
	res := &Result{Machine: fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()), Date: time.Now().UTC(),
		Go: runtime.Version(), Hours: o.Hours, Start: o.Start, Carbon: src.Describe(),
		Generate: "research/configgen (p4ctl gen config), seed " + strconv.FormatUint(max(o.Seed, 1), 10)}
	for _, c := range Capacities() {
		res.Targets = append(res.Targets, c.Target)
	}
	total, done := len(o.Sites)*len(o.Regions)*len(o.Policies), 0
	for _, r := range o.Regions {
		for _, n := range o.Sites {
			built, err := configgen.Build(ctx, configgen.Options{Sites: n, Regions: r, Seed: o.Seed}, false) // ends with ctx
			if err != nil {
				return nil, err
			}
			cfg := built.Config
			for _, pol := range o.Policies {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := MeasurePoint(ctx, cfg, src, pol, o.Start, o.Hours)
				if err != nil {
					return nil, fmt.Errorf("scale: N=%d R=%d %s: %w", n, r, pol, err)
				}
				if o.Switches > 0 && n >= o.Switches {
					part, err := configgen.Build(ctx, configgen.Options{Sites: n, Regions: r, Seed: o.Seed, Switches: o.Switches, Partition: true}, false)
					if err != nil {
						return nil, err
					}
					if p.PerSwitch, err = MeasurePerSwitch(part.Config, src, pol, o.Start); err != nil {
						return nil, fmt.Errorf("scale: N=%d R=%d %s per switch: %w", n, r, pol, err)
					}
				}
				res.Points = append(res.Points, p)
				done++
				if o.Progress != nil {
					o.Progress(done, total)
				}
			}
		}
	}
	res.Limits = res.SiteLimits()
	return res, nil
}

// MeasurePerSwitch compiles start's hour under policy for every target of
// cfg, each with its own sites (targets[].sites), without table limits,
// and returns the largest switch's state and what it overflows.
func MeasurePerSwitch(cfg *config.Config, src regions.CarbonSource, policy string, start time.Time) (*PerSwitch, error) {
	pol, err := regions.ParsePolicy(policy)
	if err != nil {
		return nil, err
	}
	c, err := compiler.Snapshot(cfg, src, start)
	if err != nil {
		return nil, err
	}
	ps := &PerSwitch{Switches: len(cfg.Targets), MaxNeed: map[string]int{}, Overflows: map[string][]string{}}
	un := compiler.Unbounded()
	held := make([]*compiler.State, 0, len(cfg.Targets))
	var took time.Duration
	for _, t := range cfg.Targets {
		sub := cfg
		if len(t.Sites) > 0 {
			if sub, _, err = cfg.WithSites(t.Sites); err != nil {
				return nil, fmt.Errorf("target %s: %w", t.Name, err)
			}
		}
		in, err := compiler.NewInput(sub, c, 1)
		if err != nil {
			return nil, err
		}
		in.Policy, in.Capacity = pol, &un
		t0 := time.Now()
		st, err := compiler.Compile(in)
		took += time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		held = append(held, st)
		ps.TotalEntries += len(st.Entries)
		ps.MaxSites = max(ps.MaxSites, len(sub.Sites))
		ps.MaxEntries = max(ps.MaxEntries, len(st.Entries))
		for table, n := range compiler.Need(st) {
			ps.MaxNeed[table] = max(ps.MaxNeed[table], n)
		}
	}
	ps.CompileMs = float64(took) / float64(time.Millisecond)
	with := liveHeap()
	runtime.KeepAlive(held)
	held = nil
	ps.StateMB = float64(int64(with)-int64(liveHeap())) / (1 << 20)
	for _, capa := range Capacities() {
		var over []string
		for _, table := range slices.Sorted(maps.Keys(ps.MaxNeed)) {
			if lim, ok := capa.Limit(table); ok && ps.MaxNeed[table] > lim {
				over = append(over, strings.TrimPrefix(table, pipeline.Control+"."))
			}
		}
		ps.Overflows[capa.Target] = over
	}
	return ps, nil
}

// MeasurePoint compiles cfg under policy for hours consecutive hours from
// start (epochs alternating as the controller's do), without table limits,
// and plans each hourly update from the previous state.
func MeasurePoint(ctx context.Context, cfg *config.Config, src regions.CarbonSource, policy string, start time.Time, hours int) (Point, error) {
	pol, err := regions.ParsePolicy(policy)
	if err != nil {
		return Point{}, err
	}
	p := Point{Sites: len(cfg.Sites), Regions: len(cfg.Regions), Policy: pol.String(), Overflows: map[string][]string{}}
	un := compiler.Unbounded()
	var prev *compiler.State
	var times []time.Duration
	var m0, m1 runtime.MemStats
	var allocs, bytes uint64
	writes := 0
	epoch := uint8(1)
	for h := range hours {
		if err := ctx.Err(); err != nil { // an hour of 10000 sites takes a tenth of a second
			return Point{}, err
		}
		c, err := compiler.Snapshot(cfg, src, start.Add(time.Duration(h)*time.Hour))
		if err != nil {
			return Point{}, err
		}
		in, err := compiler.NewInput(cfg, c, epoch)
		if err != nil {
			return Point{}, err
		}
		in.Policy, in.Capacity = pol, &un
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		st, err := compiler.Compile(in)
		times = append(times, time.Since(t0))
		runtime.ReadMemStats(&m1)
		if err != nil {
			return Point{}, err
		}
		allocs += m1.Mallocs - m0.Mallocs
		bytes += m1.TotalAlloc - m0.TotalAlloc
		if prev == nil {
			p.Entries, p.ByTable, p.SiteRankings = len(st.Entries), compiler.Need(st), st.Meta.SiteRankings
			for _, capa := range Capacities() {
				var over []string
				if err := capa.Check(st); err != nil {
					var oe *compiler.OverflowError
					if !errors.As(err, &oe) {
						return Point{}, fmt.Errorf("check %s: %w", capa.Target, err)
					}
					for _, o := range oe.Overflows {
						over = append(over, strings.TrimPrefix(o.Table, pipeline.Control+"."))
					}
				}
				p.Overflows[capa.Target] = over
			}
		} else {
			u, err := compiler.PlanUpdate(prev, st)
			if err != nil {
				return Point{}, err
			}
			n := 0
			for _, ph := range u.Phases() {
				n += len(ph.Updates)
			}
			if u.Unchanged {
				st = prev // the controller keeps the epoch (and writes nothing)
			} else {
				epoch = compiler.NextEpoch(epoch)
			}
			writes += n
			p.WritesMax = max(p.WritesMax, n)
			if n > 0 {
				p.ChangedHours++
			}
			p.Updates++
		}
		if prev == nil {
			epoch = compiler.NextEpoch(epoch)
		}
		prev = st
	}
	slices.Sort(times)
	p.CompileMs = float64(times[len(times)/2]) / float64(time.Millisecond)
	p.AllocsPerCompile = float64(allocs) / float64(hours)
	p.BytesPerCompile = float64(bytes) / float64(hours)
	p.WritesMean = float64(writes) / float64(p.Updates)
	return p, nil
}

// WriteText renders the grid as one table per policy.
func (r *Result) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "# scale: generated configurations (%s), %d hours from %s, carbon: %s\n# %s, %s, %s\n",
		r.Generate, r.Hours, r.Start.Format("2006-01-02T15Z"), r.Carbon, r.Machine, r.Go, r.Date.Format("2006-01-02"))
	rows := make([][]string, 0, len(r.Points))
	pts := slices.Clone(r.Points)
	sort.SliceStable(pts, func(i, j int) bool {
		a, b := pts[i], pts[j]
		if a.Policy != b.Policy {
			return slices.Index(DefaultPolicies(), a.Policy) < slices.Index(DefaultPolicies(), b.Policy)
		}
		if a.Regions != b.Regions {
			return a.Regions < b.Regions
		}
		return a.Sites < b.Sites
	})
	v1 := compiler.ProgramCapacity(pipeline.V1Model).Target
	for _, p := range pts {
		fits := "yes"
		if o := p.Overflows[v1]; len(o) > 0 {
			fits = "no: " + strings.Join(o, ",")
		}
		rows = append(rows, []string{p.Policy, strconv.Itoa(p.Regions), strconv.Itoa(p.Sites), strconv.Itoa(p.Entries),
			strconv.Itoa(p.ByTable[pipeline.TableSLAFeasibility]), strconv.Itoa(p.ByTable[pipeline.TableCarbonRank]),
			fmt.Sprintf("%.3g", p.CompileMs), fmt.Sprintf("%.0f", p.AllocsPerCompile),
			fmt.Sprintf("%.1f", p.WritesMean), strconv.Itoa(p.WritesMax), fmt.Sprintf("%d/%d", p.ChangedHours, p.Updates), fits})
	}
	if err := output.WriteTable(w, []string{"policy", "R", "N", "entries", "sla_feasibility", "carbon_rank(2 gen)", "compile_ms", "allocs",
		"writes/h", "max", "changed", "fits v1model"}, rows); err != nil {
		return err
	}
	if err := r.writePerSwitch(w); err != nil {
		return err
	}
	if len(r.Limits) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n# most sites that fit (each growing table fitted as a + b·N through the two largest N measured; the first to run out binds)\n")
	rows = rows[:0]
	for _, l := range r.Limits {
		rows = append(rows, []string{l.Policy, strconv.Itoa(l.Regions), l.Target, strconv.Itoa(l.MaxSites), l.Table, fmt.Sprintf("%.2f", l.PerSite)})
	}
	return output.WriteTable(w, []string{"policy", "R", "target", "max sites", "binding table", "entries/site"}, rows)
}

// writePerSwitch renders the partitioned fleet's largest switch per point,
// when measured.
func (r *Result) writePerSwitch(w io.Writer) error {
	var rows [][]string
	v1 := compiler.ProgramCapacity(pipeline.V1Model).Target
	for _, p := range r.Points {
		ps := p.PerSwitch
		if ps == nil {
			continue
		}
		fits := "yes"
		if o := ps.Overflows[v1]; len(o) > 0 {
			fits = "no: " + strings.Join(o, ",")
		}
		rows = append(rows, []string{p.Policy, strconv.Itoa(p.Regions), strconv.Itoa(p.Sites), strconv.Itoa(ps.Switches), strconv.Itoa(ps.MaxSites),
			strconv.Itoa(ps.MaxEntries), strconv.Itoa(ps.MaxNeed[pipeline.TableSLAFeasibility]), strconv.Itoa(ps.MaxNeed[pipeline.TableCarbonRank]), fits,
			strconv.Itoa(ps.TotalEntries), fmt.Sprintf("%.3g", ps.CompileMs), fmt.Sprintf("%.3g", ps.StateMB)})
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n# sites partitioned among edge switches (targets[].sites): the largest switch\n")
	return output.WriteTable(w, []string{"policy", "R", "N", "switches", "max sites", "max entries", "sla_feasibility", "carbon_rank(2 gen)", "fits v1model",
		"all entries", "compile_ms (all)", "state MB (all)"}, rows)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
