package regions

import (
	"fmt"
	"math"
	"time"
)

// CarbonSource gives the grid carbon intensity of a zone at a time. All
// implementations are hourly: the value at t is the value of the UTC hour that
// contains t (hours are labelled by their start, as Electricity Maps does).
type CarbonSource interface {
	// Intensity returns gCO2eq/kWh of zone during the hour containing t, or an
	// error when the zone is unknown or t is outside Period.
	Intensity(zone string, t time.Time) (float64, error)
	// Period is the interval every zone of the source covers.
	Period() Period
	// Zones lists the zones the source has, sorted.
	Zones() []string
	// Describe says what the numbers are, for every output that uses them:
	// e.g. "synthetic model (seed 1), not measured data".
	Describe() string
}

// Period is the half-open UTC interval [From, To), whole hours.
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Hours is the number of whole hours in the period.
func (p Period) Hours() int {
	if !p.To.After(p.From) {
		return 0
	}
	return int(p.To.Sub(p.From) / time.Hour)
}

// Contains reports whether t lies in [From, To).
func (p Period) Contains(t time.Time) bool { return !t.Before(p.From) && t.Before(p.To) }

// Within reports whether p lies inside q.
func (p Period) Within(q Period) bool { return !p.From.Before(q.From) && !p.To.After(q.To) }

// String renders the period as "2022-01-01T00:00Z/2022-02-01T00:00Z".
func (p Period) String() string {
	const f = "2006-01-02T15:04Z"
	return p.From.UTC().Format(f) + "/" + p.To.UTC().Format(f)
}

// FirstWholeMonth returns the first calendar month inside p.
func (p Period) FirstWholeMonth() (Period, error) {
	t := time.Date(p.From.Year(), p.From.Month(), 1, 0, 0, 0, 0, time.UTC)
	if t.Before(p.From) {
		t = t.AddDate(0, 1, 0)
	}
	m := Period{From: t, To: t.AddDate(0, 1, 0)}
	if !m.Within(p) {
		return Period{}, fmt.Errorf("the carbon data (%s) holds no whole month: give --from/--to", p)
	}
	return m, nil
}

// FirstWholeYear returns the first calendar year inside p, or p itself
// when it holds none (a shorter trace is evaluated whole).
func (p Period) FirstWholeYear() (Period, error) {
	t := time.Date(p.From.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	if t.Before(p.From) {
		t = t.AddDate(1, 0, 0)
	}
	y := Period{From: t, To: t.AddDate(1, 0, 0)}
	if y.Within(p) {
		return y, nil
	}
	if p.Hours() < 2 {
		return Period{}, fmt.Errorf("the carbon data (%s) is too short to evaluate", p)
	}
	return p, nil
}

// ParseMonth returns the period of a calendar month "YYYY-MM" (UTC).
func ParseMonth(s string) (Period, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return Period{}, fmt.Errorf("period %q: want YYYY-MM", s)
	}
	return Period{From: t, To: t.AddDate(0, 1, 0)}, nil
}

// ParsePeriod parses from/to bounds given as YYYY-MM-DD or RFC 3339 (UTC).
// to is exclusive; a date means its midnight.
func ParsePeriod(from, to string) (Period, error) {
	parse := func(s string) (time.Time, error) {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("time %q: want YYYY-MM-DD or RFC 3339", s)
	}
	f, err := parse(from)
	if err != nil {
		return Period{}, err
	}
	t, err := parse(to)
	if err != nil {
		return Period{}, err
	}
	p := Period{From: f.Truncate(time.Hour), To: t.Truncate(time.Hour)}
	if p.Hours() == 0 {
		return Period{}, fmt.Errorf("period %s: empty (to must be at least one hour after from)", p)
	}
	return p, nil
}

// HourCarbon is one hour's carbon intensity of every region, indexed by
// region Index (gCO2eq/kWh). Entries of regions outside the table's set are
// +Inf, so they are never the cleanest.
type HourCarbon [MaxRegions]float64

// CarbonTable is a dense snapshot of a CarbonSource over a period: one
// HourCarbon per hour. Decisions read it with no lookups or allocation.
type CarbonTable struct {
	period  Period
	source  string
	regions RegionSet
	hours   []HourCarbon
}

// NewCarbonTable samples src for every hour of p and every region of set.
// It fails when a region's zone is missing or p is outside src's period.
func NewCarbonTable(src CarbonSource, set RegionSet, p Period) (*CarbonTable, error) {
	if p.Hours() == 0 {
		return nil, fmt.Errorf("carbon table: empty period %s", p)
	}
	if !p.Within(src.Period()) {
		return nil, fmt.Errorf("carbon table: period %s is outside the data (%s) of %s", p, src.Period(), src.Describe())
	}
	t := &CarbonTable{period: p, source: src.Describe(), regions: set, hours: make([]HourCarbon, p.Hours())}
	for h := range t.hours {
		for i := range t.hours[h] {
			t.hours[h][i] = math.Inf(1)
		}
	}
	for _, r := range set.Indices() {
		reg, ok := RegionAt(r)
		if !ok {
			return nil, fmt.Errorf("carbon table: region index %d not in the catalog", r)
		}
		for h := range t.hours {
			v, err := src.Intensity(reg.Zone, p.From.Add(time.Duration(h)*time.Hour))
			if err != nil {
				return nil, fmt.Errorf("carbon table: region %s: %w", reg.ID, err)
			}
			t.hours[h][r] = v
		}
	}
	return t, nil
}

// Period is the table's period.
func (t *CarbonTable) Period() Period { return t.period }

// Source is the Describe text of the source the table was built from.
func (t *CarbonTable) Source() string { return t.source }

// Regions is the set of regions the table holds values for.
func (t *CarbonTable) Regions() RegionSet { return t.regions }

// Hours is the number of hours in the table.
func (t *CarbonTable) Hours() int { return len(t.hours) }

// Hour returns hour h (0 = Period().From). It panics if h is out of range,
// like a slice index: callers iterate 0..Hours()-1.
func (t *CarbonTable) Hour(h int) *HourCarbon { return &t.hours[h] }

// HourIndex maps a time to its hour index, false if outside the period.
func (t *CarbonTable) HourIndex(ts time.Time) (int, bool) {
	if !t.period.Contains(ts) {
		return 0, false
	}
	return int(ts.Sub(t.period.From) / time.Hour), true
}

// At returns the snapshot of the hour containing ts.
func (t *CarbonTable) At(ts time.Time) (*HourCarbon, error) {
	h, ok := t.HourIndex(ts)
	if !ok {
		return nil, fmt.Errorf("carbon table: %s outside %s", ts.UTC().Format(time.RFC3339), t.period)
	}
	return &t.hours[h], nil
}

// Mean returns the mean intensity of region r over the table's hours.
func (t *CarbonTable) Mean(r Index) float64 {
	var s float64
	for h := range t.hours {
		s += t.hours[h][r]
	}
	return s / float64(len(t.hours))
}
