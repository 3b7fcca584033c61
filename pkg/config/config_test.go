package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
)

// base is a valid configuration; cases below break one thing at a time.
const base = `targets:
  - name: sw1
    grpc_addr: 127.0.0.1:9559
    device_id: 1
    election_id: 1
regions:
  - id: ap-south-1
    index: 0
    next_hop:
      local:
        policy: jbsq
        bound: 4
        servers:
          - {id: 0, port: 1, mac: "02:00:00:00:00:01", ip: 10.0.0.10}
          - {id: 1, port: 1, mac: "02:00:00:00:00:02", ip: 10.0.0.11}
          - {id: 2, port: 1, mac: "02:00:00:00:00:03", ip: 10.0.0.12}
          - {id: 3, port: 1, mac: "02:00:00:00:00:04", ip: 10.0.0.13}
  - id: eu-west-1
    next_hop:
      remote: {port: 2, mac: "02:00:00:00:01:01", ip: 10.1.0.1}
sites:
  - name: mumbai
    id: 1
    prefixes: [10.10.0.0/16]
    profile: mumbai
  - name: other
    id: 2
    prefixes: [10.20.0.0/16]
    latency:
      ap-south-1: {p95_ms: 100, cold_ms: 300}
      eu-west-1: {p95_ms: 400}
sla_classes:
  - {name: a, ms: 300, share: 0.5}
  - {name: b, ms: 800, share: 0.5}
exec_classes:
  - {id: 0, cost_us: 5}
policy:
  name: C
carbon:
  source: offline
routes:
  l3:
    - {prefix: 0.0.0.0/0, drop: true}
`

func TestParseBase(t *testing.T) {
	c, err := Parse([]byte(base), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Pool(); got != regions.SetOf(0, 3) {
		t.Errorf("pool %v", got)
	}
	sites, err := c.RoutingSites()
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := sites[0].P95(3); l != 979 {
		t.Errorf("mumbai → eu-west-1 P95 %v, want the built-in 979", l)
	}
	if _, ok := sites[1].Cold(3); ok {
		t.Errorf("other → eu-west-1 has a cold latency, want none")
	}
	if l, _ := sites[1].Cold(0); l != 300 {
		t.Errorf("other → ap-south-1 cold %v", l)
	}
	if p, _ := c.RoutingPolicy(); p != regions.PolicyC {
		t.Errorf("policy %v", p)
	}
	if o := c.Options(); o.Alpha != DefaultAlpha || o.W != DefaultWeight || o.ColdMissing != regions.ColdMissingExclude {
		t.Errorf("options %+v", o)
	}
}

// edit replaces old (which must occur once in base) with new.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(base, old) != 1 {
		t.Fatalf("%q occurs %d times in base", old, strings.Count(base, old))
	}
	return strings.Replace(base, old, new, 1)
}

func lineOf(t *testing.T, doc, needle string) int {
	t.Helper()
	i := strings.Index(doc, needle)
	if i < 0 {
		t.Fatalf("%q not in document", needle)
	}
	return strings.Count(doc[:i], "\n") + 1
}

func TestParseRejects(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		at       string // text on the line the problem must point at
		want     string // substring of the message
	}{
		{"unknown region", "  - id: eu-west-1\n", "  - id: eu-west-9\n", "id: eu-west-9", "regions[1].id: unknown region \"eu-west-9\""},
		{"target site unknown", "    election_id: 1\n", "    election_id: 1\n    sites: [mumbai, pune]\n", "sites: [mumbai, pune]", "targets[0].sites[1]: unknown site \"pune\""},
		{"target site twice", "    election_id: 1\n", "    election_id: 1\n    sites: [mumbai, other, mumbai]\n", "sites: [mumbai, other, mumbai]", "targets[0].sites[2]: duplicate site \"mumbai\" (also targets[0].sites[0])"},
		{"duplicate region", "  - id: eu-west-1\n", "  - id: ap-south-1\n", "  - id: ap-south-1\n    next_hop", "duplicate region \"ap-south-1\""},
		{"wrong index", "    index: 0\n", "    index: 5\n", "index: 5", "regions[0].index: ap-south-1 has catalog index 0, not 5"},
		{"index out of range", "    index: 0\n", "    index: 32\n", "index: 32", "out of range 0..31"},
		{"no next hop", "    next_hop:\n      remote: {port: 2, mac: \"02:00:00:00:01:01\", ip: 10.1.0.1}\n", "    next_hop: {}\n", "next_hop: {}", "want exactly one of local or remote"},
		{"pool not power of two", "          - {id: 3, port: 1, mac: \"02:00:00:00:00:04\", ip: 10.0.0.13}\n", "", "servers:", "pool of 3 servers: the size must be a power of two"},
		{"pool not contiguous", "{id: 3, port: 1,", "{id: 5, port: 1,", "servers:", "server ids must be contiguous: 0,1,2,5 (missing 3)"},
		{"pool misaligned", "{id: 0, port: 1,", "{id: 4, port: 1,", "servers:", "pool of 4 servers starts at id 1: the first id must be a multiple of 4"},
		{"pair misaligned", "          - {id: 0, port: 1, mac: \"02:00:00:00:00:01\", ip: 10.0.0.10}\n          - {id: 1, port: 1, mac: \"02:00:00:00:00:02\", ip: 10.0.0.11}\n          - {id: 2, port: 1, mac: \"02:00:00:00:00:03\", ip: 10.0.0.12}\n          - {id: 3, port: 1, mac: \"02:00:00:00:00:04\", ip: 10.0.0.13}\n", "          - {id: 1, port: 1, mac: \"02:00:00:00:00:02\", ip: 10.0.0.11}\n          - {id: 2, port: 1, mac: \"02:00:00:00:00:03\", ip: 10.0.0.12}\n", "servers:", "pool of 2 servers starts at id 1: the first id must be a multiple of 2"},
		{"server id too large", "{id: 0, port: 1,", "{id: 1024, port: 1,", "{id: 1024", "servers[0].id: server id 1024 out of range 0..1023"},
		{"duplicate server", "{id: 3, port: 1,", "{id: 2, port: 1,", "{id: 2, port: 1, mac: \"02:00:00:00:00:04\"", "duplicate server id 2"},
		{"port too large", "remote: {port: 2,", "remote: {port: 512,", "remote: {port: 512", "next_hop.remote.port: port 512 out of range 0..511"},
		{"bad dispatch policy", "        policy: jbsq\n", "        policy: jsq\n", "policy: jsq", "unknown dispatch policy \"jsq\""},
		{"bound too large", "        bound: 4\n", "        bound: 70000\n", "bound: 70000", "bound: 70000 out of range 0..65535"},
		{"tune with bound", "        bound: 4\n", "        bound: 4\n        tune: {load: 0.5}\n", "tune: {load", "next_hop.local.tune: give bound or tune, not both"},
		{"tune needs jbsq", "        policy: jbsq\n        bound: 4\n", "        policy: jiq\n        tune: {}\n", "tune: {}", "next_hop.local.tune: tune chooses a JBSQ bound: only for policy jbsq, not \"jiq\""},
		{"tune load", "        bound: 4\n", "        tune: {load: 1.2}\n", "tune: {load", "regions[0].next_hop.local.tune.load: load 1.2 out of range (0, 1)"},
		{"tune cores", "        bound: 4\n", "        tune:\n          cores_per_server: -1\n", "cores_per_server", "tune.cores_per_server: -1 out of range 1..1024"},
		{"tune service", "        bound: 4\n", "        tune:\n          service: pareto\n", "service: pareto", "tune.service: unknown service distribution \"pareto\""},
		{"tune service mean", "        bound: 4\n", "        tune:\n          service_mean: 2s\n", "service_mean: 2s", "tune.service_mean: 2s out of range 1ns..1s"},
		{"tune delay", "        bound: 4\n", "        tune:\n          delay: five\n", "delay: five", "bad duration \"five\""},
		{"tune target", "        bound: 4\n", "        tune:\n          target: 1\n", "target: 1", "tune.target: target violation rate 1 out of range (0, 1)"},
		{"tune seeds", "        bound: 4\n", "        tune:\n          seeds: 5000\n", "seeds: 5000", "tune.seeds: 5000 out of range 0..1000"},
		{"tune sigma", "        bound: 4\n", "        tune:\n          sigma: 9\n", "sigma: 9", "tune.sigma: sigma 9 out of range (0, 4]"},
		{"tune unknown field", "        bound: 4\n", "        tune:\n          cores: 128\n", "cores: 128", "unknown field \"cores\""},
		{"bad MAC", "mac: \"02:00:00:00:00:01\"", "mac: \"02:00:00:00:01\"", "02:00:00:00:01\"", "bad MAC address"},
		{"bad IP", "ip: 10.0.0.10}", "ip: 10.0.0.300}", "10.0.0.300", "bad IPv4 address \"10.0.0.300\""},
		{"missing IP", ", ip: 10.1.0.1}", "}", "remote: {port: 2", "remote.ip: required"},
		{"duplicate site id", "    id: 2\n", "    id: 1\n", "    id: 1\n    prefixes: [10.20", "duplicate site id 1 (also sites[0], mumbai)"},
		{"site id zero", "    id: 2\n", "    id: 0\n", "    id: 0\n", "site id 0 out of range 1..65535"},
		{"duplicate prefix", "[10.20.0.0/16]", "[10.10.0.0/16]", "[10.10.0.0/16]\n    latency", "duplicate prefix 10.10.0.0/16 (also sites[0].prefixes[0])"},
		{"host bits", "[10.20.0.0/16]", "[10.20.1.0/16]", "10.20.1.0/16", "host bits set (did you mean 10.20.0.0/16?)"},
		{"missing latency", "      eu-west-1: {p95_ms: 400}\n", "", "    latency:", "no latency for region eu-west-1"},
		{"unknown profile", "    profile: mumbai\n", "    profile: paris\n", "profile: paris", "unknown latency profile \"paris\""},
		{"latency unknown region", "      eu-west-1: {p95_ms: 400}\n", "      eu-west-1: {p95_ms: 400}\n      mars-1: {p95_ms: 9}\n", "mars-1", "latency for unknown region \"mars-1\""},
		{"negative latency", "{p95_ms: 400}", "{p95_ms: -4}", "p95_ms: -4", "P95 latency -4 ms out of range"},
		{"shares", "share: 0.5}\nexec", "share: 0.4}\nexec", "sla_classes:", "shares sum to 0.9, want 1"},
		{"sla too large", "ms: 800", "ms: 70000", "ms: 70000", "SLA 70000 ms out of range 1..65535"},
		{"exec class id", "{id: 0, cost_us: 5}", "{id: 256, cost_us: 5}", "id: 256, cost_us", "exec class id 256 out of range 0..255"},
		{"unknown policy", "  name: C\n", "  name: E\n", "name: E", "unknown policy \"E\""},
		{"C+warm", "  name: C\n", "  name: C+warm\n", "name: C+warm", "C+warm is stateful"},
		{"weight", "  name: C\n", "  name: D\n  weight: 1.5\n", "weight: 1.5", "weight 1.5 out of range [0, 1]"},
		{"unknown carbon source", "source: offline", "source: wind", "source: wind", "unknown carbon source \"wind\""},
		{"csv needs dir", "source: offline", "source: csv", "carbon:", "carbon.dir: required for source csv"},
		{"api needs token", "source: offline", "source: watttime-api", "carbon:", "needs token_env or token_file"},
		{"watttime needs username", "source: offline", "source: watttime-api\n  token_env: WT_PASSWORD", "carbon:", "source watttime-api needs username"},
		{"hysteresis gain unit", "  name: C\n", "  name: C\n  hysteresis:\n    min_gain: \"5\"\n", "min_gain", "policy.hysteresis.min_gain: gain \"5\": give a unit"},
		{"hysteresis gain number", "  name: C\n", "  name: C\n  hysteresis:\n    min_gain: 5\n", "min_gain", "policy.hysteresis.min_gain: gain \"5\": give a unit: \"5%\" (relative to the current region's value) or \"20g/kWh\" (absolute)"},
		{"hysteresis null", "  name: C\n", "  name: C\n  hysteresis:\n", "hysteresis:", "policy.hysteresis: empty: write hysteresis: {} for the defaults (min_gain 10%, min_hold 3h, horizon 1h)"},
		{"hysteresis gain range", "  name: C\n", "  name: C\n  hysteresis:\n    min_gain: 120%\n", "min_gain", "a relative gain must be below 100%"},
		{"hysteresis gain negative", "  name: C\n", "  name: C\n  hysteresis:\n    min_gain: -3g/kWh\n", "min_gain", "must be >= 0"},
		{"hysteresis hold hours", "  name: C\n", "  name: C\n  hysteresis:\n    min_hold: 90m\n", "min_hold", "policy.hysteresis.min_hold: 1h30m0s: want whole hours"},
		{"hysteresis hold range", "  name: C\n", "  name: C\n  hysteresis:\n    min_hold: 200h\n", "min_hold", "200h0m0s out of range 0h..168h"},
		{"hysteresis horizon zero", "  name: C\n", "  name: C\n  hysteresis: {horizon: 0s}\n", "hysteresis:", "policy.hysteresis.horizon: 0s out of range 1h..72h"},
		{"hysteresis unknown field", "  name: C\n", "  name: C\n  hysteresis:\n    min_gains: 5%\n", "min_gains", "unknown field \"min_gains\" (known: horizon, min_gain, min_hold)"},
		{"hysteresis policy D", "  name: C\n", "  name: D\n  hysteresis: {}\n", "hysteresis: {}", "policy.hysteresis: applies to the policies that rank by carbon (B, C, C+, C-cap); D ranks by a normalized per-site score"},
		{"hysteresis policy A", "  name: C\n", "  name: a\n  hysteresis: {}\n", "hysteresis: {}", "A ignores carbon"},
		{"marginal offline", "source: offline", "source: offline\n  signal: marginal", "signal: marginal", "carbon.signal: marginal: the offline model is of average (lifecycle) intensities"},
		{"marginal electricity maps", "source: offline", "source: electricitymaps-api\n  token_env: EM\n  signal: marginal", "signal: marginal", "carbon.signal: marginal: Electricity Maps gives average intensities"},
		{"unknown signal", "source: offline", "source: offline\n  signal: average", "signal: average", "carbon.signal: want lca, direct or marginal, got \"average\""},
		{"watttime no signal", "source: offline", "source: watttime-api\n  token_env: WT\n  username: me\n  signal: lca", "signal: lca", "carbon.signal: lca applies to Electricity Maps only"},
		{"empty watttime region", "source: offline", "source: watttime-api\n  token_env: WT\n  username: me\n  watttime_regions:\n    IE: \"\"", "IE: \"\"", "carbon.watttime_regions.IE: empty WattTime region"},
		{"username only for watttime", "source: offline", "source: electricitymaps-api\n  token_env: EM\n  username: me", "username: me", "carbon.username: only for source watttime-api"},
		{"credentials in url", "source: offline", "source: electricitymaps-api\n  token_env: EM\n  url: https://me:secret@example.org", "url: https", "carbon.url: want http(s)://host[/path] without credentials"},
		{"bad grpc addr", "grpc_addr: 127.0.0.1:9559", "grpc_addr: localhost", "grpc_addr: localhost", "want host:port"},
		{"election id zero", "election_id: 1", "election_id: 0", "election_id: 0", "must be ≥ 1"},
		{"unknown field", "    device_id: 1\n", "    device_id: 1\n    devise: 2\n", "devise", "unknown field \"devise\" (known: arch, device_id, election_id, grpc_addr, name, sites, tls)"},
		{"wrong type", "    device_id: 1\n", "    device_id: one\n", "device_id: one", "want a non-negative integer, got \"one\""},
		{"yaml 1.1 boolean", "  - name: other\n", "  - name: no\n", "name: no", "unquoted \"no\" reads as a boolean"},
		{"hex integer", "    id: 2\n", "    id: 0x2\n", "id: 0x2", "want a decimal integer"},
		{"list expected", "    prefixes: [10.20.0.0/16]\n", "    prefixes: 10.20.0.0/16\n", "prefixes: 10.20.0.0/16", "want a list"},
		{"duration", "source: offline", "source: offline\n  staleness_bound: 3 hours", "3 hours", "bad duration \"3 hours\""},
		{"replay start layout", "source: offline\n", "source: offline\nschedule:\n  mode: replay\n  replay:\n    start: 2022-01-10 00:00\n", "start: 2022", "schedule.replay.start: \"2022-01-10 00:00\" is not an RFC 3339 time: want e.g. 2022-01-10T00:00:00Z"}, // no Go layout (issue 15 item 19)
		{"replay needs start", "source: offline\n", "source: offline\nschedule:\n  mode: replay\n", "schedule:", "schedule.replay: required for mode replay"},
		{"duplicate route", "    - {prefix: 0.0.0.0/0, drop: true}\n", "    - {prefix: 0.0.0.0/0, drop: true}\n    - {prefix: 0.0.0.0/0, port: 3}\n", "port: 3", "duplicate prefix 0.0.0.0/0 (also routes.l3[0])"},
		{"syntax", "  name: C\n", "  name: [C\n", "name: [C", "invalid YAML"},
		{"tna credit ttl", "    election_id: 1\nregions:\n  - id: ap-south-1\n    index: 0\n    next_hop:\n      local:\n        policy: jbsq\n        bound: 4\n",
			"    election_id: 1\n    arch: tna\nregions:\n  - id: ap-south-1\n    index: 0\n    next_hop:\n      local:\n        policy: jbsq\n        bound: 4\n        credit_ttl: 10m\n", "credit_ttl: 10m", "arch tna) supports credit TTLs up to about 58.720256s (credit_tick 24; this one needs 28)"},
		{"latency source", "source: offline\n", "source: offline\nlatency:\n  source: psychic\n", "source: psychic", "latency.source: \"psychic\": want static, measured or blend"},
		{"latency window buckets", "source: offline\n", "source: offline\nlatency:\n  source: blend\n  window: 5ms\n  buckets: 10\n", "window: 5ms", "latency.window: 5ms in 10 buckets: each bucket must span at least 1ms"},
		{"latency evaluate", "source: offline\n", "source: offline\nlatency:\n  source: blend\n  window: 1s\n  evaluate: 2s\n", "evaluate: 2s", "latency.evaluate: 2s is longer than the window 1s"},
		{"latency needs classes", "sla_classes:\n  - {name: a, ms: 300, share: 0.5}\n  - {name: b, ms: 800, share: 0.5}\n", "latency:\n  source: blend\n", "source: blend", "latency.source: blend needs sla_classes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := edit(t, c.old, c.new)
			_, err := Parse([]byte(doc), "cfg.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v, want *ValidationError", err, err)
			}
			wantLine := lineOf(t, doc, c.at)
			prefix := fmt.Sprintf("cfg.yaml:%d: ", wantLine)
			for _, p := range ve.Problems {
				if strings.Contains(p.Error(), c.want) {
					if !strings.HasPrefix(p.Error(), prefix) && !(c.name == "syntax" && p.Line >= wantLine-1 && p.Line <= wantLine+1) {
						t.Errorf("%q does not start with %q", p.Error(), prefix)
					}
					return
				}
			}
			t.Errorf("no problem mentions %q; got:\n%v", c.want, err)
		})
	}
}

// TestHysteresisDefaults: no block, no hysteresis; an empty block takes
// regions.DefaultHysteresis; given fields override it; carbon.signal says
// what the numbers are.
func TestHysteresisDefaults(t *testing.T) {
	c, err := Parse([]byte(base), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if h := c.RoutingHysteresis(); h != nil {
		t.Errorf("no block: hysteresis %v, want none (behaviour unchanged)", h)
	}
	if s := c.CarbonSignal(); s != regions.SignalLCA || s.Type() != "average" {
		t.Errorf("offline signal %v", s)
	}
	cases := []struct {
		block string
		want  regions.Hysteresis
	}{
		{"  hysteresis: {}\n", regions.DefaultHysteresis()},
		{"  hysteresis:\n    min_gain: 50g/kWh\n", regions.Hysteresis{MinGain: regions.Gain{Value: 50}, MinHold: regions.DefaultHysteresis().MinHold, Horizon: 1}},
		{"  hysteresis:\n    min_gain: 2.5%\n    min_hold: 0s\n    horizon: 6h\n", regions.Hysteresis{MinGain: regions.Gain{Value: 2.5, Relative: true}, MinHold: 0, Horizon: 6}},
	}
	for _, tc := range cases {
		c, err := Parse([]byte(edit(t, "  name: C\n", "  name: C\n"+tc.block)), "h.yaml")
		if err != nil {
			t.Fatalf("%q: %v", tc.block, err)
		}
		if h := c.RoutingHysteresis(); h == nil || *h != tc.want {
			t.Errorf("%q: hysteresis %v, want %v", tc.block, h, tc.want)
		}
	}
	for src, want := range map[string]regions.Signal{
		"source: csv\n  dir: x\n  signal: marginal":                     regions.SignalMarginal,
		"source: watttime-api\n  token_env: W\n  username: u":           regions.SignalMarginal,
		"source: electricitymaps-api\n  token_env: E\n  signal: direct": regions.SignalDirect,
	} {
		c, err := Parse([]byte(edit(t, "source: offline", src)), "s.yaml")
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got := c.CarbonSignal(); got != want {
			t.Errorf("%q: signal %v, want %v", src, got, want)
		}
	}
}

func TestEveryProblemReported(t *testing.T) {
	doc := edit(t, "    index: 0\n", "    index: 9\n")
	doc = strings.Replace(doc, "share: 0.5}\nexec", "share: 0.1}\nexec", 1)
	doc = strings.Replace(doc, "source: offline", "source: wind", 1)
	_, err := Parse([]byte(doc), "x.yaml")
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	for i := 1; i < len(ve.Problems); i++ {
		if ve.Problems[i].Line < ve.Problems[i-1].Line {
			t.Errorf("problems not in file order: %v", err)
		}
	}
}

func TestLimits(t *testing.T) {
	// 33 regions: more than the 32-bit bitmap holds (and the catalog has 12).
	var b strings.Builder
	b.WriteString("regions:\n")
	for i := 0; i < 33; i++ {
		fmt.Fprintf(&b, "  - {id: ap-south-1, next_hop: {remote: {port: 1, mac: \"02:00:00:00:00:01\", ip: 10.0.0.%d}}}\n", i)
	}
	b.WriteString("sites:\n  - {name: s, id: 1, prefixes: [10.0.0.0/8], profile: mumbai}\npolicy: {name: C}\ncarbon: {source: offline}\n")
	_, err := Parse([]byte(b.String()), "big.yaml")
	if err == nil || !strings.Contains(err.Error(), "big.yaml:1: regions: 33 regions, the data plane holds at most 32") {
		t.Errorf("got %v", err)
	}

	// D on many sites: table sizes are the compiler's to check, exactly
	// and per target (compiler.Capacity), so validation accepts it.
	b.Reset()
	b.WriteString("regions:\n")
	for _, r := range regions.Catalog()[:12] { // the regions the mumbai profile covers
		fmt.Fprintf(&b, "  - {id: %s, next_hop: {remote: {port: 1, mac: \"02:00:00:00:00:01\", ip: 10.0.0.1}}}\n", r.ID)
	}
	b.WriteString("sites:\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "  - {name: s%d, id: %d, prefixes: [10.%d.%d.0/24], profile: mumbai}\n", i, i, i/256, i%256)
	}
	b.WriteString("policy: {name: D}\ncarbon: {source: offline}\n")
	if _, err = Parse([]byte(b.String()), "d.yaml"); err != nil {
		t.Errorf("200 sites under D: %v (the compiler, not validation, checks table sizes)", err)
	}
}

func TestDefaultsAndValues(t *testing.T) {
	doc := edit(t, "  name: C\n", "  name: c+\n  alpha: 0.5\n  cold_missing: warm\n")
	doc = strings.Replace(doc, "bound: 4\n", "bound: 4\n        credit_ttl: 250us\n        on_full: force\n", 1)
	c, err := Parse([]byte(doc), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.RoutingPolicy(); err != nil || p != regions.PolicyCPlus {
		t.Errorf("policy %v %v", p, err)
	}
	if o := c.Options(); o.Alpha != 0.5 || o.ColdMissing != regions.ColdMissingWarm {
		t.Errorf("options %+v", o)
	}
	pool := c.Regions[0].NextHop.Local
	if pool.CreditTTL.Duration != 250*time.Microsecond || pool.OnFull != "force" {
		t.Errorf("pool %+v", pool)
	}
	if got := pool.Servers[1].MAC.String(); got != "02:00:00:00:00:02" {
		t.Errorf("mac %s", got)
	}
	if got := pool.Servers[1].IP.Uint32(); got != 10<<24|11 {
		t.Errorf("ip %#x", got)
	}
}

func TestLoadChecksFiles(t *testing.T) {
	dir := t.TempDir()
	doc := edit(t, "source: offline", "source: csv\n  dir: traces")
	path := dir + "/c.yaml"
	if err := writeFile(path, doc); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	want := fmt.Sprintf("%s:%d: carbon.dir: ", path, lineOf(t, doc, "dir: traces"))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want prefix %q", err, want)
	}
}

// TestAliasBomb: a few anchors can describe an exponentially large document;
// the parser must refuse it quickly instead of expanding it.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("regions: &a0 [{id: ap-south-1}, {id: ap-south-1}]\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	b.WriteString("sla_classes: *a39\n")
	done := make(chan error, 1)
	go func() { _, err := Parse([]byte(b.String()), "bomb.yaml"); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("accepted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parser still expanding aliases after 10 s")
	}
}

func TestParseTune(t *testing.T) {
	cases := []struct {
		name, block string
		want        PoolTune // after TuneOrDefault
	}{
		{"defaults", "tune: {}", PoolTune{CoresPerServer: 8, Load: 0.85, ArrivalCV: 2, Service: "lognormal",
			ServiceMean: Duration{5 * time.Microsecond}, Sigma: 1, BimodalP: 0.1, BimodalRatio: 10,
			Delay: &Duration{4500 * time.Nanosecond}, SLO: Duration{50 * time.Microsecond}, Target: 0.05, Seed: 1}},
		{"issue example", "tune: {cores_per_server: 8, service_mean: 5us, delay: 4.5us, load: 0.85, slo: 50us, target: 0.05, seed: 1}",
			PoolTune{CoresPerServer: 8, Load: 0.85, ArrivalCV: 2, Service: "lognormal",
				ServiceMean: Duration{5 * time.Microsecond}, Sigma: 1, BimodalP: 0.1, BimodalRatio: 10,
				Delay: &Duration{4500 * time.Nanosecond}, SLO: Duration{50 * time.Microsecond}, Target: 0.05, Seed: 1}},
		{"zero delay kept, others set", "tune: {cores_per_server: 2, delay: 0s, load: 0.5, service: exp, arrival_cv: 1, slo: 30us, target: 0.01, seed: 7, seeds: 2, requests: 5000}",
			PoolTune{CoresPerServer: 2, Load: 0.5, ArrivalCV: 1, Service: "exp",
				ServiceMean: Duration{5 * time.Microsecond}, Sigma: 1, BimodalP: 0.1, BimodalRatio: 10,
				Delay: &Duration{0}, SLO: Duration{30 * time.Microsecond}, Target: 0.01, Seed: 7, Seeds: 2, Requests: 5000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(edit(t, "        bound: 4\n", "        "+c.block+"\n")), "cfg.yaml")
			if err != nil {
				t.Fatal(err)
			}
			pool := cfg.Regions[0].NextHop.Local
			if pool.Bound != 0 || pool.Tune == nil {
				t.Fatalf("bound %d, tune %v", pool.Bound, pool.Tune)
			}
			got := pool.Tune.TuneOrDefault()
			if got.Delay == nil || *got.Delay != *c.want.Delay {
				t.Fatalf("delay %v, want %v", got.Delay, c.want.Delay)
			}
			got.Delay, c.want.Delay = nil, nil
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// A switch that holds a site but not another site nested inside it would
// route the inner site's clients as the outer one's: refused, pointing at
// the target's list; holding both, or only the inner one, is fine.
func TestTargetSitesNested(t *testing.T) {
	nested := strings.Replace(base, "    prefixes: [10.20.0.0/16]\n", "    prefixes: [10.10.5.0/24]\n", 1)
	for _, c := range []struct {
		sites string
		bad   bool
	}{{"[mumbai]", true}, {"[mumbai, other]", false}, {"[other]", false}} {
		doc := strings.Replace(nested, "    election_id: 1\n", "    election_id: 1\n    sites: "+c.sites+"\n", 1)
		_, err := Parse([]byte(doc), "cfg.yaml")
		if !c.bad {
			if err != nil {
				t.Errorf("sites %s: %v", c.sites, err)
			}
			continue
		}
		want := "cfg.yaml:6: targets[0].sites: holds mumbai (10.10.0.0/16) but not other (10.10.5.0/24), which lies inside it"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("sites %s: %v, want %q", c.sites, err, want)
		}
	}
}
