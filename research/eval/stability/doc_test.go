package stability

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

const reproductionDoc = "../../../docs/REPRODUCTION.md"

// updating reports whether the test binary runs with -update (the flag
// internal/testing/golden registers).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestReproductionDoc keeps the numbers of docs/REPRODUCTION.md §1e
// computed: each block between <!-- BEGIN name --> and <!-- END name -->
// must equal what `p4ctl eval stability` prints as Markdown now — the
// synthetic block always, the 2022-traces block when the shared data is
// present. `go test ./research/eval/stability -run TestReproductionDoc -update`
// rewrites them.
func TestReproductionDoc(t *testing.T) {
	doc, err := os.ReadFile(reproductionDoc)
	if err != nil {
		t.Fatal(err)
	}
	year := regions.Period{From: time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)}
	blocks := []struct {
		name  string
		label string
		src   func() (regions.CarbonSource, bool)
	}{
		{"eval-stability-synthetic", "synthetic model (seed 1), not measured data — `p4ctl eval stability`", func() (regions.CarbonSource, bool) {
			return synthetic(t), true
		}},
		{"eval-stability-em2022", "Electricity Maps 2022 hourly LCA from shared/data/carbon — `p4ctl eval stability --traces ../shared/data/carbon`", func() (regions.CarbonSource, bool) {
			dir, ok := regions.FindSharedCarbonData(".")
			if !ok {
				return nil, false
			}
			src, err := regions.LoadTraces(dir, regions.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return src, true
		}},
	}
	for _, b := range blocks {
		src, ok := b.src()
		if !ok {
			t.Logf("%s: shared carbon data not found; block not checked", b.name)
			continue
		}
		var out bytes.Buffer
		if err := run(t, exampleConfig(t, src, year)).WriteMarkdown(&out, b.label); err != nil {
			t.Fatal(err)
		}
		begin, end := "<!-- BEGIN "+b.name+" -->\n", "<!-- END "+b.name+" -->"
		i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
		if i < 0 || j < i {
			t.Fatalf("%s: markers %q … %q not found in %s", b.name, strings.TrimSpace(begin), end, reproductionDoc)
		}
		if bytes.Equal(doc[i+len(begin):j], out.Bytes()) {
			continue
		}
		if !updating() {
			t.Errorf("%s: block in %s is stale; rerun with -update", b.name, reproductionDoc)
			continue
		}
		doc = append(append(append([]byte{}, doc[:i+len(begin)]...), out.Bytes()...), doc[j:]...)
	}
	if updating() {
		if err := os.WriteFile(reproductionDoc, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
