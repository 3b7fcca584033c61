package micro

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time consumed by the calling OS thread (the caller
// locks its goroutine to the thread), so benchmarks on a shared machine
// measure work done rather than time spent waiting for a core.
func threadCPU() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
