package fleet

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/figcheck"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/research/configgen"
)

// A small fleet through two replayed days with one switch down: every
// reachable switch ends exactly in the final plan, the replay did not wait
// for the unreachable one (every hour went on without it, and the run
// took far less than waiting out its connection backoff would), and the lag metric
// names it and only it; nothing keeps running afterwards.
func TestFleetWithOneSwitchDown(t *testing.T) {
	cfg, err := config.Load("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const switches, hours = 8, 48
	before := runtime.NumGoroutine()
	t0 := time.Now()
	res, err := Run(ctx, Options{Config: cfg, Switches: switches, Unreachable: 1, Hours: hours, SampleEvery: 8})
	if err != nil {
		t.Fatal(err)
	}
	// A replay that waited for the switch that is down at every hour
	// would wait out its reconnection backoff (100 ms doubling to 5 s,
	// p4rt.DefaultBackoff) 48 times: minutes.
	if took := time.Since(t0); took > 30*time.Second {
		t.Errorf("the run took %v: the replay waited for the unreachable switch", took)
	}
	// Nothing is left running: the unreachable switch's client is closed
	// too (it would keep redialling the dead port).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("%d goroutines after the run, %d before: something was not stopped", n, before)
	}
	if res.Clean != switches || len(res.Dirty) > 0 {
		t.Fatalf("clean %d of %d: %v", res.Clean, switches, res.Dirty)
	}
	if len(res.UpdateMs) != hours || res.TicksWithUnreachable != hours {
		t.Errorf("%d updates, %d of them without the unreachable switch; want %d", len(res.UpdateMs), res.TicksWithUnreachable, hours)
	}
	if len(res.Lag) != 1 || res.Lag["down-000"] < hours-1 {
		t.Errorf("lag %v, want down-000 alone, ≥ %d h", res.Lag, hours-1)
	}
	if res.UpdateP99 <= 0 || res.HoursPerSec <= 0 || len(res.Samples) < hours/8 || res.Entries == 0 {
		t.Errorf("result %+v", res)
	}
	dir := t.TempDir()
	files, err := WritePlots(res, dir)
	if err != nil || len(files) != 4 {
		t.Fatalf("plots %v, %v; want memory and update CDF, PNG and SVG", files, err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
		// Issue 27 item 19: a short title; the fleet, the machine and the
		// date in the caption (figure.Caption), whole in the SVG's <desc>.
		if filepath.Ext(f) == ".svg" {
			svg, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fleet := fmt.Sprintf("%d embedded switches (loopback P4Runtime) + %d unreachable", res.Switches, res.Unreachable)
			if pr := figcheck.SVGProblem(svg, fleet, res.Machine, res.Date.Format("2006-01-02")); pr != "" {
				t.Errorf("%s: %s", filepath.Base(f), pr)
			}
		}
	}
}

// The RSS trend is the least-squares slope after warm-up: flat memory
// with noise is ~0, a leak is its rate, and the bounds are those samples'.
func TestRSSTrend(t *testing.T) {
	cases := []struct {
		name      string
		rss       []float64 // one sample per 100 hours from hour 0
		from      int
		slope     float64 // MB per 1000 h
		lo, hi    float64
		tolerance float64
	}{
		{"flat with noise", []float64{50, 260, 250, 262, 251, 259, 252, 261, 250, 260}, 100, 0, 250, 262, 6},
		{"leak of 1 MB per 100 h", []float64{50, 200, 201, 202, 203, 204, 205}, 100, 10, 200, 205, 1e-9},
		{"warm-up excluded", []float64{10, 20, 30, 100, 100, 100}, 300, 0, 100, 100, 1e-9},
		{"one sample", []float64{42}, 0, 0, 42, 42, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var samples []Sample
			for i, v := range c.rss {
				samples = append(samples, Sample{Hour: 100 * i, RSSMB: v})
			}
			tr := rssTrend(samples, c.from)
			slope, lo, hi := tr.slope, tr.lo, tr.hi
			if math.Abs(slope-c.slope) > c.tolerance || lo != c.lo || hi != c.hi {
				t.Errorf("trend %.3f MB/1000 h in %v..%v, want %.3f±%v in %v..%v", slope, lo, hi, c.slope, c.tolerance, c.lo, c.hi)
			}
		})
	}
}

// With the configuration's targets, each switch holds only its own sites
// (targets[].sites) and ends in its own final state.
func TestFleetTargetSites(t *testing.T) {
	cfg, _, err := configgen.Generate(configgen.Options{Sites: 60, Regions: 12, Switches: 4, Partition: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	whole, err := Run(ctx, Options{Config: cfg, Switches: 2, Hours: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, Options{Config: cfg, Switches: 4, Hours: 3, TargetSites: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clean != 4 || len(res.Dirty) > 0 {
		t.Fatalf("clean %d of 4: %v", res.Clean, res.Dirty)
	}
	if res.Entries == 0 || res.Entries >= whole.Entries {
		t.Errorf("the largest switch holds %d entries, every site takes %d: want fewer", res.Entries, whole.Entries)
	}
	if _, err := Run(ctx, Options{Config: cfg, Switches: 5, Hours: 1, TargetSites: true}); err == nil {
		t.Error("5 switches from 4 targets: accepted")
	}
}

// Issue 27 item 16: fleet's summary added an unreachable switch without
// saying why, rounded a sub-second run to "0 s", and extrapolated a memory
// trend from 24 hours of GC sawtooth. It says what the unreachable target
// is, keeps two decimals under 10 s, and reports a trend (with R²) only
// over enough hours.
func TestFleetSummaryHonest(t *testing.T) {
	sawtooth := func(hours, every int) []Sample {
		var s []Sample
		for h := 0; h <= hours; h += every {
			s = append(s, Sample{Hour: h, RSSMB: 100 + float64(h%7)})
		}
		return s
	}
	day := rssTrend(sawtooth(24, 1), 3)
	year := rssTrend(sawtooth(8760, 88), 876)
	if day.enough() || !year.enough() {
		t.Fatalf("trend reported over a day %v, over a year %v", day.enough(), year.enough())
	}
	short := &Result{Switches: 3, Unreachable: 1, Hours: 24, Seconds: 0.43, HoursPerSec: 55, Samples: sawtooth(24, 1)}
	var b strings.Builder
	if err := short.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0.43 s", "1 deliberately unreachable target", "--unreachable 0 for none", "no trend"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "MB per 1000 h") {
		t.Errorf("a day's run reports a trend per 1000 h:\n%s", b.String())
	}
	long := &Result{Switches: 3, Hours: 8760, Seconds: 240, Samples: sawtooth(8760, 88), RSSTrend: true, RSSSlopeMBPer1000h: 0.01, RSSTrendR2: 0.02}
	b.Reset()
	if err := long.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "trend +0.01 MB per 1000 h, R² 0.02") || strings.Contains(b.String(), "unreachable") {
		t.Errorf("a year's summary:\n%s", b.String())
	}
}
