package regions

import (
	"os"
	"testing"
)

func writeFile(p, data string) error { return os.WriteFile(p, []byte(data), 0o644) }

// sharedData returns the shared carbon data directory or skips the test.
func sharedData(t testing.TB) string {
	t.Helper()
	d, ok := FindSharedCarbonData(".")
	if !ok {
		t.Skip("shared carbon data not found (set " + SharedDataEnv + " or place shared/data/carbon beside the repository)")
	}
	return d
}
