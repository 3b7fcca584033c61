package verdict

import (
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/stats"
)

func ci(mean, half float64) stats.Summary { return stats.Summary{N: 10, Mean: mean, CI95: half} }

// TestJudge holds the rule on hand-made rows: a value inside our CI and
// outside it, "> x" cleared, missed and straddled, ranges, "< x" and a
// value with the source's own CI.
func TestJudge(t *testing.T) {
	cases := []struct {
		name string
		rule Rule
		ours stats.Summary
		want Verdict
		why  string // a fragment of the reason
	}{
		{"value inside our CI", Rate(0.041), ci(0.045, 0.01), Reproduced, "holds 4.10 %"},
		{"value on the CI's edge", Rate(0.041), ci(0.051, 0.01), Reproduced, "holds"},
		{"value outside our CI", Rate(0.1878), ci(0.24, 0.01), NotReproduced, "4.22 % above 18.78 %"},
		{"value below our CI", Rate(0.3547), ci(0.10, 0.02), NotReproduced, "23.47 % below"},
		{"> x cleared", RateAbove(0.35), ci(0.42, 0.02), Reproduced, "clears 35.00 %"},
		{"> x with the CI straddling", RateAbove(0.35), ci(0.36, 0.03), Inconclusive, "straddles 35.00 %"},
		{"> x missed", RateAbove(0.35), ci(0.20, 0.03), NotReproduced, "12.00 % below 35.00 %"},
		{"> x with the mean above but the CI reaching x", RateAbove(0.35), ci(0.351, 0.002), Inconclusive, "straddles"},
		{"< x held", RateBelow(0.5), ci(0.3, 0.1), Reproduced, "below 50.00 %"},
		{"< x straddled", RateBelow(0.5), ci(0.45, 0.1), Inconclusive, "straddles"},
		{"< x missed", RateBelow(0.5), ci(0.7, 0.1), NotReproduced, "10.00 % above"},
		{"range containing the CI", RateRange(0.10, 0.15), ci(0.12, 0.02), Reproduced, "inside the range"},
		{"range with the CI straddling its top", RateRange(0.10, 0.15), ci(0.15, 0.02), Inconclusive, "straddles an end"},
		{"range above the CI", RateRange(0.10, 0.15), ci(0.05, 0.02), NotReproduced, "3.00 % below the range"},
		{"range below the CI", RateRange(0.10, 0.15), ci(0.20, 0.02), NotReproduced, "3.00 % above the range"},
		{"source CI overlapping ours", RateCI(0.1171, 0.1149, 0.1189, "pp"), ci(0.125, 0.01), Reproduced, "overlaps"},
		{"source CI apart from ours", RateCI(0.1171, 0.1149, 0.1189, "pp"), ci(0.0628, 0.005), NotReproduced, "below the source's CI"},
		{"a number", Number(0.351, "msgs/RPC"), ci(1, 0), NotReproduced, "above"},
	}
	for _, c := range cases {
		got, why := Judge(c.rule, c.ours)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %s (%s), want %s (… %s …)", c.name, got, why, c.want, c.why)
		}
	}
}

func TestJudgeCountAndHolds(t *testing.T) {
	cases := []struct {
		k, n int
		want Verdict
		why  string
	}{
		{12, 12, Reproduced, "the same count"},
		{12, 12, Reproduced, ""},
		{11, 12, NotReproduced, "1 fewer"},
		{12, 10, NotReproduced, "of 10 cells"},
	}
	for _, c := range cases {
		got, why := JudgeCount(CountOf(12, 12), c.k, c.n)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%d of %d: %s (%s), want %s", c.k, c.n, got, why, c.want)
		}
	}
	if v, _ := JudgeCount(CountOf(11, 12), 12, 12); v != NotReproduced {
		t.Errorf("12 of 12 against 11 of 12: %s", v)
	}
	if v, _ := JudgeHolds(true, ""); v != Reproduced {
		t.Errorf("a property that holds: %s", v)
	}
	if v, _ := JudgeHolds(false, ""); v != NotReproduced {
		t.Errorf("a property that fails: %s", v)
	}
	if v, _ := Judge(CountOf(1, 2), ci(1, 0)); v != NotReproduced {
		t.Errorf("a count rule judged on a number: %s", v)
	}
}

// TestFittedNeverCounts: a figure depending on a fitted value is Fitted
// whatever its numbers say, and the rule's verdict stays readable.
func TestFittedNeverCounts(t *testing.T) {
	f := New("E1 JBSQ", "§4", "e1", "≈ 4.1 %", Rate(0.041), ci(0.041, 0.01), "4.10 %")
	if f.Verdict != Reproduced {
		t.Fatalf("before marking: %s", f.Verdict)
	}
	f.MarkFitted("burst intensity")
	if f.Verdict != Fitted || !strings.Contains(f.Why, "reproduced") || len(f.Fitted) != 1 {
		t.Errorf("after marking: %+v", f)
	}
	f.MarkFitted()
	if len(f.Fitted) != 1 {
		t.Errorf("marking with no names changed it: %+v", f)
	}
	c := Tally([]Figure{f, New("x", "", "", "", Rate(0.5), ci(0.5, 0.1), "")})
	if c[Fitted] != 1 || c[Reproduced] != 1 || !strings.HasPrefix(TallyLine(c), "1 reproduced") {
		t.Errorf("tally %v: %s", c, TallyLine(c))
	}
}

func TestWriteMarkdown(t *testing.T) {
	f := New("E1 | random", "§4", "e1", "> 35 %", RateAbove(0.35), ci(0.42, 0.02), "42.00 ± 2.00 %")
	g := NewCount("TTL", "§4", "ttl", "12 of 12", CountOf(12, 12), 11, 12)
	g.MarkFitted("hop limit")
	var b strings.Builder
	if err := WriteMarkdown(&b, "study", []Figure{f, g}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| figure | study § |", "| E1 \\| random | §4 | > 35 % | 42.00 ± 2.00 % | our CI's lower bound > 35.00 % | reproduced |",
		"| fitted (not counted) |", "| hop limit |", "1 reproduced, 0 not reproduced, 0 inconclusive, 1 fitted (not counted)."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
