package carbon

// PaperFigures are the reference paper's reported numbers, as quoted in
// this project's design brief (shared/DESIGN.md §6), issue 2 and
// shared/data/carbon/PROVENANCE.md. They are printed beside our computed
// figures, always labelled as the paper's, and never used in computation.
type PaperFigures struct {
	Data              string            `json:"data"`
	AMeanGCO2         float64           `json:"a_mean_gco2_per_kwh"`     // policy A (always Mumbai) mean
	MaxSavingPct      float64           `json:"max_saving_pct"`          // C vs A, best SLA class, 5 regions
	MixedSaving5Pct   float64           `json:"mixed_saving_pool5_pct"`  // C vs A, mixed workload, 5 regions
	MixedSaving12Pct  float64           `json:"mixed_saving_pool12_pct"` // C vs A, mixed workload, 12 regions
	CPlusSaving500Pct float64           `json:"cplus_saving_500ms_pct"`  // C+ vs A at 500 ms, 5 regions
	ViolationPct      float64           `json:"violation_pct"`           // SLA violations of C
	DecisionP99ms     float64           `json:"decision_p99_ms"`         // the paper's router
	ZoneJan2025       map[string]string `json:"zone_jan2025"`            // per-region levels, region id → text
}

// Paper returns the paper's figures.
func Paper() PaperFigures {
	return PaperFigures{
		Data:              "Electricity Maps hourly data, January 2025 (not publicly available; see PROVENANCE.md)",
		AMeanGCO2:         485.9,
		MaxSavingPct:      46.8,
		MixedSaving5Pct:   27.4,
		MixedSaving12Pct:  47.5,
		CPlusSaving500Pct: 23.4,
		ViolationPct:      0,
		DecisionP99ms:     0.036,
		ZoneJan2025: map[string]string{
			"ap-south-1":     "≈486 (implied by A's mean)",
			"ap-southeast-1": "≈363–368 (implied by its Table 3 500-ms cell, PaperArithmetic)",
			"eu-west-1":      "250–330",
			"us-east-1":      "350–400",
			"eu-north-1":     "≈15",
		},
	}
}

// paperTable3 is the paper's Table 3 for policy C (5 regions, §5.2): per
// SLA class, A's and C's mean (gCO2/kWh) and C's saving (%).
var paperTable3 = []struct {
	SLA            int
	A, C, SavingPc float64
}{
	{300, 485.9, 485.9, 0.0}, {500, 486.3, 368.2, 24.1}, {800, 485.9, 339.1, 30.3}, {1000, 485.9, 260.2, 46.5}, {3000, 485.5, 258.3, 46.8},
}

// paperTable4 is the paper's Table 4 (§5.5): each class's traffic share
// (%) and request count in the 5 000-request mixed run.
var paperTable4 = []struct {
	SLA      int
	SharePc  float64
	Requests int
}{
	{300, 20, 990}, {500, 30, 1497}, {800, 20, 1006}, {1000, 20, 1005}, {3000, 10, 503},
}

// Paper constants the arithmetic needs: Table 4's share of the 500-ms
// class routed to Singapore, and §5.8's approximate Stockholm level.
const (
	paperSingapore500Share = 0.961
	paperStockholmGCO2     = 15
)

// PaperArithmetic is one of the paper's figures recomputed from its own
// tables: the figure, what the paper reports, how it is recomputed and
// the result. Nothing here is measured; it checks the paper against
// itself.
type PaperArithmetic struct {
	Figure     string  `json:"figure"`
	Reported   string  `json:"reported"`
	Arithmetic string  `json:"arithmetic"`
	Value      float64 `json:"value"`
}

// PaperArithmetics recomputes the paper's mixed-workload savings and its
// Singapore level from its Tables 3 and 4 (and §5.8's Stockholm level).
func PaperArithmetics() []PaperArithmetic {
	var byCount, byShare, n float64
	for i, c := range paperTable3 {
		t := paperTable4[i]
		byCount += float64(t.Requests) * c.SavingPc
		byShare += t.SharePc / 100 * c.SavingPc
		n += float64(t.Requests)
	}
	sgp := (paperTable3[1].C - (1-paperSingapore500Share)*paperTable3[0].A) / paperSingapore500Share
	// 12 regions: Stockholm (P95 780 ms) serves the 800, 1000 and 3000 ms
	// classes; the 300 and 500 ms classes keep their 5-region regions.
	var s12Share, s12Count float64
	for i, c := range paperTable3 {
		t := paperTable4[i]
		sav := c.SavingPc
		if c.SLA >= 800 {
			sav = 100 * (1 - paperStockholmGCO2/c.A)
		}
		s12Share += t.SharePc / 100 * sav
		s12Count += float64(t.Requests) * sav
	}
	return []PaperArithmetic{
		{"C saving, mixed, 5 regions", "27.4 %", "Table 3's class savings weighted by Table 4's request counts", byCount / n},
		{"C saving, mixed, 5 regions", "27.4 %", "Table 3's class savings weighted by the 20/30/20/20/10 % mix", byShare},
		{"Singapore level (gCO2/kWh)", "not reported", "Table 3's 500-ms C mean with 96.1 % at Singapore (Table 4), the rest at Mumbai (A's 485.9)", sgp},
		{"C saving, mixed, 12 regions", "47.5 %", "Stockholm (≈15 g, §5.8, P95 780 ms) for the 800–3000 ms classes, Table 3 for the rest, by the mix", s12Share},
		{"C saving, mixed, 12 regions", "47.5 %", "the same, by Table 4's request counts", s12Count / n},
	}
}
