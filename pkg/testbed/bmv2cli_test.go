package testbed

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A fake simple_switch_CLI answering as the real one does.
func fakeCLI(t *testing.T, answer string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "simple_switch_CLI")
	script := "#!/bin/sh\ncat >/dev/null\necho 'Obtaining JSON from switch...'\necho 'Done'\necho 'Control utility for runtime P4 table manipulation'\nprintf '%s\\n' '" + answer + "'\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadRegisterCLI(t *testing.T) {
	ctx := context.Background()
	one := fakeCLI(t, "RuntimeCmd: P4ctlIngress.server_outstanding[3]= 7")
	if v, err := ReadRegisterCLI(ctx, nil, one, 0, "P4ctlIngress.server_outstanding", 3); err != nil || len(v) != 1 || v[0] != 7 {
		t.Errorf("one cell: %v %v", v, err)
	}
	all := fakeCLI(t, "RuntimeCmd: P4ctlIngress.region_outstanding= 0, 2, 0, 5")
	if v, err := ReadRegisterCLI(ctx, nil, all, 0, "P4ctlIngress.region_outstanding", -1); err != nil || len(v) != 4 || v[1] != 2 || v[3] != 5 {
		t.Errorf("all cells: %v %v", v, err)
	}
	bad := fakeCLI(t, "RuntimeCmd: Error: Invalid register name (P4ctlIngress.nope)")
	if _, err := ReadRegisterCLI(ctx, nil, bad, 0, "P4ctlIngress.nope", 0); err == nil {
		t.Error("an error answer parsed")
	}
	if _, err := ReadRegisterCLI(ctx, nil, filepath.Join(t.TempDir(), "missing"), 0, "x", 0); err == nil {
		t.Error("a missing CLI succeeded")
	}
}
