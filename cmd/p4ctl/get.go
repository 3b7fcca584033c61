package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/bmv2rt"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// getOptions are the flags shared by `p4ctl get …`.
type getOptions struct {
	cmdutil.Flags
	conn     connFlags
	Pipeline string // --config p4info[,device-config], as p4runtime-shell
	Names    []string
	All      bool
	Format   output.Format
	// ThriftAddr is BMv2's Thrift server, for register reads where its
	// P4Runtime server has none ("" = the --grpc-addr host, port 9090).
	ThriftAddr string
	// Controller is the metrics server of a running controller (get
	// latency).
	Controller string

	what string
	regs *bmv2rt.Registers
}

func newGetCmd(s *streams) *cobra.Command {
	o := &getOptions{}
	cmd := groupCmd("get entries|regions|counters|registers|latency", "Read entries, counters and registers from a switch, learned latency from a controller")
	cmd.Long = `get reads a switch over P4Runtime (read-only: no arbitration, no election id
needed) and prints what it holds:

  entries     table entries (--table to narrow)
  regions     per region: next hop, rank in the active carbon generation,
              routed and fallback requests (counters), outstanding requests
  counters    indirect counter cells (--name to narrow; zero cells with --all)
  registers   register cells (--name to narrow; zero cells with --all)
  latency     the latency a running controller learned from the switches'
              latency digests, per (site, region), and its recent
              feasibility changes (--controller: its --metrics-addr)

BMv2's P4Runtime server cannot read registers; there, regions and registers
read them over BMv2's Thrift API (--thrift-addr; keep that port private,
e.g. inside BMv2's network namespace).

Names come from the switch's P4Info, or from --config P4INFO[,DEVICE_CONFIG]:
there --config means what it means in p4runtime-shell (a P4Info file), not
the controller configuration YAML that plan, diff, apply and run take.`
	pf := cmd.PersistentFlags()
	o.conn.add(pf, p4rt.DefaultAddress, 0, "unused: get only reads and never arbitrates (accepted for p4runtime-shell compatibility)")
	pf.StringVarP(&o.Pipeline, "config", "c", "", "P4INFO[,DEVICE_CONFIG] as in p4runtime-shell: the P4Info file to decode names with (the device config is ignored); not a controller YAML (default: the switch's P4Info)")
	pf.StringVar(&o.ThriftAddr, "thrift-addr", "", "BMv2's Thrift server (host:port) for register reads where its P4Runtime server has none (default: the --grpc-addr host, port 9090)")
	output.AddFlag(pf, &o.Format)
	sub := func(what, short, nameFlag, nameHelp string) *cobra.Command {
		c := &cobra.Command{
			Use:   what,
			Short: short,
			Args:  cobra.NoArgs,
			RunE:  runE(o, s),
		}
		if nameFlag != "" {
			c.Flags().StringSliceVar(&o.Names, nameFlag, nil, nameHelp)
			c.Flags().BoolVar(&o.All, "all", false, "include cells that are zero")
		}
		return c
	}
	entries := sub("entries", "Print table entries", "", "")
	entries.Flags().StringSliceVar(&o.Names, "table", nil, "only these tables (e.g. carbon_rank)")
	lat := sub("latency", "Print the latency a running controller learned (p4ctl run with latency.source measured or blend)", "", "")
	lat.Flags().StringVar(&o.Controller, "controller", controller.DefaultMetricsAddr, "the controller's metrics server (p4ctl run --metrics-addr)")
	cmd.AddCommand(entries, lat,
		sub("regions", "Print per-region routing state and counters", "", ""),
		sub("counters", "Print counter cells", "name", "only these counters (e.g. region_routed)"),
		sub("registers", "Print register cells", "name", "only these registers (e.g. server_credit_0)"))
	return cmd
}

// dialThrift connects to BMv2's Thrift server: --thrift-addr, or the host
// of --grpc-addr at BMv2's default port.
func (o *getOptions) dialThrift(ctx context.Context) (*bmv2rt.Client, error) {
	addr := o.ThriftAddr
	if addr == "" {
		host, _, err := net.SplitHostPort(o.conn.GRPCAddr)
		if err != nil {
			return nil, fmt.Errorf("--grpc-addr %q: %w", o.conn.GRPCAddr, err)
		}
		addr = net.JoinHostPort(host, strconv.Itoa(bmv2rt.DefaultPort))
	}
	c, err := bmv2rt.Dial(ctx, addr, bmv2rt.Options{})
	if err != nil {
		return nil, fmt.Errorf("%w (set --thrift-addr to BMv2's Thrift server)", err)
	}
	return c, nil
}

// Complete records which subcommand runs (entries, regions, counters or
// registers).
func (o *getOptions) Complete(c *cobra.Command, _ []string) error {
	o.what = c.Name()
	o.Flags = flagsOf(c)
	return nil
}

// switchFlags are get's flags about the switch and its program, which get
// latency (it reads a controller) does not use. --election-id is not
// among them: every get accepts it, unused, for p4runtime-shell
// compatibility, as its help says.
var switchFlags = append([]string{"config", "thrift-addr", "device-id", "insecure"}, connFlagNames...)

// Validate checks the flags; a flag the subcommand does not use is a
// usage error, not silently ignored.
func (o *getOptions) Validate() error {
	if err := o.RefuseEmpty(append([]string{"config", "thrift-addr", "controller"}, connFlagNames...)...); err != nil {
		return err
	}
	if o.what == "latency" {
		if err := o.RefuseGiven("get latency reads a running controller (--controller), not a switch", switchFlags...); err != nil {
			return err
		}
		if o.conn.Timeout <= 0 {
			return cmdutil.Usagef("--timeout must be > 0")
		}
		return cmdutil.CheckHostPort("--controller", o.Controller, false)
	}
	if o.what != "regions" && o.what != "registers" {
		if err := o.RefuseGiven("only get regions and get registers read BMv2's registers over Thrift", "thrift-addr"); err != nil {
			return err
		}
	}
	if o.ThriftAddr != "" {
		if err := cmdutil.CheckHostPort("--thrift-addr", o.ThriftAddr, false); err != nil {
			return err
		}
	}
	if err := o.conn.validate(true); err != nil {
		return err
	}
	if strings.Count(o.Pipeline, ",") > 1 {
		return cmdutil.Usagef("--config %q: want p4info[,device-config]", o.Pipeline)
	}
	return nil
}

// client dials the switch, with the P4Info of --config when given (a
// controller configuration given there is a usage error).
func (o *getOptions) client(ctx context.Context) (*p4rt.Client, error) {
	var extra []p4rt.Option
	if o.Pipeline != "" {
		path := strings.Split(o.Pipeline, ",")[0]
		if err := notControllerYAML(ctx, "get", "--config", path); err != nil {
			return nil, err
		}
		info, err := p4rt.LoadP4InfoContext(ctx, path)
		if err != nil {
			return nil, cmdutil.InputError(err)
		}
		extra = append(extra, p4rt.WithP4Info(info))
	}
	return o.conn.dial(p4rt.ElectionID{}, extra...)
}

// Run reads and prints.
func (o *getOptions) Run(ctx context.Context, s *streams) error {
	if o.what == "latency" {
		ctx, cancel := context.WithTimeout(ctx, o.conn.Timeout)
		defer cancel()
		t, err := controller.FetchLatency(ctx, o.Controller)
		if err != nil {
			return err
		}
		return output.Print(s.Out, o.Format, t)
	}
	c, err := o.client(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, o.conn.Timeout)
	defer cancel()
	if err := probe(ctx, c, "switch "+o.conn.GRPCAddr); err != nil {
		return err
	}
	idx, err := c.Index(ctx)
	if err != nil {
		return err
	}
	if err := o.matchesSwitch(ctx, c, idx); err != nil {
		return err
	}
	o.regs = &bmv2rt.Registers{P4: c, Thrift: o.dialThrift}
	defer o.regs.Close()
	var res output.Tabular
	switch o.what {
	case "entries":
		res, err = o.entries(ctx, c, idx)
	case "regions":
		res, err = o.regions(ctx, c, idx)
	case "counters":
		res, err = o.counters(ctx, c, idx)
	case "registers":
		res, err = o.registers(ctx, c, idx)
	}
	if err != nil {
		return err
	}
	if err := output.Print(s.Out, o.Format, res); err != nil {
		return err
	}
	if cr, ok := res.(controller.CellsView); ok && cr.Hidden > 0 {
		// A fresh switch printed an empty table without a word.
		fmt.Fprintf(s.Err, "note: %d cells are zero and not shown (%d shown); --all shows them\n", cr.Hidden, len(cr.Cells))
	}
	return nil
}

// matchesSwitch refuses a --config P4Info that is not the program the
// switch runs (its ids would decode nothing, or the wrong thing): "table id
// … is not in the P4Info" left the user to guess. A switch that does not
// say what it runs is read with the file, and a decoding error then says
// the file may not match.
func (o *getOptions) matchesSwitch(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) error {
	if o.Pipeline == "" {
		return nil
	}
	path := strings.Split(o.Pipeline, ",")[0]
	cur, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil || cur.GetP4Info() == nil {
		return nil
	}
	if d := p4rt.P4InfoDifference(cur.GetP4Info(), idx.P4Info()); d != "" {
		return fmt.Errorf("--config %s: this P4Info does not match the program the switch runs (first: the switch's, second: the file's; %s); leave out --config to read with the switch's own P4Info", path, d)
	}
	return nil
}

// p4infoHint adds to a decoding error that the --config P4Info may not be
// the switch's program.
func (o *getOptions) p4infoHint(err error) error {
	if err == nil || o.Pipeline == "" || !strings.Contains(err.Error(), "is not in the P4Info") {
		return err
	}
	return fmt.Errorf("%w: the P4Info of --config %s does not match the switch's program; leave out --config to read with the switch's own", err, strings.Split(o.Pipeline, ",")[0])
}

// fullNames resolves names given on the command line (full, or short as
// get prints them) to the switch's P4Info names of kind; none: all known.
func fullNames(names []string, known []string, kind string) ([]string, error) {
	if len(names) == 0 {
		return known, nil
	}
	var out []string
	for _, n := range names {
		found := ""
		for _, k := range known {
			if k == n || strings.HasSuffix(k, "."+n) {
				found = k
				break
			}
		}
		if found == "" {
			return nil, cmdutil.Usagef("no %s %q on the switch (have %s)", kind, n, strings.Join(shorten(known), ", "))
		}
		out = append(out, found)
	}
	return out, nil
}

func shorten(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = controller.ShortName(n)
	}
	return out
}

func (o *getOptions) entries(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	tables, err := fullNames(o.Names, idx.Tables(), "table")
	if err != nil {
		return nil, err
	}
	if len(o.Names) == 0 {
		tables = nil // one wildcard read
	}
	v, err := controller.ReadEntries(ctx, c, idx, tables)
	if err != nil {
		return nil, o.p4infoHint(err)
	}
	return v, nil
}

func (o *getOptions) counters(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	names, err := fullNames(o.Names, idx.Counters(), "counter")
	if err != nil {
		return nil, err
	}
	return controller.ReadCounters(ctx, c, names, o.All)
}

func (o *getOptions) registers(ctx context.Context, _ *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	names, err := fullNames(o.Names, idx.Registers(), "register")
	if err != nil {
		return nil, err
	}
	return controller.ReadRegisters(ctx, o.regs, names, o.All)
}

func (o *getOptions) regions(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		return nil, fmt.Errorf("get regions needs the p4ctl program on the switch: %w", err)
	}
	v, err := controller.ReadRegions(ctx, c, tr, o.regs)
	if err != nil {
		return nil, err
	}
	return v, nil
}
