package tuning

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/research/sim/dist"
	"github.com/p4ctl/p4ctl/research/sim/micro"
)

// doc is a configuration with a tuned 4-server pool (quick sizing: 2 seeds
// × 10 000 requests) and a fixed-bound one; %s is the tune block.
const doc = `regions:
  - id: ap-south-1
    next_hop:
      local:
        policy: jbsq
        long_reserve: 1
        tune: {%s}
        servers:
          - {id: 0, port: 1, mac: "02:00:00:00:00:01", ip: 10.0.0.10}
          - {id: 1, port: 2, mac: "02:00:00:00:00:02", ip: 10.0.0.11}
          - {id: 2, port: 3, mac: "02:00:00:00:00:03", ip: 10.0.0.12}
          - {id: 3, port: 4, mac: "02:00:00:00:00:04", ip: 10.0.0.13}
  - id: ap-southeast-1
    next_hop:
      local:
        policy: jbsq
        bound: 7
        servers:
          - {id: 4, port: 5, mac: "02:00:00:00:00:05", ip: 10.0.0.14}
sites:
  - {name: mumbai, id: 1, prefixes: [10.1.0.0/16], profile: mumbai}
policy: {name: C}
carbon: {source: offline}
`

// quick is the example block, sized for tests.
const quick = "cores_per_server: 8, service_mean: 5us, delay: 4.5us, load: 0.85, slo: 50us, target: 0.05, seed: 1, seeds: 2, requests: 10000"

func parse(t *testing.T, block string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(strings.Replace(doc, "%s", block, 1)), "tuned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestResolveIsTuneJBSQ: the bound Resolve puts in the configuration is
// TuneJBSQ's n for the same inputs, built here by hand from the block, and
// the input configuration is left alone.
func TestResolveIsTuneJBSQ(t *testing.T) {
	ctx := context.Background()
	cfg := parse(t, quick)
	got, pools, err := Resolve(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := micro.Scenario()
	sc.Hosts, sc.CoresPerHost, sc.Load, sc.Delay, sc.SLO = 4, 8, 0.85, 4.5, 50
	sc.Service = dist.ServiceSpec{Kind: dist.ServiceLognormal, Mean: 5, Sigma: 1}
	noHolds := 0 // the pool's max_holds and on_full (nack): the switch as configured
	sc.SwitchMaxHolds, sc.SwitchOnFull, sc.TTLMode = &noHolds, "nack", micro.TTLSilence
	want, err := micro.TuneJBSQ(ctx, micro.TuneConfig{Scenario: sc, Target: 0.05, Options: micro.Options{Seeds: 2, Seed: 1, Requests: 10000}})
	if err != nil {
		t.Fatal(err)
	}
	if !want.Met {
		t.Fatalf("the reference tuning did not meet its target: %+v", want)
	}
	if len(pools) != 1 {
		t.Fatalf("%d pools resolved, want 1", len(pools))
	}
	p := pools[0]
	pool := got.Regions[0].NextHop.Local
	if pool.Bound != want.Bound || p.Bound != want.Bound || pool.Tune != nil {
		t.Fatalf("resolved bound %d (record %d, tune %v), TuneJBSQ says %d", pool.Bound, p.Bound, pool.Tune, want.Bound)
	}
	if p.Little != want.Little || p.Stable != want.Stable || p.Region != "ap-south-1" || p.Servers != 4 || p.CoresPerServer != 8 ||
		p.Seeds != 2 || p.Requests != 10000 || !(p.Violation <= p.Target) || p.Target != 0.05 {
		t.Errorf("record %+v (tuner: little %d, stable %d)", p, want.Little, want.Stable)
	}
	if got.Regions[1].NextHop.Local.Bound != 7 {
		t.Errorf("untuned pool's bound changed to %d", got.Regions[1].NextHop.Local.Bound)
	}
	if in := cfg.Regions[0].NextHop.Local; in.Tune == nil || in.Bound != 0 {
		t.Errorf("Resolve changed its input: bound %d, tune %v", in.Bound, in.Tune)
	}
	if !strings.HasPrefix(p.String(), "pool ap-south-1: jbsq bound ") {
		t.Errorf("summary %q", p.String())
	}
	// Deterministic for the seed.
	again, pools2, err := Resolve(ctx, cfg, Options{Parallel: 1})
	if err != nil || again.Regions[0].NextHop.Local.Bound != p.Bound || pools2[0].Violation != p.Violation {
		t.Errorf("second resolution: %v, %+v", err, pools2)
	}
}

// TestDefaultsAreTheTuneCommand's: an empty block simulates micro.Scenario
// (what `p4ctl tune jbsq` starts from) on the pool's servers, with its
// default target and sizing.
func TestDefaultsAreTuneCommands(t *testing.T) {
	pool := &config.LocalPool{Policy: "jbsq", Servers: make([]config.Server, 4), Tune: &config.PoolTune{}}
	tc, err := TuneConfig(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := micro.Scenario()
	want.Hosts = 4
	want.Service.BimodalP, want.Service.BimodalRatio = 0.1, 10 // the tune command's flag defaults
	noHolds := 0                                               // the pool's max_holds
	want.SwitchMaxHolds, want.SwitchOnFull, want.TTLMode = &noHolds, "nack", micro.TTLSilence
	if !reflect.DeepEqual(tc.Scenario, want) || tc.Algorithm != micro.AlgorithmSwitch {
		t.Errorf("scenario\n got %+v\nwant %+v", tc.Scenario, want)
	}
	if tc.Target != 0.05 || tc.Options.Seed != 1 || tc.Options.Seeds != 0 || tc.Options.Requests != 0 {
		t.Errorf("target %v, options %+v: want 0.05 and the tuner's sizing", tc.Target, tc.Options)
	}
}

func TestResolveErrors(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		name, extra string
		ctx         context.Context
		want        []string
	}{
		// 2D = 9 µs of network delay alone leaves no room under a 10 µs SLO.
		{"infeasible target", "slo: 10us, seeds: 2, requests: 10000", ctx, []string{"regions[0].next_hop.local.tune (region ap-south-1)", "no JBSQ bound meets the 5 % violation target", "the best is n = ", "curve n="}},
		{"bound below long_reserve", "delay: 0s, cores_per_server: 1, load: 0.1, seeds: 2, requests: 10000", ctx, []string{"tuned configuration", "long_reserve 1 must be below bound 1"}},
		{"cancelled", quick, cancelled, []string{"context canceled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Resolve(c.ctx, parse(t, c.extra), Options{})
			if err == nil {
				t.Fatal("resolved")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, _, err := Resolve(cancelled, parse(t, quick), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v is not context.Canceled", err)
	}
}

func TestResolveWithoutTune(t *testing.T) {
	cfg, err := config.Parse([]byte(strings.Replace(strings.Replace(doc, "        tune: {%s}\n", "        bound: 3\n", 1), "long_reserve: 1", "long_reserve: 0", 1)), "plain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, pools, err := Resolve(context.Background(), cfg, Options{})
	if err != nil || got != cfg || len(pools) != 0 {
		t.Fatalf("got %p (input %p), %v, %v", got, cfg, pools, err)
	}
}

// TestPlanPushesTunedBound: the set_pool entry compiled from the resolved
// configuration carries the tuned bound; the unresolved one does not compile.
func TestPlanPushesTunedBound(t *testing.T) {
	cfg := parse(t, quick)
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2022, 1, 10, 12, 0, 0, 0, time.UTC)
	if _, err := compiler.PlanAt(cfg, src, at, true, 1, nil); err == nil || !strings.Contains(err.Error(), "not resolved") {
		t.Fatalf("unresolved tune block compiled: %v", err)
	}
	resolved, pools, err := Resolve(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := compiler.PlanAt(resolved, src, at, true, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	bounds := map[uint64]uint64{} // region index → bound
	for _, e := range st.Entries {
		if e.Table != pipeline.TableServerPool || e.Action != pipeline.ActionSetPool {
			continue
		}
		m, _ := e.Field(pipeline.FieldRegion)
		for _, p := range e.Params {
			if p.Name == "bound" {
				bounds[m.Value] = p.Value
			}
		}
	}
	// ap-south-1 is catalog index 0, ap-southeast-1 index 1.
	if want := uint64(pools[0].Bound); bounds[0] != want || bounds[1] != 7 {
		t.Errorf("set_pool bounds %v, want region 0: %d (tuned), region 1: 7", bounds, want)
	}
}
