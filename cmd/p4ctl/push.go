package main

import (
	"context"
	"fmt"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"

	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// pushPipelineOptions are the flags of `p4ctl push pipeline`.
type pushPipelineOptions struct {
	conn         connFlags
	P4Info       string
	DeviceConfig string
	Pipeline     string // --config p4info[,device-config], as p4runtime-shell
	Action       string
	Cookie       uint64
	Force        bool

	action p4v1.SetForwardingPipelineConfigRequest_Action
}

func newPushCmd(s *streams) *cobra.Command {
	cmd := groupCmd("push pipeline", "Push a pipeline config to a switch")
	o := &pushPipelineOptions{}
	pipe := &cobra.Command{
		Use:   "pipeline --p4info FILE [--device-config FILE] [--grpc-addr HOST:PORT]",
		Short: "Install a P4 program (P4Info + target config) with SetForwardingPipelineConfig",
		Long: `pipeline becomes the switch's primary controller (--election-id) and sends
SetForwardingPipelineConfig with the P4Info and the target's device config
(BMv2: the JSON from p4c; none for the embedded target, which models the
p4ctl program and checks the P4Info against it). --config P4INFO,JSON is
p4runtime-shell's spelling of the same two files; it is not the controller
configuration YAML that plan, diff, apply and run take as --config.

Installing a program (verify-and-commit, verify-and-save, commit) deletes
every table entry the switch holds: when it holds any, push refuses unless
--force is given, and says how many went. reconcile-and-commit asks the
switch to keep what the new program still fits; verify changes nothing.`,
		Args: cobra.NoArgs,
		RunE: runE(o, s),
	}
	f := pipe.Flags()
	o.conn.add(f, p4rt.DefaultAddress, 1, "election id, not 0: only the primary controller may set the pipeline")
	f.StringVar(&o.P4Info, "p4info", "", "P4Info file (text, JSON or binary protobuf)")
	f.StringVar(&o.DeviceConfig, "device-config", "", "target device config (e.g. BMv2 JSON)")
	f.StringVarP(&o.Pipeline, "config", "c", "", "P4INFO[,DEVICE_CONFIG] as in p4runtime-shell: the same two files as --p4info and --device-config; not a controller YAML")
	f.StringVar(&o.Action, "action", "verify-and-commit", "verify, verify-and-save, verify-and-commit, commit or reconcile-and-commit")
	f.Uint64Var(&o.Cookie, "cookie", 0, "pipeline cookie")
	f.BoolVar(&o.Force, "force", false, "push even though the switch holds table entries, which the new pipeline deletes")
	cmd.AddCommand(pipe)
	return cmd
}

// Complete splits --config into --p4info and --device-config and refuses
// a controller configuration given for either.
func (o *pushPipelineOptions) Complete(c *cobra.Command, _ []string) error {
	ctx := cmdContext(c)
	if o.Pipeline == "" {
		if o.P4Info != "" {
			return notControllerYAML(ctx, "push pipeline", "--p4info", o.P4Info)
		}
		return nil
	}
	if o.P4Info != "" || o.DeviceConfig != "" {
		return cmdutil.Usagef("give --config p4info,json or --p4info/--device-config, not both")
	}
	parts := strings.Split(o.Pipeline, ",")
	if len(parts) > 2 || parts[0] == "" {
		return cmdutil.Usagef("--config %q: want p4info[,device-config]", o.Pipeline)
	}
	o.P4Info = parts[0]
	if len(parts) == 2 {
		o.DeviceConfig = parts[1]
	}
	return notControllerYAML(ctx, "push pipeline", "--config", o.P4Info)
}

// Validate checks the flags.
func (o *pushPipelineOptions) Validate() error {
	if err := o.conn.validate(true); err != nil {
		return err
	}
	if o.P4Info == "" && o.Action != "commit" {
		return cmdutil.Usagef("--p4info (or --config p4info[,device-config]) is required")
	}
	if o.conn.ElectionID.IsZero() {
		return cmdutil.Usagef("--election-id must be ≥ 1: only a primary controller may set the pipeline")
	}
	a, err := p4rt.ParsePipelineAction(o.Action)
	if err != nil {
		return cmdutil.Usagef("--action: %w", err)
	}
	o.action = a
	return nil
}

// Run arbitrates and pushes the pipeline.
func (o *pushPipelineOptions) Run(ctx context.Context, s *streams) error {
	var cfg *p4v1.ForwardingPipelineConfig
	if o.P4Info != "" {
		var err error
		if cfg, err = p4rt.LoadPipelineContext(ctx, o.P4Info, o.DeviceConfig, o.Cookie); err != nil {
			return cmdutil.InputError(err)
		}
	}
	c, err := o.conn.dial(o.conn.ElectionID)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, o.conn.Timeout)
	defer cancel()
	where := "switch " + o.conn.GRPCAddr
	if err := probe(ctx, c, where); err != nil {
		return err
	}
	st, err := controller.Arbitrate(ctx, c, p4rt.DefaultBackoff, nil)
	if err != nil {
		return deviceHint(fmt.Errorf("%s: %w", where, err), o.conn.DeviceID)
	}
	if !st.Primary {
		return fmt.Errorf("%s: not primary on device %d (%s): another controller holds a higher election id", where, o.conn.DeviceID, st)
	}
	held := 0
	if wipes(o.action) {
		if held, err = countEntries(ctx, c); err != nil {
			return fmt.Errorf("%s: count the table entries a new pipeline would delete: %w", where, err)
		}
		if held > 0 && !o.Force {
			return fmt.Errorf("%s: device %d holds %d table entries, which %s deletes: give --force to push anyway (then re-apply the controller's state with p4ctl apply), or --action reconcile-and-commit to keep those the new program fits",
				where, o.conn.DeviceID, held, o.Action)
		}
	}
	if err := c.SetPipeline(ctx, o.action, cfg); err != nil {
		return deviceHint(fmt.Errorf("%s: %w", where, err), o.conn.DeviceID)
	}
	fmt.Fprintf(s.Out, "pipeline %s (%s) pushed to device %d at %s\n", o.P4Info, o.action, o.conn.DeviceID, o.conn.GRPCAddr)
	if held > 0 {
		fmt.Fprintf(s.Out, "the %d table entries the device held are deleted (re-apply them with p4ctl apply)\n", held)
	}
	return nil
}

// wipes reports whether a SetForwardingPipelineConfig action replaces the
// forwarding state (VERIFY_AND_SAVE does once its COMMIT follows).
func wipes(a p4v1.SetForwardingPipelineConfigRequest_Action) bool {
	return a == p4rt.VerifyAndCommit || a == p4rt.VerifyAndSave || a == p4rt.Commit
}

// countEntries returns how many table entries the switch holds: 0 when it
// has no pipeline yet (nothing to lose).
func countEntries(ctx context.Context, c *p4rt.Client) (int, error) {
	cfg, err := c.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil {
		if code := p4rt.Code(err); code == codes.FailedPrecondition || code == codes.NotFound || code == codes.Unknown {
			return 0, nil // no pipeline (BMv2 --no-p4, the embedded --no-p4)
		}
		return 0, err
	}
	if cfg.GetP4Info() == nil || len(cfg.GetP4Info().GetTables()) == 0 {
		return 0, nil
	}
	tes, err := c.ReadTableEntries(ctx)
	if err != nil {
		return 0, err
	}
	return len(tes), nil
}
