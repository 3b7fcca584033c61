package xdp_test

import (
	"errors"
	"os"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
)

// newSwitch starts an embedded switch on the XDP datapath, skipping t with
// the reason when this process may not load BPF programs.
func newSwitch(t testing.TB, clock func() uint64, started ...func(*xdp.Datapath)) *dataplane.Switch {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the XDP program needs root (CAP_BPF, CAP_NET_ADMIN) to load")
	}
	sw, err := dataplane.New(dataplane.Options{Clock: clock, Datapath: xdp.New(xdp.Options{Clock: clock}, started...)})
	if errors.Is(err, xdp.ErrNotRoot) {
		t.Skipf("the XDP program cannot be loaded here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sw.Close(); err != nil {
			t.Error(err)
		}
	})
	return sw
}
