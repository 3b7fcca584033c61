package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/wire"
	"github.com/p4ctl/p4ctl/testbed"
)

// compileHours compiles cfg for n consecutive hours from start.
func compileHours(cfg *config.Config, start time.Time, n int) ([]*testbed.Compiled, error) {
	out := make([]*testbed.Compiled, 0, n)
	for i := range n {
		c, err := testbed.Compile(cfg, start.Add(time.Duration(i)*time.Hour), 1)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Sizing is what `testbedctl size` prints: the load it sized for and every
// local pool's Little's-law sizing.
type Sizing struct {
	RatePerClient float64       `json:"rate_per_client"`
	Scale         float64       `json:"latency_scale"`
	SLAMix        string        `json:"sla_mix"`
	ExecMix       string        `json:"exec_mix"`
	OverheadMs    float64       `json:"overhead_allowance_ms"`
	HeadroomSigma int           `json:"headroom_sigmas"`
	Hours         []time.Time   `json:"hours"`
	Pools         testbed.Sizes `json:"pools"`
	Undersized    []string      `json:"undersized,omitempty"`
}

// WriteText renders the sizing.
func (s *Sizing) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "pool sizing (Little's law): %g req/s per client, latency scale %g, SLA mix %s, exec mix %s, +%g ms overhead allowance, %d σ headroom, hours %s..%s\n",
		s.RatePerClient, s.Scale, s.SLAMix, s.ExecMix, s.OverheadMs, s.HeadroomSigma,
		s.Hours[0].Format("2006-01-02T15"), s.Hours[len(s.Hours)-1].Format("2006-01-02T15"))
	if err := s.Pools.WriteText(w); err != nil {
		return err
	}
	if len(s.Undersized) > 0 {
		_, err := fmt.Fprintf(w, "WARNING: pools %v have a bound below what this load needs: expect holds and forced binds (raise bound in the configuration or lower the rate)\n", s.Undersized)
		return err
	}
	_, err := fmt.Fprintln(w, "every pool's bound covers this load: a run should see no holds and no forced binds")
	return err
}

// size prints the Little's-law sizing of the configuration's pools for a
// run's load and hours. It exits 0 even when a pool is undersized (the run
// is still meaningful; it will show holds).
func size(_ context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "testbed configuration (controller YAML)")
	rate := fs.Float64("rate", 50, "requests/s per client (one client per site)")
	scale := fs.Float64("scale", testbed.DefaultLatencyScale, "latency scale")
	hourS := fs.String("hour", "2022-01-10T00:00:00Z", "first carbon hour of the run")
	hours := fs.Int("hours", 1, "number of hours the run covers")
	slaMix := fs.String("sla-mix", loadgen.DefaultSLAMix().String(), "loadgen SLA mix")
	execMix := fs.String("exec-mix", loadgen.DefaultExecMix().String(), "loadgen exec-class mix")
	overhead := fs.Duration("overhead", testbed.DefaultOverheadAllowance, "slot holding time added per request for the testbed's own latency")
	var format output.Format = output.Table
	fs.Var(&format, "o", "output format: table, json or yaml")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *hours < 1 || *hours > 24*366 {
		return usageError{fmt.Errorf("-hours %d: want 1..%d", *hours, 24*366)}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	start, err := parseHour(*hourS)
	if err != nil {
		return err
	}
	sm, err := loadgen.ParseMix[uint16](*slaMix, 16)
	if err != nil {
		return usageError{fmt.Errorf("-sla-mix: %w", err)}
	}
	em, err := loadgen.ParseMix[uint8](*execMix, 8)
	if err != nil {
		return usageError{fmt.Errorf("-exec-mix: %w", err)}
	}
	compiled, err := compileHours(cfg, start, *hours)
	if err != nil {
		return err
	}
	pools, err := testbed.Size(cfg, compiled, testbed.Load{Rate: *rate, SLAMix: sm, ExecMix: em, Scale: *scale, Overhead: *overhead})
	if err != nil {
		return err
	}
	s := &Sizing{RatePerClient: *rate, Scale: *scale, SLAMix: sm.String(), ExecMix: em.String(),
		OverheadMs: float64(*overhead) / float64(time.Millisecond), HeadroomSigma: testbed.HeadroomSigmas, Pools: pools}
	for _, c := range compiled {
		s.Hours = append(s.Hours, c.Hour)
	}
	for _, p := range testbed.Sizes(pools).Undersized() {
		s.Undersized = append(s.Undersized, p.Region)
	}
	return output.Print(out, format, s)
}

// Report is the summary of a testbed run: every client's load generator
// merged, the SLA accounting (emulated and raw), dispatch, and carbon.
type Report struct {
	All      *loadgen.Summary            `json:"all"`
	Clients  map[string]*loadgen.Summary `json:"clients"`
	SLA      *testbed.SLAReport          `json:"sla"`
	Dispatch Dispatch                    `json:"dispatch"`
	Carbon   *testbed.CarbonReport       `json:"carbon"`
	// Hours are the hours the daemon applied (with -daemon-log).
	Hours []testbed.Applied `json:"hours_applied,omitempty"`
	Pass  bool              `json:"pass"`
	// Failures say why the run failed (empty when it passed).
	Failures []string `json:"failures,omitempty"`
}

// Dispatch counts the requests the switch could not bind at once, against
// the pool sizing the run was started with.
type Dispatch struct {
	Held       int      `json:"held"`   // requests recirculated at least once
	Holds      int      `json:"holds"`  // recirculations in all
	Forced     int      `json:"forced"` // bound above the bound after max_holds
	Nacked     int      `json:"nacked"`
	Undersized []string `json:"undersized,omitempty"` // pools the sizing found too small (with -capacity)
	Sized      bool     `json:"sized"`                // a sizing was given
}

// WriteText renders the report.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "== load (all clients; the SLA line is the raw RTT against SLA × scale)")
	if err := r.All.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== SLA: emulated latency (routing) vs raw RTT (routing + testbed)")
	if err := r.SLA.WriteText(w); err != nil {
		return err
	}
	d := r.Dispatch
	fmt.Fprintf(w, "\n== dispatch\nheld %d requests (%d holds), forced %d, nacked %d", d.Held, d.Holds, d.Forced, d.Nacked)
	switch {
	case !d.Sized:
		fmt.Fprintln(w)
	case len(d.Undersized) > 0:
		fmt.Fprintf(w, "; pools %v were sized below this load (holds expected)\n", d.Undersized)
	case d.Held+d.Forced > 0:
		fmt.Fprintln(w, "; UNEXPECTED: every pool was sized for this load")
	default:
		fmt.Fprintln(w, "; every pool was sized for this load (Little's law)")
	}
	if len(r.Hours) > 0 {
		fmt.Fprintln(w, "\n== hours applied by p4ctl run (daemon log)")
		for _, h := range r.Hours {
			pushed := "never finished"
			if !h.Pushed.IsZero() {
				pushed = "pushed " + h.Pushed.Format("15:04:05.000")
			}
			fmt.Fprintf(w, "%s  planned %s, %s\n", h.Hour.Format(time.RFC3339), h.Planned.Format("15:04:05.000"), pushed)
		}
	}
	fmt.Fprintln(w, "\n== carbon")
	if err := r.Carbon.WriteText(w); err != nil {
		return err
	}
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL (" + strings.Join(r.Failures, "; ") + ")"
	}
	o := r.SLA.Overhead
	_, err := fmt.Fprintf(w, "\n%s: %d requests; %d SLA violations at the emulated latencies; raw RTT over budget %d (testbed overhead p50 %.3f / p99 %.3f / p99.9 %.3f / max %.3f ms); carbon saving %.2f %% vs nearest region; held %d, forced %d; %d decisions disagree with the plan\n",
		verdict, r.All.Sent, r.SLA.EmulatedViolations, r.SLA.RawOverBudget, o.P50, o.P99, o.P999, o.Max, r.Carbon.SavingPct,
		r.Dispatch.Held, r.Dispatch.Forced, r.Carbon.PlanDisagree)
	return err
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func summary(_ context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "testbed configuration (controller YAML)")
	topoPath := fs.String("topology", "", "topology JSON (testbedctl topo): the emulated delays and latency scale (required)")
	daemonLog := fs.String("daemon-log", "", "JSON log of p4ctl run: the hours it applied and when")
	grace := fs.Duration("grace", time.Second, "the daemon's --grace (with -daemon-log)")
	hourS := fs.String("hour", "2022-01-10T00:00:00Z", "carbon hour the tables were compiled for (without -daemon-log)")
	capPath := fs.String("capacity", "", "pool sizing JSON (testbedctl size -o json) the run was started with")
	var format output.Format = output.Table
	fs.Var(&format, "o", "output format: table, json or yaml")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no loadgen JSON files given")}
	}
	if *topoPath == "" {
		return usageError{errors.New("-topology is required")}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	var topo testbed.Topology
	if err := readJSON(*topoPath, &topo); err != nil {
		return err
	}
	rep := &Report{Clients: map[string]*loadgen.Summary{}}
	var compiled []*testbed.Compiled
	var sched *testbed.Schedule
	if *daemonLog != "" {
		f, err := os.Open(*daemonLog)
		if err != nil {
			return err
		}
		applied, err := testbed.ReadDaemonLog(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *daemonLog, err)
		}
		if len(applied) == 0 {
			return fmt.Errorf("%s: the daemon never planned an hour", *daemonLog)
		}
		rep.Hours = applied
		sched = &testbed.Schedule{Applied: applied, Grace: *grace, Margin: testbed.DefaultFlipMargin}
		for _, a := range applied {
			c, err := testbed.Compile(cfg, a.Hour, 1)
			if err != nil {
				return err
			}
			compiled = append(compiled, c)
		}
	} else {
		hour, err := parseHour(*hourS)
		if err != nil {
			return err
		}
		c, err := testbed.Compile(cfg, hour, 1)
		if err != nil {
			return err
		}
		compiled = []*testbed.Compiled{c}
	}

	var all []loadgen.Record
	var cands [][]int
	var elapsed time.Duration
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		lf, err := loadgen.ReadFile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if lf.Summary == nil {
			return fmt.Errorf("%s: no summary", path)
		}
		if lf.Summary.SLAScale != topo.LatencyScale {
			return fmt.Errorf("%s: SLA scale %g differs from the topology's latency scale %g", path, lf.Summary.SLAScale, topo.LatencyScale)
		}
		if sched != nil && lf.Summary.StartedAt.IsZero() {
			return fmt.Errorf("%s: no start time (needed to place requests in the daemon's hours)", path)
		}
		rep.Clients[path] = lf.Summary
		for _, r := range lf.Records {
			all = append(all, r)
			if sched != nil {
				cands = append(cands, sched.At(lf.Summary.StartedAt.Add(r.Sent)))
			}
		}
		elapsed = max(elapsed, time.Duration(lf.Summary.ElapsedS*float64(time.Second)))
	}
	rep.All = loadgen.Summarize(all, elapsed, topo.LatencyScale)
	for _, s := range rep.Clients {
		rep.All.Unmatched += s.Unmatched
		rep.All.Malformed += s.Malformed
	}
	if rep.SLA, err = testbed.SLA(&topo, all); err != nil {
		return err
	}
	if rep.Carbon, err = testbed.CarbonHours(cfg, compiled, all, cands); err != nil {
		return err
	}
	for _, r := range all {
		if r.Outcome == loadgen.Nack {
			rep.Dispatch.Nacked++
		}
		if r.Outcome != loadgen.OK && r.Outcome != loadgen.Nack {
			continue
		}
		if r.Flags&wire.FlagHeld != 0 {
			rep.Dispatch.Held++
		}
		if r.Flags&wire.FlagForced != 0 {
			rep.Dispatch.Forced++
		}
		rep.Dispatch.Holds += int(r.Holds)
	}
	if *capPath != "" {
		var s Sizing
		if err := readJSON(*capPath, &s); err != nil {
			return err
		}
		rep.Dispatch.Sized = true
		rep.Dispatch.Undersized = slices.Clone(s.Undersized)
	}
	if rep.All.Sent == 0 {
		rep.Failures = append(rep.Failures, "no requests")
	}
	if n := rep.SLA.EmulatedViolations; n > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d SLA violations at the emulated latencies", n))
	}
	if n := rep.Carbon.PlanDisagree; n > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d decisions differ from the plan", n))
	}
	if d := rep.Dispatch; d.Sized && len(d.Undersized) == 0 && d.Held+d.Forced > 0 {
		rep.Failures = append(rep.Failures, "holds or forced binds although every pool was sized for the load")
	}
	rep.Pass = len(rep.Failures) == 0
	if err := output.Print(out, format, rep); err != nil {
		return err
	}
	if !rep.Pass {
		return errFailed
	}
	return nil
}
