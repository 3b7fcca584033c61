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
}

// catalog is the fixed region list. Order is the index: never reorder, only
// append (indices are written into switch tables and request headers). The
// first five are the paper's 5-region pool. Zones follow
// shared/data/carbon/PROVENANCE.md's mapping table.
var catalog = [...]Region{
	{0, "ap-south-1", "Mumbai", "Asia", "IN-WE"},
	{1, "ap-southeast-1", "Singapore", "Asia", "SG"},
	{2, "ap-southeast-2", "Sydney", "Oceania", "AU-NSW"},
	{3, "eu-west-1", "Ireland", "Europe", "IE"},
	{4, "us-east-1", "N. Virginia", "North America", "US-MIDA-PJM"},
	{5, "eu-north-1", "Stockholm", "Europe", "SE-SE3"},
	{6, "ap-northeast-2", "Seoul", "Asia", "KR"},
	{7, "af-south-1", "Cape Town", "Africa", "ZA"},
	{8, "eu-central-1", "Frankfurt", "Europe", "DE"},
	{9, "sa-east-1", "São Paulo", "South America", "BR-CS"},
	{10, "ap-northeast-1", "Tokyo", "Asia", "JP-TK"},
	{11, "us-west-2", "Oregon", "North America", "US-NW-BPAT"},
}

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

// Pool12 is the paper's 12-region pool: the whole catalog (indices 0..11).
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
