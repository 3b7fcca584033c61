package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const tunedExample = "../../examples/tuned.yaml"

// TestTunedPool: a pool with a tune block gets the bound `p4ctl tune jbsq`
// prints for the same parameters; plan shows it in set_pool (one line on
// stderr says so, stdout stays JSON) and apply pushes it to the switch.
func TestTunedPool(t *testing.T) {
	code, out, errs := p4ctl(t, "tune", "jbsq", "--cores", "32", "--cores-per-host", "8", "--service-mean", "5us", "--delay", "4.5us",
		"--load", "0.85", "--slo", "50us", "--target", "0.05", "--seed", "1", "--max-holds", "8", "--on-full", "nack", "--no-plots", "-o", "json")
	expect(t, "tune jbsq", code, exitOK, out, errs)
	var tuned struct {
		Bound int  `json:"bound"`
		Met   bool `json:"met"`
	}
	if err := json.Unmarshal([]byte(out), &tuned); err != nil || !tuned.Met {
		t.Fatalf("tune jbsq -o json: %v, %+v", err, tuned)
	}

	code, out, errs = p4ctl(t, "plan", "-c", tunedExample, "--table", "server_pool", "-o", "json")
	expect(t, "plan", code, exitOK, out, errs)
	m := regexp.MustCompile(`^pool ap-south-1: jbsq bound (\d+) from tune \(`).FindStringSubmatch(errs)
	if m == nil || strings.Count(errs, "\n") != 1 {
		t.Fatalf("stderr %q: want one line per tuned pool", errs)
	}
	if n, _ := strconv.Atoi(m[1]); n != tuned.Bound {
		t.Fatalf("plan resolved bound %d, tune jbsq says %d", n, tuned.Bound)
	}
	var plan struct {
		Entries []struct {
			Action string `json:"action"`
			Params []struct {
				Name  string `json:"name"`
				Value int    `json:"value"`
			} `json:"params"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("plan -o json is not JSON: %v\n%s", err, out)
	}
	bound := -1
	for _, e := range plan.Entries {
		for _, p := range e.Params {
			if strings.HasSuffix(e.Action, "set_pool") && p.Name == "bound" {
				bound = p.Value
			}
		}
	}
	if bound != tuned.Bound {
		t.Fatalf("set_pool bound %d in the plan, want the tuned %d", bound, tuned.Bound)
	}

	sw := embeddedSwitch(t)
	code, out, errs = p4ctl(t, "apply", "-c", tunedExample, "--grpc-addr", sw.Addr(), "--grace", "0")
	expect(t, "apply", code, exitOK, out, errs, "pool ap-south-1: jbsq bound "+m[1]+" from tune")
	code, out, errs = p4ctl(t, "get", "entries", "--table", "server_pool", "--grpc-addr", sw.Addr())
	expect(t, "get server_pool", code, exitOK, out, errs, "bound="+m[1]+",")
}

// tunedVariant writes examples/tuned.yaml with its tune block's fields
// extended by extra (quick sizing) and returns the path.
func tunedVariant(t *testing.T, extra string) string {
	t.Helper()
	b, err := os.ReadFile(tunedExample)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "seed: 1}", "seed: 1, seeds: 2, requests: 10000"+extra+"}", 1)
	if s == string(b) {
		t.Fatal("examples/tuned.yaml has no tune block ending in seed: 1}")
	}
	path := filepath.Join(t.TempDir(), "tuned.yaml")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The daemon resolves the block once at start, logs it with its logger
// (no plain line in structured logs) and pushes the tuned bound; a target
// no bound meets stops every command before a switch is touched.
func TestTunedPoolRunAndInfeasible(t *testing.T) {
	quick := tunedVariant(t, "")
	sw := embeddedSwitch(t)
	code, out, errs := p4ctl(t, "run", "-c", quick, "--grpc-addr", sw.Addr(), "--replay", "2022-01-10T00", "--hours", "1",
		"--speed", "max", "--metrics-addr", "", "--grace", "0", "--log-format", "json")
	expect(t, "run", code, exitOK, out, errs, `"msg":"pool bound from tune","region":"ap-south-1","bound":`)
	if strings.Contains(errs, "pool ap-south-1: jbsq bound") || strings.Count(errs, `"msg":"pool bound from tune"`) != 1 {
		t.Fatalf("want the tuned pool logged once, as JSON:\n%s", errs)
	}
	m := regexp.MustCompile(`"msg":"pool bound from tune","region":"ap-south-1","bound":(\d+),`).FindStringSubmatch(errs)
	code, out, errs = p4ctl(t, "get", "entries", "--table", "server_pool", "--grpc-addr", sw.Addr())
	expect(t, "get server_pool after run", code, exitOK, out, errs, "bound="+m[1]+",")

	bad := tunedVariant(t, ", slo: 10us")
	b, _ := os.ReadFile(bad)
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "slo: 50us, ", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plan"}, {"diff", "--grpc-addr", sw.Addr()}, {"apply", "--grpc-addr", sw.Addr()}} {
		code, out, errs = p4ctl(t, append(args, "-c", bad)...)
		want := exitError
		if args[0] == "diff" { // 1 is drift alone: diff could not check
			want = exitDiffError
		}
		expect(t, args[0]+" with an infeasible target", code, want, out, errs,
			"regions[0].next_hop.local.tune (region ap-south-1): no JBSQ bound meets the 5 % violation target: the best is n = ")
	}
}

// Issue 27 item 6: `tune jbsq` exited 0 when no bound met the target
// ("met": false); it prints the curve and exits 1, as a tuned pool does.
func TestTuneJBSQUnmetExits1(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		code, out, errs := p4ctl(t, "tune", "jbsq", "--quick", "--no-plots", "--slo", "12us", "-o", format)
		expect(t, "tune jbsq --slo 12us -o "+format, code, exitError, out, errs, "no JBSQ bound meets", "relax --target")
		if format == "json" && !strings.Contains(out, `"met": false`) {
			t.Errorf("-o json lacks the result:\n%s", out)
		}
	}
	code, out, errs := p4ctl(t, "tune", "jbsq", "--quick", "--no-plots")
	expect(t, "tune jbsq met", code, exitOK, out, errs, "smallest n meeting")
}
