package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
)

// demoResult is a 4-hour run whose latency-drift episode ran after hour 2
// and nacked 225 requests, the hourly traffic none.
func demoResult() *Result {
	r := &Result{Policy: "C", Start: time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), CarbonSource: "synthetic model"}
	r.Totals.Routed = map[string]int{"ap-south-1": 40}
	r.Totals.Predicted = map[string]int{"ap-south-1": 40}
	r.Totals.CountersMatch = true
	for h := range 4 {
		hr := Hour{Hour: r.Start.Add(time.Duration(h) * time.Hour), MeanIntensity: 300, BaselineIntensity: 600}
		hr.Requests, hr.Routed = 10, map[string]int{"ap-south-1": 10}
		r.Hours = append(r.Hours, hr)
	}
	r.Drift = &DriftReport{AfterHour: 2, Requests: 900, Nacks: 225, OK: true}
	r.Totals.Nacks, r.Totals.DriftNacks = 225, 225
	return r
}

// Issue 27 item 18: the totals said "0 nacks" while the drift line said
// "225 nacked": the nacks are one count, in the totals, which say how many
// fell in the episode; the drift line no longer counts them apart.
func TestTotalsCountEpisodeNacksOnce(t *testing.T) {
	r := demoResult()
	var b bytes.Buffer
	if err := WriteTotals(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "225 nacks (225 of them during the latency-drift episode") {
		t.Errorf("totals:\n%s", b.String())
	}
	b.Reset()
	if err := WriteDrift(&b, r.Drift, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "nack") {
		t.Errorf("the drift line counts nacks apart from the totals:\n%s", b.String())
	}
}

// Issue 27 item 18: both demo plots mark the latency-drift episode: a
// vertical line between the hours it ran between, named in the legend
// (checked in the SVG's text, not its pixels).
func TestPlotsMarkDriftEpisode(t *testing.T) {
	dir := t.TempDir()
	if _, err := WritePlots(demoResult(), dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo_carbon.svg", "demo_routed.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), driftLabel+" (between hours 1 and 2)") {
			t.Errorf("%s: no legend entry for the latency-drift episode", name)
		}
	}
}

// Issue 27 item 19: the titles carried the carbon source, file paths
// included. Both plots' titles are at most two lines and name no file;
// the carbon source is their caption, whole in the SVG's <desc>.
func TestPlotTitlesShort(t *testing.T) {
	r := demoResult()
	r.CarbonSource = "measured hourly traces 2022 from /work/shared/data/carbon (normalized CSV; 12 zones, 2022-01-01T00:00Z/2023-01-01T00:00Z), provenance in /work/shared/data/carbon/PROVENANCE.md"
	r.Signal = "average (lifecycle)"
	dir := t.TempDir()
	if _, err := WritePlots(r, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo_carbon.svg", "demo_routed.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if pr := figcheck.SVGProblem(svg, r.CarbonSource, "signal: "+r.Signal); pr != "" {
			t.Errorf("%s: %s", name, pr)
		}
	}
}
