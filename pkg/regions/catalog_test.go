package regions

import (
	"testing"
)

func TestCatalogStableIndices(t *testing.T) {
	// Indices are written into switch tables and headers: they must never move.
	// 0..11 are the paper's twelve; 12..31 were appended by issue 14.
	want := []string{"ap-south-1", "ap-southeast-1", "ap-southeast-2", "eu-west-1", "us-east-1",
		"eu-north-1", "ap-northeast-2", "af-south-1", "eu-central-1", "sa-east-1", "ap-northeast-1", "us-west-2",
		"us-west-1", "ca-central-1", "eu-west-2", "eu-west-3", "eu-south-1", "eu-south-2", "eu-central-2",
		"me-south-1", "me-central-1", "il-central-1", "ap-east-1", "ap-south-2", "ap-southeast-3",
		"ap-southeast-4", "ap-northeast-3", "ca-west-1", "mx-central-1", "ap-southeast-5", "ap-southeast-7", "ap-east-2"}
	if len(want) != MaxRegions {
		t.Fatalf("the catalog fills the %d-bit bitmap: want %d ids listed", MaxRegions, MaxRegions)
	}
	cat := Catalog()
	if len(cat) != len(want) || NumRegions != len(want) {
		t.Fatalf("catalog has %d regions, want %d", len(cat), len(want))
	}
	zones := map[string]bool{}
	for i, r := range cat {
		if r.ID != want[i] || int(r.Index) != i {
			t.Errorf("catalog[%d] = %s (index %d), want %s", i, r.ID, r.Index, want[i])
		}
		if zones[r.Zone] || r.Zone == "" || r.City == "" || r.Continent == "" {
			t.Errorf("region %s: bad or duplicate zone/city/continent %+v", r.ID, r)
		}
		zones[r.Zone] = true
		if r.Lat == 0 || r.Lat < -90 || r.Lat > 90 || r.Lon < -180 || r.Lon > 180 {
			t.Errorf("region %s: coordinates %v, %v", r.ID, r.Lat, r.Lon)
		}
	}
	cat[0].ID = "mutated"
	if Catalog()[0].ID != "ap-south-1" {
		t.Error("Catalog returned shared storage")
	}
}

func TestLookupRegion(t *testing.T) {
	for _, name := range []string{"eu-west-1", "ireland", "IE"} {
		r, ok := LookupRegion(name)
		if !ok || r.Index != 3 {
			t.Errorf("LookupRegion(%q) = %+v, %v", name, r, ok)
		}
	}
	if _, ok := LookupRegion("mars-1"); ok {
		t.Error("unknown region found")
	}
	if _, ok := RegionAt(Index(NumRegions)); ok {
		t.Errorf("RegionAt(%d) found", NumRegions)
	}
}

func TestRegionSet(t *testing.T) {
	s := SetOf(0, 3, 11)
	if !s.Has(3) || s.Has(2) || s.Len() != 3 || s.Has(40) {
		t.Fatalf("set %b", s)
	}
	if got := s.String(); got != "{ap-south-1,eu-west-1,us-west-2}" {
		t.Errorf("String = %s", got)
	}
	if Pool5.Len() != 5 || Pool12.Len() != 12 || Pool5&^Pool12 != 0 {
		t.Errorf("pools %b %b", Pool5, Pool12)
	}
	if p, err := PoolOf(5); err != nil || p != Pool5 {
		t.Errorf("PoolOf(5) = %b, %v", p, err)
	}
	if _, err := PoolOf(0); err == nil {
		t.Error("PoolOf(0) accepted")
	}
	if s.Add(200) != s {
		t.Error("Add out of range changed the set")
	}
	idx := s.Indices()
	if len(idx) != 3 || idx[0] != 0 || idx[1] != 3 || idx[2] != 11 {
		t.Errorf("Indices = %v", idx)
	}
}
