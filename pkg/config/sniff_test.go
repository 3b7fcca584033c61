package config

import (
	"os"
	"slices"
	"testing"
)

func TestLooksLikeConfig(t *testing.T) {
	b, err := os.ReadFile("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ok, targets := LooksLikeConfig(b)
	if !ok || !slices.Equal(targets, []string{"127.0.0.1:9559"}) {
		t.Fatalf("examples/mumbai.yaml: %v %v", ok, targets)
	}
	for _, not := range []string{
		"pkg_info {\n  arch: \"v1model\"\n}\ntables {\n}\n", // a text P4Info
		"{\"pkgInfo\": {}}",      // a JSON P4Info
		"just: yaml\nother: 1\n", // YAML, but not ours
		"",
	} {
		if ok, _ := LooksLikeConfig([]byte(not)); ok {
			t.Errorf("%q taken for a controller configuration", not)
		}
	}
}
