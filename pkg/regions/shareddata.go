package regions

import (
	"os"
	"path/filepath"
)

// SharedDataEnv names the environment variable that points at the shared
// carbon data directory (real hourly Electricity Maps traces that are never
// part of this repository).
const SharedDataEnv = "P4CTL_CARBON_DATA"

// FindSharedCarbonData locates the shared carbon data directory for tests,
// benchmarks and the parameter generator: $P4CTL_CARBON_DATA if set, else the
// first `shared/data/carbon` found in start or one of its ancestors (the
// shared folder sits beside the repository's checkout). It returns "" and
// false when there is none; callers then skip with a reason.
func FindSharedCarbonData(start string) (string, bool) {
	if d := os.Getenv(SharedDataEnv); d != "" {
		if isTraceDir(d) {
			return d, true
		}
		return "", false
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", false
	}
	for {
		cand := filepath.Join(dir, "shared", "data", "carbon")
		if isTraceDir(cand) {
			return cand, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isTraceDir(d string) bool {
	m, _ := filepath.Glob(filepath.Join(d, "*.csv"))
	return len(m) > 0
}
