package regions

import (
	"errors"
	"strings"
	"testing"
)

func TestMumbaiProfile(t *testing.T) {
	s := Mumbai()
	p95 := map[string]float64{"ap-south-1": 196, "ap-southeast-1": 367, "ap-southeast-2": 634, "eu-west-1": 979,
		"us-east-1": 1491, "ap-northeast-1": 600, "ap-northeast-2": 620, "eu-central-1": 720, "eu-north-1": 780,
		"af-south-1": 950, "us-west-2": 1050, "sa-east-1": 1150}
	cold := map[string]float64{"ap-south-1": 423, "ap-southeast-1": 391, "ap-southeast-2": 952, "eu-west-1": 1108, "us-east-1": 1626}
	for id, want := range p95 {
		r, _ := LookupRegion(id)
		if got, ok := s.P95(r.Index); !ok || got != want {
			t.Errorf("P95(%s) = %v, %v; want %v", id, got, ok, want)
		}
		c, ok := s.Cold(r.Index)
		if wantC, known := cold[id]; ok != known || c != wantC {
			t.Errorf("Cold(%s) = %v, %v; want %v, %v", id, c, ok, wantC, known)
		}
	}
	if s.ColdKnown() != Pool5 {
		t.Errorf("cold known %s, want the 5-region pool", s.ColdKnown())
	}
	order := s.ByLatency(Pool12)
	for k := 1; k < len(order); k++ {
		a, _ := s.P95(order[k-1])
		b, _ := s.P95(order[k])
		if a > b {
			t.Fatalf("ByLatency not sorted: %v", order)
		}
	}
	if Nearest(s, Pool12) != 0 || Nearest(s, SetOf(3, 4)) != 3 || Nearest(s, 0) != NoRegion {
		t.Error("Nearest wrong")
	}
}

func TestNewSiteErrors(t *testing.T) {
	cases := []struct {
		name string
		lat  []RegionLatency
		want string
	}{
		{"x", nil, "no region latencies"},
		{"x", []RegionLatency{{Region: 40, P95Ms: 1}}, "not in the catalog"},
		{"x", []RegionLatency{{Region: 0, P95Ms: 1}, {Region: 0, P95Ms: 2}}, "listed twice"},
		{"x", []RegionLatency{{Region: 0, P95Ms: 0}}, "out of range"},
		{"x", []RegionLatency{{Region: 0, P95Ms: 70000}}, "out of range"},
		{"x", []RegionLatency{{Region: 0, P95Ms: 5, ColdMs: -1, HasCold: true}}, "cold_ms"},
		{"", []RegionLatency{{Region: 0, P95Ms: 5}}, "empty name"},
	}
	for _, c := range cases {
		if _, err := NewSite(c.name, c.lat); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSite(%q, %v) error %v, want %q", c.name, c.lat, err, c.want)
		}
	}
}

func TestLoadSites(t *testing.T) {
	sites, err := LoadSites("testdata/sites.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 2 || sites[0].Name() != "frankfurt-office" || sites[1].Name() != "sao-paulo" {
		t.Fatalf("sites %v", sites)
	}
	s := sites[0]
	if l, ok := s.P95(8); !ok || l != 12 {
		t.Errorf("frankfurt P95(eu-central-1) = %v %v", l, ok)
	}
	if c, ok := s.Cold(8); !ok || c != 250 {
		t.Errorf("frankfurt Cold(eu-central-1) = %v %v", c, ok)
	}
	if _, ok := s.Cold(3); ok {
		t.Error("missing cold_ms read as known")
	}
	if p := s.Prefixes(); len(p) != 1 || p[0].String() != "10.8.0.0/16" {
		t.Errorf("prefixes %v", p)
	}
}

func TestParseSitesErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		doc, want string
	}{
		{"", "f.yaml:1: empty document"},
		{"- a\n", "f.yaml:1: top level must be a mapping"},
		{"places: []\n", "f.yaml:1: unknown key \"places\""},
		{"sites: 3\n", "f.yaml:1: 'sites' must be a list"},
		{"sites: []\n", "f.yaml:1: no sites"},
		{"sites:\n  - latencies: [{region: IE, p95_ms: 5}]\n", "f.yaml:2: site without a name"},
		{"sites:\n  - name: a\n", "f.yaml:2: site \"a\" has no latencies"},
		{"sites:\n  - name: a\n    colour: red\n", "f.yaml:3: unknown site key \"colour\""},
		{"sites:\n  - name: a\n    latencies:\n      - {region: mars-1, p95_ms: 5}\n", "f.yaml:4: unknown region \"mars-1\""},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE, p95_ms: fast}\n", "f.yaml:4: p95_ms: \"fast\" is not a number"},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE, p95_ms: -3}\n", "f.yaml:4: p95_ms -3 out of range"},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE, p95_ms: 3, cold_ms: -1}\n", "f.yaml:4: cold_ms -1 out of range"},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE}\n", "f.yaml:4: latency entry for eu-west-1 without p95_ms"},
		{"sites:\n  - name: a\n    latencies:\n      - {p95_ms: 4}\n", "f.yaml:4: latency entry without region"},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE, p95_ms: 4, jitter: 2}\n", "f.yaml:4: unknown latency key \"jitter\""},
		{"sites:\n  - name: a\n    latencies:\n      - {region: IE, p95_ms: 4}\n      - {region: eu-west-1, p95_ms: 5}\n", "f.yaml:5: region eu-west-1 already listed at line 4"},
		{"sites:\n  - name: a\n    prefixes: [10.0.0.0/33]\n    latencies: [{region: IE, p95_ms: 4}]\n", "f.yaml:3: prefix \"10.0.0.0/33\""},
		{"sites:\n  - name: a\n    latencies: [{region: IE, p95_ms: 4}]\n  - name: a\n    latencies: [{region: IE, p95_ms: 4}]\n", "f.yaml:4: site \"a\" already defined at line 2"},
		{"sites:\n  - name: a\n    latencies: {region: IE}\n", "f.yaml:3: latencies must be a list"},
		{"sites: [\n", "f.yaml: yaml:"},
	}
	for _, c := range cases {
		_, err := ParseSites("f.yaml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSites(%q):\n  got  %v\n  want %q", c.doc, err, c.want)
		}
	}
}

func FuzzParseSites(f *testing.F) {
	f.Add([]byte("sites:\n  - name: a\n    latencies: [{region: IE, p95_ms: 4, cold_ms: 9}]\n"))
	f.Add([]byte("sites: [{name: b, prefixes: [10.0.0.0/8], latencies: [{region: ap-south-1, p95_ms: 1}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sites, err := ParseSites("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, s := range sites {
			if s.Regions() == 0 {
				t.Fatalf("site %s without regions accepted", s.Name())
			}
		}
	})
}

// TestParseSitesConfigSchema: a site written in the controller
// configuration's schema is named as such (file:line, ErrConfigSchema), so
// callers can tell it from any other malformed file.
func TestParseSitesConfigSchema(t *testing.T) {
	for _, key := range []string{"id: 1", "profile: office", "latency: {ap-south-1: {p95_ms: 3}}"} {
		_, err := ParseSites("f.yaml", []byte("sites:\n  - name: a\n    "+key+"\n"))
		if !errors.Is(err, ErrConfigSchema) || !strings.HasPrefix(err.Error(), "f.yaml:3: site key") {
			t.Errorf("%s: %v", key, err)
		}
	}
	if _, err := ParseSites("f.yaml", []byte("sites:\n  - name: a\n    colour: red\n")); errors.Is(err, ErrConfigSchema) {
		t.Errorf("an unknown key is not the configuration's schema: %v", err)
	}
}

// Issue 27 item 4: a sites file's second document was dropped silently.
func TestParseSitesSecondDocument(t *testing.T) {
	one := "sites:\n  - name: a\n    latencies:\n      - {region: ap-south-1, p95_ms: 100}\n"
	if _, err := ParseSites("s.yaml", []byte(one+"---\n")); err != nil {
		t.Fatalf("a trailing empty document: %v", err)
	}
	_, err := ParseSites("s.yaml", []byte(one+"---\nsites:\n  - name: b\n"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:5: a second YAML document") {
		t.Fatalf("ParseSites: %v, want s.yaml:5: a second YAML document", err)
	}
}
