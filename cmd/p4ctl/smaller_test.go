package main

import (
	"regexp"
	"strings"
	"testing"
)

// Plot files are named on stderr by every command that plots, never on
// stdout (issue 15 item 19).
func TestPlotPathsOnStderr(t *testing.T) {
	for _, args := range [][]string{
		{"eval", "carbon", "--quick", "--runs", "2", "--requests", "20", "--mixed-requests", "50"},
		{"demo", "--quick", "--hours", "1", "--requests", "50"},
		{"sim", "serverless", "--quick", "--dist", "azure", "--lambda", "10", "--policy", "late", "--seeds", "2", "--requests", "500"},
		{"sim", "micro", "run", "--quick", "--requests", "2000", "--seeds", "2"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			dir := t.TempDir()
			code, out, errs := p4ctl(t, append(args, "--out-dir", dir)...)
			expect(t, strings.Join(args, " "), code, exitOK, out, errs, "plots: "+dir)
			if strings.Contains(out, dir) {
				t.Errorf("stdout names the plot files:\n%s", out)
			}
		})
	}
}

// Small usage fixes (issue 15 item 19): sim micro without an experiment is
// the group's usage error; --sla names itself; a period outside the
// synthetic model's year says it was mapped.
func TestSmallUsageFixes(t *testing.T) {
	code, out, errs := p4ctl(t, "sim", "micro")
	expect(t, "sim micro", code, exitUsage, out, errs, "p4ctl sim micro what? e1, e2, e3")
	if strings.Contains(errs, "accepts 1 arg") {
		t.Errorf("cobra's message: %s", errs)
	}
	code, out, errs = p4ctl(t, "eval", "carbon", "--sla", "100,500,800,1000,-5", "--no-plots", "--quick")
	expect(t, "eval carbon --sla …,-5", code, exitUsage, out, errs, "--sla -5")
	code, out, errs = p4ctl(t, "eval", "carbon", "--period", "2030-01", "--no-plots", "--quick", "--runs", "2", "--requests", "20", "--mixed-requests", "50")
	expect(t, "eval carbon --period 2030-01", code, exitOK, out, errs, "fitted to 2022", "mapped onto")
}

// get entries prints p4ctl's tables in plan's notation (issue 15 item 19:
// feasible=0x20&&&0x20 where plan shows has(5:eu-north-1)).
func TestGetEntriesPlanNotation(t *testing.T) {
	sw := embeddedSwitch(t)
	code, out, errs := p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", sw.Addr(), "--grace", "0")
	expect(t, "apply", code, exitOK, out, errs)
	code, got, errs := p4ctl(t, "get", "entries", "--table", "carbon_rank", "--grpc-addr", sw.Addr())
	expect(t, "get entries", code, exitOK, got, errs, "feasible=has(")
	if strings.Contains(got, "&&&") {
		t.Errorf("raw ternary notation:\n%s", got)
	}
	code, plan, errs := p4ctl(t, "plan", "-c", mumbai, "--table", "carbon_rank", "--epoch", "1")
	expect(t, "plan", code, exitOK, plan, errs)
	feasible := regexp.MustCompile(`feasible=\S+`)
	want := feasible.FindAllString(plan, -1)
	if len(want) == 0 {
		t.Fatalf("plan shows no feasible match:\n%s", plan)
	}
	for _, w := range want {
		if !strings.Contains(got, w+" ") && !strings.HasSuffix(strings.TrimSpace(got), w) {
			t.Errorf("get entries lacks plan's %s", w)
		}
	}
}

// Completion offers the values of -o and --policy (issue 15 item 19).
func TestCompletionValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "plan", "-o", ""}, []string{"table", "json", "yaml"}},
		{[]string{"__complete", "get", "entries", "-o", ""}, []string{"json"}},
		{[]string{"__complete", "plan", "--policy", ""}, []string{"C+", "C-cap"}},
		{[]string{"__complete", "sim", "serverless", "--policy", ""}, []string{"pathfinder"}},
		{[]string{"__complete", "sim", "micro", ""}, []string{"e1", "gateway"}},
	} {
		code, out, errs := p4ctl(t, c.args...)
		expect(t, strings.Join(c.args, " "), code, exitOK, out, errs, c.want...)
	}
}
