// Command testbedctl is the Go side of `make mininet`: it derives the
// Mininet topology from the testbed configuration, waits for the switch's
// P4Runtime server, pushes the pipeline and the compiled tables, and
// summarises the load generators' results with their carbon accounting.
//
//	testbedctl topo    -config mininet/testbed.yaml [-scale 0.1]
//	testbedctl wait    -grpc 127.0.0.1:9559 [-timeout 60s]
//	testbedctl push    -config F -hour 2022-01-10T00:00:00Z -grpc ADDR -p4info F -device-config F
//	testbedctl state   -grpc ADDR [-servers 10]
//	testbedctl summary -config F -hour T [-o table|json] client1.json client2.json ...
//	testbedctl p4info  (the embedded target's P4Info, text format: for the stand-in switch)
//
// push stands in for `p4ctl push pipeline` followed by `p4ctl run --replay`
// (one hour) until those commands exist; it uses the same packages
// (pkg/compiler, pkg/p4rt) through pkg/testbed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/loadgen"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/stats"
	"github.com/p4ctl/p4ctl/pkg/testbed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errFailed is a verdict already printed: exit 1 without another message.
var errFailed = errors.New("failed")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: testbedctl topo|wait|push|state|summary|p4info [flags]")
		return 2
	}
	cmds := map[string]func(context.Context, []string, io.Writer) error{
		"topo": topo, "wait": wait, "push": push, "state": state, "summary": summary, "p4info": p4infoCmd,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "testbedctl: unknown command %q (topo, wait, push, state, summary, p4info)\n", args[0])
		return 2
	}
	if err := cmd(ctx, args[1:], stdout); err != nil {
		var ue usageError
		switch {
		case errors.Is(err, errFailed):
			return 1
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "testbedctl %s: %v\n", args[0], err)
			return 2
		}
		fmt.Fprintf(stderr, "testbedctl %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ error }

func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	return nil
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, usageError{errors.New("-config is required")}
	}
	return config.Load(path)
}

func parseHour(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usageError{fmt.Errorf("-hour %q: want RFC 3339, e.g. 2022-01-10T00:00:00Z", s)}
	}
	return t, nil
}

func topo(_ context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("topo", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "testbed configuration (controller YAML)")
	scale := fs.Float64("scale", testbed.DefaultLatencyScale, "factor applied to site→region P95 latencies")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	t, err := testbed.Plan(cfg, *scale)
	if err != nil {
		return err
	}
	return t.WriteJSON(out)
}

// wait polls the P4Runtime server until it answers Capabilities.
func wait(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	addr := fs.String("grpc", "127.0.0.1:9559", "P4Runtime address")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := p4rt.Dial(*addr, p4rt.WithCallTimeout(time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := c.Capabilities(ctx)
		if err == nil {
			fmt.Fprintf(out, "P4Runtime %s ready at %s\n", v, *addr)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("P4Runtime at %s not ready after %v: %w", *addr, *timeout, err)
		case <-tick.C:
		}
	}
}

func push(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "testbed configuration (controller YAML)")
	hourS := fs.String("hour", "2022-01-10T00:00:00Z", "carbon hour the tables are compiled for")
	addr := fs.String("grpc", "127.0.0.1:9559", "P4Runtime address")
	deviceID := fs.Uint64("device-id", 1, "P4Runtime device id")
	p4info := fs.String("p4info", "", "P4Info (text format) to set with the pipeline; empty: keep the switch's pipeline")
	devCfg := fs.String("device-config", "", "target device config (BMv2 JSON) to set with -p4info")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	hour, err := parseHour(*hourS)
	if err != nil {
		return err
	}
	compiled, err := testbed.Compile(cfg, hour, 1)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := testbed.Connect(ctx, *addr, *deviceID)
	if err != nil {
		return err
	}
	defer c.Close()
	if *p4info != "" {
		info, err := p4rt.LoadP4Info(*p4info)
		if err != nil {
			return err
		}
		var dev []byte
		if *devCfg != "" {
			if dev, err = os.ReadFile(*devCfg); err != nil {
				return fmt.Errorf("read -device-config: %w", err)
			}
		}
		if err := c.SetP4Info(ctx, p4rt.VerifyAndCommit, info, dev, 1); err != nil {
			return fmt.Errorf("set pipeline: %w", err)
		}
		fmt.Fprintf(out, "pipeline set: %s + %s\n", *p4info, *devCfg)
	}
	plan, err := testbed.Push(ctx, c, compiled.State)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pushed %s: %d entries, policy %s, carbon hour %s (%s)\n", plan, len(compiled.State.Entries),
		compiled.State.Meta.Policy, compiled.Hour.Format(time.RFC3339), compiled.Carbon.Source)
	return nil
}

// state prints the switch's dispatch events and checks that every server
// slot was released (server_outstanding and region_outstanding all 0).
func state(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	addr := fs.String("grpc", "127.0.0.1:9559", "P4Runtime address")
	deviceID := fs.Uint64("device-id", 1, "P4Runtime device id")
	servers := fs.Int("servers", pipeline.MaxServers, "server ids to show (0..servers-1)")
	cli := fs.String("cli", "simple_switch_CLI", "BMv2 CLI for register reads when P4Runtime does not implement them")
	thrift := fs.Int("thrift-port", testbed.DefaultThriftPort, "BMv2 Thrift port (for -cli)")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	c, err := p4rt.Dial(*addr, p4rt.WithDeviceID(*deviceID))
	if err != nil {
		return err
	}
	defer c.Close()
	events, err := c.ReadCounter(ctx, pipeline.CounterDispatchEvents, -1)
	if err != nil {
		return err
	}
	fmt.Fprint(out, "dispatch_events:")
	for _, e := range events {
		if e.Packets != 0 {
			fmt.Fprintf(out, " %s=%d", pipeline.Event(e.Index), e.Packets)
		}
	}
	fmt.Fprintln(out)
	bound, err := c.ReadCounter(ctx, pipeline.CounterServerBound, -1)
	if err != nil {
		return err
	}
	fmt.Fprint(out, "server_bound:")
	for _, b := range bound {
		if int(b.Index) < *servers {
			fmt.Fprintf(out, " %d=%d", b.Index, b.Packets)
		}
	}
	fmt.Fprintln(out)
	held := 0
	for _, reg := range []string{pipeline.RegisterServerOutstanding, pipeline.RegisterRegionOutstanding} {
		var vals []uint64
		cells, err := c.ReadRegister(ctx, reg, -1)
		switch {
		case err == nil:
			for _, cell := range cells {
				vals = append(vals, cell.Value)
			}
		case status.Code(err) == codes.Unimplemented:
			// BMv2's PI server: "Register reads are not supported yet".
			if vals, err = testbed.ReadRegisterCLI(ctx, nil, *cli, *thrift, reg, -1); err != nil {
				return fmt.Errorf("P4Runtime cannot read registers here and the CLI failed: %w", err)
			}
		default:
			return err
		}
		for i, v := range vals {
			if v != 0 {
				held++
				fmt.Fprintf(out, "%s[%d] = %d\n", reg, i, v)
			}
		}
	}
	if held == 0 {
		fmt.Fprintln(out, "slots released: every server_outstanding and region_outstanding cell is 0")
		return nil
	}
	fmt.Fprintf(out, "slots NOT released: %d non-zero cells\n", held)
	return errFailed
}

// p4infoCmd prints the embedded target's P4Info (pipeline.Schema with p4c's
// ids) in text format, for runs with mininet/standin where p4c's output is
// not available.
func p4infoCmd(_ context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("p4info", flag.ContinueOnError)
	if err := parse(fs, args); err != nil {
		return err
	}
	b, err := prototext.MarshalOptions{Multiline: true}.Marshal(dataplane.DefaultP4Info())
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// Report is the summary of a testbed run: every client's load generator
// merged, each client alone, and the carbon accounting.
type Report struct {
	All     *loadgen.Summary            `json:"all"`
	Clients map[string]*loadgen.Summary `json:"clients"`
	Carbon  *testbed.CarbonReport       `json:"carbon"`
	// Overhead is, per (site, region), the round trip beyond the emulated
	// delay: what the switch, the veths, the hosts and the server added
	// (with -topology).
	Overhead []Overhead `json:"overhead,omitempty"`
	// Violations are requests that did not meet their SLA (late, nacked
	// or unanswered).
	Violations int  `json:"sla_violations"`
	Pass       bool `json:"pass"`
}

// Overhead is the testbed's own latency on one (site, region) path.
type Overhead struct {
	Site    int     `json:"site"`
	Region  string  `json:"region"`
	DelayMs float64 `json:"emulated_delay_ms"`
	Replies int     `json:"replies"`
	Late    int     `json:"late"`
	P50ms   float64 `json:"p50_ms"`
	P90ms   float64 `json:"p90_ms"`
	P99ms   float64 `json:"p99_ms"`
	P999ms  float64 `json:"p999_ms"`
}

// overheads computes Overhead rows from replies and the topology's delays.
func overheads(t *testbed.Topology, recs []loadgen.Record) []Overhead {
	type key struct {
		site   int
		region int
	}
	delay := map[key]float64{}
	siteID := map[string]int{}
	for _, c := range t.Clients {
		siteID[c.Site] = c.SiteID
	}
	for _, s := range t.Servers {
		for _, d := range s.Delays {
			delay[key{siteID[d.Site], s.RegionIndex}] = d.DelayMs
		}
	}
	samples := map[key][]float64{}
	late := map[key]int{}
	for _, r := range recs {
		if r.Outcome != loadgen.OK {
			continue
		}
		k := key{int(r.Site), int(r.Region)}
		samples[k] = append(samples[k], float64(r.RTT)/1e6-delay[k])
		if !r.SLAMet {
			late[k]++
		}
	}
	var out []Overhead
	for k, xs := range samples {
		slices.Sort(xs)
		q := func(p float64) float64 { return math.Round(stats.QuantileSorted(xs, p)*1000) / 1000 }
		out = append(out, Overhead{Site: k.site, Region: loadgen.RegionName(uint8(k.region)), DelayMs: delay[k],
			Replies: len(xs), Late: late[k], P50ms: q(0.5), P90ms: q(0.9), P99ms: q(0.99), P999ms: q(0.999)})
	}
	slices.SortFunc(out, func(a, b Overhead) int {
		if a.Site != b.Site {
			return a.Site - b.Site
		}
		return strings.Compare(a.Region, b.Region)
	})
	return out
}

// WriteText renders the report.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintln(w, "== load (all clients)")
	if err := r.All.WriteText(w); err != nil {
		return err
	}
	if len(r.Overhead) > 0 {
		fmt.Fprintln(w, "\n== testbed overhead (RTT minus emulated delay, ms)")
		rows := make([][]string, 0, len(r.Overhead))
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
		for _, o := range r.Overhead {
			rows = append(rows, []string{strconv.Itoa(o.Site), o.Region, f(o.DelayMs), strconv.Itoa(o.Replies), strconv.Itoa(o.Late),
				f(o.P50ms), f(o.P90ms), f(o.P99ms), f(o.P999ms)})
		}
		if err := output.WriteTable(w, []string{"site", "region", "delay_ms", "replies", "late", "p50", "p90", "p99", "p99.9"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\n== carbon")
	if err := r.Carbon.WriteText(w); err != nil {
		return err
	}
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	_, err := fmt.Fprintf(w, "\n%s: %d requests, %d SLA violations, carbon saving %.2f %% vs nearest region, %d decisions disagree with the plan\n",
		verdict, r.All.Sent, r.Violations, r.Carbon.SavingPct, r.Carbon.PlanDisagree)
	return err
}

func summary(_ context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "testbed configuration (controller YAML)")
	hourS := fs.String("hour", "2022-01-10T00:00:00Z", "carbon hour the tables were compiled for")
	topoPath := fs.String("topology", "", "topology JSON (testbedctl topo) to compute the testbed overhead per path")
	var format output.Format = output.Table
	fs.Var(&format, "o", "output format: table, json or yaml")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no loadgen JSON files given")}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	hour, err := parseHour(*hourS)
	if err != nil {
		return err
	}
	compiled, err := testbed.Compile(cfg, hour, 1)
	if err != nil {
		return err
	}
	rep := &Report{Clients: map[string]*loadgen.Summary{}}
	var all []loadgen.Record
	var elapsed time.Duration
	scale := 0.0
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
		if scale != 0 && lf.Summary.SLAScale != scale {
			return fmt.Errorf("%s: SLA scale %g differs from the other files' %g", path, lf.Summary.SLAScale, scale)
		}
		scale = lf.Summary.SLAScale
		rep.Clients[path] = lf.Summary
		all = append(all, lf.Records...)
		elapsed = max(elapsed, time.Duration(lf.Summary.ElapsedS*float64(time.Second)))
	}
	rep.All = loadgen.Summarize(all, elapsed, scale)
	for _, s := range rep.Clients {
		rep.All.Unmatched += s.Unmatched
		rep.All.Malformed += s.Malformed
	}
	if rep.Carbon, err = testbed.Carbon(cfg, compiled, all); err != nil {
		return err
	}
	if *topoPath != "" {
		b, err := os.ReadFile(*topoPath)
		if err != nil {
			return err
		}
		var t testbed.Topology
		if err := json.Unmarshal(b, &t); err != nil {
			return fmt.Errorf("%s: %w", *topoPath, err)
		}
		rep.Overhead = overheads(&t, all)
	}
	rep.Violations = rep.All.Sent - rep.All.SLAMet
	rep.Pass = rep.All.Sent > 0 && rep.Violations == 0 && rep.Carbon.PlanDisagree == 0
	if err := output.Print(out, format, rep); err != nil {
		return err
	}
	if !rep.Pass {
		return errFailed
	}
	return nil
}
