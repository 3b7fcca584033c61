package demo_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/examples"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/demo"
)

// The demo in a quick mode: 6 hours × 600 requests, unpaced. The routed
// requests read back from the switch must equal pkg/regions' decisions for
// the same requests, hour by hour, with zero SLA violations, and the plots
// must be written.
func TestDemoQuick(t *testing.T) {
	cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var lines []string
	res, err := demo.Run(ctx, demo.Options{Config: cfg, ConfigName: examples.MumbaiName, Hours: 6, RequestsPerHour: 600,
		OnHour: func(h demo.Hour) { lines = append(lines, demo.HourLine(h)) }})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := demo.WritePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Log("\n" + buf.String())
	}
	if len(res.Hours) != 6 || len(lines) != 6 || res.Totals.Requests != 3600 {
		t.Fatalf("hours %d, lines %d, requests %d", len(res.Hours), len(lines), res.Totals.Requests)
	}
	if !res.Totals.CountersMatch || res.Totals.HeaderMismatches != 0 {
		t.Fatalf("switch and policy disagree: %+v", res.Totals)
	}
	if res.Totals.SLAViolations != 0 {
		t.Errorf("%d SLA violations", res.Totals.SLAViolations)
	}
	if res.Totals.SavingPct <= 0 {
		t.Errorf("saving %.1f%%: policy C should beat the nearest region on the offline model", res.Totals.SavingPct)
	}
	if !strings.Contains(res.CarbonSource, "synthetic") {
		t.Errorf("carbon source %q not stated as synthetic", res.CarbonSource)
	}
	if res.Hours[0].Writes == 0 {
		t.Error("first hour wrote nothing")
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	if len(files) != 4 || filepath.Ext(files[0]) != ".png" {
		t.Errorf("plots %v", files)
	}
}

// Issue 27: a demo ended by Ctrl-C printed totals over the hours it ran
// with "saving 0.0%" and "wall time: 0.0s" (both were computed only at the
// end) and no word that they were partial. They are the hours' totals now,
// and the report says after how many of the hours asked for it stopped.
func TestDemoInterruptedTotals(t *testing.T) {
	cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := demo.Run(ctx, demo.Options{Config: cfg, ConfigName: examples.MumbaiName, Hours: 24, RequestsPerHour: 200, Speed: 3600 * 10,
		OnHour: func(h demo.Hour) {
			if h.Hour.Hour() == 2 {
				cancel()
			}
		}})
	if err == nil || res == nil || len(res.Hours) != 3 {
		t.Fatalf("interrupted after hour 2: err %v, result %v", err, res != nil)
	}
	if res.Totals.SavingPct <= 0 || res.WallSeconds <= 0 || res.Interrupted != "after 3 of 24 hours" {
		t.Errorf("totals of an interrupted run: saving %.1f%%, wall %.3fs, interrupted %q", res.Totals.SavingPct, res.WallSeconds, res.Interrupted)
	}
	var b bytes.Buffer
	if err := demo.WriteTotals(&b, res); err != nil || !strings.Contains(b.String(), "interrupted after 3 of 24 hours: the totals below cover the hours above only") {
		t.Errorf("totals do not say they are partial (%v):\n%s", err, b.String())
	}
}

// The closed latency loop (issue 12 item 5): mid-run a pair that carries an
// SLA class slows past the class's budget; the switch's latency probes
// measure it, the controller stops routing the class there within a second
// of the measured P95 crossing the budget, routes nothing over budget once
// the estimator has converged, and takes the class back after recovery.
func TestDemoDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time episode (~15 s); skipped with -short")
	}
	cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := demo.Run(ctx, demo.Options{Config: cfg, ConfigName: examples.MumbaiName, Hours: 2, RequestsPerHour: 200,
		Drift: &demo.DriftOptions{}})
	var buf bytes.Buffer
	if res != nil && res.Drift != nil {
		_ = demo.WriteDrift(&buf, res.Drift, true)
	}
	t.Log("\n" + buf.String())
	if err != nil {
		t.Fatal(err)
	}
	d := res.Drift
	if d == nil || !d.OK {
		t.Fatalf("drift episode: %+v", d)
	}
	if d.CrossAtS < d.DriftAtS || d.ReturnAtS < d.RecoverAtS || d.SamplesToCross == 0 || d.PushWrites == 0 {
		t.Errorf("moments out of order or empty: %+v", d)
	}
	if !res.Totals.CountersMatch {
		t.Errorf("hours after the episode disagree with the policy: %+v", res.Totals)
	}
}
