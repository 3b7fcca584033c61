package cputime

import (
	"runtime"
	"testing"
)

func TestCPUTimeAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0, ok1 := Process()
	t0, ok2 := Thread()
	if !ok1 || !ok2 {
		t.Skip("CPU time not available on " + runtime.GOOS)
	}
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i ^ (x >> 3)
	}
	p1, _ := Process()
	t1, _ := Thread()
	if p1 <= p0 || t1 <= t0 {
		t.Fatalf("CPU time did not advance: process %v→%v thread %v→%v (x=%d)", p0, p1, t0, t1, x)
	}
}
