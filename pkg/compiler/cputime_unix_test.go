//go:build unix

package compiler

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far: benchmarks report
// it per operation beside wall time, which on a shared machine mostly
// measures the other tenants.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
