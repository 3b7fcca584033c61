// Package bfreport turns bf-p4c's own resource output for a Tofino program
// (resources.json and metrics.json, written under pipe/logs/ by
// p4c-barefoot and committed in p4src/build/tna) into the human-readable
// report p4src/build/tna/RESOURCES.md: MAU stages used, per stage the
// tables placed and the SRAM, TCAM, map RAM, stateful (meter) ALU,
// statistics ALU, gateway, hash-bit and crossbar-byte usage against the
// stage's capacity, and PHV containers by width. Every number is read from
// the compiler's files; nothing is typed in.
package bfreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files are the inputs' names inside a build directory.
const (
	ResourcesFile = "resources.json"
	MetricsFile   = "metrics.json"
	// PHVUsageFile is SummarizePHV's digest of bf-p4c's phv.json (which is
	// 1 MB of per-slice allocation): containers occupied per gress, kind
	// and width.
	PHVUsageFile = "phv_usage.json"
)

// PHVUsage is one line of PHVUsageFile.
type PHVUsage struct {
	Gress      string `json:"gress"`
	Kind       string `json:"container_type"`
	Width      int    `json:"bit_width"`
	Containers int    `json:"containers"`
}

// SummarizePHV reads bf-p4c's phv.json and counts the containers it
// allocated, per gress, container kind and width.
func SummarizePHV(path string) ([]PHVUsage, error) {
	var phv struct {
		Containers []struct {
			Width int    `json:"bit_width"`
			Kind  string `json:"container_type"`
			Gress string `json:"gress"`
		} `json:"containers"`
	}
	if err := readJSON(path, &phv); err != nil {
		return nil, err
	}
	n := map[PHVUsage]int{}
	for _, c := range phv.Containers {
		n[PHVUsage{Gress: c.Gress, Kind: c.Kind, Width: c.Width}]++
	}
	out := make([]PHVUsage, 0, len(n))
	for k, v := range n {
		k.Containers = v
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Gress != b.Gress {
			return a.Gress < b.Gress
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Width < b.Width
	})
	return out, nil
}

// used is a count of something against its capacity.
type used struct{ N, Of int }

func (u used) String() string {
	if u.Of == 0 {
		return fmt.Sprint(u.N)
	}
	return fmt.Sprintf("%d/%d", u.N, u.Of)
}

// Stage is one MAU stage's usage.
type Stage struct {
	Number                                           int
	Tables                                           []string
	SRAM, TCAM, MapRAM, MeterALU, StatALU, Gateways  used
	HashBits, XbarBytes, LogicalTables, ActionBusByt used
}

// Report is what RESOURCES.md shows.
type Report struct {
	Program, Compiler, Target string
	StagesAvailable           int
	Stages                    []Stage // every stage the compiler reports, in order
	// PHV: containers occupied per width (from metrics.json), e.g. 8, 16, 32.
	PHV map[int]int
	// PHVUsage: containers allocated per gress, kind and width
	// (phv_usage.json), and PHVAvailable the chip's per kind and width
	// (resources.json).
	PHVUsage     []PHVUsage
	PHVAvailable map[string]map[int]int
	// Totals from metrics.json (0 when absent).
	SRAMs, TCAMs, MapRAMs, LogicalTables int
	LatencyCycles                        map[string]int // per gress
}

// StagesUsed counts stages with at least one table placed.
func (r *Report) StagesUsed() int {
	n := 0
	for _, s := range r.Stages {
		if s.LogicalTables.N > 0 || len(s.Tables) > 0 {
			n = max(n, s.Number+1)
		}
	}
	return n
}

// The parts of bf-p4c's JSON the report reads (field names are those of
// bf-p4c's compiler_interfaces/schemas).
type (
	usages   []json.RawMessage
	resource struct {
		NRows    int    `json:"nRows"`
		NColumns int    `json:"nColumns"`
		NUnits   int    `json:"nUnits"`
		NAlus    int    `json:"nAlus"`
		NBits    int    `json:"nBits"` // per hash function
		NFuncs   int    `json:"nFunctions"`
		Size     int    `json:"size"`
		SRAMs    usages `json:"srams"`
		MapRAMs  usages `json:"maprams"`
		TCAMs    usages `json:"tcams"`
		Meters   usages `json:"meters"`
		Stats    usages `json:"stats"`
		Gateways usages `json:"gateways"`
		Bits     usages `json:"bits"`
		Bytes    usages `json:"bytes"`
		IDs      []struct {
			ID        int    `json:"id"`
			TableName string `json:"table_name"`
		} `json:"ids"`
	}
	stageJSON struct {
		StageNumber    int      `json:"stage_number"`
		XbarBytes      resource `json:"xbar_bytes"`
		HashBits       resource `json:"hash_bits"`
		RAMs           resource `json:"rams"`
		MapRAMs        resource `json:"map_rams"`
		Gateways       resource `json:"gateways"`
		MeterALUs      resource `json:"meter_alus"`
		StatisticALUs  resource `json:"statistic_alus"`
		TCAMs          resource `json:"tcams"`
		ActionBusBytes resource `json:"action_bus_bytes"`
		LogicalTables  resource `json:"logical_tables"`
	}
	resourcesJSON struct {
		ProgramName     string `json:"program_name"`
		CompilerVersion string `json:"compiler_version"`
		Resources       struct {
			MAU struct {
				NStages   int         `json:"nStages"`
				MauStages []stageJSON `json:"mau_stages"`
			} `json:"mau"`
			PHVContainers map[string][]struct {
				Width int `json:"width"`
				Units int `json:"units"`
			} `json:"phv_containers"`
		} `json:"resources"`
	}
	metricsJSON struct {
		Target string `json:"target"`
		PHV    struct {
			Normal []struct {
				BitWidth           int `json:"bit_width"`
				ContainersOccupied int `json:"containers_occupied"`
			} `json:"normal"`
		} `json:"phv"`
		MAU struct {
			SRAMs         int `json:"srams"`
			TCAMs         int `json:"tcams"`
			MapRAMs       int `json:"map_rams"`
			LogicalTables int `json:"logical_tables"`
			Latency       []struct {
				Gress  string `json:"gress"`
				Cycles int    `json:"cycles"`
			} `json:"latency"`
		} `json:"mau"`
	}
)

// Load reads dir/resources.json and, when present, dir/metrics.json (the
// full bf-p4c driver writes it; the compiler alone does not).
func Load(dir string) (*Report, error) {
	var res resourcesJSON
	if err := readJSON(filepath.Join(dir, ResourcesFile), &res); err != nil {
		return nil, err
	}
	var met metricsJSON
	if err := readJSON(filepath.Join(dir, MetricsFile), &met); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r := build(&res, &met)
	if err := readJSON(filepath.Join(dir, PHVUsageFile), &r.PHVUsage); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r.PHVAvailable = map[string]map[int]int{}
	for kind, list := range res.Resources.PHVContainers {
		r.PHVAvailable[kind] = map[int]int{}
		for _, c := range list {
			r.PHVAvailable[kind][c.Width] += c.Units
		}
	}
	return r, nil
}

// Fits reports whether the placement uses no more MAU stages than the
// target has. The open-source backend places tables past the last
// physical stage without an error (the assembler would refuse them), so
// this is the check that says whether the program fits.
func (r *Report) Fits() bool { return r.StagesUsed() <= r.StagesAvailable }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("bfreport: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("bfreport: %s: %w", path, err)
	}
	return nil
}

func build(res *resourcesJSON, met *metricsJSON) *Report {
	r := &Report{Program: res.ProgramName, Compiler: res.CompilerVersion, Target: met.Target,
		StagesAvailable: res.Resources.MAU.NStages, PHV: map[int]int{}, LatencyCycles: map[string]int{},
		SRAMs: met.MAU.SRAMs, TCAMs: met.MAU.TCAMs, MapRAMs: met.MAU.MapRAMs, LogicalTables: met.MAU.LogicalTables}
	for _, p := range met.PHV.Normal {
		r.PHV[p.BitWidth] += p.ContainersOccupied
	}
	for _, l := range met.MAU.Latency {
		r.LatencyCycles[l.Gress] = l.Cycles
	}
	for _, s := range res.Resources.MAU.MauStages {
		st := Stage{Number: s.StageNumber,
			SRAM:          used{len(s.RAMs.SRAMs), s.RAMs.NRows * s.RAMs.NColumns},
			TCAM:          used{len(s.TCAMs.TCAMs), s.TCAMs.NRows * s.TCAMs.NColumns},
			MapRAM:        used{len(s.MapRAMs.MapRAMs), s.MapRAMs.NRows * s.MapRAMs.NUnits},
			MeterALU:      used{len(s.MeterALUs.Meters), s.MeterALUs.NAlus},
			StatALU:       used{len(s.StatisticALUs.Stats), s.StatisticALUs.NAlus},
			Gateways:      used{len(s.Gateways.Gateways), s.Gateways.NRows * s.Gateways.NUnits},
			HashBits:      used{len(s.HashBits.Bits), s.HashBits.NBits * max(s.HashBits.NFuncs, 1)},
			XbarBytes:     used{len(s.XbarBytes.Bytes), s.XbarBytes.Size},
			LogicalTables: used{len(s.LogicalTables.IDs), s.LogicalTables.Size},
			ActionBusByt:  used{len(s.ActionBusBytes.Bytes), s.ActionBusBytes.Size},
		}
		seen := map[string]bool{}
		for _, id := range s.LogicalTables.IDs {
			if n := tableName(id.TableName); n != "" && !seen[n] {
				seen[n] = true
				st.Tables = append(st.Tables, n)
			}
		}
		sort.Strings(st.Tables)
		r.Stages = append(r.Stages, st)
	}
	sort.Slice(r.Stages, func(i, j int) bool { return r.Stages[i].Number < r.Stages[j].Number })
	return r
}

// tableName shortens a placed table's name for the report: the control
// path is dropped ("P4ctlIngress.region_select.carbon_rank" → carbon_rank),
// and split tables keep one name ("...$0", "...$st1").
func tableName(n string) string {
	if i := strings.IndexByte(n, '$'); i > 0 {
		n = n[:i]
	}
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	return n
}

// Write renders the report as Markdown.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Tofino resources of %s\n\n", r.Program)
	target := r.Target
	if target == "" {
		target = "tofino"
	}
	fmt.Fprintf(&b, "Generated by `internal/bfreport` from bf-p4c's own `%s` (and `%s` when present) in this directory (`make p4-tna`); nothing here is typed in. Compiler: %s; target: %s.\n\n",
		ResourcesFile, MetricsFile, r.Compiler, target)
	if r.Fits() {
		fmt.Fprintf(&b, "**MAU stages used: %d of %d** (%d left for other tables).\n\n", r.StagesUsed(), r.StagesAvailable, r.StagesAvailable-r.StagesUsed())
	} else {
		fmt.Fprintf(&b, "**MAU stages used: %d of %d — the program does NOT fit Tofino 1.** The compiler placed every table, but %d stages past the last physical one; the assembler would refuse the placement.\n\n",
			r.StagesUsed(), r.StagesAvailable, r.StagesUsed()-r.StagesAvailable)
	}
	b.WriteString("| stage | tables | SRAM | TCAM | map RAM | stateful ALU | stats ALU | gateways | hash bits | xbar bytes | logical tables |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Stages {
		tables := strings.Join(s.Tables, ", ")
		if tables == "" {
			tables = "—"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Number, tables,
			s.SRAM, s.TCAM, s.MapRAM, s.MeterALU, s.StatALU, s.Gateways, s.HashBits, s.XbarBytes, s.LogicalTables)
	}
	var tot Stage
	for _, s := range r.Stages {
		add := func(a *used, x used) { a.N += x.N; a.Of += x.Of }
		add(&tot.SRAM, s.SRAM)
		add(&tot.TCAM, s.TCAM)
		add(&tot.MapRAM, s.MapRAM)
		add(&tot.MeterALU, s.MeterALU)
		add(&tot.StatALU, s.StatALU)
		add(&tot.Gateways, s.Gateways)
		add(&tot.HashBits, s.HashBits)
		add(&tot.XbarBytes, s.XbarBytes)
		add(&tot.LogicalTables, s.LogicalTables)
	}
	fmt.Fprintf(&b, "| all | | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n\n", tot.SRAM, tot.TCAM, tot.MapRAM,
		tot.MeterALU, tot.StatALU, tot.Gateways, tot.HashBits, tot.XbarBytes, tot.LogicalTables)
	if len(r.PHV) > 0 {
		widths := make([]int, 0, len(r.PHV))
		for w := range r.PHV {
			widths = append(widths, w)
		}
		sort.Ints(widths)
		parts := make([]string, len(widths))
		for i, w := range widths {
			parts[i] = fmt.Sprintf("%d × %d-bit", r.PHV[w], w)
		}
		fmt.Fprintf(&b, "PHV containers occupied (normal): %s.\n\n", strings.Join(parts, ", "))
	}
	if len(r.PHVUsage) > 0 {
		b.WriteString("PHV containers allocated (phv.json), per gress, of the chip's per pipe (resources.json):\n\n| gress | kind | 8-bit | 16-bit | 32-bit |\n|---|---|---|---|---|\n")
		type gk struct{ g, k string }
		rows := map[gk]map[int]int{}
		var order []gk
		for _, u := range r.PHVUsage {
			key := gk{u.Gress, u.Kind}
			if rows[key] == nil {
				rows[key] = map[int]int{}
				order = append(order, key)
			}
			rows[key][u.Width] += u.Containers
		}
		for _, key := range order {
			cell := func(w int) string {
				if of := r.PHVAvailable[key.k][w]; of > 0 {
					return fmt.Sprintf("%d/%d", rows[key][w], of)
				}
				return fmt.Sprint(rows[key][w])
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", key.g, key.k, cell(8), cell(16), cell(32))
		}
		b.WriteString("\n")
	}
	if r.SRAMs+r.TCAMs+r.MapRAMs > 0 {
		fmt.Fprintf(&b, "bf-p4c's totals (metrics.json): %d SRAMs, %d TCAMs, %d map RAMs, %d logical tables.\n\n", r.SRAMs, r.TCAMs, r.MapRAMs, r.LogicalTables)
	}
	if len(r.LatencyCycles) > 0 {
		gs := make([]string, 0, len(r.LatencyCycles))
		for g := range r.LatencyCycles {
			gs = append(gs, g)
		}
		sort.Strings(gs)
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = fmt.Sprintf("%s %d cycles", g, r.LatencyCycles[g])
		}
		fmt.Fprintf(&b, "Pipeline latency: %s.\n", strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
