package testbed

import (
	"bytes"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/golden"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

func load(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load("../mininet/testbed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The Mininet topology of mininet/testbed.yaml (what mininet/README.md's
// port map shows).
func TestPlanGolden(t *testing.T) {
	tp, err := Plan(load(t), DefaultLatencyScale)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.Clients) != 2 || len(tp.Servers) != 10 {
		t.Fatalf("%d clients, %d servers", len(tp.Clients), len(tp.Servers))
	}
	// Mumbai → Ireland: the paper's 979 ms P95, unscaled.
	if d := tp.Servers[6].Delays[0]; tp.Servers[6].Region != "eu-west-1" || d.Site != "mumbai" || d.P95ms != 979 || d.DelayMs != 979 {
		t.Errorf("server 6 delays %+v", tp.Servers[6].Delays)
	}
	// Exec classes: the configuration's costs (1, 10, 100 ms).
	if len(tp.ExecClasses) != 3 || tp.ExecClasses[1] != (ExecTime{Class: 1, MeanUs: 10000}) {
		t.Errorf("exec classes %+v", tp.ExecClasses)
	}
	tenth, err := Plan(load(t), 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if d := tenth.Servers[6].Delays[0].DelayMs; d != 97.9 || tenth.ExecClasses[0].MeanUs != 100 {
		t.Errorf("at 1/10: Ireland delay %v ms, exec class 0 %v µs; want 97.9, 100", d, tenth.ExecClasses[0].MeanUs)
	}
	var buf bytes.Buffer
	if err := tp.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "topology.json", buf.Bytes())
}

func TestPlanRejects(t *testing.T) {
	cfg := load(t)
	if _, err := Plan(cfg, -1); err == nil {
		t.Error("negative scale accepted")
	}
	noRoute := *cfg
	noRoute.Routes.L3 = cfg.Routes.L3[1:] // mumbai's route gone
	if _, err := Plan(&noRoute, 0.1); err == nil || !strings.Contains(err.Error(), "mumbai") {
		t.Errorf("site without a route: %v", err)
	}
	clash := *cfg
	clash.Routes.L3 = append([]config.L3Route{{Prefix: cfg.Routes.L3[0].Prefix, Port: 10}}, cfg.Routes.L3[1:]...)
	if _, err := Plan(&clash, 0.1); err == nil || !strings.Contains(err.Error(), "port 10") {
		t.Errorf("client on a server's port: %v", err)
	}
}

// Every compiled entry converts to a P4Runtime entry the embedded switch
// accepts; don't-care matches are omitted.
func TestUpdatesInstall(t *testing.T) {
	c, err := Compile(load(t), time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := dataplane.New(dataplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p4rt.NewIndex(sw.P4Info())
	if err != nil {
		t.Fatal(err)
	}
	ups, err := Updates(idx, c.State)
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range sw.Write(t.Context(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			t.Errorf("%v: %v", c.State.Entries[i], err)
		}
	}
	for i, e := range c.State.Entries {
		te := ups[i].GetEntity().GetTableEntry()
		if e.Table == pipeline.TableL3Forward && e.Match[0].PrefixLen == 0 && len(te.GetMatch()) != 0 {
			t.Errorf("0.0.0.0/0 kept its don't-care match: %v", te)
		}
		if e.Default != (ups[i].GetType() == p4v1.Update_MODIFY) {
			t.Errorf("%v: update type %v", e, ups[i].GetType())
		}
	}
	bad := &compiler.State{Entries: []compiler.Entry{{Table: "P4ctlIngress.nope", Action: pipeline.ActionDrop}}}
	if _, err := Updates(idx, bad); err == nil {
		t.Error("unknown table accepted")
	}
	if _, err := Compile(load(t), time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), 1); err != nil {
		t.Errorf("a date outside the model's year should map into it: %v", err)
	}
}

func TestCarbonReport(t *testing.T) {
	cfg := load(t)
	c, err := Compile(cfg, time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	rt := compiler.NewRouter(c.State)
	var recs []loadgen.Record
	for i, sla := range []uint16{300, 500, 800, 1000, 3000} {
		recs = append(recs, loadgen.Record{ID: uint32(i), SLAms: sla, Outcome: loadgen.OK, Site: 1, Region: rt.Route(1, sla, 0).Region})
	}
	recs = append(recs,
		loadgen.Record{ID: 10, SLAms: 300, Outcome: loadgen.OK, Site: 1, Region: 4},                          // disagrees with the plan
		loadgen.Record{ID: 11, SLAms: 300, Outcome: loadgen.OK, Site: 1, Region: 3, Flags: wire.FlagSpilled}, // spilled: not compared
		loadgen.Record{ID: 12, SLAms: 300, Outcome: loadgen.Timeout, Server: wire.NoServer})                  // unanswered: ignored
	rep, err := Carbon(cfg, c, recs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 7 || rep.PlanAgree != 5 || rep.PlanDisagree != 1 || rep.Spilled != 1 {
		t.Errorf("report %+v", rep)
	}
	g := c.Carbon.Intensity
	var sum float64
	for _, r := range recs[:7] {
		sum += g[r.Region]
	}
	if want := sum / 7; rep.MeanGCO2 < want-0.01 || rep.MeanGCO2 > want+0.01 {
		t.Errorf("mean %v, want %v", rep.MeanGCO2, want)
	}
	if rep.BaselineGCO2 < g[0]-0.01 || rep.BaselineGCO2 > g[0]+0.01 { // mumbai's nearest is ap-south-1
		t.Errorf("baseline %v, want %v", rep.BaselineGCO2, g[0])
	}
	if rep.Sites[0].Nearest != "ap-south-1" || rep.Sites[0].Requests != 7 || rep.Sites[1].Requests != 0 {
		t.Errorf("sites %+v", rep.Sites)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "carbon.txt", buf.Bytes())
	if _, err := Carbon(cfg, c, []loadgen.Record{{Outcome: loadgen.OK, Site: 9}}); err == nil {
		t.Error("unknown site accepted")
	}
	if _, err := Carbon(cfg, c, []loadgen.Record{{Outcome: loadgen.OK, Site: 1, Region: 11}}); err == nil {
		t.Error("unconfigured region accepted")
	}
}
