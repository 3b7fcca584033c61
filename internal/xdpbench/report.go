package xdpbench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText prints the result as a table: per target the requests per
// second by generator cores, the ratio to the bare redirect, CPU per
// request, the XDP program's own cost, and the latency quantiles.
func (r *Result) WriteText(w io.Writer) error {
	mode := "requests only (random pools: one claim per request)"
	if r.Closed {
		mode = "closed loop (jbsq pools; every request answered, its reply releases)"
	}
	fmt.Fprintf(w, "Data planes on the same veths, one run (kernel %s, %d CPUs), %s.\n", r.Kernel, r.CPUs, mode)
	fmt.Fprintf(w, "Plan: %d regions (%d local pools of %d servers, %d remote), %d sites, %d servers.\n\n",
		Regions, LocalRegions, PoolSize, Regions-LocalRegions, Sites, Servers)
	cs := r.cores()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "target\t")
	for _, c := range cs {
		fmt.Fprintf(tw, "req/s %d core\t", c)
	}
	fmt.Fprint(tw, "x bare\tCPU/req\tprogram ns/run\truns/req\tp50\tp99\tp99 added\t\n")
	for _, run := range r.Runs {
		fmt.Fprintf(tw, "%s\t", run.Target)
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t", rate(run.Rate[c]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", ratio(run.XBare), dur(run.CPUPerRequest), num(run.ProgramNs, "%.0f"),
			num(run.PassesPerRequest, "%.2f"), dur(run.P50), dur(run.P99), dur(run.AddedP99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, run := range r.Runs {
		if run.CPUMeasure != "" {
			fmt.Fprintf(w, "CPU/req of %s: %s.\n", run.Target, run.CPUMeasure)
		}
		if run.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", run.Target, run.Note)
		}
	}
	fmt.Fprintf(w, "Latency: generator to sink at low load (one frame in flight, after the backlog drained), a bucket's upper edge: %v buckets to %v, then eight a doubling.\n", LatencyStep, BucketEdge(LatencyLinear-1))
	return nil
}

func rate(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.String()
}

func num(v float64, f string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(f, v)
}

// shortName is the target's name for benchmark metrics.
func (r Run) shortName() string {
	switch r.Target {
	case Bare:
		return "bare"
	case XDP:
		return "xdp"
	case GoModel:
		return "go"
	case BMv2:
		return "bmv2"
	}
	return "target"
}

func itoa(n int) string { return fmt.Sprint(n) }
