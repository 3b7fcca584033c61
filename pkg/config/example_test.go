package config

import "testing"

func TestExamplesLoad(t *testing.T) {
	for _, f := range []string{"../../examples/mumbai.yaml", "../../examples/minimal.yaml", "../../examples/tuned.yaml"} {
		c, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Logf("%s: %d regions %d sites", f, len(c.Regions), len(c.Sites))
	}
}
