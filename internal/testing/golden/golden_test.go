package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed, fatal bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.fatal = true }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "a.txt"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file, got string
		update          bool
		failed, fatal   bool
	}{
		{name: "equal", file: "a.txt", got: "same\n"},
		{name: "different", file: "a.txt", got: "other\n", failed: true},
		{name: "missing", file: "b.txt", got: "x", fatal: true},
		{name: "update creates", file: "sub/c.txt", got: "new\n", update: true},
		{name: "after update", file: "sub/c.txt", got: "new\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			*update = c.update
			defer func() { *update = false }()
			r := &recorder{TB: t}
			Check(r, c.file, []byte(c.got))
			if r.failed != c.failed || r.fatal != c.fatal {
				t.Errorf("failed=%v fatal=%v, want %v %v", r.failed, r.fatal, c.failed, c.fatal)
			}
		})
	}
}
