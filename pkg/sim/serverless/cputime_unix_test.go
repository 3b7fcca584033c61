//go:build unix

package serverless

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) consumed by this process so far;
// benchmarks divide work by it so that a machine shared with other jobs does
// not distort the per-core rate.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
