package loadgen

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/golden"
	"github.com/p4ctl/p4ctl/pkg/fnserver"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

func TestParseMix(t *testing.T) {
	m, err := ParseMix[uint16]("300:20, 500:30,800:20,1000:20,3000:10", 16)
	if err != nil {
		t.Fatal(err)
	}
	if m.String() != DefaultSLAMix().String() {
		t.Errorf("parsed %v, want %v", m, DefaultSLAMix())
	}
	if back, err := ParseMix[uint16](m.String(), 16); err != nil || back.String() != m.String() {
		t.Errorf("round trip %v: %v %v", m, back, err)
	}
	if m, err := ParseMix[uint8]("2", 8); err != nil || len(m) != 1 || m[0].Value != 2 || m[0].Weight != 1 {
		t.Errorf("bare value: %v %v", m, err)
	}
	for _, in := range []string{"", "300:x", "300:-1", "70000:1", "300:0", "300:1,300:2", "a:1", "300:NaN"} {
		if m, err := ParseMix[uint16](in, 16); err == nil {
			t.Errorf("ParseMix(%q) = %v, want an error", in, m)
		}
	}
	if _, err := ParseMix[uint8]("256:1", 8); err == nil {
		t.Error("exec class 256 accepted")
	}
}

func TestSamplerShares(t *testing.T) {
	s := newSampler(Mix[uint16]{{Value: 1, Weight: 2}, {Value: 2, Weight: 0}, {Value: 3, Weight: 6}})
	r := rand.New(rand.NewPCG(3, 4))
	n := map[uint16]int{}
	for range 40000 {
		n[s.draw(r)]++
	}
	if n[2] != 0 || math.Abs(float64(n[1])/40000-0.25) > 0.01 || math.Abs(float64(n[3])/40000-0.75) > 0.01 {
		t.Errorf("draws %v, want 25 %% / 0 / 75 %%", n)
	}
}

// Inter-arrival gaps have mean 1/rate and the configured CV.
func TestArrivals(t *testing.T) {
	for _, cv := range []float64{0, 0.5, 1, 2.5} {
		a := newArrivals(200, cv, rand.New(rand.NewPCG(5, 6)))
		const n = 60000
		var sum, sq float64
		for range n {
			g := a.next().Seconds()
			if g < 0 {
				t.Fatalf("negative gap")
			}
			sum += g
			sq += g * g
		}
		mean := sum / n
		got := math.Sqrt(math.Max(sq/n-mean*mean, 0)) / mean
		if math.Abs(mean-0.005) > 0.0002 {
			t.Errorf("cv %v: mean gap %.5f s, want 0.005", cv, mean)
		}
		if math.Abs(got-cv) > 0.05*math.Max(cv, 0.2) {
			t.Errorf("cv %v: measured CV %.3f", cv, got)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Target: netip.MustParseAddrPort("127.0.0.1:9800"), Rate: 100, Duration: time.Second, CV: 1}
	ok.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	cases := map[string]func(*Config){
		"rate 0":        func(c *Config) { c.Rate = 0 },
		"rate too high": func(c *Config) { c.Rate = MaxRate * 2 },
		"rate NaN":      func(c *Config) { c.Rate = math.NaN() },
		"duration 0":    func(c *Config) { c.Duration = 0 },
		"duration 2h":   func(c *Config) { c.Duration = 2 * time.Hour },
		"too many":      func(c *Config) { c.Rate, c.Duration = 1000, 3000*time.Second },
		"cv negative":   func(c *Config) { c.CV = -1 },
		"cv huge":       func(c *Config) { c.CV = 50 },
		"no target":     func(c *Config) { c.Target = netip.AddrPort{} },
		"port 0":        func(c *Config) { c.Target = netip.MustParseAddrPort("127.0.0.1:0") },
		"timeout":       func(c *Config) { c.Timeout = time.Hour },
		"payload":       func(c *Config) { c.Payload = 9000 },
		"scale":         func(c *Config) { c.SLAScale = -1 },
		"empty sla mix": func(c *Config) { c.SLAMix = Mix[uint16]{} },
		"zero exec mix": func(c *Config) { c.ExecMix = Mix[uint8]{{Value: 1, Weight: 0}} },
	}
	for name, edit := range cases {
		c := ok
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// responder is a fake switch+server: it answers requests by id (…8: never,
// …9: nack, else a reply whose region is SLA/100 and server the exec class),
// and also sends one garbage datagram and one duplicate reply.
func responder(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { c.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		first := true
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			h, err := wire.Decode(buf[:n])
			if err != nil {
				continue
			}
			h.Site, h.Region = 7, uint8(h.SLAms/100)
			switch h.RequestID % 10 {
			case 8:
				continue
			case 9:
				h.Type = wire.MsgNack
			default:
				h.Flags = wire.FlagHeld
				h = h.Reply(uint16(h.ExecClass))
			}
			out := h.Marshal()
			if h.Type == wire.MsgReply && h.RequestID%2 == 0 {
				// Even ids get a timing record: exec = id µs, delay 3 ms.
				out = fnserver.Timing{Exec: time.Duration(h.RequestID) * time.Microsecond, Drawn: time.Microsecond, Delay: 3 * time.Millisecond}.Append(out)
			}
			_, _ = c.WriteToUDPAddrPort(out, from)
			if first {
				first = false
				_, _ = c.WriteToUDPAddrPort([]byte("junk"), from)
				_, _ = c.WriteToUDPAddrPort(h.Marshal(), from)
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

func TestRun(t *testing.T) {
	target := responder(t)
	var progress []Progress
	var pmu sync.Mutex
	res, err := Run(context.Background(), Config{Target: target, Rate: 500, Duration: 600 * time.Millisecond, CV: 1,
		Timeout: 300 * time.Millisecond, Seed: 9, FirstID: 1000,
		SLAMix:  Mix[uint16]{{Value: 300, Weight: 1}, {Value: 1000, Weight: 1}},
		ExecMix: Mix[uint8]{{Value: 0, Weight: 1}, {Value: 2, Weight: 1}},
		Progress: func(p Progress) {
			pmu.Lock()
			progress = append(progress, p)
			pmu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Records)
	if n < 150 || n > 500 {
		t.Fatalf("%d requests in 0.6 s at 500/s", n)
	}
	for i, r := range res.Records {
		if r.ID != 1000+uint32(i) {
			t.Fatalf("record %d has id %d", i, r.ID)
		}
		want := OK
		switch r.ID % 10 {
		case 8:
			want = Timeout
		case 9:
			want = Nack
		}
		if r.Outcome != want {
			t.Fatalf("request %d: outcome %v, want %v", r.ID, r.Outcome, want)
		}
		if want == Timeout {
			if r.SLAMet || r.Server != wire.NoServer {
				t.Errorf("timed-out request %+v", r)
			}
			continue
		}
		if r.Site != 7 || r.Region != uint8(r.SLAms/100) || r.RTT <= 0 || r.RTT > time.Second {
			t.Errorf("request %+v: decisions not recorded", r)
		}
		if want == OK && (r.Server != uint16(r.ExecClass) || r.Flags != wire.FlagHeld || !r.SLAMet) {
			t.Errorf("reply %+v", r)
		}
		if want == Nack && r.SLAMet {
			t.Errorf("a nack met its SLA: %+v", r)
		}
		// The server's timing record, only where the reply had one.
		timed := want == OK && r.ID%2 == 0
		if r.Timed != timed || (timed && (r.ServerExec != time.Duration(r.ID)*time.Microsecond || r.ServerDrawn != time.Microsecond || r.ServerDelay != 3*time.Millisecond)) ||
			(!timed && (r.ServerExec != 0 || r.ServerDelay != 0)) {
			t.Errorf("request %d: timed %v exec %v delay %v; want timed %v", r.ID, r.Timed, r.ServerExec, r.ServerDelay, timed)
		}
	}
	s := res.Summary()
	if s.Sent != n || s.Replied+s.Nacked+s.TimedOut != n || s.Malformed != 1 || s.Unmatched != 1 ||
		s.StartedAt.IsZero() || time.Since(s.StartedAt) > time.Minute {
		t.Errorf("summary %+v", s)
	}
	if s.SLAMet != s.Replied || s.Share(3)+s.Share(10) != 100 || s.Flags["held"] != s.Replied {
		t.Errorf("summary accounting: met %d of %d replied, shares %v, flags %v", s.SLAMet, s.Replied, s.Regions, s.Flags)
	}
	pmu.Lock()
	defer pmu.Unlock()
	if len(progress) < 3 || progress[len(progress)-1].Done != n {
		t.Errorf("progress reports %v", progress)
	}
}

// Cancelling stops sending promptly.
func TestRunInterrupted(t *testing.T) {
	target := responder(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, Config{Target: target, Rate: 100, Duration: time.Minute, CV: 0, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || time.Since(start) > 5*time.Second || len(res.Records) > 40 {
		t.Errorf("interrupted %v after %v with %d records", res.Interrupted, time.Since(start), len(res.Records))
	}
}

// Issue 27: an interrupted run waited up to 2 s for replies that never
// come (a target that does not answer), past the second p4ctl gives a
// command after Ctrl-C; it returns within a second, its requests timed out.
func TestRunInterruptedSilentTarget(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // bound, never read: every request stays unanswered
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	time.AfterFunc(200*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	res, err := Run(ctx, Config{Target: c.LocalAddr().(*net.UDPAddr).AddrPort(), Rate: 200, Duration: time.Minute, CV: 0, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("interrupted run returned %v after the interrupt: want within a second", d)
	}
	if !res.Interrupted || len(res.Records) == 0 || res.Summary().TimedOut != len(res.Records) {
		t.Errorf("interrupted %v, %d records, summary %+v: want every request timed out", res.Interrupted, len(res.Records), res.Summary())
	}
	var b strings.Builder
	if err := res.Summary().WriteText(&b); err != nil || !strings.Contains(b.String(), "interrupted after") {
		t.Errorf("the report does not say it was interrupted (%v):\n%s", err, b.String())
	}
}

// records is a fixed set for golden outputs.
func records() []Record {
	ms := time.Millisecond
	return []Record{
		{ID: 1, Sent: 1 * ms, SLAms: 300, Outcome: OK, RTT: 20 * ms, Site: 1, Region: 0, Server: 0, SLAMet: true,
			Timed: true, ServerQueue: 5 * time.Microsecond, ServerExec: 250 * time.Microsecond, ServerDrawn: 200 * time.Microsecond, ServerDelay: 19600 * time.Microsecond},
		{ID: 2, Sent: 2 * ms, SLAms: 300, Outcome: OK, RTT: 40 * ms, Site: 1, Region: 0, Server: 1, SLAMet: false},
		{ID: 3, Sent: 3 * ms, SLAms: 500, ExecClass: 2, Outcome: OK, RTT: 37 * ms, Site: 1, Region: 1, Server: 2, Flags: wire.FlagHeld | wire.FlagForced, Holds: 2, SLAMet: true},
		{ID: 4, Sent: 4 * ms, SLAms: 500, Outcome: Nack, RTT: 1 * ms, Site: 1, Region: 1, Server: wire.NoServer},
		{ID: 5, Sent: 5 * ms, SLAms: 3000, Outcome: Timeout, Server: wire.NoServer},
		{ID: 6, Sent: 6 * ms, SLAms: 3000, Outcome: OK, RTT: 149100 * time.Microsecond, Site: 2, Region: 4, Server: 8, Flags: wire.FlagFallback, SLAMet: true},
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(records(), time.Second, 0.1)
	if s.Sent != 6 || s.Replied != 4 || s.Nacked != 1 || s.TimedOut != 1 || s.SLAMet != 3 || s.SLALate != 1 {
		t.Errorf("counts %+v", s)
	}
	if s.RTT.N != 4 || s.RTT.P50 != 38.5 || s.RTT.Max != 149.1 {
		t.Errorf("rtt %+v", s.RTT)
	}
	if len(s.Classes) != 3 || s.Classes[0].SLAms != 300 || s.Classes[0].BudgetMs != 30 || s.Classes[0].Met != 1 || s.Classes[0].Late != 1 {
		t.Errorf("classes %+v", s.Classes)
	}
	// Shares over answered requests (4 replies + 1 nack).
	if s.Share(0) != 40 || s.Share(1) != 40 || s.Share(4) != 20 || s.Regions[2].Name != "us-east-1" {
		t.Errorf("regions %+v", s.Regions)
	}
	if s.Flags["held"] != 1 || s.Flags["forced"] != 1 || s.Flags["fallback"] != 1 {
		t.Errorf("flags %v", s.Flags)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "summary.txt", buf.Bytes())
}

func TestCSVAndJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, records()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "records.csv", buf.Bytes())

	res := &Result{Config: Config{Target: netip.MustParseAddrPort("10.0.0.100:9800"), Rate: 6, CV: 1, SLAScale: 0.1},
		Records: records(), Elapsed: time.Second, Local: "10.10.0.1:40000"}
	buf.Reset()
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Records) != 6 {
		t.Fatalf("read back %d records", len(f.Records))
	}
	for i, r := range f.Records {
		if r != records()[i] {
			t.Errorf("record %d: read back %+v, wrote %+v", i, r, records()[i])
		}
	}
	if f.Summary.Sent != 6 || f.Summary.Target != "10.0.0.100:9800" || f.Summary.SLAScale != 0.1 {
		t.Errorf("summary read back %+v", f.Summary)
	}
	if _, err := ReadFile(strings.NewReader(`{"records":[{"outcome":"maybe"}]}`)); err == nil {
		t.Error("unknown outcome accepted")
	}
}

func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"300:20,500:30", "1", "0:0,1:1", "65535:1e300", ":", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix[uint16](s, 16)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("%q parsed to an invalid mix: %v", s, err)
		}
		smp := newSampler(m)
		v := smp.draw(rand.New(rand.NewPCG(1, 1)))
		found := false
		for _, sh := range m {
			found = found || (sh.Value == v && sh.Weight > 0)
		}
		if !found {
			t.Fatalf("%q drew %d", s, v)
		}
	})
}

// Answers whose region is still the NoRegion loadgen sent were not routed
// by a switch: counted apart, out of the shares, and the report says so
// (issue 15 item 13).
func TestSummarizeUnrouted(t *testing.T) {
	recs := records()
	for i := range recs {
		if recs[i].Outcome == OK || recs[i].Outcome == Nack {
			recs[i].Region = wire.NoRegion
		}
	}
	recs[0].Region = 5
	s := Summarize(recs, time.Second, 1)
	if s.Unrouted != 4 || len(s.Regions) != 1 || s.Share(5) != 100 {
		t.Errorf("unrouted %d, regions %+v", s.Unrouted, s.Regions)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "4 of 5 answers carry no region: no p4ctl switch stamped their header") {
		t.Errorf("report lacks the warning:\n%s", buf.String())
	}
}
