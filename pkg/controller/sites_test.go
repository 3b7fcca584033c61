package controller_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// siteIDs returns the site ids a state's per-site tables carry.
func siteIDs(st *compiler.State, table string) map[uint64]int {
	ids := map[uint64]int{}
	for _, e := range st.Table(table) {
		if e.Default {
			continue
		}
		if table == pipeline.TableClientSite {
			v, _ := e.Param("site")
			ids[v]++
			continue
		}
		m, _ := e.Field("site")
		ids[m.Value]++
	}
	return ids
}

// A target serving some sites gets the plan compiled for those sites
// alone: their client_site and sla_feasibility entries and nothing of the
// others, every table that is not per site unchanged; the state is
// memoised per subset, an unknown site is an error, and a switch synced
// through such a target holds exactly that state.
func TestCompileSites(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	full, err := p.Compile(1)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := p.CompileFor([]string{"singapore"}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.CompileFor([]string{"singapore"}, nil, 1); again != sub {
		t.Error("the same subset and epoch compiled twice")
	}
	if again, _ := p.Compile(1); again != full || sub == full {
		t.Error("the full state and the subset's share one memo")
	}
	for _, table := range []string{pipeline.TableClientSite, pipeline.TableSLAFeasibility} {
		if ids := siteIDs(full, table); len(ids) != 2 {
			t.Fatalf("%s of the full state: sites %v, want 1 and 2 (the example's)", table, ids)
		}
		ids := siteIDs(sub, table)
		if len(ids) != 1 || ids[2] == 0 {
			t.Errorf("%s for singapore (site 2): sites %v", table, ids)
		}
		if ids[2] != siteIDs(full, table)[2] {
			t.Errorf("%s: %d entries of singapore, the full state has %d", table, ids[2], siteIDs(full, table)[2])
		}
	}
	for _, table := range []string{pipeline.TableRegionNextHop, pipeline.TableServerPool, pipeline.TableServerEndpoint, pipeline.TableL3Forward} {
		if a, b := len(full.Table(table)), len(sub.Table(table)); a != b || a == 0 {
			t.Errorf("%s: %d entries in the full state, %d in singapore's", table, a, b)
		}
	}
	if _, err := p.CompileFor([]string{"singapore", "nowhere"}, nil, 1); err == nil || !strings.Contains(err.Error(), "unknown sites nowhere") {
		t.Errorf("unknown site: %v", err)
	}

	c, _ := p4rttest.New(t)
	d := controller.NewDriverWithClient(controller.Target{Name: "edge-sg", Sites: []string{"singapore"}}, c, controller.DriverOptions{Grace: -1, Log: testLog(t)})
	if err := d.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sync(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	held, err := d.ReadState(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.CompileFor([]string{"singapore"}, nil, held.ActiveEpoch())
	if err != nil {
		t.Fatal(err)
	}
	if ch := compiler.Diff(held, want); !ch.Empty() {
		t.Errorf("the switch differs from singapore's state: %v", ch)
	}
	if ids := siteIDs(held, pipeline.TableClientSite); len(ids) != 1 || ids[2] == 0 {
		t.Errorf("the switch's client_site holds sites %v", ids)
	}
	if ch, _, err := d.Drift(ctxT(t), p); err != nil || !ch.Empty() {
		t.Errorf("drift %v, %v after the sync", ch, err)
	}
}

// An embedded switch holding only singapore routes singapore's requests
// exactly as the plan decides (which switch holds a site does not change
// its decisions) and mumbai's, which it does not hold, as from an unknown
// source.
func TestCompileSitesRoutes(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	r := newRig(t, cfg)
	c := r.srv.Dial(t, p4rt.WithElectionID(p4rt.Election(1)))
	d := controller.NewDriverWithClient(controller.Target{Name: "edge-sg", Sites: []string{"singapore"}}, c, controller.DriverOptions{Grace: -1, Log: testLog(t)})
	if err := d.Connect(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sync(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	sg := slices.IndexFunc(cfg.Sites, func(s config.Site) bool { return s.Name == "singapore" })
	for _, sla := range slas {
		if got, want := r.route(t, sg, uint32(sla), sla), p.Decide(sg, float64(sla)).Region; got != uint8(want) {
			t.Errorf("singapore, SLA %d ms: routed to region %d, the plan decides %d", sla, got, want)
		}
	}
	// mumbai is not on this switch: an unknown source (site 0: no
	// candidates, the fallback region 0), not mumbai's decisions.
	mb := slices.IndexFunc(cfg.Sites, func(s config.Site) bool { return s.Name == "mumbai" })
	elsewhere := 0
	for _, sla := range slas {
		if got := r.route(t, mb, uint32(1000+int(sla)), sla); got != 0 {
			t.Errorf("mumbai (not held), SLA %d ms: routed to region %d, want 0 (unknown source)", sla, got)
		}
		if p.Decide(mb, float64(sla)).Region != 0 {
			elsewhere++
		}
	}
	if elsewhere == 0 {
		t.Fatal("mumbai's plan routes every SLA to region 0 too: the check above tests nothing")
	}
}

// The nearest-region baseline a switch's counters are priced with is over
// its own sites: singapore's nearest region alone for a switch holding
// singapore, the mean of both sites' for one holding every site.
func TestBaselineIntensityFor(t *testing.T) {
	cfg := loadConfig(t)
	p := plans(t, cfg, start, 1, nil)[0]
	var per []float64
	for _, name := range []string{"mumbai", "singapore"} {
		v := p.BaselineIntensityFor([]string{name})
		if v <= 0 {
			t.Fatalf("%s: baseline %v", name, v)
		}
		per = append(per, v)
	}
	if per[0] == per[1] {
		t.Fatalf("both sites' nearest regions are equally clean (%v): the check below tests nothing", per[0])
	}
	if all, want := p.BaselineIntensity(), (per[0]+per[1])/2; math.Abs(all-want) > 1e-9 {
		t.Errorf("baseline over every site %v, want the mean %v", all, want)
	}
	if again := p.BaselineIntensityFor([]string{"singapore"}); again != per[1] {
		t.Errorf("memoised %v, first %v", again, per[1])
	}
}
