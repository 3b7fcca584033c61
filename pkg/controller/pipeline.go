package controller

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// PipelineCookie is the cookie the controller pushes a pipeline with when
// it has none: the first 8 bytes of the SHA-256 of the P4Info
// (deterministic protobuf encoding) and the device config, never 0. Every
// replica computes the same cookie for the same files, so a switch's
// cookie says whether it runs exactly that pipeline.
func PipelineCookie(pc *p4v1.ForwardingPipelineConfig) uint64 {
	h := sha256.New()
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(pc.GetP4Info())
	h.Write(b)
	h.Write(pc.GetP4DeviceConfig())
	if c := binary.BigEndian.Uint64(h.Sum(nil)); c != 0 {
		return c
	}
	return 1
}

// withCookie returns pc with a cookie (PipelineCookie when it has none),
// sharing its P4Info and device config.
func withCookie(pc *p4v1.ForwardingPipelineConfig) *p4v1.ForwardingPipelineConfig {
	if pc == nil || pc.GetCookie().GetCookie() != 0 {
		return pc
	}
	return &p4v1.ForwardingPipelineConfig{P4Info: pc.GetP4Info(), P4DeviceConfig: pc.GetP4DeviceConfig(),
		Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: PipelineCookie(pc)}}
}

// samePipeline reports whether the switch's pipeline cur (P4Info and
// cookie) is want: same cookie, or — pushed by someone else without our
// cookie — the same P4Info (the device config cannot be read back cheaply
// from every target), compared in canonical order (p4rt.SameP4Info): the
// same program listed in another order is the same program, not a reason
// to push it again and wipe the switch's entries.
func samePipeline(cur, want *p4v1.ForwardingPipelineConfig) bool {
	if cur.GetP4Info() == nil || want == nil {
		return false
	}
	if c := want.GetCookie().GetCookie(); c != 0 && cur.GetCookie().GetCookie() == c {
		return true
	}
	return p4rt.SameP4Info(cur.GetP4Info(), want.GetP4Info())
}

// checkPipeline makes sure the switch runs the pipeline the driver needs,
// on every connection and whenever the switch's state is read back again
// (after a reconnection, a change of primary or an error — the moments a
// switch may have restarted empty):
//
//   - with Target.Pipeline: a switch with no pipeline, or another one
//     (cookie and P4Info differ), gets it pushed (VERIFY_AND_COMMIT; its
//     tables are then empty and the caller resyncs). A backup never
//     pushes: at connection it waits for the primary to; later it reports
//     the problem.
//   - without: a switch with no pipeline is an error (nothing to push); a
//     switch that now runs another P4Info of the p4ctl program gets the
//     translator rebuilt for its ids.
//
// It reports whether it pushed.
func (d *Driver) checkPipeline(ctx context.Context, client *p4rt.Client, connecting bool) (bool, error) {
	cur, err := client.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil {
		return false, fmt.Errorf("target %s: read its pipeline config: %w", d.target.Name, err)
	}
	want := d.target.Pipeline
	if want == nil {
		if cur.GetP4Info() == nil {
			return false, fmt.Errorf("target %s has no forwarding pipeline (restarted empty?) and the controller has none to push (p4ctl run --p4info, --device-config): %w",
				d.target.Name, p4rt.ErrFailedPrecondition)
		}
		if tr := d.Translator(); tr == nil || !p4rt.SameP4Info(tr.Index().P4Info(), cur.GetP4Info()) {
			if err := d.useP4Info(client, cur); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	d.mu.Lock()
	pushedAs := d.pushedAs
	d.mu.Unlock()
	if samePipeline(cur, want) || (pushedAs != nil && cur.GetCookie().GetCookie() == pushedAs.GetCookie().GetCookie() && p4rt.SameP4Info(cur.GetP4Info(), pushedAs.GetP4Info())) {
		return false, nil
	}
	why := "the switch has no pipeline"
	if cur.GetP4Info() != nil {
		why = fmt.Sprintf("the switch runs another pipeline (cookie %#x, want %#x)", cur.GetCookie().GetCookie(), want.GetCookie().GetCookie())
	}
	if !client.State().Primary {
		if !connecting {
			return false, fmt.Errorf("target %s: %s and this replica is not primary", d.target.Name, why)
		}
		// A backup: the primary pushes; translate for the pipeline it will push.
		return false, d.useP4Info(client, want)
	}
	if err := client.SetPipeline(ctx, p4rt.VerifyAndCommit, want); err != nil {
		return false, fmt.Errorf("target %s: push the pipeline (%s): %w", d.target.Name, why, err)
	}
	d.log.Warn("pushed the pipeline", "reason", why, "cookie", fmt.Sprintf("%#x", want.GetCookie().GetCookie()))
	if !connecting { // at connection it is provisioning, not drift
		d.opts.Metrics.observeRepair(d.target.Name, RepairPipeline)
	}
	// A target may report the pipeline otherwise than it was pushed (no
	// cookie support, a rewritten P4Info): remember how, so that the next
	// check does not push it again and again.
	if got, err := client.GetPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE); err == nil && !samePipeline(got, want) {
		d.mu.Lock()
		d.pushedAs = got
		d.mu.Unlock()
	}
	return true, d.useP4Info(client, want)
}

// useP4Info points the client's index and the driver's translator at pc's
// P4Info.
func (d *Driver) useP4Info(client *p4rt.Client, pc *p4v1.ForwardingPipelineConfig) error {
	idx, err := p4rt.NewIndex(pc.GetP4Info())
	if err != nil {
		return fmt.Errorf("target %s: P4Info: %w", d.target.Name, err)
	}
	client.SetIndex(idx)
	return d.setTranslator(idx)
}

// setTranslator builds the translator for idx and, the first time, the
// writer.
func (d *Driver) setTranslator(idx *p4rt.Index) error {
	tr, err := NewTranslator(idx)
	if err != nil {
		return fmt.Errorf("target %s: the switch's P4Info is not the p4ctl program's: %w", d.target.Name, err)
	}
	d.connMu.Lock()
	defer d.connMu.Unlock()
	d.tr = tr
	if d.writer == nil {
		var w Writer = ClientWriter{d.client}
		if d.opts.WrapWriter != nil {
			w = d.opts.WrapWriter(w)
		}
		d.writer = w
	}
	return nil
}
