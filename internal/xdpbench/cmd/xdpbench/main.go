// Command xdpbench measures p4ctl's data planes on the same veths in one
// run (internal/xdpbench): the XDP program against a bare XDP redirect, the
// embedded Go target and BMv2. Root and Linux; BMv2 is skipped when absent.
//
//	go run ./internal/xdpbench/cmd/xdpbench [-closed] [-duration 2s] [-plots DIR] [-o json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/xdpbench"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "xdpbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o xdpbench.Options
	var targets, out, p4ctl, build, plots string
	flag.StringVar(&targets, "targets", "", "comma-separated targets (default all: "+strings.Join(xdpbench.AllTargets(), ", ")+")")
	flag.DurationVar(&o.Duration, "duration", 2*time.Second, "each throughput run")
	flag.BoolVar(&o.Closed, "closed", false, "closed loop: servers answer every request and replies release (jbsq pools)")
	flag.IntVar(&o.LatencyFrames, "latency-frames", 2000, "frames for the latency quantiles, one in flight at a time")
	flag.StringVar(&out, "o", "text", "output: text or json")
	flag.StringVar(&p4ctl, "p4ctl", "", "p4ctl binary (default: built from this tree)")
	flag.StringVar(&plots, "plots", "", "also draw the rates as DIR/xdpbench.png and .svg")
	flag.StringVar(&build, "bmv2-build", "p4src/build/v1model", "p4c's outputs for BMv2")
	flag.Parse()
	if out != "text" && out != "json" {
		return fmt.Errorf("-o %q: want text or json", out)
	}
	if targets != "" {
		o.Targets = strings.Split(targets, ",")
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root: network namespaces and XDP")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if p4ctl == "" {
		dir, err := os.MkdirTemp("", "xdpbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		p4ctl = filepath.Join(dir, "p4ctl")
		if b, err := exec.CommandContext(ctx, "go", "build", "-o", p4ctl, "github.com/p4ctl/p4ctl/cmd/p4ctl").CombinedOutput(); err != nil {
			return fmt.Errorf("go build p4ctl: %v\n%s", err, b)
		}
	}
	o.P4ctl = p4ctl
	if info, err := p4rt.LoadP4Info(filepath.Join(build, "p4ctl.p4info.txtpb")); err == nil {
		if blob, err := os.ReadFile(filepath.Join(build, "p4ctl.json")); err == nil {
			o.BMv2Config = &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: blob}
		}
	}
	o.Progress = func(s string) { fmt.Fprintln(os.Stderr, s) }
	res, err := xdpbench.Measure(ctx, o)
	if err != nil {
		return err
	}
	if plots != "" {
		files, err := res.WritePlot(plots)
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "plots:", strings.Join(files, " "))
	}
	if out == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(os.Stdout)
}
