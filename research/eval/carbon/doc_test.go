package carbon

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of docs/REPRODUCTION.md and the golden files under testdata/")

const reproductionDoc = "../../../docs/REPRODUCTION.md"

// TestReproductionDoc keeps the numbers in docs/REPRODUCTION.md section 1
// computed: each block between <!-- BEGIN name --> and <!-- END name --> must
// equal what the experiment prints now. The synthetic block is always
// checked; the measured-data block when the shared data is present.
// `go test ./research/eval/carbon -run TestReproductionDoc -update` rewrites them.
func TestReproductionDoc(t *testing.T) {
	doc, err := os.ReadFile(reproductionDoc)
	if err != nil {
		t.Fatal(err)
	}
	jan, _ := regions.ParseMonth("2022-01")
	blocks := map[string]func() (regions.CarbonSource, string, bool){
		"eval-carbon-synthetic": func() (regions.CarbonSource, string, bool) {
			return nil, "synthetic model (seed 1), not measured data — `p4ctl eval carbon --latency-model sampled`", true
		},
		"eval-carbon-em2022-01": func() (regions.CarbonSource, string, bool) {
			dir, ok := regions.FindSharedCarbonData(".")
			if !ok {
				return nil, "", false
			}
			src, err := regions.LoadTraces(dir, regions.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return src, "Electricity Maps 2022 hourly LCA from shared/data/carbon — `p4ctl eval carbon --traces ../shared/data/carbon --period 2022-01 --latency-model sampled`", true
		},
	}
	for name, mk := range blocks {
		src, label, ok := mk()
		if !ok {
			t.Logf("%s: shared carbon data not found; block not checked", name)
			continue
		}
		var res *Result
		if src == nil {
			res, _ = fullSynthetic(t) // the same run as TestFullExperimentSynthetic
		} else if res, err = Run(context.Background(), Config{Source: src, Period: jan, Seed: 1, LatencyModel: LatencySampled}); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WriteMarkdown(&b, label); err != nil {
			t.Fatal(err)
		}
		begin, end := "<!-- BEGIN "+name+" -->\n", "<!-- END "+name+" -->"
		i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
		if i < 0 || j < i {
			t.Fatalf("%s: markers %q … %q not found in %s", name, strings.TrimSpace(begin), end, reproductionDoc)
		}
		cur := doc[i+len(begin) : j]
		if bytes.Equal(cur, b.Bytes()) {
			continue
		}
		if !*update {
			t.Errorf("%s: block in %s is stale; rerun with -update", name, reproductionDoc)
			continue
		}
		doc = append(append(append([]byte{}, doc[:i+len(begin)]...), b.Bytes()...), doc[j:]...)
	}
	if *update {
		if err := os.WriteFile(reproductionDoc, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
