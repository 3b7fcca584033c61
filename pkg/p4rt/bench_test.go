package p4rt_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// BenchmarkWrite measures batched writes into the embedded target through
// the P4Runtime server over bufconn: each iteration INSERTs then DELETEs
// 10 000 l3_forward entries (LPM /32) twice — once with Client.Write
// (batching, error decoding) and once with a bare loop of raw
// P4RuntimeClient.Write calls carrying the same pre-built batches — and
// reports entries/s for both and their ratio (client/raw; 1 = no overhead).
// The goal for the embedded target is >= 50 k entries/s. CPU-time figures
// are reported too: wall time on a shared machine measures the neighbours.
func BenchmarkWrite(b *testing.B) {
	const n = 10000
	for _, target := range []string{"engine", "switch"} {
		for _, batch := range []int{100, p4rt.DefaultBatchSize, 2000} {
			b.Run(fmt.Sprintf("target=%s/batch=%d", target, batch), func(b *testing.B) {
				var opts []p4rttest.Option
				if target == "switch" {
					sw, err := dataplane.New(dataplane.Options{})
					if err != nil {
						b.Fatal(err)
					}
					opts = append(opts, p4rttest.WithTarget(sw))
				}
				opts = append(opts, p4rttest.WithClientOptions(p4rt.WithBatchSize(batch)))
				c, _ := p4rttest.New(b, opts...)
				ctx := context.Background()
				idx, err := c.Index(ctx)
				if err != nil {
					b.Fatal(err)
				}
				entries := make([]*p4v1.TableEntry, n)
				for i := range entries {
					e, err := idx.TableEntry("l3_forward").LPM("dst_addr", uint32(0x0a000000+i), 32).
						Action("forward", p4rt.Param("port", i%500)).Build()
					if err != nil {
						b.Fatal(err)
					}
					entries[i] = e
				}
				inserts := p4rt.Updates(p4v1.Update_INSERT, entries...)
				deletes := p4rt.Updates(p4v1.Update_DELETE, entries...)
				rawIns, rawDel := c.WriteRequests(inserts), c.WriteRequests(deletes)
				rpc := c.RPC()
				var rawTime, clientTime, rawCPU, clientCPU time.Duration
				b.ResetTimer()
				raw := func() {
					start, cpu0 := time.Now(), cpuTime()
					for _, reqs := range [][]*p4v1.WriteRequest{rawIns, rawDel} {
						for _, r := range reqs {
							if _, err := rpc.Write(ctx, r); err != nil {
								b.Fatal(err)
							}
						}
					}
					rawTime += time.Since(start)
					rawCPU += cpuTime() - cpu0
				}
				client := func() {
					start, cpu0 := time.Now(), cpuTime()
					if err := c.Write(ctx, inserts); err != nil {
						b.Fatal(err)
					}
					if err := c.Write(ctx, deletes); err != nil {
						b.Fatal(err)
					}
					clientTime += time.Since(start)
					clientCPU += cpuTime() - cpu0
				}
				for i := range b.N {
					if i%2 == 0 { // alternate the order so neither side always runs first
						raw()
						client()
					} else {
						client()
						raw()
					}
				}
				total := float64(2 * n * b.N)
				b.ReportMetric(total/clientTime.Seconds(), "client-entries/s")
				b.ReportMetric(total/rawTime.Seconds(), "raw-entries/s")
				b.ReportMetric(rawTime.Seconds()/clientTime.Seconds(), "client/raw")
				// CPU time (client, server and target share the process) is
				// steadier than wall time on a shared machine.
				b.ReportMetric(total/clientCPU.Seconds(), "client-entries/cpu-s")
				b.ReportMetric(rawCPU.Seconds()/clientCPU.Seconds(), "client/raw-cpu")
			})
		}
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
