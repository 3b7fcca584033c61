package fnserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/p4ctl/p4ctl/pkg/wire"
)

func TestParseDist(t *testing.T) {
	good := []struct {
		in   string
		want Dist
	}{
		{"fixed:5ms", Dist{Kind: Fixed, Mean: 5 * time.Millisecond}},
		{"exp:250us", Dist{Kind: Exponential, Mean: 250 * time.Microsecond}},
		{"uniform:1ms,3ms", Dist{Kind: Uniform, Min: time.Millisecond, Max: 3 * time.Millisecond}},
		{"lognormal:10ms,1.5", Dist{Kind: LogNormal, Mean: 10 * time.Millisecond, CV: 1.5}},
		{"gamma:10ms,0.5", Dist{Kind: Gamma, Mean: 10 * time.Millisecond, CV: 0.5}},
		{"pareto:1ms,2.5", Dist{Kind: Pareto, Min: time.Millisecond, Shape: 2.5}},
		{" fixed:0s ", Dist{Kind: Fixed}},
	}
	for _, c := range good {
		got, err := ParseDist(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDist(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if back, err := ParseDist(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q does not parse back: %+v %v", c.in, got.String(), back, err)
		}
	}
	bad := []string{"", "5ms", "fixed", "fixed:", "fixed:-1ms", "exp:1ms,2ms", "uniform:3ms,1ms", "uniform:1ms",
		"lognormal:1ms,0", "lognormal:1ms,NaN", "gamma:1ms,-1", "pareto:1ms,inf", "weibull:1ms", "fixed:2m"}
	for _, in := range bad {
		if d, err := ParseDist(in); err == nil {
			t.Errorf("ParseDist(%q) = %+v, want an error", in, d)
		}
	}
}

func TestParseClassAndSiteDelay(t *testing.T) {
	c, d, err := ParseClassDist("2=exp:100ms")
	if err != nil || c != 2 || d != (Dist{Kind: Exponential, Mean: 100 * time.Millisecond}) {
		t.Fatalf("ParseClassDist: %d %+v %v", c, d, err)
	}
	for _, in := range []string{"exp:1ms", "256=exp:1ms", "x=fixed:1ms", "1=bad"} {
		if _, _, err := ParseClassDist(in); err == nil {
			t.Errorf("ParseClassDist(%q) accepted", in)
		}
	}
	sd, err := ParseSiteDelay("1=19.6ms")
	if err != nil || sd != (SiteDelay{Site: 1, Delay: 19600 * time.Microsecond}) {
		t.Fatalf("ParseSiteDelay: %+v %v", sd, err)
	}
	for _, in := range []string{"1", "70000=1ms", "1=-2ms", "1=2h", "a=1ms"} {
		if _, err := ParseSiteDelay(in); err == nil {
			t.Errorf("ParseSiteDelay(%q) accepted", in)
		}
	}
}

// Draws have the distribution's mean and coefficient of variation.
func TestDrawMoments(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		d        Dist
		mean, cv float64 // in ms
		min, max time.Duration
	}{
		{Dist{Kind: Fixed, Mean: 3 * ms}, 3, 0, 3 * ms, 3 * ms},
		{Dist{Kind: Exponential, Mean: 2 * ms}, 2, 1, 0, MaxExec},
		{Dist{Kind: Uniform, Min: ms, Max: 3 * ms}, 2, 1 / (2 * math.Sqrt(3)), ms, 3 * ms},
		{Dist{Kind: LogNormal, Mean: 10 * ms, CV: 0.5}, 10, 0.5, 0, MaxExec},
		{Dist{Kind: Gamma, Mean: 10 * ms, CV: 2}, 10, 2, 0, MaxExec},
		{Dist{Kind: Gamma, Mean: 10 * ms, CV: 0.3}, 10, 0.3, 0, MaxExec},
		{Dist{Kind: Pareto, Min: ms, Shape: 5}, 1.25, 1 / math.Sqrt(5*3), ms, MaxExec},
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 40000
	for _, c := range cases {
		var sum, sq float64
		for i := 0; i < n; i++ {
			v := c.d.Draw(r)
			if v < c.min || v > c.max {
				t.Fatalf("%v: draw %v outside [%v, %v]", c.d, v, c.min, c.max)
			}
			x := float64(v) / 1e6
			sum += x
			sq += x * x
		}
		mean := sum / n
		cv := math.Sqrt(math.Max(sq/n-mean*mean, 0)) / mean
		if math.Abs(mean-c.mean) > 0.03*c.mean {
			t.Errorf("%v: mean %.4f ms, want %.4f", c.d, mean, c.mean)
		}
		if math.Abs(cv-c.cv) > 0.06*math.Max(c.cv, 0.1) {
			t.Errorf("%v: CV %.4f, want %.4f", c.d, cv, c.cv)
		}
		if got := c.d.MeanDuration(); math.Abs(float64(got)/1e6-c.mean) > 1e-6 {
			t.Errorf("%v: MeanDuration %v, want %.4f ms", c.d, got, c.mean)
		}
	}
	if v := (Dist{Kind: Pareto, Min: 50 * time.Second, Shape: 0.01}).Draw(r); v > MaxExec {
		t.Errorf("draw %v above MaxExec", v)
	}
	if v := (Dist{}).Draw(r); v != 0 {
		t.Errorf("zero Dist drew %v", v)
	}
}

// testServer starts a server on loopback; Serve runs until the test ends
// (or stop is called) and must return nil.
func testServer(t *testing.T, cfg Config) (s *Server, stop func()) {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

func client(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c *net.UDPConn, to netip.AddrPort, b []byte) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(b, to); err != nil {
		t.Fatal(err)
	}
}

// recv reads one datagram, or returns nil after wait.
func recv(t *testing.T, c *net.UDPConn, wait time.Duration) ([]byte, netip.AddrPort) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	n, from, err := c.ReadFromUDPAddrPort(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil, netip.AddrPort{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n], from
}

func request(id uint32, site uint16, class uint8) wire.Header {
	h := wire.NewRequest(id, 500, class)
	h.Site, h.Region, h.Server, h.Flags, h.HoldCount = site, 3, 5, wire.FlagHeld, 1
	return h
}

func TestServeReplies(t *testing.T) {
	var logBuf syncBuffer
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, 5)
	if err != nil {
		t.Fatal(err)
	}
	s, stop := testServer(t, Config{ServerID: 5, Classes: map[uint8]Dist{0: {Kind: Fixed, Mean: 2 * time.Millisecond}},
		Log: &logBuf, Metrics: m})
	c := client(t)
	h := request(77, 2, 0)
	send(t, c, s.Addr(), append(h.Marshal(), "abc"...))
	b, from := recv(t, c, 5*time.Second)
	if b == nil {
		t.Fatal("no reply")
	}
	if from != s.Addr() {
		t.Errorf("reply from %v, want the server's address %v", from, s.Addr())
	}
	got, err := wire.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := h.Reply(5); got != want {
		t.Errorf("reply header %+v, want %+v", got, want)
	}
	if string(b[wire.HeaderLen:]) != "abc" {
		t.Errorf("payload %q not echoed", b[wire.HeaderLen:])
	}
	stop()
	if st := s.Stats(); st != (Stats{Received: 1, Replied: 1}) {
		t.Errorf("stats %+v", st)
	}
	var line map[string]any
	sc := bufio.NewScanner(strings.NewReader(logBuf.String()))
	if !sc.Scan() {
		t.Fatal("no log line")
	}
	if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", sc.Text(), err)
	}
	if line["msg"] != "request" || line["request_id"] != 77.0 || line["site"] != 2.0 || line["flags"] != "held" || line["exec_ms"].(float64) < 2 {
		t.Errorf("log line %v", line)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]float64{}
	for _, mf := range mfs {
		for _, mm := range mf.GetMetric() {
			switch {
			case mm.GetCounter() != nil:
				vals[mf.GetName()] += mm.GetCounter().GetValue()
			case mm.GetHistogram() != nil:
				vals[mf.GetName()] += float64(mm.GetHistogram().GetSampleCount())
			case mm.GetGauge() != nil:
				vals[mf.GetName()] += mm.GetGauge().GetValue()
			}
		}
	}
	want := map[string]float64{"p4ctl_serve_requests_total": 1, "p4ctl_serve_replies_total": 1, "p4ctl_serve_in_flight": 0,
		"p4ctl_serve_exec_seconds": 1, "p4ctl_serve_service_seconds": 1, "p4ctl_serve_malformed_total": 0}
	for k, v := range want {
		if vals[k] != v {
			t.Errorf("metric %s = %v, want %v", k, vals[k], v)
		}
	}
}

// Malformed datagrams and non-requests are counted, never answered.
func TestServeIgnoresNonRequests(t *testing.T) {
	s, stop := testServer(t, Config{ServerID: 1})
	c := client(t)
	bad := request(1, 1, 0)
	bad.Version = 2
	reply := request(2, 1, 0).Reply(1)
	for _, b := range [][]byte{{0x11, 0}, bad.Marshal(), reply.Marshal()} {
		send(t, c, s.Addr(), b)
	}
	if b, _ := recv(t, c, 200*time.Millisecond); b != nil {
		t.Fatalf("answered a non-request: % x", b)
	}
	stop()
	if st := s.Stats(); st.Received != 3 || st.Malformed != 2 || st.Unexpected != 1 || st.Replied != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Shutdown answers requests in flight before Serve returns.
func TestServeDrains(t *testing.T) {
	s, stop := testServer(t, Config{ServerID: 1, Default: Dist{Kind: Fixed, Mean: 300 * time.Millisecond}})
	c := client(t)
	send(t, c, s.Addr(), request(9, 1, 7).Marshal())
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().InFlight == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop() // returns only after the reply is sent
	if st := s.Stats(); st.Replied != 1 || st.InFlight != 0 {
		t.Fatalf("after shutdown: %+v", st)
	}
	if b, _ := recv(t, c, 5*time.Second); b == nil {
		t.Fatal("the request in flight was not answered")
	}
}

// Site delays and busy execution both lengthen the round trip by at least
// their amount.
func TestServeDelaysAndBusy(t *testing.T) {
	for _, mode := range []Mode{Sleep, Busy} {
		s, _ := testServer(t, Config{ServerID: 1, Mode: mode, Default: Dist{Kind: Fixed, Mean: 20 * time.Millisecond},
			Delays: []SiteDelay{{Site: 2, Delay: 30 * time.Millisecond}}})
		c := client(t)
		for _, site := range []uint16{1, 2} {
			start := time.Now()
			send(t, c, s.Addr(), request(uint32(site), site, 0).Marshal())
			if b, _ := recv(t, c, 5*time.Second); b == nil {
				t.Fatalf("%s site %d: no reply", mode, site)
			}
			min := 20 * time.Millisecond
			if site == 2 {
				min += 30 * time.Millisecond
			}
			if rtt := time.Since(start); rtt < min {
				t.Errorf("%s site %d: RTT %v < %v", mode, site, rtt, min)
			}
		}
	}
}

// With one worker and a queue of one, a burst keeps at most two requests
// and drops the rest.
func TestServeQueueBound(t *testing.T) {
	s, stop := testServer(t, Config{ServerID: 1, Workers: 1, MaxQueue: 1, Default: Dist{Kind: Fixed, Mean: 200 * time.Millisecond}})
	c := client(t)
	for i := range 5 {
		send(t, c, s.Addr(), request(uint32(i), 1, 0).Marshal())
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Received < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	st := s.Stats()
	if st.Replied+st.Dropped != 5 || st.Replied > 2 || st.Dropped < 3 {
		t.Errorf("stats %+v: want at most 2 replied and the rest dropped", st)
	}
}

func TestNewRejects(t *testing.T) {
	for _, cfg := range []Config{
		{Addr: "127.0.0.1:0", ServerID: 1024},
		{Addr: "127.0.0.1:0", Mode: "spin"},
		{Addr: "127.0.0.1:0", Workers: -1},
		{Addr: "not an address"},
	} {
		if s, err := New(cfg); err == nil {
			s.conn.Close()
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	s, err := New(Config{Addr: "127.0.0.1:0", ServerID: wire.NoServer})
	if err != nil {
		t.Fatalf("gateway id refused: %v", err)
	}
	s.conn.Close()
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"fixed:5ms", "uniform:1ms,2ms", "lognormal:1ms,2", "pareto:1s,0.5", "gamma:1h,1", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, d, d.String(), back, err)
		}
		if v := d.Draw(rand.New(rand.NewPCG(1, 1))); v < 0 || v > MaxExec {
			t.Fatalf("%q drew %v", s, v)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
