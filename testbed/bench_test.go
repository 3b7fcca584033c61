package testbed_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/fnserver"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// BenchmarkRoundTrip measures one request/reply round trip through the
// loopback testbed (fabric → embedded switch → serve → switch → fabric)
// against the same request sent straight to the same server, alternating
// the two in one run. It reports both times and their ratio: the cost of
// the emulated network and the software switch per round trip.
func BenchmarkRoundTrip(b *testing.B) {
	r := newRig(b, fnserver.Dist{}, nil) // no execution time: only the path is measured
	// Server 0 directly, as the baseline.
	direct := r.servers[0].Addr()
	svc, err := r.fab.ServiceAddr("cmumbai")
	if err != nil {
		b.Fatal(err)
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2048)
	roundTrip := func(to netip.AddrPort, id uint32) time.Duration {
		start := time.Now()
		h := wire.NewRequest(id, 300, 0) // mumbai, 300 ms: ap-south-1 (servers 0 and 1)
		if _, err := c.WriteToUDPAddrPort(h.Marshal(), to); err != nil {
			b.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			n, _, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				b.Fatal(err)
			}
			if got, err := wire.Decode(buf[:n]); err == nil && got.RequestID == id {
				return time.Since(start)
			}
		}
	}
	var viaSwitch, straight time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		straight += roundTrip(direct, uint32(2*i))
		viaSwitch += roundTrip(svc, uint32(2*i+1))
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(viaSwitch.Nanoseconds())/n, "ns/switched-rt")
	b.ReportMetric(float64(straight.Nanoseconds())/n, "ns/direct-rt")
	b.ReportMetric(float64(viaSwitch)/float64(straight), "switched/direct")
}
