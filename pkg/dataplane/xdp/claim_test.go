package xdp_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/internal/testing/casesuite"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// hammer sends n requests for region 1 through sw from one goroutine per
// CPU, each pinned to its CPU, and returns how many were bound and nacked.
func hammer(t *testing.T, sw *dataplane.Switch, n, cpus int) (bound, nacked int) {
	t.Helper()
	frame := pc.Bytes(pc.Request(pc.Client(1), 0, 100, 0))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, cpus)
	for c := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var set unix.CPUSet
			set.Set(c)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				errs <- fmt.Errorf("pin to CPU %d: %w", c, err)
				return
			}
			buf := make([]byte, len(frame))
			b, k := 0, 0
			for i := c; i < n; i += cpus {
				copy(buf, frame)
				binary.BigEndian.PutUint32(buf[14+20+8+12:], uint32(i)) // request id
				switch res := sw.Process(buf, 1); res.Verdict {
				case program.Forwarded:
					b++
				case program.Nacked:
					k++
				default:
					errs <- fmt.Errorf("request %d: %s (%s)", i, res.Verdict, res.Reason)
					return
				}
			}
			mu.Lock()
			bound, nacked = bound+b, nacked+k
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return bound, nacked
}

// claimRig is one server (id 0) in local region 1, with the given pool.
func claimRig(t *testing.T, pool pc.Pool) (*dataplane.Switch, *xdp.Datapath) {
	var dp *xdp.Datapath
	sw := newSwitch(t, nil, func(d *xdp.Datapath) { dp = d })
	entries := []pc.Entry{
		pc.ClientSite(pc.IPv4(10, 0, 1, 0), 24, 1), pc.Feasibility(1, 0, 0xFFFF, 1<<1, 1),
		pc.CarbonRank(0, 1, 0), pc.LocalRegion(1, 0), pool.Entry(1), pc.L3Route(pc.IPv4(10, 0, 1, 0), 24, 1),
	}
	casesuite.Install(t, sw, append(entries, pc.Serves(0, pc.Server(0))...))
	return sw, dp
}

// retries logs how often the claims' compare-and-swaps collided.
func retries(t *testing.T, dp *xdp.Datapath) {
	st, err := dp.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compare-and-swap retries %d, given up %d", st["cas_retries"], st["cas_exhausted"])
	if st["cas_exhausted"] != 0 {
		t.Errorf("%d atomic steps gave up", st["cas_exhausted"])
	}
}

func claims(t *testing.T) int {
	if testing.Short() {
		return 100_000
	}
	return 1_000_000
}

// Two CPUs claim one server's credit at once, a million times: every
// claim is one compare-and-swap, so none is lost.
func TestConcurrentClaimsLoseNothing(t *testing.T) {
	cpus := min(runtime.NumCPU(), 4)
	if cpus < 2 {
		t.Skip("needs at least 2 CPUs")
	}
	sw, dp := claimRig(t, pc.Pool{Policy: pipeline.PolicyRandom}) // unbounded: every request binds
	n := claims(t)
	bound, nacked := hammer(t, sw, n, cpus)
	out, err := sw.RegisterValue(pipeline.RegisterServerCredit(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	pk, _, err := sw.CounterValue(pipeline.CounterServerBound, 0)
	if err != nil {
		t.Fatal(err)
	}
	region, err := sw.RegisterValue(pipeline.RegisterRegionOutstanding, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests from %d CPUs: %d bound, %d nacked; credit outstanding %d, server_bound %d, region outstanding %d",
		n, cpus, bound, nacked, uint32(out), pk, region)
	if bound != n || uint32(out) != uint32(n) || pk != uint64(n) || region != uint64(n) {
		t.Fatalf("lost increments: %d requests, %d bound, outstanding %d, server_bound %d, region %d", n, bound, uint32(out), pk, region)
	}
	retries(t, dp)
}

// With a bound, concurrent claims take exactly bound slots and refuse the
// rest: the credit never passes its bound.
func TestConcurrentClaimsHoldTheBound(t *testing.T) {
	cpus := min(runtime.NumCPU(), 4)
	if cpus < 2 {
		t.Skip("needs at least 2 CPUs")
	}
	n := claims(t) / 5
	const bound = 10_000
	sw, dp := claimRig(t, pc.Pool{Policy: pipeline.PolicyRandom, Bound: bound, OnFull: pipeline.OnFullNack})
	got, nacked := hammer(t, sw, n, cpus)
	out, err := sw.RegisterValue(pipeline.RegisterServerCredit(0), 0)
	if err != nil {
		t.Fatal(err)
	}
	region, err := sw.RegisterValue(pipeline.RegisterRegionOutstanding, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests from %d CPUs, bound %d: %d bound, %d nacked; outstanding %d, region outstanding %d",
		n, cpus, bound, got, nacked, uint32(out), region)
	if got != bound || nacked != n-bound || uint32(out) != bound || region != bound {
		t.Fatalf("bound %d: %d bound, %d nacked, outstanding %d, region %d", bound, got, nacked, uint32(out), region)
	}
	retries(t, dp)
}
