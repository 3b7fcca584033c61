package main

import (
	"strings"
	"testing"
)

// TestEvalScaleErrors: bad grids exit 2 before anything is compiled, with
// one line naming the flag; --policies lists only the policies eval scale
// compiles.
func TestEvalScaleErrors(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--policies", "Z"}, "--policies Z: want A, B, C, C+, D, C-cap (C+warm is stateful"},
		{[]string{"--policies", "C+warm"}, "--policies C+warm: want A, B, C, C+, D, C-cap"},
		{[]string{"--policies", "A,C,A"}, "--policies A given twice"},
		{[]string{"--sites", "10,10"}, "--sites 10 given twice"},
		{[]string{"--sites", "0"}, "--sites 0: want 1..65535"},
		{[]string{"--regions", "5,5"}, "--regions 5 given twice"},
		{[]string{"--regions", "33"}, "--regions 33: want 1..32"},
		{[]string{"--hours", "1"}, "--hours 1: want 2..8544"},
		{[]string{"--hours", "8545"}, "--hours 8545: want 2..8544"},
		{[]string{"--hours", "2000000000"}, "--hours 2000000000: want 2..8544"},
		{[]string{"--switches", "-1"}, "--switches -1"},
	}
	for _, c := range cases {
		args := append([]string{"eval", "scale", "--quick", "--no-plots"}, c.args...)
		code, _, errb := p4ctl(t, args...)
		if code != exitUsage || !strings.Contains(errb, c.wantErr) || strings.Contains(errb, "C+warm or C-cap") || strings.Count(strings.TrimSpace(errb), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q; want %d and one line with %q", c.args, code, errb, exitUsage, c.wantErr)
		}
	}
	code, out, errb := p4ctl(t, "eval", "scale", "--no-plots", "--sites", "10", "--regions", "5", "--policies", "C-cap", "--hours", "2", "-o", "json")
	if code != exitOK || !strings.Contains(out, `"policy": "C-cap"`) {
		t.Errorf("C-cap: exit %d\n%s\n%.300s", code, errb, out)
	}
}
