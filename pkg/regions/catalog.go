// Package regions holds the inputs and the decision of SLA-constrained,
// carbon-aware region selection: the region catalog (with stable small
// integer indices), client sites and their latency profiles, grid
// carbon-intensity sources (normalized CSV, Electricity Maps portal CSV, an
// offline synthetic model) and the routing policies A, B, C, C+, D, C+warm and
// C-cap as pure functions.
//
// Building blocks for the compiler (pkg/compiler) and the switch model:
//
//   - [Catalog], [Index], [RegionSet]: regions and feasibility bitmaps over
//     region indices 0..31 (bit i = catalog region i).
//   - [Site], [Mumbai], [LoadSites]: per-region P95 and cold latency.
//   - [CarbonSource], [CarbonTable], [HourCarbon]: intensity of a zone at time
//     t and the dense per-hour snapshot the decisions read.
//   - [Candidates], [Feasible], [Nearest], [Rank]: feasibility bitmap, fallback
//     region and carbon ranking, i.e. exactly the contents of the switch's
//     sla_feasibility and carbon_rank tables; [Decide] and [DecideC] are the
//     decisions the switch must reproduce.
//
// Nothing here does network I/O; file loaders report errors as file:line.
package regions

import (
	"fmt"
	"math/bits"
	"strings"
)

// MaxRegions is the width of a RegionSet (and of the switch's feasibility
// bitmap, pipeline.MaxRegions): region indices are 0..31.
const MaxRegions = 32

// Index is a region's stable small integer index: its position in Catalog.
// It is the bit position in feasibility bitmaps and the region id the switch
// writes into the request header.
type Index uint8

// NoRegion is returned where no region can be chosen (an empty pool).
const NoRegion Index = 0xFF

// Region is one cloud region of the catalog.
type Region struct {
	Index     Index  `json:"index"`
	ID        string `json:"id"`        // AWS region id, e.g. "ap-south-1"
	City      string `json:"city"`      // e.g. "Mumbai"
	Continent string `json:"continent"` // e.g. "Asia"
	Zone      string `json:"zone"`      // Electricity Maps zone id, e.g. "IN-WE"
	// Lat and Lon locate the region's city (degrees, WGS 84, ±0.1°: the
	// city centre, not a data centre): the geography generated sites'
	// latencies are derived from (research/geo).
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// catalog is the fixed region list. Order is the index: never reorder, only
// append (indices are written into switch tables and request headers). The
// first five are the paper's 5-region pool, the first twelve its 12-region
// pool; their zones follow shared/data/carbon/PROVENANCE.md's mapping table
// and have measured hourly traces there (MeasuredRegions). Indices 12..31
// (issue 14) are further AWS regions with the Electricity Maps zone of
// their grid; no traces are shared for them, so their offline carbon is the
// proxy model (ProxyParams), labelled as such in every output that uses it.
var catalog = [...]Region{
	{0, "ap-south-1", "Mumbai", "Asia", "IN-WE", 19.08, 72.88},
	{1, "ap-southeast-1", "Singapore", "Asia", "SG", 1.35, 103.82},
	{2, "ap-southeast-2", "Sydney", "Oceania", "AU-NSW", -33.87, 151.21},
	{3, "eu-west-1", "Ireland", "Europe", "IE", 53.35, -6.26},
	{4, "us-east-1", "N. Virginia", "North America", "US-MIDA-PJM", 39.04, -77.49},
	{5, "eu-north-1", "Stockholm", "Europe", "SE-SE3", 59.33, 18.07},
	{6, "ap-northeast-2", "Seoul", "Asia", "KR", 37.57, 126.98},
	{7, "af-south-1", "Cape Town", "Africa", "ZA", -33.92, 18.42},
	{8, "eu-central-1", "Frankfurt", "Europe", "DE", 50.11, 8.68},
	{9, "sa-east-1", "São Paulo", "South America", "BR-CS", -23.55, -46.63},
	{10, "ap-northeast-1", "Tokyo", "Asia", "JP-TK", 35.68, 139.69},
	{11, "us-west-2", "Oregon", "North America", "US-NW-BPAT", 45.84, -119.70},
	{12, "us-west-1", "N. California", "North America", "US-CAL-CISO", 37.34, -121.89},
	{13, "ca-central-1", "Montreal", "North America", "CA-QC", 45.50, -73.57},
	{14, "eu-west-2", "London", "Europe", "GB", 51.51, -0.13},
	{15, "eu-west-3", "Paris", "Europe", "FR", 48.86, 2.35},
	{16, "eu-south-1", "Milan", "Europe", "IT-NO", 45.46, 9.19},
	{17, "eu-south-2", "Aragón", "Europe", "ES", 41.65, -0.89},
	{18, "eu-central-2", "Zurich", "Europe", "CH", 47.38, 8.54},
	{19, "me-south-1", "Bahrain", "Asia", "BH", 26.07, 50.56},
	{20, "me-central-1", "UAE", "Asia", "AE", 25.20, 55.27},
	{21, "il-central-1", "Tel Aviv", "Asia", "IL", 32.09, 34.78},
	{22, "ap-east-1", "Hong Kong", "Asia", "HK", 22.32, 114.17},
	{23, "ap-south-2", "Hyderabad", "Asia", "IN-SO", 17.39, 78.49},
	{24, "ap-southeast-3", "Jakarta", "Asia", "ID", -6.21, 106.85},
	{25, "ap-southeast-4", "Melbourne", "Oceania", "AU-VIC", -37.81, 144.96},
	{26, "ap-northeast-3", "Osaka", "Asia", "JP-KN", 34.69, 135.50},
	{27, "ca-west-1", "Calgary", "North America", "CA-AB", 51.05, -114.07},
	{28, "mx-central-1", "Querétaro", "North America", "MX", 20.59, -100.39},
	{29, "ap-southeast-5", "Malaysia", "Asia", "MY-WM", 3.14, 101.69},
	{30, "ap-southeast-7", "Thailand", "Asia", "TH", 13.76, 100.50},
	{31, "ap-east-2", "Taipei", "Asia", "TW", 25.03, 121.57},
}

// MeasuredRegions is how many catalog regions (indices 0..MeasuredRegions−1,
// the paper's twelve) have measured hourly carbon traces in the shared data
// and synthetic-model parameters derived from them (SyntheticParams); the
// others use the proxy model (ProxyParams).
const MeasuredRegions = 12

// NumRegions is the number of regions in the catalog.
const NumRegions = len(catalog)

// Catalog returns the region catalog in index order (a fresh copy).
func Catalog() []Region {
	out := make([]Region, NumRegions)
	copy(out, catalog[:])
	return out
}

// RegionAt returns the catalog region with index i.
func RegionAt(i Index) (Region, bool) {
	if int(i) >= NumRegions {
		return Region{}, false
	}
	return catalog[i], true
}

// LookupRegion finds a region by AWS id ("eu-west-1"), city
// (case-insensitive, "Ireland") or zone ("IE").
func LookupRegion(name string) (Region, bool) {
	for _, r := range catalog {
		if r.ID == name || strings.EqualFold(r.City, name) || r.Zone == name {
			return r, true
		}
	}
	return Region{}, false
}

// Zones returns the grid zone of every catalog region, in index order.
func Zones() []string {
	z := make([]string, NumRegions)
	for i, r := range catalog {
		z[i] = r.Zone
	}
	return z
}

// RegionSet is a set of region indices as a bitmap: bit i set = region i in
// the set. It is the switch's feasibility bitmap (pipeline.WidthBitmap bits).
type RegionSet uint32

// SetOf returns the set holding the given indices.
func SetOf(idx ...Index) RegionSet {
	var s RegionSet
	for _, i := range idx {
		s = s.Add(i)
	}
	return s
}

// Pool5 is the paper's 5-region pool: Mumbai, Singapore, Sydney, Ireland,
// N. Virginia (indices 0..4).
const Pool5 RegionSet = 1<<5 - 1

// Pool12 is the paper's 12-region pool: indices 0..11 (the catalog held
// exactly these until issue 14).
const Pool12 RegionSet = 1<<12 - 1

// PoolOf returns the first n catalog regions (5 → Pool5, 12 → Pool12).
func PoolOf(n int) (RegionSet, error) {
	if n < 1 || n > NumRegions {
		return 0, fmt.Errorf("pool size %d: want 1..%d", n, NumRegions)
	}
	return RegionSet(uint64(1)<<n - 1), nil
}

// Has reports whether i is in the set.
func (s RegionSet) Has(i Index) bool { return i < MaxRegions && s&(1<<i) != 0 }

// Add returns the set with i added (indices ≥ 32 are ignored).
func (s RegionSet) Add(i Index) RegionSet {
	if i >= MaxRegions {
		return s
	}
	return s | 1<<i
}

// Len is the number of regions in the set.
func (s RegionSet) Len() int { return bits.OnesCount32(uint32(s)) }

// Indices lists the set's indices in increasing order.
func (s RegionSet) Indices() []Index {
	out := make([]Index, 0, s.Len())
	for v := uint32(s); v != 0; v &= v - 1 {
		out = append(out, Index(bits.TrailingZeros32(v)))
	}
	return out
}

// String renders the set as region ids, e.g. "{ap-south-1,eu-west-1}".
func (s RegionSet) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for n, i := range s.Indices() {
		if n > 0 {
			b.WriteByte(',')
		}
		if r, ok := RegionAt(i); ok {
			b.WriteString(r.ID)
		} else {
			fmt.Fprintf(&b, "#%d", i)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func trailingZeros(v uint32) int { return bits.TrailingZeros32(v) }
