package controller_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// slas are SLA budgets around every latency boundary of the example sites
// (Mumbai: 196, 367, 600, 620, 634, 720, 780, 950, 979, 1050, 1150, 1491;
// the illustrative Singapore site: 40, 250, 280, 300, 820, 880, 900, 1100,
// 1300, 1500) plus the paper's classes.
var slas = []uint16{30, 40, 100, 195, 196, 250, 280, 300, 366, 367, 500, 599, 600, 620, 634, 719, 720, 780, 800,
	820, 880, 900, 950, 979, 1000, 1050, 1100, 1150, 1300, 1490, 1491, 1500, 3000, 65535}

func testLog(t testing.TB) *slog.Logger {
	if os.Getenv("P4CTL_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func loadConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Load("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// staleSource wraps a carbon source and reports its data as too old during
// the given hours (relative to start), as a live API whose cache ran dry.
type staleSource struct {
	regions.CarbonSource
	start time.Time
	stale func(h int) bool
}

func (s staleSource) DataAge(t time.Time) time.Duration {
	if s.stale(int(t.Sub(s.start) / time.Hour)) {
		return 24 * time.Hour
	}
	return 0
}

// plans precomputes n consecutive hourly plans from start.
func plans(t testing.TB, cfg *config.Config, start time.Time, n int, stale func(int) bool) []*controller.Plan {
	t.Helper()
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	if stale != nil {
		src = staleSource{CarbonSource: src, start: start, stale: stale}
	}
	pl, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: src, MapYears: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*controller.Plan, n)
	for i := range out {
		out[i] = pl.Plan(start.Add(time.Duration(i) * time.Hour))
	}
	return out
}

// rig is an embedded switch with its P4Runtime server over bufconn.
type rig struct {
	sw  *dataplane.Switch
	srv *p4rttest.Switch
	tr  *demo.Traffic
}

func newRig(t testing.TB, cfg *config.Config, opts ...p4rttest.Option) *rig {
	t.Helper()
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := demo.NewTraffic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Serve(sw))
	return &rig{sw: sw, srv: p4rttest.Start(t, append([]p4rttest.Option{p4rttest.WithTarget(sw)}, opts...)...), tr: tr}
}

// driver returns a connected driver with its own client of election id
// low, closed at cleanup or by the returned function (a "kill").
func (r *rig) driver(t testing.TB, low uint64, opts controller.DriverOptions) (*controller.Driver, func()) {
	t.Helper()
	c := r.srv.Dial(t, p4rt.WithElectionID(p4rt.Election(low)))
	if opts.Grace == 0 {
		opts.Grace = -1
	}
	if opts.Log == nil {
		opts.Log = testLog(t)
	}
	d := controller.NewDriverWithClient(controller.Target{Name: "sw"}, c, opts)
	// A controller that was just killed may still hold the election id
	// until the switch notices its stream ended: retry briefly.
	var err error
	for try := 0; try < 200; try++ {
		if err = d.Connect(ctxT(t)); err == nil || !strings.Contains(err.Error(), "already uses election id") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d, func() { c.Close() }
}

// route sends a request of site i with the given SLA and returns the
// region the switch chose.
func (r *rig) route(t testing.TB, site int, id uint32, sla uint16) uint8 {
	t.Helper()
	o, err := demo.Send(r.sw, r.tr.Request(site, id, sla, 0))
	if err != nil {
		t.Fatalf("site %d sla %d: %v", site, sla, err)
	}
	return o.Header.Region
}

// checkRoutes sends a request for every site and SLA and reports those
// routed as neither plan decides.
func (r *rig) checkRoutes(t testing.TB, cfg *config.Config, allowed ...*controller.Plan) {
	t.Helper()
	for site := range cfg.Sites {
		for _, sla := range slas {
			got := r.route(t, site, uint32(sla), sla)
			ok := false
			var want []regions.Index
			for _, p := range allowed {
				d := p.Decide(site, float64(sla)).Region
				want = append(want, d)
				ok = ok || uint8(d) == got
			}
			if !ok {
				t.Errorf("site %s sla %d: routed to region %d, plans decide %v", cfg.Sites[site].Name, sla, got, want)
			}
		}
	}
}

// assertExactly checks that the switch holds exactly p compiled for its
// active epoch.
func assertExactly(t testing.TB, d *controller.Driver, p *controller.Plan) {
	t.Helper()
	ch, _, err := d.Drift(ctxT(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Empty() {
		t.Fatalf("switch differs from the desired state: %d inserts, %d modifies, %d deletes; first: %v",
			len(ch.Insert), len(ch.Modify), len(ch.Delete), first(ch))
	}
}

func first(ch compiler.Changes) string {
	for _, l := range [][]compiler.Entry{ch.Insert, ch.Modify, ch.Delete} {
		if len(l) > 0 {
			return l[0].String()
		}
	}
	return ""
}
