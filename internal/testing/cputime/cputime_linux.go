package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

func rusage(who int) (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

func process() (time.Duration, bool) { return rusage(unix.RUSAGE_SELF) }
func thread() (time.Duration, bool)  { return rusage(unix.RUSAGE_THREAD) }
