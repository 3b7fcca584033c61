package xdp_test

import (
	"context"
	"sync/atomic"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/casesuite"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
)

// The shared packet-test table on the XDP program, run by BPF_PROG_RUN:
// every frame out, every counter cell, the listed registers and the
// digests as the embedded target's Go model gives them. One program serves
// every case (loading it takes most of a second): each case installs the
// pipeline afresh, which empties every map and zeroes the registers and
// counters, as a new switch would have them.
func TestPacketCasesProgRun(t *testing.T) {
	var clock atomic.Pointer[func() uint64]
	now := func() uint64 { return (*clock.Load())() }
	zero := func() uint64 { return 0 }
	clock.Store(&zero)
	sw := newSwitch(t, now)
	casesuite.Run(t, func(t *testing.T, c func() uint64) *dataplane.Switch {
		clock.Store(&c)
		cfg := &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}
		if err := sw.SetPipeline(context.Background(), p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, cfg); err != nil {
			t.Fatal(err)
		}
		return sw
	})
}
