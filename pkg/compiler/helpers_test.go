package compiler

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// testHour is the hour golden files and most tests compile for.
var testHour = time.Date(2022, 1, 10, 12, 0, 0, 0, time.UTC)

func loadConfig(t testing.TB, path string) *config.Config {
	t.Helper()
	c, err := config.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return c
}

func parseConfig(t testing.TB, doc string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(doc), "generated.yaml")
	if err != nil {
		t.Fatalf("parse generated config: %v", err)
	}
	return c
}

// sources caches each test configuration's opened carbon source (the
// offline model generates a year of data when opened).
var sources sync.Map // *config.Config → regions.CarbonSource

// snapshot reads the configuration's own carbon source at hour h.
func snapshot(t testing.TB, cfg *config.Config, h time.Time) Carbon {
	t.Helper()
	var src regions.CarbonSource
	if v, ok := sources.Load(cfg); ok {
		src = v.(regions.CarbonSource)
	} else {
		var err error
		if src, err = cfg.OpenCarbon(); err != nil {
			t.Fatal(err)
		}
		sources.Store(cfg, src)
	}
	at, ok := HourIn(src.Period(), h)
	if !ok {
		t.Fatalf("hour %s outside %s", h, src.Period())
	}
	c, err := Snapshot(cfg, src, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// input builds an Input for cfg with policy p (overriding the config's).
func input(t testing.TB, cfg *config.Config, p regions.Policy, c Carbon, epoch uint8) Input {
	t.Helper()
	in, err := NewInput(cfg, c, epoch)
	if err != nil {
		t.Fatal(err)
	}
	in.Policy = p
	return in
}

func compile(t testing.TB, in Input) *State {
	t.Helper()
	s, err := Compile(in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// generated returns a configuration with the first nRegions catalog regions
// (remote next hops), nSites sites with pseudo-random latency profiles
// (seeded; some regions without a cold latency) and nClasses SLA classes.
func generated(t testing.TB, nRegions, nSites, nClasses int, policy string, seed uint64) *config.Config {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("regions:\n")
	cat := regions.Catalog()[:nRegions]
	for i, r := range cat {
		fmt.Fprintf(&b, "  - {id: %s, next_hop: {remote: {port: %d, mac: \"02:00:00:00:01:%02x\", ip: 10.255.%d.1}}}\n", r.ID, i+1, i, i)
	}
	b.WriteString("sites:\n")
	for s := 1; s <= nSites; s++ {
		fmt.Fprintf(&b, "  - name: site%d\n    id: %d\n    prefixes: [10.%d.%d.0/24]\n    latency:\n", s, s, s/256, s%256)
		for _, r := range cat {
			p95 := 20 + rng.IntN(1980)
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "      %s: {p95_ms: %d}\n", r.ID, p95)
			} else {
				fmt.Fprintf(&b, "      %s: {p95_ms: %d.%d, cold_ms: %d}\n", r.ID, p95, rng.IntN(10), 50+rng.IntN(1500))
			}
		}
	}
	b.WriteString("sla_classes:\n")
	for k := 0; k < nClasses; k++ {
		fmt.Fprintf(&b, "  - {name: c%d, ms: %d, share: %g}\n", k, 200*(k+1), 1/float64(nClasses))
	}
	fmt.Fprintf(&b, "policy: {name: %q}\ncarbon: {source: offline, seed: 1}\n", policy)
	return parseConfig(t, b.String())
}
