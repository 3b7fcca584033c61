// Command testbedctl is the Go side of `make mininet` for what the product
// commands do not do: it derives the Mininet topology from the testbed
// configuration, sizes the server pools for the run's load (Little's law),
// waits for the switch's P4Runtime server, checks that every server slot
// was released (reading registers over BMv2's Thrift API where BMv2's
// P4Runtime server does not implement register reads), and summarises the
// load generators' results: SLA accounting at the emulated latencies and
// raw, the testbed's overhead, and carbon per hour the daemon applied.
// The switch is programmed by the product itself: `p4ctl push pipeline`
// and the daemon, `p4ctl run --replay`.
//
//	testbedctl topo    -config mininet/testbed.yaml [-scale 1]
//	testbedctl size    -config F -rate 50 -scale 1 -hour START -hours N [-o table|json]
//	testbedctl wait    -grpc 127.0.0.1:9559 [-timeout 60s]
//	testbedctl state   -grpc ADDR [-servers 10]
//	testbedctl summary -config F -topology T [-daemon-log L -grace 1s | -hour H] [-capacity C] [-o table|json] client1.json ...
//	testbedctl p4info  (the embedded target's P4Info, text format: for the embedded switch without p4c outputs)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/bmv2rt"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/testbed"
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
		fmt.Fprintln(stderr, "usage: testbedctl topo|size|wait|state|summary|p4info [flags]")
		return 2
	}
	cmds := map[string]func(context.Context, []string, io.Writer) error{
		"topo": topo, "size": size, "wait": wait, "state": state, "summary": summary, "p4info": p4infoCmd,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "testbedctl: unknown command %q (topo, size, wait, state, summary, p4info)\n", args[0])
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

// state prints the switch's dispatch events and checks that every server
// slot was released (every credit's outstanding count and every
// region_outstanding cell is 0).
func state(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	addr := fs.String("grpc", "127.0.0.1:9559", "P4Runtime address")
	deviceID := fs.Uint64("device-id", 1, "P4Runtime device id")
	servers := fs.Int("servers", pipeline.MaxServers, "server ids to show (0..servers-1)")
	thrift := fs.String("thrift-addr", "127.0.0.1:9090", "BMv2's Thrift server, for register reads where P4Runtime has none")
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
	fmt.Fprint(out, "dispatch_events:")
	for _, l := range pipeline.Lanes() {
		events, err := c.ReadCounter(ctx, l.Counter(), -1)
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.Packets != 0 {
				fmt.Fprintf(out, " %s=%d", pipeline.Event(e.Index), e.Packets)
			}
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
	regs := []string{pipeline.RegisterRegionOutstanding}
	for slot := range pipeline.Candidates {
		regs = append(regs, pipeline.RegisterServerCredit(slot))
	}
	rr := &bmv2rt.Registers{P4: c, Thrift: func(ctx context.Context) (*bmv2rt.Client, error) {
		return bmv2rt.Dial(ctx, *thrift, bmv2rt.Options{})
	}}
	defer rr.Close()
	for _, reg := range regs {
		cells, err := rr.Read(ctx, reg, -1)
		if err != nil {
			return err
		}
		vals := make([]uint64, len(cells))
		for i, cell := range cells {
			vals[i] = cell.Value
		}
		for i, v := range vals {
			if reg != pipeline.RegisterRegionOutstanding {
				v = uint64(pipeline.CreditFromCell(v).Outstanding)
			}
			if v != 0 {
				held++
				fmt.Fprintf(out, "%s[%d] = %d\n", reg, i, v)
			}
		}
	}
	if held == 0 {
		fmt.Fprintln(out, "slots released: every server credit and region_outstanding cell is 0")
		return nil
	}
	fmt.Fprintf(out, "slots NOT released: %d non-zero cells\n", held)
	return errFailed
}

// p4infoCmd prints the embedded target's P4Info (pipeline.Schema with p4c's
// ids) in text format, for runs of the embedded switch where p4c's output is
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
