package dataplane_test

import (
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/casesuite"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
)

// The shared packet-test table, on the embedded target's Go model.
func TestPacketCases(t *testing.T) {
	casesuite.Run(t, func(t *testing.T, clock func() uint64) *dataplane.Switch {
		sw, err := dataplane.New(dataplane.Options{Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return sw
	})
}
