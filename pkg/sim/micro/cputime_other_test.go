//go:build !linux

package micro

import "time"

// threadCPU is unavailable here; benchmarks fall back to wall time.
func threadCPU() (time.Duration, bool) { return 0, false }
