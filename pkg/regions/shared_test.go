package regions

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// These tests read the real hourly traces (never part of the repository)
// when they are present, and skip otherwise.

func TestSharedTraces2022(t *testing.T) {
	dir := sharedData(t)
	src, err := LoadTraces(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Zones()) != MeasuredRegions {
		t.Fatalf("zones %v, want the %d measured catalog zones", src.Zones(), MeasuredRegions)
	}
	if p := src.Period(); p.Hours() != 8760 || p.From.Year() != 2022 {
		t.Fatalf("period %s", p)
	}
	jan, _ := ParseMonth("2022-01")
	tab, err := NewCarbonTable(src, Pool12, jan)
	if err != nil {
		t.Fatal(err)
	}
	// January 2022 means as tabulated in PROVENANCE.md's sanity check: our
	// loader must read the same numbers.
	for zone, want := range map[string]float64{"IN-WE": 645.3, "IE": 392.9, "SE-SE3": 27.1, "US-NW-BPAT": 82.4} {
		r, _ := LookupRegion(zone)
		if got := tab.Mean(r.Index); math.Abs(got-want) > 0.06 {
			t.Errorf("Jan-2022 mean %s = %.2f, PROVENANCE.md says %.1f", zone, got, want)
		}
	}
	if _, err := LoadTraces(filepath.Join(dir, "em2024"), LoadOptions{}); err != nil {
		t.Errorf("em2024: %v", err)
	}
}

// TestSyntheticParamsMatchData re-derives the committed synthetic-model
// parameters from the shared data and requires synthetic_params.go to be
// exactly what the generator prints.
func TestSyntheticParamsMatchData(t *testing.T) {
	dir := sharedData(t)
	src, err := LoadTraces(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yearly, err := ReadYearlyAverages(filepath.Join(dir, "em_yearly_averages.csv"), SyntheticParamsYear)
	if err != nil {
		t.Fatal(err)
	}
	params, err := DeriveSyntheticParams(src, SyntheticParamsYear, yearly)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSyntheticParamsGo(&b, params, SyntheticParamsYear); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("synthetic_params.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), committed) {
		t.Fatalf("synthetic_params.go is stale: regenerate with\n  go run ./pkg/regions/internal/gensynth -data %s > pkg/regions/synthetic_params.go", dir)
	}
}

// TestSyntheticResemblesData checks the model against the data it was
// derived from: each zone's January mean within three standard deviations
// of a month mean under the model's own AR(1) day-to-day noise (plus 1 %).
func TestSyntheticResemblesData(t *testing.T) {
	dir := sharedData(t)
	src, err := LoadTraces(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jan, _ := ParseMonth("2022-01")
	real, err := NewCarbonTable(src, Pool12, jan)
	if err != nil {
		t.Fatal(err)
	}
	syn, err := NewSynthetic(1, DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	model, err := NewCarbonTable(syn, Pool12, jan)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]ZoneParams{}
	for _, zp := range SyntheticParams() {
		params[zp.Zone] = zp
	}
	for _, r := range Pool12.Indices() {
		reg, _ := RegionAt(r)
		zp := params[reg.Zone]
		sd := zp.DailySigma * math.Sqrt((1+zp.DailyPhi)/((1-zp.DailyPhi)*31))
		a, b := real.Mean(r), model.Mean(r)
		if math.Abs(a-b)/a > 3*sd+0.01 {
			t.Errorf("%s Jan mean: data %.1f, model %.1f (bound %.1f %%)", reg.Zone, a, b, 100*(3*sd+0.01))
		}
	}
}
