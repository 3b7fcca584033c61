package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/research/sim/serverless"
	"github.com/p4ctl/p4ctl/research/sim/serverless/plots"
)

// simServerlessOptions are the flags of `p4ctl sim serverless`:
// serverless.CommandOptions bound to the command's.
type simServerlessOptions struct{ serverless.CommandOptions }

const simServerlessLong = `Simulate dispatch of serverless requests (Poisson arrivals; single calls or
chains of sequential stages) to a pool of pods under four policies
(PathFinder §5.3): late binding (a central FCFS queue served when a pod
reports idle, after a feedback delay), early binding (round robin at
arrival), early binding on expected remaining work (power of two) and
PathFinder (each stage held in the activator for min(E[S | class], 100 ms)
on a timer, so shorter stages bind first, then expected-remaining-work
power of two). Latency is end to end (arrival → completion), response time
arrival → start of execution (PathFinder §4.2, §5.5). Execution times
follow an Azure-Functions-like log-normal fit, a bounded Zipf
(a = 1.294789, m = 1571585) or a power law (a = 0.416, scale 54.37), each
in the unit that puts the pool at ρ = 0.9 at 20 req/s. Results are means
with 95 % CIs across seeds.

Experiments:
  sweep    (default) λ = 10, 12.5, 15, 17.5, 20 req/s × 3 distributions × 4 policies
  notify   λ = 20: late binding as its feedback delay grows (0–100 ms)
  figures  PathFinder's headline claims (§5.6) on the ALU and function-chain
           benchmarks: ours with CIs, the rule and a verdict
  bound    no simulation: the PathFinder waits per class and the set_pool /
           exec_class_cost values a controller could push
  ratios   the knative exploration swept over the activator ↔ pod hop
           (--hops) and the execution-time scale (--time-scales)

Scenarios (--scenario): pathfinder (the default: PathFinder's evaluated
system, 8 one-core pods, the ALU benchmark as single calls; --chain 1-3
for the function-chain benchmark) or knative (an exploration, not the
reproduction: the distributions in their literal units on 16 pods with
many slots each that do not slow each other, a 5 ms hop each way per bind).

Flags override the experiment's grid; giving one distribution, λ and policy
runs a single scenario. Plots (PNG and SVG) go to --out-dir.`

func newSimServerlessCmd(s *streams) *cobra.Command {
	o := &simServerlessOptions{}
	o.Plot = plots.Write
	cmd := &cobra.Command{
		Use:   "serverless [sweep|notify|figures|bound|ratios]",
		Short: "Simulate serverless dispatch: late/early binding vs PathFinder's bounded wait",
		Long:  simServerlessLong,
		Example: `  p4ctl sim serverless
  p4ctl sim serverless --quick -o json
  p4ctl sim serverless --dist zipf --lambda 20 --policy late,pathfinder --seeds 20
  p4ctl sim serverless notify
  p4ctl sim serverless figures -o json
  p4ctl sim serverless bound --dist azure --lambda 20
  p4ctl sim serverless --scenario knative
  p4ctl sim serverless ratios --quick`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.Dists, "dist", "", "distributions, comma-separated: azure, zipf, powerlaw, exp:MEAN_MS (default: the experiment's)")
	f.StringVar(&o.Lambdas, "lambda", "", "arrival rates in req/s, comma-separated (default: the experiment's)")
	f.StringVar(&o.Policies, "policy", "", "policies: late, early, early-random, early-exec, pathfinder, pathfinder-idle (default: the experiment's)")
	f.StringVar(&o.Notify, "notify-delay", "", "not ratios: late binding's feedback delays (a pod reporting idle), comma-separated durations (default 0; notify: 0,1ms,5ms,20ms,100ms)")
	f.IntVar(&o.Seeds, "seeds", 10, fmt.Sprintf("seeds per scenario, 1..%d (CIs are across seeds)", serverless.MaxSeeds))
	f.Uint64Var(&o.Seed, "seed", 1, "first seed")
	f.IntVar(&o.Requests, "requests", 50000, fmt.Sprintf("requests per run; requests × the longest chain at most %d stages", serverless.MaxRunStages))
	f.Float64Var(&o.Warmup, "warmup", 0.1, "fraction of requests left out of the metrics")
	f.StringVar(&o.Chain, "chain", "1", "stages per request, MIN-MAX (uniform) or N (default: 1, the ALU benchmark; knative 1-3)")
	f.Float64Var(&o.Noise, "estimate-noise", 0.5, "σ of the log-normal error of class recognition (0 = exact classes)")
	f.StringVar(&o.Scenario, "scenario", "pathfinder", "setting: pathfinder (PathFinder's evaluated system, §5.2) or knative (an exploration: literal units, 16 pods of many slots, a 5 ms hop each way per bind; docs/REPRODUCTION.md §3)")
	f.IntVar(&o.Pods, "pods", 8, fmt.Sprintf("pods (pathfinder: 8; knative: 16); 0 sizes each distribution's pool for utilization --rho-max at 20 req/s; a pool has at most %d pods × slots", serverless.MaxPoolSlots))
	f.IntVar(&o.Concurrency, "container-concurrency", 1, "stages one pod runs at once (pathfinder: 1, a pod has one core); 0 sizes it for --rho-max when --pods is given")
	f.StringVar(&o.Markdown, "markdown", "", "figures: also write the table as Markdown to this file (for docs/REPRODUCTION.md)")
	f.StringVar(&o.Hops, "hops", "0,5ms,50ms,250ms,500ms", "ratios: activator ↔ pod hops to sweep (each both the notify and the forward delay)")
	f.StringVar(&o.Scales, "time-scales", "1,0.1,0.05", fmt.Sprintf("ratios: execution-time scales to sweep (each in [%g, %g])", serverless.MinTimeScale, serverless.MaxTimeScale))
	f.Float64Var(&o.TimeScale, "time-scale", 1, fmt.Sprintf("not ratios: multiply every execution time, in [%g, %g] (the same shapes on another time scale: fewer concurrent invocations per req/s)", serverless.MinTimeScale, serverless.MaxTimeScale))
	f.DurationVar(&o.Forward, "forward-delay", 0, "not ratios: hop from the dispatcher to the pod every bound stage pays (knative: 5ms)")
	f.Float64Var(&o.RhoMax, "rho-max", 0.9, "utilization at λ = 20 req/s: the unit each distribution is given (pathfinder), or the pool sized (--pods 0)")
	f.Float64Var(&o.Delta, "delta", 0.01, "tolerance of the wait-bound derivation (probability a held stage is still unbound at its bound)")
	f.StringVar(&o.WaitBound, "wait-bound", "auto", `PathFinder's wait: "auto" (per class: min(E[S | class], 100 ms); knative: derived) or a duration for every class`)
	f.DurationVar(&o.Timeout, "request-timeout", 5*time.Minute, "a simulated request slower than this end to end counts as a timeout")
	f.IntVar(&o.Workers, "parallel", 0, "concurrent simulations (0 = GOMAXPROCS); never changes results")
	cmdutil.DeprecatedAlias(f, "timeout", "request-timeout")
	cmdutil.DeprecatedAlias(f, "workers", "parallel")
	f.BoolVar(&o.Quick, "quick", false, "3 seeds × 4000 requests (smoke test, < 10 s)")
	f.StringVar(&o.OutDir, "out-dir", "out/sim-serverless", "sweep and notify: directory for PNG and SVG plots")
	f.BoolVar(&o.NoPlots, "no-plots", false, "do not write plots")
	output.AddFlag(f, &o.Format)
	return cmd
}

// Complete builds the experiment configuration from the argument and flags.
func (o *simServerlessOptions) Complete(cmd *cobra.Command, args []string) error {
	o.Flags = flagsOf(cmd)
	return o.CommandOptions.Complete(args)
}
