package config

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Issue 27 item 4: a second YAML document after --- (one with bound:
// 99999999 was dropped) and JSON followed by garbage were silently
// ignored; both are refused at file:line.
func TestParseTrailingContent(t *testing.T) {
	js, err := yaml.YAMLToJSON([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	var pretty map[string]any
	if err := json.Unmarshal(js, &pretty); err != nil {
		t.Fatal(err)
	}
	indented, _ := json.MarshalIndent(pretty, "", "  ")
	baseLines := strings.Count(base, "\n")
	jsonLines := strings.Count(string(indented), "\n") + 1
	cases := []struct {
		name, data string
		line       int // 0: accepted
		want       string
	}{
		{"one document", base, 0, ""},
		{"trailing ---", base + "---\n", 0, ""},
		{"trailing comment document", base + "---\n# nothing\n", 0, ""},
		{"second document", base + "---\nregions:\n  - id: ap-south-1\n    next_hop: {local: {policy: jbsq, bound: 99999999}}\n", baseLines + 1, "a second YAML document"},
		{"JSON", string(js), 0, ""},
		{"JSON then garbage on its line", string(js) + " garbage", 1, "text after the end of the document"},
		{"JSON then garbage", string(js) + "\ngarbage\n", 2, "text after the end of the document"},
		{"indented JSON then a second object", string(indented) + "\n{\"policy\": {\"name\": \"A\"}}\n", jsonLines + 1, "text after the end of the document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.data), "cfg.yaml")
			if c.line == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			want := "cfg.yaml:" + strconv.Itoa(c.line) + ": " + c.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Parse: %v, want %q", err, want)
			}
			if _, ok := err.(*ValidationError); !ok {
				t.Errorf("error %T, want *ValidationError (exit 2)", err)
			}
		})
	}
}
