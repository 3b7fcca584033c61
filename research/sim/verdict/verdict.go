// Package verdict judges a reproduced figure against the figure a source
// document reported, by one stated rule per kind of claim, from our 95 %
// confidence interval (never from our mean alone):
//
//   - a value v (the source's "≈ v" or "v"): reproduced when v lies in our
//     CI; when the source gives its own CI for v, when the two CIs overlap;
//   - "> x": reproduced when our CI's lower bound clears x, not reproduced
//     when its upper bound does not reach above x, else inconclusive;
//   - "< x": the mirror image;
//   - a range a–b: reproduced when our CI lies inside it, not reproduced
//     when it misses it entirely, else inconclusive (the CI straddles an
//     end);
//   - a count k of n: reproduced when ours is the same count;
//   - a property ("monotone", "fails first"): reproduced when ours holds.
//
// A figure that depends on a value chosen by looking at results is
// marked Fitted and never counts as reproduced, whatever its numbers.
package verdict

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/stats"
)

// Verdict is how one of our figures stands against the source's.
type Verdict string

// Verdicts.
const (
	Reproduced    Verdict = "reproduced"
	NotReproduced Verdict = "not reproduced"
	// Inconclusive: our CI straddles the source's bound.
	Inconclusive Verdict = "inconclusive"
	// Fitted: the figure depends on a value chosen by looking at results.
	Fitted Verdict = "fitted (not counted)"
)

// Kind is the kind of claim a Rule judges.
type Kind string

// Kinds of claim.
const (
	Value Kind = "value"
	Above Kind = "above"
	Below Kind = "below"
	Range Kind = "range"
	Count Kind = "count"
	Holds Kind = "holds"
)

// Rule is the source's figure as a claim, in the unit of our figure
// (rates as fractions).
type Rule struct {
	Kind Kind `json:"kind"`
	// Lo and Hi: a Value is Lo (= Hi); Above is "> Lo"; Below is "< Hi";
	// a Range is Lo–Hi.
	Lo float64 `json:"lo,omitempty"`
	Hi float64 `json:"hi,omitempty"`
	// CILo and CIHi are the source's own 95 % CI of a Value, when it gives
	// one (both 0 otherwise).
	CILo float64 `json:"ci_lo,omitempty"`
	CIHi float64 `json:"ci_hi,omitempty"`
	// Want is a Count's k (of N).
	Want int `json:"want,omitempty"`
	N    int `json:"n,omitempty"`
	// Scale and Unit say how to print values: 100 and "%" for rates.
	Scale float64 `json:"-"`
	Unit  string  `json:"-"`
}

// Rate is a Value rule for a rate in percent.
func Rate(v float64) Rule { return Rule{Kind: Value, Lo: v, Hi: v, Scale: 100, Unit: "%"} }

// RateCI is a Value rule for a rate the source gives with its own CI.
func RateCI(v, lo, hi float64, unit string) Rule {
	return Rule{Kind: Value, Lo: v, Hi: v, CILo: lo, CIHi: hi, Scale: 100, Unit: unit}
}

// RateAbove is "> x" for a rate in percent.
func RateAbove(x float64) Rule { return Rule{Kind: Above, Lo: x, Scale: 100, Unit: "%"} }

// RateBelow is "< x" for a rate in percent.
func RateBelow(x float64) Rule { return Rule{Kind: Below, Hi: x, Scale: 100, Unit: "%"} }

// RateRange is "a–b" for a rate in percent.
func RateRange(a, b float64) Rule { return Rule{Kind: Range, Lo: a, Hi: b, Scale: 100, Unit: "%"} }

// Number is a Value rule for a plain number in unit.
func Number(v float64, unit string) Rule {
	return Rule{Kind: Value, Lo: v, Hi: v, Scale: 1, Unit: unit}
}

// NumberRange is "a–b" for a plain number in unit.
func NumberRange(a, b float64, unit string) Rule {
	return Rule{Kind: Range, Lo: a, Hi: b, Scale: 1, Unit: unit}
}

// CountOf is "k of n".
func CountOf(k, n int) Rule { return Rule{Kind: Count, Want: k, N: n} }

// Property is a claim that holds or does not.
func Property() Rule { return Rule{Kind: Holds} }

func (r Rule) scale() float64 {
	if r.Scale == 0 {
		return 1
	}
	return r.Scale
}

func (r Rule) fmt(x float64) string {
	s := fmt.Sprintf("%.3g", x*r.scale())
	if r.Scale == 100 {
		s = fmt.Sprintf("%.2f", x*100)
	}
	if r.Unit == "" {
		return s
	}
	return s + " " + r.Unit
}

// Describe states the rule, as printed beside the verdict.
func (r Rule) Describe() string {
	switch r.Kind {
	case Value:
		if r.CILo != 0 || r.CIHi != 0 {
			return fmt.Sprintf("our CI overlaps the source's CI [%s, %s]", r.fmt(r.CILo), r.fmt(r.CIHi))
		}
		return fmt.Sprintf("%s inside our CI", r.fmt(r.Lo))
	case Above:
		return fmt.Sprintf("our CI's lower bound > %s", r.fmt(r.Lo))
	case Below:
		return fmt.Sprintf("our CI's upper bound < %s", r.fmt(r.Hi))
	case Range:
		return fmt.Sprintf("our CI inside %s–%s", strings.TrimSuffix(r.fmt(r.Lo), " "+r.Unit), r.fmt(r.Hi))
	case Count:
		return fmt.Sprintf("the same count (%d of %d)", r.Want, r.N)
	case Holds:
		return "the property holds for ours"
	}
	return string(r.Kind)
}

// Judge judges our figure s (mean and 95 % CI) against r, with the
// distance that decided it.
func Judge(r Rule, s stats.Summary) (Verdict, string) {
	m, ci := s.Mean, s.CI95
	if math.IsNaN(m) || math.IsNaN(ci) {
		return NotReproduced, "ours is not a number"
	}
	// The CI's ends, widened by a rounding margin so that a bound the CI
	// reaches exactly is not missed by floating-point residue.
	lo, hi := m-ci-eps, m+ci+eps
	ci95 := fmt.Sprintf("our CI [%s, %s]", r.fmt(m-ci), r.fmt(m+ci))
	switch r.Kind {
	case Value:
		if r.CILo != 0 || r.CIHi != 0 {
			if lo <= r.CIHi && hi >= r.CILo {
				return Reproduced, ci95 + " overlaps the source's"
			}
			return NotReproduced, fmt.Sprintf("%s is %s %s the source's CI", ci95, r.fmt(math.Max(r.CILo-hi, lo-r.CIHi)), side(lo > r.CIHi))
		}
		if r.Lo >= lo && r.Lo <= hi {
			return Reproduced, fmt.Sprintf("%s holds %s", ci95, r.fmt(r.Lo))
		}
		return NotReproduced, fmt.Sprintf("%s is %s %s %s", ci95, r.fmt(math.Max(r.Lo-hi, lo-r.Lo)), side(lo > r.Lo), r.fmt(r.Lo))
	case Above:
		switch {
		case lo+2*eps > r.Lo:
			return Reproduced, fmt.Sprintf("%s clears %s", ci95, r.fmt(r.Lo))
		case hi <= r.Lo:
			return NotReproduced, fmt.Sprintf("%s is %s below %s", ci95, r.fmt(r.Lo-hi), r.fmt(r.Lo))
		}
		return Inconclusive, fmt.Sprintf("%s straddles %s", ci95, r.fmt(r.Lo))
	case Below:
		switch {
		case hi-2*eps < r.Hi:
			return Reproduced, fmt.Sprintf("%s stays below %s", ci95, r.fmt(r.Hi))
		case lo >= r.Hi:
			return NotReproduced, fmt.Sprintf("%s is %s above %s", ci95, r.fmt(lo-r.Hi), r.fmt(r.Hi))
		}
		return Inconclusive, fmt.Sprintf("%s straddles %s", ci95, r.fmt(r.Hi))
	case Range:
		switch {
		case lo+2*eps >= r.Lo && hi-2*eps <= r.Hi:
			return Reproduced, ci95 + " inside the range"
		case hi < r.Lo:
			return NotReproduced, fmt.Sprintf("%s is %s below the range", ci95, r.fmt(r.Lo-hi))
		case lo > r.Hi:
			return NotReproduced, fmt.Sprintf("%s is %s above the range", ci95, r.fmt(lo-r.Hi))
		}
		return Inconclusive, ci95 + " straddles an end of the range"
	}
	return NotReproduced, fmt.Sprintf("rule %s takes a count or a property, not a number", r.Kind)
}

// eps is the rounding margin of a CI's ends.
const eps = 1e-12

func side(above bool) string {
	if above {
		return "above"
	}
	return "below"
}

// JudgeCount judges our count k (of n) against r.
func JudgeCount(r Rule, k, n int) (Verdict, string) {
	if r.Kind != Count {
		return NotReproduced, fmt.Sprintf("rule %s does not take a count", r.Kind)
	}
	if k == r.Want && (n == r.N || r.N == 0) {
		return Reproduced, "the same count"
	}
	if k == r.Want {
		return NotReproduced, fmt.Sprintf("the same count, of %d cells, not %d", n, r.N)
	}
	d := k - r.Want
	if d > 0 {
		return NotReproduced, fmt.Sprintf("%d more", d)
	}
	return NotReproduced, fmt.Sprintf("%d fewer", -d)
}

// JudgeHolds judges a property: reproduced when ours holds; why says
// what ours is either way.
func JudgeHolds(holds bool, why string) (Verdict, string) {
	if holds {
		return Reproduced, why
	}
	return NotReproduced, why
}

// Figure is one figure of a source beside ours.
type Figure struct {
	// Figure names it; Section cites where the source reports it;
	// Experiment says which command computed ours.
	Figure     string `json:"figure"`
	Section    string `json:"section"`
	Experiment string `json:"experiment"`
	// Source is the figure as reported (never an input to the model).
	Source string `json:"source"`
	// Rule is the claim as judged, RuleText it in words.
	Rule     Rule   `json:"rule"`
	RuleText string `json:"rule_text"`
	// Ours is our figure as printed; Value is it as a number (nil for a
	// count or a property).
	Ours  string         `json:"ours"`
	Value *stats.Summary `json:"value,omitempty"`
	// Verdict and the distance or reason that decided it.
	Verdict Verdict `json:"verdict"`
	Why     string  `json:"why"`
	// Fitted names the values chosen by looking at results that this
	// figure depends on (then Verdict is Fitted).
	Fitted []string `json:"fitted,omitempty"`
	// Cells are the per-cell figures a count is made of (each with its
	// mean, CI and verdict), when the claim spans cells.
	Cells []Figure `json:"cells,omitempty"`
}

// New judges our summary s against rule and returns the figure.
func New(figure, section, exp, source string, rule Rule, s stats.Summary, ours string) Figure {
	v, why := Judge(rule, s)
	return Figure{Figure: figure, Section: section, Experiment: exp, Source: source, Rule: rule, RuleText: rule.Describe(),
		Ours: ours, Value: &s, Verdict: v, Why: why}
}

// NewCount judges our count k of n against rule.
func NewCount(figure, section, exp, source string, rule Rule, k, n int) Figure {
	v, why := JudgeCount(rule, k, n)
	return Figure{Figure: figure, Section: section, Experiment: exp, Source: source, Rule: rule, RuleText: rule.Describe(),
		Ours: fmt.Sprintf("%d of %d", k, n), Verdict: v, Why: why}
}

// NewHolds judges a property.
func NewHolds(figure, section, exp, source string, holds bool, ours, why string) Figure {
	v, w := JudgeHolds(holds, why)
	r := Property()
	return Figure{Figure: figure, Section: section, Experiment: exp, Source: source, Rule: r, RuleText: r.Describe(),
		Ours: ours, Verdict: v, Why: w}
}

// MarkFitted marks f as depending on the named fitted values: its verdict
// becomes Fitted, the rule's verdict kept in Why.
func (f *Figure) MarkFitted(names ...string) {
	if len(names) == 0 {
		return
	}
	f.Fitted = append(f.Fitted, names...)
	if f.Verdict != Fitted {
		f.Why = fmt.Sprintf("by the rule: %s (%s)", f.Verdict, f.Why)
		f.Verdict = Fitted
	}
}

// Tally counts figures per verdict.
func Tally(figs []Figure) map[Verdict]int {
	out := map[Verdict]int{}
	for _, f := range figs {
		out[f.Verdict]++
	}
	return out
}

// TallyLine is "k reproduced, k not reproduced, k inconclusive, k
// fitted (not counted)".
func TallyLine(c map[Verdict]int) string {
	return fmt.Sprintf("%d reproduced, %d not reproduced, %d inconclusive, %d fitted (not counted)",
		c[Reproduced], c[NotReproduced], c[Inconclusive], c[Fitted])
}

// Rules is the rule text printed above a table.
const Rules = "verdicts from our 95 % CI: a value must lie in it (or the source's CI overlap it); \"> x\" needs its lower bound above x; " +
	"a range must contain it; counts must be equal; a CI straddling the bound is inconclusive; a figure that depends on a value chosen by looking at results is fitted and never counts"

// WriteMarkdown writes figs as a Markdown table (for docs/REPRODUCTION.md):
// the figure, the source's section and value, ours, the rule, the verdict
// with its reason and the fitted values it depends on.
func WriteMarkdown(w io.Writer, source string, figs []Figure) error {
	esc := strings.NewReplacer("|", "\\|", "\n", " ")
	if _, err := fmt.Fprintf(w, "| figure | %s § | %s (reported) | ours (95 %% CI) | rule | verdict | why | fitted |\n|---|---|---|---|---|---|---|---|\n", source, source); err != nil {
		return err
	}
	for _, f := range figs {
		fitted := strings.Join(f.Fitted, ", ")
		if fitted == "" {
			fitted = "–"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", esc.Replace(f.Figure), f.Section, esc.Replace(f.Source),
			esc.Replace(f.Ours), esc.Replace(f.RuleText), f.Verdict, esc.Replace(f.Why), esc.Replace(fitted)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s.\n", TallyLine(Tally(figs)))
	return err
}
