package fnserver

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/wire"
)

func TestTimingRoundTrip(t *testing.T) {
	for _, tm := range []Timing{
		{},
		{Queue: time.Microsecond, Exec: 1500 * time.Microsecond, Drawn: time.Millisecond, Delay: 979 * time.Millisecond},
		{Exec: -time.Second, Delay: math.MaxInt64}, // clamped to 0 and 2³²−1 µs
	} {
		b := tm.Append([]byte("x"))
		if len(b) != 1+TimingLen || b[0] != 'x' {
			t.Fatalf("Append(%+v) = %x", tm, b)
		}
		got, ok := ParseTiming(append(b[1:], "echo"...))
		want := tm
		if want.Exec < 0 {
			want.Exec = 0
		}
		if want.Delay > math.MaxUint32*time.Microsecond {
			want.Delay = math.MaxUint32 * time.Microsecond
		}
		if !ok || got != want {
			t.Errorf("ParseTiming(Append(%+v)) = %+v, %v; want %+v", tm, got, ok, want)
		}
	}
	for _, bad := range [][]byte{nil, []byte("P4TM"), bytes.Repeat([]byte{0}, TimingLen), append([]byte("P4TN"), make([]byte, 16)...)} {
		if _, ok := ParseTiming(bad); ok {
			t.Errorf("ParseTiming(%x) accepted", bad)
		}
	}
}

// A server with Timing reports what it measured before the echoed payload:
// the execution time it drew and spent, and the site delay it slept.
func TestServeTiming(t *testing.T) {
	s, stop := testServer(t, Config{ServerID: 3, Timing: true, Default: Dist{Kind: Fixed, Mean: 5 * time.Millisecond},
		Delays: []SiteDelay{{Site: 2, Delay: 20 * time.Millisecond}}})
	defer stop()
	c := client(t)
	for _, site := range []uint16{1, 2} {
		start := time.Now()
		send(t, c, s.Addr(), append(request(uint32(site), site, 0).Marshal(), "abc"...))
		b, _ := recv(t, c, 5*time.Second)
		rtt := time.Since(start)
		if b == nil {
			t.Fatalf("site %d: no reply", site)
		}
		p := b[wire.HeaderLen:]
		tm, ok := ParseTiming(p)
		if !ok || string(p[TimingLen:]) != "abc" {
			t.Fatalf("site %d: payload %q: no timing record before the echo", site, p)
		}
		wantDelay := time.Duration(0)
		if site == 2 {
			wantDelay = 20 * time.Millisecond
		}
		if tm.Drawn != 5*time.Millisecond || tm.Exec < tm.Drawn || tm.Queue != 0 ||
			tm.Delay < wantDelay || (wantDelay == 0 && tm.Delay != 0) || tm.Exec+tm.Delay > rtt {
			t.Errorf("site %d: timing %+v, RTT %v; want drawn 5ms ≤ exec, delay ≥ %v, exec+delay ≤ RTT", site, tm, rtt, wantDelay)
		}
	}
}

func FuzzParseTiming(f *testing.F) {
	f.Add(Timing{Exec: time.Millisecond}.Append(nil))
	f.Add([]byte("P4TM"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tm, ok := ParseTiming(b)
		if !ok {
			return
		}
		if again := tm.Append(nil); !bytes.Equal(again, b[:TimingLen]) {
			t.Errorf("ParseTiming(%x) = %+v, which appends as %x", b, tm, again)
		}
	})
}
