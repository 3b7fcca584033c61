package config

import (
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic, and a
// configuration it accepts must survive a marshal/parse round trip. The
// seeds are small: from examples/mumbai.yaml (5.6 kB, 5 ms a parse) the
// fuzzer spent its time minimising what it derived and ran 10 execs in
// 30 s (issue 27 item 17); base and the small examples cover the same
// schema. make fuzz also bounds minimisation (-fuzzminimizetime).
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal accepted config: %v", err)
		}
		c2, err := Parse(out, "roundtrip.yaml")
		if err != nil {
			t.Fatalf("round trip rejected: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the config:\n%s", out)
		}
	})
}

// maxFuzzSeed bounds a FuzzParse seed: the fuzzer minimises what it
// derives from a seed, and large ones stalled it.
const maxFuzzSeed = 2048

// fuzzSeeds are FuzzParse's seeds: the base configuration, the small
// examples and a few alias and merge-key shapes.
func fuzzSeeds(tb testing.TB) [][]byte {
	seeds := [][]byte{[]byte(base)}
	for _, p := range []string{"../../examples/minimal.yaml", "../../examples/tuned.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return append(seeds, []byte("regions: &a [*a]\n"), []byte("a: &x {b: *x}\n"), []byte("<<: {policy: {name: C}}\n"),
		[]byte("sites: [{latency: {ap-south-1: {p95_ms: .nan}}}]\n"))
}

// Issue 27 item 17: every FuzzParse seed is small (examples/mumbai.yaml,
// 5.6 kB, made the fuzzer stall minimising what it derived from it).
func TestFuzzSeedsSmall(t *testing.T) {
	for i, s := range fuzzSeeds(t) {
		if len(s) > maxFuzzSeed {
			t.Errorf("FuzzParse seed %d is %d bytes, over %d", i, len(s), maxFuzzSeed)
		}
	}
}
