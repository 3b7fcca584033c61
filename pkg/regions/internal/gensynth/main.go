// Command gensynth derives the parameters of the offline synthetic carbon
// model from a year of hourly traces and prints them as Go source:
//
//	go run ./pkg/regions/internal/gensynth -data ../shared/data/carbon > pkg/regions/synthetic_params.go
//
// It commits derived summary statistics only (monthly means, diurnal shape,
// noise figures, extremes), never hourly values. TestSyntheticParamsMatchData
// re-derives them whenever the shared data is present.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

func main() {
	data := flag.String("data", "", "shared carbon data directory (normalized hourly CSVs and em_yearly_averages.csv)")
	year := flag.Int("year", 2022, "calendar year to measure")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "gensynth: -data is required")
		os.Exit(2)
	}
	if err := run(os.Stdout, *data, *year); err != nil {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dir string, year int) error {
	src, err := regions.LoadTraces(dir, regions.LoadOptions{})
	if err != nil {
		return err
	}
	yearly, err := regions.ReadYearlyAverages(filepath.Join(dir, "em_yearly_averages.csv"), year)
	if err != nil {
		return err
	}
	params, err := regions.DeriveSyntheticParams(src, year, yearly)
	if err != nil {
		return err
	}
	return regions.WriteSyntheticParamsGo(w, params, year)
}
