package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/spf13/cobra"

	"github.com/p4ctl/p4ctl/pkg/bmv2rt"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/output"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
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
	if cr, ok := res.(cellRows); ok && cr.hidden > 0 {
		// A fresh switch printed an empty table without a word.
		fmt.Fprintf(s.Err, "note: %d cells are zero and not shown (%d shown); --all shows them\n", cr.hidden, len(cr.rows))
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

func shortName(n string) string {
	return strings.TrimPrefix(n, pipeline.Control+".")
}

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
		out[i] = shortName(n)
	}
	return out
}

// entryRows are the entries read, as P4Info names (-o json|yaml) and, in
// table form, in plan's notation where the switch runs the p4ctl program
// (feasible=has(5:eu-north-1), region=5:eu-north-1, MACs, IPv4 addresses),
// so that get and plan print the same entry the same way.
type entryRows struct {
	entries []p4rt.Entry
	// program holds each entry in compiled form, or nil for all when the
	// switch's program is not p4ctl's (raw P4Runtime notation then).
	program []*compiler.Entry
}

func (r entryRows) MarshalJSON() ([]byte, error) { return jsonOf(r.entries) }

func (r entryRows) TableHeaders() []string { return []string{"TABLE", "MATCH", "PRIORITY", "ACTION"} }
func (r entryRows) TableRows() [][]string {
	var out [][]string
	for i, e := range r.entries {
		if r.program != nil && r.program[i] != nil {
			out = append(out, programRow(*r.program[i]))
			continue
		}
		var m []string
		for _, f := range e.Match {
			m = append(m, f.Field+"="+f.Value)
		}
		match := strings.Join(m, " ")
		if e.Default {
			match = "(default)"
		}
		var ps []string
		for _, p := range e.Params {
			ps = append(ps, p.Name+"="+p.Value)
		}
		prio := ""
		if e.Priority != 0 {
			prio = strconv.Itoa(int(e.Priority))
		}
		act := shortName(e.Action) + "(" + strings.Join(ps, ", ") + ")"
		if e.ActionRaw != "" {
			act = e.ActionRaw
		}
		out = append(out, []string{shortName(e.Table), match, prio, act})
	}
	return out
}

// programRow splits compiler.Entry's one-line rendering (plan's notation)
// into get's columns.
func programRow(e compiler.Entry) []string {
	line := e.String()
	lhs, act, _ := strings.Cut(line, " -> ")
	fields := strings.Fields(lhs)
	var match []string
	prio := ""
	for _, f := range fields[1:] {
		switch {
		case f == "default":
			match = append(match, "(default)")
		case strings.HasPrefix(f, "priority="):
			prio = strings.TrimPrefix(f, "priority=")
		default:
			match = append(match, f)
		}
	}
	return []string{shortName(e.Table), strings.Join(match, " "), prio, act}
}

// changedDefaults reads the default entries of tables (one Read) and
// returns those that differ from the P4Info's initial default action:
// a wildcard read returns no default entry (P4Runtime reads one only when
// asked with is_default_action), so a default set by another client —
// active_epoch's, say — was not shown. A switch that refuses the read
// leaves them out.
func changedDefaults(ctx context.Context, c *p4rt.Client, idx *p4rt.Index, tables []string) []*p4v1.TableEntry {
	var ents []*p4v1.Entity
	for _, name := range tables {
		if id, err := idx.TableID(name); err == nil {
			ents = append(ents, p4rt.TableEntity(&p4v1.TableEntry{TableId: id, IsDefaultAction: true}))
		}
	}
	if len(ents) == 0 {
		return nil
	}
	got, err := c.ReadAll(ctx, ents...)
	if err != nil {
		return nil
	}
	var out []*p4v1.TableEntry
	for _, e := range got {
		te := e.GetTableEntry()
		t, ok := idx.TableByID(te.GetTableId())
		if te == nil || !ok || !te.GetIsDefaultAction() || sameAsInitial(te, t.GetInitialDefaultAction()) {
			continue
		}
		out = append(out, te)
	}
	return out
}

// sameAsInitial reports whether default entry te runs the table's initial
// default action with its arguments.
func sameAsInitial(te *p4v1.TableEntry, init *p4configv1.TableActionCall) bool {
	a := te.GetAction().GetAction()
	if a == nil || init == nil || a.GetActionId() != init.GetActionId() || len(a.GetParams()) != len(init.GetArguments()) {
		return false
	}
	args := map[uint32]string{}
	for _, arg := range init.GetArguments() {
		args[arg.GetParamId()] = string(bytes.TrimLeft(arg.GetValue(), "\x00"))
	}
	for _, p := range a.GetParams() {
		if v, ok := args[p.GetParamId()]; !ok || v != string(bytes.TrimLeft(p.GetValue(), "\x00")) {
			return false
		}
	}
	return true
}

func (o *getOptions) entries(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	tables, err := fullNames(o.Names, idx.Tables(), "table")
	if err != nil {
		return nil, err
	}
	if len(o.Names) == 0 {
		tables = nil // one wildcard read
	}
	tes, err := c.ReadTableEntries(ctx, tables...)
	if err != nil {
		return nil, err
	}
	if len(o.Names) == 0 {
		tables = idx.Tables()
	}
	tes = append(tes, changedDefaults(ctx, c, idx, tables)...)
	tr, terr := controller.NewTranslator(idx) // nil unless the p4ctl program runs
	type decoded struct {
		e  p4rt.Entry
		ce *compiler.Entry
	}
	ds := make([]decoded, 0, len(tes))
	for _, te := range tes {
		e, err := idx.DecodeTableEntry(te)
		if err != nil {
			return nil, o.p4infoHint(err)
		}
		d := decoded{e: e}
		if terr == nil {
			if ce, err := tr.Entry(te); err == nil {
				d.ce = &ce
			}
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].e.Table < ds[j].e.Table })
	rows := entryRows{entries: make([]p4rt.Entry, len(ds))}
	if terr == nil {
		rows.program = make([]*compiler.Entry, len(ds))
	}
	for i, d := range ds {
		rows.entries[i] = d.e
		if rows.program != nil {
			rows.program[i] = d.ce
		}
	}
	return rows, nil
}

type cellRow struct {
	Name    string `json:"name"`
	Index   int64  `json:"index"`
	Label   string `json:"label,omitempty"`
	Packets *int64 `json:"packets,omitempty"`
	Bytes   *int64 `json:"bytes,omitempty"`
	Value   *int64 `json:"value,omitempty"`
}

type cellRows struct {
	rows     []cellRow
	counters bool
	hidden   int // zero cells left out (no --all)
}

func (r cellRows) MarshalJSON() ([]byte, error) { return jsonOf(r.rows) }

func (r cellRows) TableHeaders() []string {
	if r.counters {
		return []string{"COUNTER", "INDEX", "LABEL", "PACKETS", "BYTES"}
	}
	return []string{"REGISTER", "INDEX", "LABEL", "VALUE"}
}

func (r cellRows) TableRows() [][]string {
	var out [][]string
	for _, c := range r.rows {
		row := []string{shortName(c.Name), strconv.FormatInt(c.Index, 10), c.Label}
		if r.counters {
			row = append(row, strconv.FormatInt(*c.Packets, 10), strconv.FormatInt(*c.Bytes, 10))
		} else {
			row = append(row, strconv.FormatInt(*c.Value, 10))
		}
		out = append(out, row)
	}
	return out
}

// label names a cell of the p4ctl program's arrays.
func label(name string, i int64) string {
	switch name {
	case pipeline.CounterRegionRouted, pipeline.CounterRegionFallback, pipeline.RegisterRegionOutstanding:
		if r, ok := regions.RegionAt(regions.Index(i)); ok {
			return r.ID
		}
	case pipeline.CounterServerBound, pipeline.RegisterServerWork:
		return "server " + strconv.FormatInt(i, 10)
	}
	for _, l := range pipeline.Lanes() {
		if name == l.Counter() {
			return pipeline.Event(i).String()
		}
	}
	for slot := range pipeline.Candidates {
		if name == pipeline.RegisterServerCredit(slot) {
			return "server " + strconv.Itoa(int(pipeline.SlotServer(slot, uint64(i))))
		}
	}
	return ""
}

func (o *getOptions) counters(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	names, err := fullNames(o.Names, idx.Counters(), "counter")
	if err != nil {
		return nil, err
	}
	res := cellRows{rows: []cellRow{}, counters: true} // -o json: [] rather than null
	for _, n := range names {
		cells, err := c.ReadCounter(ctx, n, -1)
		if err != nil {
			return nil, err
		}
		for _, cell := range cells {
			if cell.Packets == 0 && cell.Bytes == 0 && !o.All {
				res.hidden++
				continue
			}
			p, b := cell.Packets, cell.Bytes
			res.rows = append(res.rows, cellRow{Name: n, Index: cell.Index, Label: label(n, cell.Index), Packets: &p, Bytes: &b})
		}
	}
	return res, nil
}

func (o *getOptions) registers(ctx context.Context, c *p4rt.Client, idx *p4rt.Index) (output.Tabular, error) {
	names, err := fullNames(o.Names, idx.Registers(), "register")
	if err != nil {
		return nil, err
	}
	res := cellRows{rows: []cellRow{}}
	for _, n := range names {
		cells, err := o.regs.Read(ctx, n, -1)
		if err != nil {
			return nil, err
		}
		for _, cell := range cells {
			if cell.Value == 0 && !o.All {
				res.hidden++
				continue
			}
			v := int64(cell.Value)
			l := label(n, cell.Index)
			if strings.HasPrefix(n, pipeline.RegisterServerCreditPrefix) {
				cr := pipeline.CreditFromCell(cell.Value)
				l += fmt.Sprintf(": %d outstanding, last tick %d", cr.Outstanding, cr.LastTick)
			}
			res.rows = append(res.rows, cellRow{Name: n, Index: cell.Index, Label: l, Value: &v})
		}
	}
	return res, nil
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

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
