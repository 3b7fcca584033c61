package rigobj

import (
	"testing"

	"github.com/p4ctl/p4ctl/internal/testing/bpf2gocheck"
)

// Where clang 14 is installed, regenerating the rig gives the committed
// files byte for byte.
func TestRegenerateByteForByte(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the rig (-short)")
	}
	bpf2gocheck.Regenerates(t, "rigobj", "", "rig_bpfel.o", "rig_bpfel.go")
}
