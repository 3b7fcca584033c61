package plots

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/sim/serverless"
)

func TestWriteProducesPNGAndSVG(t *testing.T) {
	cfg := serverless.DefaultExperiment().Quick()
	cfg.Dists = []string{"powerlaw"}
	cfg.Lambdas = []float64{15, 20}
	cfg.Seeds = 2
	cfg.Requests = 1500
	res, err := serverless.RunExperiment(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := Write(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p99_response_powerlaw.png", "p99_response_powerlaw.svg", "p99_latency_powerlaw.png",
		"p99_latency_powerlaw.svg", "cdf_response_powerlaw_lambda20.png", "cdf_response_powerlaw_lambda20.svg"}
	if len(files) != len(want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	for _, f := range want {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Error(err)
		} else if st.Size() < 1000 {
			t.Errorf("%s: only %d bytes", f, st.Size())
		}
	}
}
