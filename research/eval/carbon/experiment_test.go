package carbon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func synthetic(t testing.TB) (regions.CarbonSource, regions.Period) {
	t.Helper()
	syn, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	jan, _ := regions.ParseMonth("2022-01")
	return syn, jan
}

// full is the paper-sized experiment on the offline model (seed 1,
// sampled latency model), run once and shared by the tests that need it.
var full struct {
	once  sync.Once
	res   *Result
	calls int
	err   error
}

func fullSynthetic(t *testing.T) (*Result, int) {
	t.Helper()
	full.once.Do(func() {
		syn, err := regions.NewSynthetic(1, regions.DefaultSyntheticPeriod())
		if err != nil {
			full.err = err
			return
		}
		jan, _ := regions.ParseMonth("2022-01")
		full.res, full.err = Run(context.Background(), Config{Source: syn, Period: jan, Seed: 1, LatencyModel: LatencySampled,
			Progress: func(done, total int) {
				full.calls++
				if done > total {
					full.err = fmt.Errorf("progress %d/%d", done, total)
				}
			}})
	})
	if full.err != nil {
		t.Fatal(full.err)
	}
	return full.res, full.calls
}

// TestFullExperimentSynthetic runs the paper-sized experiment (30 runs ×
// 1000 / 5000 requests, both pools) on the offline model and checks the
// invariants of every row.
func TestFullExperimentSynthetic(t *testing.T) {
	res, calls := fullSynthetic(t)
	if want := 2 * 6 * len(regions.Policies()); len(res.Rows) != want {
		t.Fatalf("%d rows, want %d", len(res.Rows), want)
	}
	if calls != 2*6*30 {
		t.Errorf("progress called %d times", calls)
	}
	if !strings.Contains(res.CarbonSource, "synthetic model (seed 1), not measured data") {
		t.Errorf("source %q", res.CarbonSource)
	}
	for _, r := range res.Rows {
		var sum float64
		for _, v := range r.RouteShare {
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 || len(r.RunSavingPct) != 30 {
			t.Errorf("%d %s %s: route shares sum to %v, %d run savings", r.Pool, r.Policy, r.Class, sum, len(r.RunSavingPct))
		}
		// The sampled mean agrees with the exact expectation within 3 standard errors.
		if r.ExactMean != nil && (r.ExactWithin3SE == nil || !*r.ExactWithin3SE) {
			t.Errorf("%d %s %s: mean %.2f vs exact %.2f (SE %.2f)", r.Pool, r.Policy, r.Class, r.Mean, *r.ExactMean, r.StdErr)
		}
		if (r.ExactMean == nil) != (r.Policy == "C+warm" || r.Policy == "C-cap") {
			t.Errorf("%s: exact mean presence wrong", r.Policy)
		}
		if r.Policy == "A" && (r.PValueVsA != nil || r.SavingPct != 0) {
			t.Errorf("A row %+v", r)
		}
		switch r.Policy {
		case "C", "C+", "C+warm", "C-cap":
			if r.ViolationPct != 0 {
				t.Errorf("%d %s %s violates %.2f %%", r.Pool, r.Policy, r.Class, r.ViolationPct)
			}
			if r.SavingPct < -1e-9 {
				t.Errorf("%d %s %s: negative saving %.2f", r.Pool, r.Policy, r.Class, r.SavingPct)
			}
		}
	}
	// Eq. 4 as written: nothing is feasible at 500 ms, so C+ falls back to A.
	for _, pool := range []int{5, 12} {
		row, _ := res.Find(pool, "C+", "500")
		if row.FallbackPct != 100 || math.Abs(row.SavingPct) > 1e-9 {
			t.Errorf("pool %d C+ at 500 ms: fallback %.1f %% saving %.2f %%", pool, row.FallbackPct, row.SavingPct)
		}
	}
	// C at 300 ms is A (only Mumbai fits): identical samples, p = 1.
	if row, _ := res.Find(5, "C", "300"); row.PValueVsA == nil || *row.PValueVsA != 1 {
		t.Errorf("C at 300 ms p-value %v", row.PValueVsA)
	}
	// Policy C at 3000 ms sees every region: equal to B.
	b, _ := res.Find(12, "B", "3000")
	c, _ := res.Find(12, "C", "3000")
	if b.Mean != c.Mean {
		t.Errorf("C %v != B %v at 3000 ms", c.Mean, b.Mean)
	}
	if len(res.Scaling) != 6 || res.DecisionTime.Samples != 2*30*5000 || res.DecisionTime.P99ns <= 0 {
		t.Errorf("scaling %v decision time %+v", res.Scaling, res.DecisionTime)
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Table 3 analogue — 5-region pool", "Table 4 analogue", "Scaling 5 → 12", "PAPER", "synthetic model (seed 1), not measured data"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q", want)
		}
	}
}

// TestJSONInterface pins the documented JSON field names.
func TestJSONInterface(t *testing.T) {
	src, jan := synthetic(t)
	res, err := Run(context.Background(), Config{Source: src, Period: jan, Runs: 3, Requests: 50, MixedRequests: 100, Pools: []int{5}, LatencyModel: LatencySampled})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CarbonSource string                   `json:"carbon_source"`
		Rows         []map[string]interface{} `json:"rows"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.CarbonSource == "" || len(doc.Rows) != 6*len(regions.Policies()) {
		t.Fatalf("doc %s", b[:200])
	}
	for _, key := range []string{"pool", "policy", "sla_ms", "mean_gco2_per_kwh", "std_gco2_per_kwh", "exact_mean_gco2_per_kwh",
		"saving_pct", "violation_pct", "p_value_vs_A", "route_share", "sampled_violation_pct"} {
		if _, ok := doc.Rows[0][key]; !ok {
			t.Errorf("row lacks %q", key)
		}
	}
	mixed, _ := res.Find(5, "C", "mixed")
	if mixed.SLAms != 0 || mixed.SampledViolationPct == nil || *mixed.SampledViolationPct <= 0 || *mixed.SampledViolationPct > 5 {
		t.Errorf("mixed C: sla %v sampled violations %v (P95 filtering leaves at most 5 %%)", mixed.SLAms, mixed.SampledViolationPct)
	}
}

func TestConfigErrors(t *testing.T) {
	src, jan := synthetic(t)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Period: jan}, "no carbon source"},
		{Config{Source: src, Period: jan, Mix: []float64{1}}, "mix shares"},
		{Config{Source: src, Period: jan, Mix: []float64{0.5, 0.5, 0.5, 0, 0}}, "sum to"},
		{Config{Source: src, Period: jan, Runs: 1}, "runs >= 2"},
		{Config{Source: src, Period: jan, CapShare: 2}, "cap share"},
		{Config{Source: src, Period: jan, LatencyModel: "gaussian"}, "latency model"},
		{Config{Source: src, Period: jan, Pools: []int{40}}, "pool size"},
		{Config{Source: src, Period: regions.Period{From: jan.From.AddDate(2, 0, 0), To: jan.To.AddDate(2, 0, 0)}}, "outside the data"},
		{Config{Source: src, Period: jan, Runs: MaxRuns + 1}, "at most 10000 runs"},
		{Config{Source: src, Period: jan, Requests: MaxRequests + 1}, "2000000 requests per run"},
		{Config{Source: src, Period: jan, MixedRequests: MaxRequests + 1}, "2000000 requests per run"},
		{Config{Source: src, Period: regions.Period{From: jan.From, To: jan.From.Add((MaxPeriodHours + 1) * time.Hour)}}, "at most 87840"},
	}
	for _, c := range cases {
		if _, err := Run(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Config{Source: src, Period: jan}); err == nil {
		t.Error("cancelled context ignored")
	}
}

// TestDecisionTimesCapped: the policy-C decision times kept do not grow
// past MaxTimingSamples with runs × mixed requests (they were the memory
// that grew with the product).
func TestDecisionTimesCapped(t *testing.T) {
	if testing.Short() {
		t.Skip("1.2 M decisions")
	}
	src, jan := synthetic(t)
	res, err := Run(context.Background(), Config{Source: src, Period: jan, Runs: 2, Requests: 1, MixedRequests: MaxTimingSamples * 6 / 10, Pools: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.DecisionTime; d.Samples != MaxTimingSamples || !strings.Contains(d.Method, "the first 1000000 decisions") {
		t.Errorf("%d samples, method %q; want %d, capped", d.Samples, d.Method, MaxTimingSamples)
	}
}

func TestWritePlots(t *testing.T) {
	src, jan := synthetic(t)
	res, err := Run(context.Background(), Config{Source: src, Period: jan, Runs: 3, Requests: 50, MixedRequests: 100})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plots")
	files, err := WritePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2*(3*2+1) {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".png":
			if !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Errorf("%s is not a PNG", f)
			}
		case ".svg":
			if !bytes.Contains(b[:min(len(b), 400)], []byte("<svg")) || !bytes.Contains(b, []byte("not measured data")) {
				t.Errorf("%s is not an SVG naming its carbon source", f)
			}
		}
	}
}

// TestSharedDataJanuary2022 runs the experiment on the real traces when
// they are present.
func TestSharedDataJanuary2022(t *testing.T) {
	dir, ok := regions.FindSharedCarbonData(".")
	if !ok {
		t.Skip("shared carbon data not found (set " + regions.SharedDataEnv + ")")
	}
	src, err := regions.LoadTraces(dir, regions.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jan, _ := regions.ParseMonth("2022-01")
	res, err := Run(context.Background(), Config{Source: src, Period: jan, Runs: 4, Requests: 300, MixedRequests: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.CarbonSource, "measured hourly traces 2022 from "+dir+" (normalized CSV; 12 zones") {
		t.Errorf("source %q", res.CarbonSource)
	}
	a, _ := res.Find(5, "A", "mixed")
	if a.ExactMean == nil || math.Abs(*a.ExactMean-645.3) > 0.1 {
		t.Errorf("A (IN-WE) exact Jan-2022 mean %v, PROVENANCE.md says 645.3", a.ExactMean)
	}
}

func BenchmarkEvalCarbon(b *testing.B) {
	src, jan := synthetic(b)
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), Config{Source: src, Period: jan, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPaperArithmetic: the paper's Tables 3 and 4 give its own mixed
// saving (27.4 % by the request counts), a Singapore level of ≈363 g and
// ≈55.7 % for 12 regions.
func TestPaperArithmetic(t *testing.T) {
	got := PaperArithmetics()
	want := []float64{27.37, 27.27, 363.42, 55.69, 55.93}
	if len(got) != len(want) {
		t.Fatalf("%d rows", len(got))
	}
	for i, w := range want {
		if math.Abs(got[i].Value-w) > 0.01 {
			t.Errorf("%s (%s): %.3f, want %.2f", got[i].Figure, got[i].Arithmetic, got[i].Value, w)
		}
	}
	if fmt.Sprintf("%.1f", got[0].Value) != "27.4" {
		t.Errorf("Table 3 × Table 4 counts = %.3f, not the paper's 27.4", got[0].Value)
	}
}
