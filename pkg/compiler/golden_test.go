package compiler

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden compiles every testdata/<case>.yaml at testHour (epoch 1),
// explains the decisions for the paper's SLA classes, and plans the hitless
// change to the next hour (epoch 2); the text must equal <case>.golden.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			cfg := loadConfig(t, path)
			in, err := NewInput(cfg, snapshot(t, cfg, testHour), 1)
			if err != nil {
				t.Fatal(err)
			}
			st := compile(t, in)
			var b bytes.Buffer
			if err := st.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n## decisions (site, SLA ms -> region)\n")
			rt := NewRouter(st)
			for _, s := range cfg.Sites {
				for _, sla := range []uint16{0, 300, 500, 800, 1000, 3000} {
					d := rt.Route(uint16(s.ID), sla, 0)
					fb := ""
					if d.Fallback {
						fb = " (fallback: nothing feasible)"
					}
					fmt.Fprintf(&b, "%s %5d -> %s%s\n", s.Name, sla, region(uint64(d.Region)), fb)
				}
			}
			in.Carbon = snapshot(t, cfg, testHour.Add(time.Hour))
			in.Epoch = NextEpoch(1)
			g, err := PlanGeneration(st, compile(t, in))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\n# next hour (%s)\n", in.Carbon.Hour.Format(time.RFC3339))
			if err := g.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if d := cmp.Diff(string(want), b.String()); d != "" {
				t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", golden, d)
			}
		})
	}
}
