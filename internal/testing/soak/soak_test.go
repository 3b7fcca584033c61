package soak_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/soak"
	"github.com/p4ctl/p4ctl/pkg/config"
)

// The soak with faults (internal/testing/soak): the controller daemon against
// embedded switches for replayed hours while the controller and the
// switches (with and without pipeline) are killed and restarted, carbon
// responses are dropped and P4Runtime calls delayed. No routed request may
// be misrouted, every switch must end holding the controller's plan, and
// goroutines and heap must be flat.
//
// `go test` runs a few seconds of it (skipped with -short); `make soak`
// (P4CTL_SOAK=1) runs SOAK_DURATION (default 10m) of faults over
// SOAK_HOURS replayed hours (default one per 2 s) and writes the report to
// SOAK_REPORT (default out/soak/report.json).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak is skipped in -short mode")
	}
	o := soak.Options{Duration: 3 * time.Second, Hours: 24, ChaosEvery: 250 * time.Millisecond, Rate: 1000}
	long := os.Getenv("P4CTL_SOAK") != ""
	if long {
		o = soak.Options{Duration: 10 * time.Minute}
		if v := os.Getenv("SOAK_DURATION"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				t.Fatalf("SOAK_DURATION=%q: want a positive duration such as 10m", v)
			}
			o.Duration = d
		}
		if v := os.Getenv("SOAK_HOURS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				t.Fatalf("SOAK_HOURS=%q: want a positive number of hours", v)
			}
			o.Hours = n
		}
	}
	if os.Geteuid() == 0 {
		o.XDP = 1 // one of the switches runs the XDP program
	} else {
		t.Log("not root: every switch runs the Go model (the XDP one needs root)")
	}
	cfg, err := config.Load("../../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o.Config = cfg
	o.Progress = func(s soak.Sample) {
		t.Logf("%6s: replayed %s, %d goroutines, heap %.1f MiB, RSS %.1f MiB, %d requests, %d misroutes",
			s.Elapsed.Round(time.Second), s.Hour.Format("2006-01-02T15"), s.Goroutines, float64(s.HeapInuse)/(1<<20), float64(s.RSS)/(1<<20),
			s.Requests, s.Misroutes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+5*time.Minute)
	defer cancel()
	rep, err := soak.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Summary())
	if long {
		path := os.Getenv("SOAK_REPORT")
		if path == "" {
			path = filepath.Join("..", "..", "out", "soak", "report.json")
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err == nil {
				t.Logf("report: %s", path)
			}
		}
	}
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	// Every kind of fault happened (the first four actions are one of each).
	if rep.ControllerKills == 0 || rep.SwitchRestartsWithPipeline == 0 || rep.SwitchRestartsWithoutPipeline == 0 ||
		rep.CarbonOutages == 0 || rep.CarbonDropped == 0 || rep.RPCDelayed == 0 {
		t.Errorf("not every fault was injected: %+v", rep)
	}
}
