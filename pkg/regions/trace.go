package regions

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/inputfile"
)

// MaxIntensity is the largest plausible carbon intensity in gCO2eq/kWh; the
// dirtiest grids are around 1000–1200 (lignite, oil). Larger values are
// rejected as data errors (or wrong units, e.g. g/MWh).
const MaxIntensity = 2000

// Metric selects the Electricity Maps carbon-intensity column.
type Metric int

// Metrics of the Electricity Maps portal files.
const (
	LCA    Metric = iota // lifecycle, consumption-based (the default; the shared data is LCA)
	Direct               // direct (operational) emissions only
)

// String returns "LCA" or "direct".
func (m Metric) String() string {
	if m == Direct {
		return "direct"
	}
	return "LCA"
}

// ParseMetric parses "lca" or "direct".
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(s) {
	case "lca", "":
		return LCA, nil
	case "direct":
		return Direct, nil
	}
	return LCA, fmt.Errorf("metric %q: want lca or direct", s)
}

// FillPolicy says what to do with a gap (missing hours) inside a zone's
// series. The default, FillNone, makes a gap an error.
type FillPolicy int

// Fill policies.
const (
	FillNone     FillPolicy = iota // a gap is an error naming file and line
	FillPrevious                   // repeat the last value before the gap
	FillLinear                     // interpolate linearly across the gap
)

// ParseFill parses "none", "previous" or "linear".
func ParseFill(s string) (FillPolicy, error) {
	switch s {
	case "none", "":
		return FillNone, nil
	case "previous":
		return FillPrevious, nil
	case "linear":
		return FillLinear, nil
	}
	return FillNone, fmt.Errorf("fill policy %q: want none, previous or linear", s)
}

// LoadOptions configure trace loading.
type LoadOptions struct {
	Metric Metric     // column of Electricity Maps portal files
	Fill   FillPolicy // gap handling
}

// TraceSource is a CarbonSource backed by hourly CSV traces.
type TraceSource struct {
	desc    string
	period  Period
	series  map[string]*series
	filled  int
	skipped []string
	formats map[string]bool // "normalized CSV", "Electricity Maps portal CSV (LCA)"
}

type series struct {
	zone   string
	origin string // file of the series
	start  time.Time
	vals   []float64
	// filled[i] is, for a gap hour the fill policy filled, how many hours
	// it comes after the last measured hour (0: measured). nil while the
	// series has no gap.
	filled []int32
}

// normalizedHeader is the header of the normalized format.
var normalizedHeader = []string{"timestamp_utc", "zone", "gco2_per_kwh"}

const (
	emTime = "Datetime (UTC)"
	emZone = "Zone Id"
)

// LoadTraces loads every *.csv file directly in dir (not subdirectories):
// normalized files (`timestamp_utc,zone,gco2_per_kwh`) and Electricity Maps
// portal files (`Datetime (UTC),…,Zone Id,…,Carbon Intensity gCO₂eq/kWh
// (LCA),…`) may be mixed. CSV files with neither header (such as a
// yearly-averages table) are skipped and listed by Skipped. Every zone must
// be a catalog zone and appear in one file only; every error names file:line.
func LoadTraces(dir string, o LoadOptions) (*TraceSource, error) {
	return LoadTracesContext(context.Background(), dir, o)
}

// LoadTracesContext is LoadTraces reading the files under ctx (an
// interrupt ends the load), at most inputfile.MaxSize bytes each.
func LoadTracesContext(ctx context.Context, dir string, o LoadOptions) (*TraceSource, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("load traces: directory %s does not exist: %w", dir, err)
	case err != nil:
		return nil, fmt.Errorf("load traces: %w", err)
	case !st.IsDir():
		return nil, fmt.Errorf("load traces: %s is a file, not a directory of *.csv files", dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("load traces: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("load traces: no *.csv files in %s", dir)
	}
	sort.Strings(paths)
	src, err := LoadTraceFilesContext(ctx, paths, o)
	if err != nil {
		return nil, err
	}
	src.desc = describeTraces(dir, src, o)
	return src, nil
}

func describeTraces(dir string, src *TraceSource, _ LoadOptions) string {
	d := src.label(dir)
	if _, err := os.Stat(filepath.Join(dir, "PROVENANCE.md")); err == nil {
		d += ", provenance in " + filepath.Join(dir, "PROVENANCE.md")
	}
	if src.filled > 0 {
		d += fmt.Sprintf(", %d gap hours filled", src.filled)
	}
	return d
}

// LoadTraceFiles loads the given CSV files (see LoadTraces).
func LoadTraceFiles(paths []string, o LoadOptions) (*TraceSource, error) {
	return LoadTraceFilesContext(context.Background(), paths, o)
}

// LoadTraceFilesContext is LoadTraceFiles reading the files under ctx, at
// most inputfile.MaxSize bytes each.
func LoadTraceFilesContext(ctx context.Context, paths []string, o LoadOptions) (*TraceSource, error) {
	src := &TraceSource{series: map[string]*series{}, formats: map[string]bool{}}
	for _, p := range paths {
		b, err := inputfile.Read(ctx, p, inputfile.MaxSize)
		if err != nil {
			return nil, fmt.Errorf("load traces: %w", err)
		}
		if err := src.add(p, b, o); err != nil {
			return nil, err
		}
	}
	if err := src.finish(); err != nil {
		return nil, err
	}
	if src.desc == "" {
		src.desc = src.label(strings.Join(paths, ","))
	}
	return src, nil
}

// label describes the source: years, origin, file formats, zones, period.
func (src *TraceSource) label(where string) string {
	var ys []string
	for y := src.period.From.Year(); y <= src.period.To.Add(-time.Hour).Year(); y++ {
		ys = append(ys, strconv.Itoa(y))
	}
	var fs []string
	for f := range src.formats {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return fmt.Sprintf("measured hourly traces %s from %s (%s; %d zones, %s)", strings.Join(ys, ","), where, strings.Join(fs, ", "), len(src.series), src.period)
}

// ParseTraces parses one CSV file's contents; name is used in errors.
func ParseTraces(name string, data []byte, o LoadOptions) (*TraceSource, error) {
	src := &TraceSource{series: map[string]*series{}, formats: map[string]bool{}}
	if err := src.add(name, data, o); err != nil {
		return nil, err
	}
	if err := src.finish(); err != nil {
		return nil, err
	}
	src.desc = src.label(name)
	return src, nil
}

// errSkip marks a CSV that is not an hourly trace.
var errSkip = errors.New("not an hourly carbon trace")

type fileFormat struct {
	timeCol, zoneCol, valCol int
	layout                   string
	name                     string // format name for Describe
}

func detect(name string, header []string, o LoadOptions) (fileFormat, error) {
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	col := func(want string) int {
		for i, h := range header {
			if h == want {
				return i
			}
		}
		return -1
	}
	switch {
	case len(header) > 0 && header[0] == normalizedHeader[0]:
		if len(header) != 3 || header[1] != "zone" {
			return fileFormat{}, fmt.Errorf("%s:1: header %q: want %q", name, strings.Join(header, ","), strings.Join(normalizedHeader, ","))
		}
		if header[2] != normalizedHeader[2] {
			return fileFormat{}, fmt.Errorf("%s:1: wrong units: value column %q, want %q (gCO2eq/kWh)", name, header[2], normalizedHeader[2])
		}
		return fileFormat{0, 1, 2, time.RFC3339, "normalized CSV"}, nil
	case col(emTime) >= 0:
		f := fileFormat{timeCol: col(emTime), zoneCol: col(emZone), valCol: -1, layout: "2006-01-02 15:04:05",
			name: "Electricity Maps portal CSV (" + o.Metric.String() + ")"}
		if f.zoneCol < 0 {
			return f, fmt.Errorf("%s:1: Electricity Maps file without a %q column", name, emZone)
		}
		suffix := "(" + o.Metric.String() + ")"
		for i, h := range header {
			if strings.HasPrefix(h, "Carbon Intensity") && strings.HasSuffix(h, suffix) {
				unit := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(h, "Carbon Intensity"), suffix))
				if unit != "gCO₂eq/kWh" && unit != "gCO2eq/kWh" {
					return f, fmt.Errorf("%s:1: wrong units: column %q, want gCO₂eq/kWh", name, h)
				}
				f.valCol = i
			}
		}
		if f.valCol < 0 {
			return f, fmt.Errorf("%s:1: Electricity Maps file without a \"Carbon Intensity gCO₂eq/kWh %s\" column", name, suffix)
		}
		return f, nil
	}
	return fileFormat{}, notATrace(name, header)
}

// notATrace tells a CSV that is not an hourly trace (a yearly-averages
// table: skipped, errSkip) from one that was meant to be but is written
// another way: no header, another separator, another header with a time
// column. Those are errors naming the file and the cause, where they used
// to be skipped and reported later as a zone without data.
func notATrace(name string, header []string) error {
	joined := strings.Join(header, ",")
	for _, sep := range []string{";", "\t", "|"} {
		if !strings.Contains(joined, sep) {
			continue
		}
		fields := strings.Split(joined, sep)
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if slices.Contains(fields, normalizedHeader[0]) || slices.Contains(fields, emTime) || looksLikeTime(fields[0]) {
			what := map[string]string{";": "';'", "\t": "tabs", "|": "'|'"}[sep]
			return fmt.Errorf("%s:1: fields separated by %s: hourly traces are comma-separated (%s)", name, what, strings.Join(normalizedHeader, ","))
		}
	}
	if len(header) > 0 && looksLikeTime(header[0]) {
		return fmt.Errorf("%s:1: no header: the first line is data (%q); add the header line %s (or use an Electricity Maps portal export as downloaded)",
			name, joined, strings.Join(normalizedHeader, ","))
	}
	for _, h := range header {
		l := strings.ToLower(h)
		if strings.Contains(l, "time") || strings.Contains(l, "date") {
			return fmt.Errorf("%s:1: header %q is not a trace format p4ctl reads: want %s, or an Electricity Maps portal export (%s,…,%s,…,Carbon Intensity gCO₂eq/kWh (LCA),…)",
				name, joined, strings.Join(normalizedHeader, ","), emTime, emZone)
		}
	}
	return errSkip
}

// looksLikeTime reports whether s parses as a timestamp of either format
// (or a date).
func looksLikeTime(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "\ufeff")
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

func (src *TraceSource) add(name string, data []byte, o LoadOptions) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return fmt.Errorf("%s:1: empty file", name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f, err := detect(name, header, o)
	if errors.Is(err, errSkip) {
		src.skipped = append(src.skipped, name)
		return nil
	}
	if err != nil {
		return err
	}
	type row struct {
		zone string
		ts   time.Time
		v    float64
		line int
	}
	var rows []row
	maxVal, firstLine := math.Inf(-1), 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: %w", name, pe.Line, pe.Err)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		line, _ := r.FieldPos(0)
		if firstLine == 0 {
			firstLine = line
		}
		need := max(f.timeCol, f.zoneCol, f.valCol) + 1
		if len(rec) < need {
			return fmt.Errorf("%s:%d: %d fields, want at least %d", name, line, len(rec), need)
		}
		ts, err := time.Parse(f.layout, strings.TrimSpace(rec[f.timeCol]))
		if err != nil {
			return fmt.Errorf("%s:%d: timestamp %q: want %s", name, line, rec[f.timeCol], f.layout)
		}
		if u := ts.UTC(); !u.Truncate(time.Hour).Equal(u) {
			if _, off := ts.Zone(); off%3600 != 0 && ts.Truncate(time.Minute).Equal(ts) && ts.Minute() == 0 {
				return fmt.Errorf("%s:%d: timestamp %s is %s in UTC: its offset is not a whole number of hours, so it is not on a UTC hour; hourly traces are UTC hours: write %s (the UTC hour it falls in) or convert the file to UTC",
					name, line, rec[f.timeCol], u.Format(time.RFC3339), u.Truncate(time.Hour).Format(time.RFC3339))
			}
			return fmt.Errorf("%s:%d: timestamp %s is not on the hour (%s in UTC)", name, line, rec[f.timeCol], u.Format(time.RFC3339))
		}
		ts = ts.UTC()
		zone := strings.TrimSpace(rec[f.zoneCol])
		if !knownZone(zone) {
			return fmt.Errorf("%s:%d: unknown zone %q (catalog zones: %s)", name, line, zone, strings.Join(Zones(), " "))
		}
		raw := strings.TrimSpace(rec[f.valCol])
		if raw == "" {
			return fmt.Errorf("%s:%d: zone %s %s: missing value", name, line, zone, ts.Format(time.RFC3339))
		}
		v, err := strconv.ParseFloat(raw, 64)
		switch {
		case err != nil:
			return fmt.Errorf("%s:%d: value %q is not a number", name, line, raw)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%s:%d: value %q is not finite", name, line, raw)
		case v < 0:
			return fmt.Errorf("%s:%d: negative intensity %v", name, line, v)
		case v > MaxIntensity:
			return fmt.Errorf("%s:%d: absurd intensity %v > %d gCO2eq/kWh (wrong units?)", name, line, v, MaxIntensity)
		}
		maxVal = math.Max(maxVal, v)
		rows = append(rows, row{zone, ts, v, line})
	}
	// Order is diagnosed before gaps: two swapped rows would otherwise read
	// as a gap (with advice to choose a fill policy, which then fails on
	// the row that comes back).
	latest, latestLine := map[string]time.Time{}, map[string]int{}
	for _, r := range rows {
		if last, ok := latest[r.zone]; ok {
			switch {
			case r.ts.Equal(last):
				return fmt.Errorf("%s:%d: duplicate hour %s for zone %s (first at line %d)", name, r.line, r.ts.Format(time.RFC3339), r.zone, latestLine[r.zone])
			case r.ts.Before(last):
				return fmt.Errorf("%s:%d: unsorted: %s for zone %s comes after %s (line %d); sort the file by time (rows are read in order, never reordered)",
					name, r.line, r.ts.Format(time.RFC3339), r.zone, last.Format(time.RFC3339), latestLine[r.zone])
			}
		}
		latest[r.zone], latestLine[r.zone] = r.ts, r.line
	}
	local := map[string]*series{}
	lastLine := map[string]int{}
	var order []string
	for _, r := range rows {
		zone, ts, v, line := r.zone, r.ts, r.v, r.line
		s := local[zone]
		if s == nil {
			if prev, dup := src.series[zone]; dup {
				return fmt.Errorf("%s:%d: zone %s already loaded from %s", name, line, zone, prev.origin)
			}
			s = &series{zone: zone, origin: name, start: ts}
			local[zone] = s
			order = append(order, zone)
		} else {
			next := s.start.Add(time.Duration(len(s.vals)) * time.Hour)
			switch {
			case ts.Equal(next.Add(-time.Hour)):
				return fmt.Errorf("%s:%d: duplicate hour %s for zone %s (first at line %d)", name, line, ts.Format(time.RFC3339), zone, lastLine[zone])
			case ts.Before(next):
				return fmt.Errorf("%s:%d: unsorted: %s for zone %s comes after %s (line %d)", name, line, ts.Format(time.RFC3339), zone, next.Add(-time.Hour).Format(time.RFC3339), lastLine[zone])
			case ts.After(next):
				gap := int(ts.Sub(next) / time.Hour)
				if o.Fill == FillNone {
					return fmt.Errorf("%s:%d: gap of %d hours for zone %s before %s (previous line %d); choose a fill policy to accept gaps", name, line, gap, zone, ts.Format(time.RFC3339), lastLine[zone])
				}
				last := s.vals[len(s.vals)-1]
				if s.filled == nil {
					s.filled = make([]int32, len(s.vals), cap(s.vals))
				}
				for k := 1; k <= gap; k++ {
					fv := last
					if o.Fill == FillLinear {
						fv = last + (v-last)*float64(k)/float64(gap+1)
					}
					s.vals = append(s.vals, fv)
					s.filled = append(s.filled, int32(k))
				}
				src.filled += gap
			}
		}
		s.vals = append(s.vals, v)
		if s.filled != nil {
			s.filled = append(s.filled, 0)
		}
		lastLine[zone] = line
	}
	if len(order) == 0 {
		return fmt.Errorf("%s:2: no data rows", name)
	}
	if maxVal <= 2 {
		return fmt.Errorf("%s:%d: wrong units: every value is <= 2, which looks like kgCO2eq/kWh; want gCO2eq/kWh", name, firstLine)
	}
	for _, z := range order {
		src.series[z] = local[z]
	}
	src.formats[f.name] = true
	return nil
}

func knownZone(z string) bool {
	for _, r := range catalog {
		if r.Zone == z {
			return true
		}
	}
	return false
}

func (src *TraceSource) finish() error {
	if len(src.series) == 0 {
		if len(src.skipped) > 0 {
			return fmt.Errorf("load traces: no hourly traces found: skipped %s (no timestamp_utc,zone,gco2_per_kwh or Electricity Maps portal header)", strings.Join(src.skipped, ", "))
		}
		return errors.New("load traces: no hourly traces found")
	}
	first := true
	for _, s := range src.series {
		p := Period{From: s.start, To: s.start.Add(time.Duration(len(s.vals)) * time.Hour)}
		if first {
			src.period, first = p, false
			continue
		}
		if p.From.After(src.period.From) {
			src.period.From = p.From
		}
		if p.To.Before(src.period.To) {
			src.period.To = p.To
		}
	}
	if src.period.Hours() == 0 {
		return errors.New("load traces: the zones' periods do not overlap")
	}
	return nil
}

// Intensity implements CarbonSource.
func (src *TraceSource) Intensity(zone string, t time.Time) (float64, error) {
	s, ok := src.series[zone]
	if !ok {
		if len(src.skipped) > 0 {
			return 0, fmt.Errorf("no carbon data for zone %s in %s (skipped, not hourly traces: %s)", zone, src.desc, strings.Join(src.skipped, ", "))
		}
		return 0, fmt.Errorf("no carbon data for zone %s in %s", zone, src.desc)
	}
	if !src.period.Contains(t) {
		return 0, fmt.Errorf("zone %s: %s is outside the data period %s", zone, t.UTC().Format(time.RFC3339), src.period)
	}
	return s.vals[int(t.Sub(s.start)/time.Hour)], nil
}

// Period implements CarbonSource: the interval all zones cover.
func (src *TraceSource) Period() Period { return src.period }

// Zones implements CarbonSource.
func (src *TraceSource) Zones() []string {
	return slices.Sorted(maps.Keys(src.series))
}

// Describe implements CarbonSource.
func (src *TraceSource) Describe() string { return src.desc }

// Skipped lists CSV files that were not hourly traces (ignored).
func (src *TraceSource) Skipped() []string { return append([]string(nil), src.skipped...) }

// Filled is the number of gap hours filled by the fill policy.
func (src *TraceSource) Filled() int { return src.filled }

// ValueAge is the real age of zone's value for the hour containing t: 0 for
// a measured hour; for an hour the fill policy filled (previous or linear),
// the time since the last measured hour before it — a filled value is as
// old as the data it was made from, so a long gap goes stale as live data
// would (the controller adds it to the data age it checks against the
// staleness bound). It is 0 for unknown zones and hours outside the zone's
// series.
func (src *TraceSource) ValueAge(zone string, t time.Time) time.Duration {
	s, ok := src.series[zone]
	if !ok || s.filled == nil || t.Before(s.start) {
		return 0
	}
	i := int(t.Sub(s.start) / time.Hour)
	if i >= len(s.filled) {
		return 0
	}
	return time.Duration(s.filled[i]) * time.Hour
}
