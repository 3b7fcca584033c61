// Package fleet runs one controller process against a fleet of embedded
// switches (dataplane.Start, each with its P4Runtime server on a loopback
// TCP port) through replayed hours at unpaced speed, and
// measures it (issue 14 item 4, docs/SCALING.md): hours per second, the
// time of one fleet-wide hourly update (submission to every reachable
// switch holding the plan) with its percentiles, goroutines and RSS over
// time, and, at the end, every reachable switch's diff against the final
// plan. Unreachable switches (loopback ports nobody listens on) stand for
// switches that are down: the others must not wait for them, and
// p4ctl_target_lag_hours must name them.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"gonum.org/v1/gonum/stat"
)

// MaxSwitches bounds Options.Switches and MaxUnreachable
// Options.Unreachable: every target is a controller driver (goroutines, a
// client, for a reachable one a switch and its server). 100000
// unreachable targets were accepted and ran for minutes without reaching
// the first hour (issue 27).
const (
	MaxSwitches    = 1000
	MaxUnreachable = 1000
)

// Options say what to run.
type Options struct {
	Config      *config.Config // a validated configuration (its targets are ignored)
	Switches    int            // reachable embedded switches (default 100)
	Unreachable int            // extra targets nobody answers (default 0)
	Hours       int            // replayed hours (default 8760: a year)
	// TargetSites makes switch i the configuration's target i: its name
	// and the sites it serves (targets[].sites, e.g. p4ctl gen config
	// --partition), so that every switch holds its own state. The
	// configuration needs at least Switches targets. Without it every
	// switch holds every site and the configuration's targets are ignored.
	TargetSites bool
	Start       time.Time // first hour (default 2022-01-01T00Z)
	// SampleEvery is how many hours apart RSS and goroutines are sampled
	// (default Hours/100, at least 1).
	SampleEvery int
	// VerifyInterval is each driver's versioned check between pushes
	// (wall time; 0: off).
	VerifyInterval time.Duration
	Progress       func(done, total int)
	Log            *slog.Logger
}

// Sample is the process at one replayed hour.
type Sample struct {
	Hour       int     `json:"hour"`
	RSSMB      float64 `json:"rss_mb"`
	HeapMB     float64 `json:"heap_mb"`
	Goroutines int     `json:"goroutines"`
}

// Result is one fleet run.
type Result struct {
	Machine     string    `json:"machine"`
	Date        time.Time `json:"date"`
	Switches    int       `json:"switches"`
	Unreachable int       `json:"unreachable"`
	Hours       int       `json:"hours"`
	Entries     int       `json:"entries_per_switch"` // the most one switch holds
	Seconds     float64   `json:"seconds"`
	HoursPerSec float64   `json:"hours_per_second"`
	// Fleet-wide update time, ms: percentiles over the hours.
	UpdateP50 float64 `json:"update_p50_ms"`
	UpdateP99 float64 `json:"update_p99_ms"`
	UpdateMax float64 `json:"update_max_ms"`
	// UpdateMs is every hour's fleet-wide update time, ms.
	UpdateMs []float64 `json:"-"`
	Samples  []Sample  `json:"samples"`
	// RSSGrowthMB is the RSS at the end minus at the end of warm-up (the
	// first tenth of the hours); GoroutineGrowth likewise.
	RSSGrowthMB     float64 `json:"rss_growth_after_warmup_mb"`
	GoroutineGrowth int     `json:"goroutine_growth_after_warmup"`
	// RSSSlopeMBPer1000h is the least-squares slope of RSS over the
	// samples after warm-up, MB per 1000 replayed hours: a leak shows as a
	// slope, where one end-minus-start difference is mostly the garbage
	// collector's timing. RSSMinMB and RSSMaxMB bound those samples.
	RSSSlopeMBPer1000h float64 `json:"rss_slope_after_warmup_mb_per_1000h"`
	RSSMinMB           float64 `json:"rss_after_warmup_min_mb"`
	RSSMaxMB           float64 `json:"rss_after_warmup_max_mb"`
	// RSSTrend is false when the samples after warm-up span fewer than
	// MinTrendHours or MinTrendSamples: over a day the slope is the
	// garbage collector's sawtooth, not a trend, and it is not reported
	// (the slope is then 0). RSSTrendR2 is the fit's R².
	RSSTrend   bool    `json:"rss_trend_estimated"`
	RSSTrendR2 float64 `json:"rss_trend_r2,omitempty"`
	// Clean counts reachable switches whose state equals the final plan
	// (no insert, modify or delete); Dirty names the others.
	Clean int      `json:"clean"`
	Dirty []string `json:"dirty,omitempty"`
	// Lag is p4ctl_target_lag_hours at the end, for targets that lag.
	Lag map[string]float64 `json:"lag_hours"`
	// TicksWithUnreachable counts hours whose update skipped an
	// unreachable target (every hour when Unreachable > 0).
	TicksWithUnreachable int `json:"ticks_with_unreachable"`
}

// Run runs the fleet until the last hour is on every reachable switch.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Config == nil {
		return nil, errors.New("fleet: no configuration")
	}
	if o.Switches < 0 || o.Unreachable < 0 || o.Hours < 0 {
		return nil, fmt.Errorf("fleet: %d switches, %d unreachable, %d hours: want none negative", o.Switches, o.Unreachable, o.Hours)
	}
	if o.Switches > MaxSwitches || o.Unreachable > MaxUnreachable {
		return nil, fmt.Errorf("fleet: %d switches, %d unreachable: at most %d and %d", o.Switches, o.Unreachable, MaxSwitches, MaxUnreachable)
	}
	if o.Switches == 0 {
		o.Switches = 100
	}
	if o.TargetSites && len(o.Config.Targets) < o.Switches {
		return nil, fmt.Errorf("fleet: switches from the configuration's targets: it has %d, %d asked", len(o.Config.Targets), o.Switches)
	}
	if o.Hours == 0 {
		o.Hours = 8760
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = max(1, o.Hours/100)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var targets []controller.Target
	for i := range o.Switches {
		e, err := dataplane.Start(dataplane.Options{}, "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("fleet: switch %d: %w", i, err)
		}
		defer e.Stop()
		t := controller.Target{Name: fmt.Sprintf("edge-%03d", i), Addr: e.Addr(), DeviceID: 1, ElectionID: p4rt.Election(1)}
		if o.TargetSites {
			t.Name, t.Sites = o.Config.Targets[i].Name, o.Config.Targets[i].Sites
		}
		targets = append(targets, t)
	}
	for i := range o.Unreachable {
		addr, err := deadAddr()
		if err != nil {
			return nil, err
		}
		targets = append(targets, controller.Target{Name: fmt.Sprintf("down-%03d", i), Addr: addr, DeviceID: 1, ElectionID: p4rt.Election(1)})
	}
	src, err := o.Config.OpenCarbon()
	if err != nil {
		return nil, err
	}
	clk, err := controller.NewReplayClock(o.Start, 0)
	if err != nil {
		return nil, err
	}
	m := controller.NewMetrics()
	res := &Result{Machine: fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()), Date: time.Now().UTC(),
		Switches: o.Switches, Unreachable: o.Unreachable, Hours: o.Hours}
	hour := 0
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		res.Samples = append(res.Samples, Sample{Hour: hour, RSSMB: rssMB(), HeapMB: float64(ms.HeapAlloc) / (1 << 20), Goroutines: runtime.NumGoroutine()})
	}
	ctl, err := controller.New(controller.Options{Config: o.Config, Targets: targets,
		Feed: controller.NewCarbonFeed(src), Clock: clk,
		Schedule: controller.Schedule{Replay: true, Start: o.Start, Hours: o.Hours},
		Driver: controller.DriverOptions{Grace: -1, VerifyInterval: o.VerifyInterval, Metrics: m, Log: o.Log,
			Backoff: p4rt.Backoff{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Multiplier: 2}},
		Log: o.Log,
		AfterTick: func(t controller.TickReport) {
			hour++
			res.UpdateMs = append(res.UpdateMs, float64(t.Took)/float64(time.Millisecond))
			if len(t.Unreachable) > 0 {
				res.TicksWithUnreachable++
			}
			if hour%o.SampleEvery == 0 || hour == o.Hours {
				sample()
			}
			if o.Progress != nil {
				o.Progress(hour, o.Hours)
			}
		}})
	if err != nil {
		return nil, err
	}
	sample()
	t0 := time.Now()
	if err := ctl.Run(ctx); err != nil && !onlyDown(err) {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	res.Seconds = time.Since(t0).Seconds()
	res.HoursPerSec = float64(hour) / res.Seconds
	if len(res.UpdateMs) > 0 {
		sorted := slices.Sorted(slices.Values(res.UpdateMs))
		res.UpdateP50, res.UpdateP99, res.UpdateMax = stats.QuantileSorted(sorted, 0.5), stats.QuantileSorted(sorted, 0.99), sorted[len(sorted)-1]
	}
	if n := len(res.Samples); n > 2 {
		warm := res.Samples[0]
		for _, s := range res.Samples {
			if s.Hour >= o.Hours/10 {
				warm = s
				break
			}
		}
		res.RSSGrowthMB = res.Samples[n-1].RSSMB - warm.RSSMB
		res.GoroutineGrowth = res.Samples[n-1].Goroutines - warm.Goroutines
		tr := rssTrend(res.Samples, warm.Hour)
		res.RSSMinMB, res.RSSMaxMB = tr.lo, tr.hi
		if tr.enough() {
			res.RSSTrend, res.RSSSlopeMBPer1000h, res.RSSTrendR2 = true, tr.slope, tr.r2
		}
	}
	// The final diff of every reachable switch against the last plan, read
	// by a fresh read-only client (the controller's have closed).
	final := ctl.Current()
	for _, t := range targets[:o.Switches] {
		c, err := p4rt.Dial(t.Addr, p4rt.WithDeviceID(t.DeviceID))
		if err != nil {
			res.Dirty = append(res.Dirty, t.Name+": "+err.Error())
			continue
		}
		d := controller.NewDriverWithClient(controller.Target{Name: t.Name, Sites: t.Sites}, c, controller.DriverOptions{Log: o.Log})
		ch, st, err := drift(ctx, d, final)
		switch {
		case err != nil:
			res.Dirty = append(res.Dirty, t.Name+": "+err.Error())
		case !ch.Empty():
			res.Dirty = append(res.Dirty, fmt.Sprintf("%s: %d inserts, %d modifies, %d deletes", t.Name, len(ch.Insert), len(ch.Modify), len(ch.Delete)))
		default:
			res.Clean++
			res.Entries = max(res.Entries, len(st.Entries))
		}
		c.Close()
	}
	res.Lag = map[string]float64{}
	for t, l := range m.Lag() {
		if l > 0 {
			res.Lag[t] = l
		}
	}
	return res, nil
}

// drift reads d's switch and diffs it with plan p (without arbitrating).
func drift(ctx context.Context, d *controller.Driver, p *controller.Plan) (compiler.Changes, *compiler.State, error) {
	if err := d.ConnectReadOnly(ctx); err != nil {
		return compiler.Changes{}, nil, err
	}
	return d.Drift(ctx, p)
}

// deadAddr is a loopback address nobody listens on: a port taken and
// released again.
func deadAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("fleet: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// rssMB is the process's resident set (Linux /proc/self/status VmRSS; 0
// elsewhere).
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// MinTrendHours and MinTrendSamples are the least span of replayed hours
// and the fewest samples after warm-up over which a memory trend is
// reported: shorter, a slope fitted to the garbage collector's sawtooth
// extrapolates noise (24 hours gave a "trend" per 1000 h).
const (
	MinTrendHours   = 500
	MinTrendSamples = 10
)

// trend is a least-squares fit of RSS against the replayed hour.
type trend struct {
	slope, r2, lo, hi float64 // MB per 1000 h; fit quality; RSS bounds (MB)
	hours, samples    int     // span of the samples fitted, and how many
}

// enough reports whether the fit spans enough hours and samples to be
// reported as a trend.
func (t trend) enough() bool { return t.hours >= MinTrendHours && t.samples >= MinTrendSamples }

// rssTrend fits RSS over the samples from hour from on: slope in MB per
// 1000 hours, R², their smallest and largest RSS and their span.
func rssTrend(samples []Sample, from int) trend {
	var xs, ys []float64
	for _, s := range samples {
		if s.Hour >= from {
			xs, ys = append(xs, float64(s.Hour)), append(ys, s.RSSMB)
		}
	}
	if len(xs) == 0 {
		return trend{}
	}
	t := trend{lo: slices.Min(ys), hi: slices.Max(ys), samples: len(xs), hours: int(xs[len(xs)-1] - xs[0])}
	if len(xs) < 2 || xs[0] == xs[len(xs)-1] {
		return t
	}
	alpha, beta := stat.LinearRegression(xs, ys, nil, false)
	t.slope = 1000 * beta
	if t.hi > t.lo {
		t.r2 = stat.RSquared(xs, ys, nil, alpha, beta)
	}
	return t
}

// seconds formats a duration in seconds with the precision it needs: a
// sub-second run is not "0 s".
func seconds(s float64) string {
	switch {
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	case s < 100:
		return fmt.Sprintf("%.1f s", s)
	}
	return fmt.Sprintf("%.0f s", s)
}

// WriteText renders the result for a person.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fleet: %d embedded switches (loopback P4Runtime), %d replayed hours at unpaced speed; %s, %s\n",
		r.Switches, r.Hours, r.Machine, r.Date.Format("2006-01-02"))
	if r.Unreachable > 0 {
		fmt.Fprintf(&b, "plus %d deliberately unreachable target(s) (--unreachable %d: loopback ports nobody listens on, standing for switches that are down; the fleet must not wait for them; --unreachable 0 for none)\n",
			r.Unreachable, r.Unreachable)
	}
	fmt.Fprintf(&b, "%s, %.1f hours/s; fleet-wide update p50 %.1f ms, p99 %.1f ms, max %.1f ms (up to %d entries per switch)\n",
		seconds(r.Seconds), r.HoursPerSec, r.UpdateP50, r.UpdateP99, r.UpdateMax, r.Entries)
	if n := len(r.Samples); n > 0 {
		tr := fmt.Sprintf("no trend: fewer than %d hours or %d samples after warm-up, where a slope fits the garbage collector's sawtooth", MinTrendHours, MinTrendSamples)
		if r.RSSTrend {
			tr = fmt.Sprintf("trend %+.2f MB per 1000 h, R² %.2f", r.RSSSlopeMBPer1000h, r.RSSTrendR2)
		}
		fmt.Fprintf(&b, "RSS %.0f MB at start, %.0f MB at the end (%+.1f MB after warm-up; after warm-up %.0f..%.0f MB, %s); goroutines %d → %d (%+d after warm-up)\n",
			r.Samples[0].RSSMB, r.Samples[n-1].RSSMB, r.RSSGrowthMB, r.RSSMinMB, r.RSSMaxMB, tr, r.Samples[0].Goroutines, r.Samples[n-1].Goroutines, r.GoroutineGrowth)
	}
	fmt.Fprintf(&b, "final diff clean on %d of %d reachable switches", r.Clean, r.Switches)
	if len(r.Dirty) > 0 {
		fmt.Fprintf(&b, "; not: %s", strings.Join(r.Dirty, "; "))
	}
	b.WriteString("\n")
	if len(r.Lag) > 0 {
		var l []string
		for _, t := range slices.Sorted(func(yield func(string) bool) {
			for k := range r.Lag {
				if !yield(k) {
					return
				}
			}
		}) {
			l = append(l, fmt.Sprintf("%s %.0f h", t, r.Lag[t]))
		}
		fmt.Fprintf(&b, "lagging (p4ctl_target_lag_hours): %s; updates that went on without them: %d\n", strings.Join(l, ", "), r.TicksWithUnreachable)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// onlyDown reports whether err is the controller's NothingPushedError for
// the deliberately unreachable targets (down-NNN) alone.
func onlyDown(err error) bool {
	var np *controller.NothingPushedError
	if !errors.As(err, &np) {
		return false
	}
	for _, s := range np.Targets {
		if !strings.HasPrefix(s.Name, "down-") {
			return false
		}
	}
	return true
}
