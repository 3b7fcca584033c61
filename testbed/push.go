// Package testbed holds what the p4ctl testbeds share: compiling a
// controller configuration for an hour (Compile), the testbed topology
// derived from a configuration (Plan: client hosts, region servers,
// emulated latencies) for the loopback fabric and Mininet, the Little's-law
// sizing of the server pools for a load (Size), and the accounting of a
// load generator run: SLA at the emulated latencies against the raw RTT
// (SLA), and carbon per hour the controller daemon applied (ReadDaemonLog,
// Schedule, CarbonHours).
//
// Push writes a compiled state to a switch in one reconcile through
// pkg/p4rt; the loopback tests and bmv2-tests use it. `make mininet`
// programs BMv2 with the product itself (`p4ctl push pipeline`, then the
// daemon `p4ctl run --replay`).
package testbed

import (
	"context"
	"fmt"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Compiled is a configuration compiled for one hour.
type Compiled struct {
	State  *compiler.State
	Carbon compiler.Carbon
	Hour   time.Time // the hour of the carbon source used (mapped into its period)
}

// Compile compiles cfg for the hour containing at (mapped into the carbon
// source's period as compiler.HourIn does), under epoch.
func Compile(cfg *config.Config, at time.Time, epoch uint8) (*Compiled, error) {
	src, err := cfg.OpenCarbon()
	if err != nil {
		return nil, err
	}
	hour, ok := compiler.HourIn(src.Period(), at)
	if !ok {
		return nil, fmt.Errorf("compile: %s is outside the carbon source's period %v", at.Format(time.RFC3339), src.Period())
	}
	c, err := compiler.Snapshot(cfg, src, hour)
	if err != nil {
		return nil, err
	}
	in, err := compiler.NewInput(cfg, c, epoch)
	if err != nil {
		return nil, err
	}
	st, err := compiler.Compile(in)
	if err != nil {
		return nil, err
	}
	return &Compiled{State: st, Carbon: c, Hour: hour}, nil
}

// Updates converts a state into P4Runtime updates for a switch that holds
// none of it yet: INSERT for entries, MODIFY for default actions. Entries
// are translated as the controller translates them (controller.Translator).
func Updates(idx *p4rt.Index, s *compiler.State) ([]*p4v1.Update, error) {
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		return nil, err
	}
	out := make([]*p4v1.Update, 0, len(s.Entries))
	for i := range s.Entries {
		te, err := tr.TableEntry(&s.Entries[i])
		if err != nil {
			return nil, err
		}
		op := p4v1.Update_INSERT
		if s.Entries[i].Default {
			op = p4v1.Update_MODIFY
		}
		out = append(out, &p4v1.Update{Type: op, Entity: p4rt.TableEntity(te)})
	}
	return out, nil
}

// Push makes the switch behind c hold state s: it reads what the switch
// has and writes only the difference (pkg/p4rt's Reconcile), so it may be
// run again against a switch that already holds some or all of s. c must be
// primary.
func Push(ctx context.Context, c *p4rt.Client, s *compiler.State) (p4rt.Plan, error) {
	idx, err := c.Index(ctx)
	if err != nil {
		return p4rt.Plan{}, fmt.Errorf("push: %w", err)
	}
	tr, err := controller.NewTranslator(idx)
	if err != nil {
		return p4rt.Plan{}, fmt.Errorf("push: %w", err)
	}
	desired := make([]*p4v1.TableEntry, 0, len(s.Entries))
	for i := range s.Entries {
		te, err := tr.TableEntry(&s.Entries[i])
		if err != nil {
			return p4rt.Plan{}, fmt.Errorf("push: %w", err)
		}
		desired = append(desired, te)
	}
	plan, err := c.Reconcile(ctx, desired, p4rt.ReconcileOptions{})
	if err != nil {
		return plan, fmt.Errorf("push: %w", err)
	}
	return plan, nil
}

// Connect dials a P4Runtime server on loopback (or in the caller's network
// namespace), arbitrates with election id 1 and waits until primary.
func Connect(ctx context.Context, addr string, deviceID uint64) (*p4rt.Client, error) {
	c, err := p4rt.Dial(addr, p4rt.WithDeviceID(deviceID), p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		return nil, err
	}
	st, err := c.Arbitrate(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("arbitrate with %s: %w", addr, err)
	}
	if !st.Primary {
		if _, err := c.WaitPrimary(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("become primary on %s: %w", addr, err)
		}
	}
	return c, nil
}
