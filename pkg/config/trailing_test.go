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

// Issue 27 item 13: a target's election_id set only the low 64 bits; it
// takes HIGH,LOW as --election-id does (p4runtime-shell's form).
func TestElectionIDHighLow(t *testing.T) {
	const old = "    election_id: 1\n"
	cases := []struct {
		value string
		want  ElectionID
		err   string
	}{
		{"7", ElectionID{Low: 7}, ""},
		{"1,0", ElectionID{High: 1}, ""},
		{`"2,5"`, ElectionID{High: 2, Low: 5}, ""},
		{"18446744073709551615", ElectionID{Low: 1<<64 - 1}, ""},
		{"0,0", ElectionID{}, "cfg.yaml:5: targets[0].election_id: must be ≥ 1"},
		{"1,x", ElectionID{}, `cfg.yaml:5: targets[0].election_id: election id "1,x": want HIGH,LOW`},
		{"18446744073709551616", ElectionID{}, "cfg.yaml:5: targets[0].election_id: election id"},
		{"-1", ElectionID{}, "cfg.yaml:5: targets[0].election_id"},
		{"[1, 0]", ElectionID{}, "cfg.yaml:5: targets[0].election_id: want a number or HIGH,LOW"},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			data := strings.Replace(base, old, "    election_id: "+c.value+"\n", 1)
			cfg, err := Parse([]byte(data), "cfg.yaml")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Parse: %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Targets[0].ElectionID; got != c.want {
				t.Fatalf("election id %+v, want %+v", got, c.want)
			}
			// It writes back as it reads.
			b, err := json.Marshal(cfg.Targets[0].ElectionID)
			if err != nil {
				t.Fatal(err)
			}
			var again ElectionID
			if err := json.Unmarshal(b, &again); err != nil || again != c.want {
				t.Fatalf("round trip %s: %+v, %v", b, again, err)
			}
		})
	}
}
