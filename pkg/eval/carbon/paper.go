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
			"ap-southeast-1": "470–500",
			"eu-west-1":      "250–330",
			"us-east-1":      "350–400",
			"eu-north-1":     "≈15",
		},
	}
}
