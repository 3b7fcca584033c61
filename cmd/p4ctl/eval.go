package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/research/eval/carbon"
)

func newEvalCmd(s *streams) *cobra.Command {
	return groupCmd("eval", "Run the research evaluations and put our numbers beside the papers'", newEvalCarbonCmd(s), newEvalStabilityCmd(s), newEvalScaleCmd(s))
}

// evalCarbonOptions are the flags of `p4ctl eval carbon`:
// carbon.CommandOptions bound to the command's.
type evalCarbonOptions struct{ carbon.CommandOptions }

func newEvalCarbonCmd(s *cmdutil.Streams) *cobra.Command {
	o := &evalCarbonOptions{}
	cmd := &cobra.Command{
		Use:   "carbon",
		Short: "Reproduce the SLA-constrained carbon-aware routing tables (policies A, B, C, C+, D, C+warm, C-cap)",
		Long: `Runs the paper's experiment: for each SLA class (300/500/800/1000/3000 ms) 30 runs
of 1000 requests at uniformly random hours of the period, plus 30 mixed runs of
5000 requests (20/30/20/20/10 %), in the 5- and 12-region pools, from the
Mumbai client site. Prints Table 3 and Table 4 analogues, 5→12 scaling,
decision times and the paper's figures beside ours (labelled), and writes
PNG and SVG plots.

Without --traces the carbon data is the built-in synthetic model (not measured
data, of lifecycle intensities: --metric direct needs --traces); every output
names the carbon source it used.

Limits (memory grows with them): --runs 2..10000, --requests and
--mixed-requests 1..2000000 per run, a period of at most ten years
(87840 hours), each --pools size once.

--sites FILE gives client sites other than the built-in mumbai (select one
with --site); its format (docs/CONFIG.md, "eval carbon --sites"):

  sites:
    - name: frankfurt-office
      prefixes: [10.8.0.0/16]          # optional
      latencies:                       # every region of every pool
        - {region: ap-south-1, p95_ms: 130, cold_ms: 420}
        - {region: Singapore, p95_ms: 170, cold_ms: 460}
        - {region: ap-southeast-2, p95_ms: 280}   # no cold_ms: unknown
        - {region: IE, p95_ms: 30, cold_ms: 260}
        - {region: us-east-1, p95_ms: 95, cold_ms: 380}

region is an AWS id, city or zone; p95_ms in (0, 65535), cold_ms in
[0, 65535). This is not the sites: block of a controller configuration
(latency: map, profile:, id:), which is refused.`,
		Example: `  p4ctl eval carbon
  p4ctl eval carbon --sites sites.yaml --site frankfurt-office --pools 5
  p4ctl eval carbon --traces ../shared/data/carbon --period 2022-01
  p4ctl eval carbon --latency-model sampled -o json`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.Traces, "traces", "", "directory of hourly carbon CSVs (normalized or Electricity Maps portal); default: built-in synthetic model")
	f.StringVar(&o.Metric, "metric", "lca", "Electricity Maps column of --traces: lca or direct (the synthetic model is lca)")
	f.StringVar(&o.Fill, "fill", "none", "gaps in --traces: none (error), previous or linear")
	f.StringVar(&o.Period, "period", "", "month YYYY-MM (default: the first whole month of the data)")
	f.StringVar(&o.From, "from", "", "period start YYYY-MM-DD or RFC 3339 (with --to, instead of --period)")
	f.StringVar(&o.To, "to", "", "period end, exclusive")
	f.Uint64Var(&o.CarbonSeed, "carbon-seed", 1, "seed of the synthetic carbon model")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the request sampling")
	f.IntVar(&o.Runs, "runs", 30, fmt.Sprintf("runs per class, 2..%d", carbon.MaxRuns))
	f.IntVar(&o.Requests, "requests", 1000, fmt.Sprintf("requests per run of one SLA class, 1..%d", carbon.MaxRequests))
	f.IntVar(&o.Mixed, "mixed-requests", 5000, fmt.Sprintf("requests per mixed run, 1..%d", carbon.MaxRequests))
	f.IntSliceVar(&o.Pools, "pools", []int{5, 12}, fmt.Sprintf("pool sizes (first n catalog regions, 1..%d), each once", regions.NumRegions))
	f.Float64SliceVar(&o.SLAs, "sla", []float64{300, 500, 800, 1000, 3000}, "SLA classes in ms (the mix applies to these five)")
	f.Lookup("sla").DefValue = "[300,500,800,1000,3000]" // not [300.000000,…]
	f.StringVar(&o.SitesFile, "sites", "", "YAML file of client sites: a top-level sites: list of {name, prefixes, latencies: [{region, p95_ms, cold_ms}]} (see above, docs/CONFIG.md; default: the built-in mumbai site)")
	f.StringVar(&o.Site, "site", "mumbai", "client site name")
	f.Float64Var(&o.Alpha, "alpha", 0.8, "C+: weight of the cold-start latency")
	f.Float64Var(&o.W, "w", 0.5, "D: weight of carbon (1-w for latency)")
	f.StringVar(&o.ColdMissing, "cold-missing", "exclude", "C+ for regions without a cold latency: exclude or warm")
	f.DurationVar(&o.KeepAlive, "keep-alive", 10*time.Minute, "C+warm: keep-alive window")
	f.Float64Var(&o.CapShare, "cap-share", 0.4, "C-cap: capacity per region as a share of a run's requests")
	f.StringVar(&o.LatencyModel, "latency-model", carbon.LatencyP95, "p95 (the paper) or sampled (log-normal RTT fitted to the P95)")
	f.Float64Var(&o.LatencySigma, "latency-sigma", 0.2, "sampled latency (--latency-model sampled): log-normal σ of ln(RTT in ms), 0 < σ < 3")
	f.StringVar(&o.OutDir, "out-dir", "out/eval-carbon", "directory for PNG and SVG plots")
	f.BoolVar(&o.NoPlots, "no-plots", false, "do not write plots")
	f.BoolVar(&o.Quick, "quick", false, "small run for tests: 4 runs, 200 requests, 1000 mixed")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete loads the carbon source and site and fills the experiment config.
func (o *evalCarbonOptions) Complete(c *cobra.Command, _ []string) error {
	o.Flags = flagsOf(c)
	return o.CommandOptions.Complete(cmdContext(c), c.ErrOrStderr())
}
