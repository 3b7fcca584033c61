// Package cputime reads CPU time consumed by this process or by the calling
// OS thread. Benchmarks report work per CPU-second beside wall time because on
// a shared machine wall time mostly measures the other tenants.
package cputime

import "time"

// Process returns the process's user+system CPU time so far, and false where
// the platform cannot tell.
func Process() (time.Duration, bool) { return process() }

// Thread returns the user+system CPU time of the calling OS thread (lock the
// goroutine with runtime.LockOSThread first), and false where the platform
// cannot tell.
func Thread() (time.Duration, bool) { return thread() }

// ProcessTime is Process without the flag: 0 where the platform cannot tell.
func ProcessTime() time.Duration {
	d, _ := Process()
	return d
}
