package config

import (
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse feeds arbitrary bytes to the parser: it must never panic, and a
// configuration it accepts must survive a marshal/parse round trip.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	for _, p := range []string{"../../examples/mumbai.yaml", "../../examples/minimal.yaml", "../../examples/tuned.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("regions: &a [*a]\n"))
	f.Add([]byte("a: &x {b: *x}\n"))
	f.Add([]byte("<<: {policy: {name: C}}\n"))
	f.Add([]byte("sites: [{latency: {ap-south-1: {p95_ms: .nan}}}]\n"))
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
