package p4rt

import (
	"context"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/inputfile"
)

// Pipeline actions, re-exported for callers.
const (
	Verify             = p4v1.SetForwardingPipelineConfigRequest_VERIFY
	VerifyAndSave      = p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE
	VerifyAndCommit    = p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT
	Commit             = p4v1.SetForwardingPipelineConfigRequest_COMMIT
	ReconcileAndCommit = p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT
)

// ParsePipelineAction maps "verify", "verify-and-save", "verify-and-commit",
// "commit" and "reconcile-and-commit" (or the proto enum names) to actions.
func ParsePipelineAction(s string) (p4v1.SetForwardingPipelineConfigRequest_Action, error) {
	switch s {
	case "verify", "VERIFY":
		return Verify, nil
	case "verify-and-save", "VERIFY_AND_SAVE":
		return VerifyAndSave, nil
	case "verify-and-commit", "VERIFY_AND_COMMIT":
		return VerifyAndCommit, nil
	case "commit", "COMMIT":
		return Commit, nil
	case "reconcile-and-commit", "RECONCILE_AND_COMMIT":
		return ReconcileAndCommit, nil
	}
	return 0, fmt.Errorf("unknown pipeline action %q (verify, verify-and-save, verify-and-commit, commit, reconcile-and-commit)", s)
}

// LoadPipelineContext is LoadPipeline reading both files under ctx, at
// most inputfile.MaxSize bytes each.
func LoadPipelineContext(ctx context.Context, p4infoPath, deviceConfigPath string, cookie uint64) (*p4v1.ForwardingPipelineConfig, error) {
	info, err := LoadP4InfoContext(ctx, p4infoPath)
	if err != nil {
		return nil, err
	}
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: info}
	if deviceConfigPath != "" {
		blob, err := inputfile.Read(ctx, deviceConfigPath, inputfile.MaxSize)
		if err != nil {
			return nil, fmt.Errorf("read device config: %w", err)
		}
		cfg.P4DeviceConfig = blob
	}
	if cookie != 0 {
		cfg.Cookie = &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie}
	}
	return cfg, nil
}

// SetPipeline sends SetForwardingPipelineConfig (primary only). With a
// committing action, the client's index switches to the new P4Info. COMMIT
// takes a nil cfg.
func (c *Client) SetPipeline(ctx context.Context, action p4v1.SetForwardingPipelineConfigRequest_Action, cfg *p4v1.ForwardingPipelineConfig) error {
	var idx *Index
	if cfg.GetP4Info() != nil {
		var err error
		if idx, err = NewIndex(cfg.GetP4Info()); err != nil {
			return err
		}
	}
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	_, err := c.rpc.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId: c.opts.deviceID, Role: c.opts.role, ElectionId: c.ElectionID().proto(), Action: action, Config: cfg})
	if err != nil {
		return c.rpcError("SetForwardingPipelineConfig "+action.String(), err)
	}
	if idx != nil && action != Verify {
		c.SetIndex(idx)
	}
	return nil
}

// SetP4Info is SetPipeline with a P4Info and device config.
func (c *Client) SetP4Info(ctx context.Context, action p4v1.SetForwardingPipelineConfigRequest_Action, info *p4configv1.P4Info, deviceConfig []byte, cookie uint64) error {
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: deviceConfig}
	if cookie != 0 {
		cfg.Cookie = &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie}
	}
	return c.SetPipeline(ctx, action, cfg)
}

// GetPipeline returns the switch's pipeline config; its P4Info is nil when
// the switch has none.
func (c *Client) GetPipeline(ctx context.Context, what p4v1.GetForwardingPipelineConfigRequest_ResponseType) (*p4v1.ForwardingPipelineConfig, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	r, err := c.rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: c.opts.deviceID, ResponseType: what})
	if err != nil {
		return nil, c.rpcError("GetForwardingPipelineConfig", err)
	}
	return r.GetConfig(), nil
}
