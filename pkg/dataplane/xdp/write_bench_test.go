package xdp_test

import (
	"context"
	"net"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"golang.org/x/sys/unix"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/internal/xdpbench"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// resyncEntries is the benchmark plan (12 regions, 1 000 sites, 1 024
// servers: 7 205 entries) and 2 795 /32 routes: 10 000 entries, what a
// controller writes to a switch that restarted empty.
func resyncEntries() []pc.Entry {
	es := xdpbench.Plan(true)
	for i := 0; len(es) < 10_000; i++ {
		es = append(es, pc.L3Route(pc.IPv4(12, byte(i>>16), byte(i>>8), byte(i)), 32, 1))
	}
	return es
}

// processCPU is this process's user + system time: what a write costs,
// whatever else the machine runs meanwhile.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkResync writes 10 000 entries, in WriteRequests of 1 000 as the
// controller batches them, to an empty switch: the Go model's engine alone,
// then the XDP datapath, which follows every write into its maps. The
// ratio (Go model CPU time over XDP CPU time: the XDP target's write
// throughput per CPU relative to the embedded target's) is measured in
// the same run; CPU time, not wall time, so that other work on the machine
// does not skew it.
func BenchmarkResync(b *testing.B) {
	entries := resyncEntries()
	write := func(b *testing.B, sw *dataplane.Switch) time.Duration {
		ups, err := pc.Updates(sw.P4Info(), entries)
		if err != nil {
			b.Fatal(err)
		}
		start := processCPU(b)
		for i := 0; i < len(ups); i += 1000 {
			for _, err := range sw.Write(context.Background(), ups[i:min(i+1000, len(ups))], p4v1.WriteRequest_CONTINUE_ON_ERROR) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		return processCPU(b) - start
	}
	reset := func(b *testing.B, sw *dataplane.Switch) {
		cfg := &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}
		if err := sw.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, cfg); err != nil {
			b.Fatal(err)
		}
	}
	model, err := dataplane.New(dataplane.Options{})
	if err != nil {
		b.Fatal(err)
	}
	prog := newSwitch(b, nil)
	var goTime, xdpTime time.Duration
	n := 0
	for b.Loop() {
		reset(b, model)
		reset(b, prog)
		goTime += write(b, model)
		xdpTime += write(b, prog)
		n++
	}
	b.ReportMetric(float64(len(entries)*n)/goTime.Seconds(), "go-entries/cpu-s")
	b.ReportMetric(float64(len(entries)*n)/xdpTime.Seconds(), "xdp-entries/cpu-s")
	b.ReportMetric(goTime.Seconds()/xdpTime.Seconds(), "xdp/go")
	b.ReportMetric(float64(xdpTime.Milliseconds())/float64(n), "xdp-cpu-ms/resync")
}

// serve puts sw behind a P4Runtime server on loopback and returns a
// primary client, closed at b's cleanup.
func serve(b *testing.B, sw *dataplane.Switch) *p4rt.Client {
	b.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := p4rtserver.New(sw, p4rtserver.WithDeviceID(1))
	go srv.Serve(lis)
	b.Cleanup(srv.Stop)
	c, err := p4rt.Dial(lis.Addr().String(), p4rt.WithDeviceID(1), p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Arbitrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkResyncP4Runtime is BenchmarkResync over P4Runtime, as the
// controller resyncs a switch: a client on loopback writes the 10 000
// entries (the client's own batching) to the embedded target, then to the
// XDP target, each behind the same server, after a pipeline reset; the
// process's CPU time (client and server) per resync, and the wall time.
func BenchmarkResyncP4Runtime(b *testing.B) {
	entries := resyncEntries()
	model, err := dataplane.New(dataplane.Options{})
	if err != nil {
		b.Fatal(err)
	}
	prog := newSwitch(b, nil)
	cm, cx := serve(b, model), serve(b, prog)
	ups, err := pc.Updates(dataplane.DefaultP4Info(), entries)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}
	resync := func(c *p4rt.Client) (cpu, wall time.Duration) {
		ctx := context.Background()
		if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, cfg); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), processCPU(b)
		if err := c.Write(ctx, ups); err != nil {
			b.Fatal(err)
		}
		return processCPU(b) - cpu0, time.Since(start)
	}
	var goCPU, xdpCPU, xdpWall time.Duration
	n := 0
	for b.Loop() {
		c, _ := resync(cm)
		goCPU += c
		c, w := resync(cx)
		xdpCPU += c
		xdpWall += w
		n++
	}
	b.ReportMetric(float64(len(entries)*n)/goCPU.Seconds(), "go-entries/cpu-s")
	b.ReportMetric(float64(len(entries)*n)/xdpCPU.Seconds(), "xdp-entries/cpu-s")
	b.ReportMetric(goCPU.Seconds()/xdpCPU.Seconds(), "xdp/go")
	b.ReportMetric(float64(xdpWall.Milliseconds())/float64(n), "xdp-ms/resync")
}
