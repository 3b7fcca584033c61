// Package figure holds what every p4ctl plot shares: writing a plot as PNG
// and SVG, tick marks that label log axes, and a title line naming the data
// source that is wrapped rather than cut.
package figure

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Save writes p as dir/name.png and dir/name.svg (creating dir) and returns
// the paths written.
func Save(p *plot.Plot, dir, name string, w, h vg.Length) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: create %s: %w", dir, err)
	}
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		f := filepath.Join(dir, name+ext)
		if err := p.Save(w, h, f); err != nil {
			return files, fmt.Errorf("plots: write %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// LogTicks marks 1, 2 and 5 × 10^k on a log axis and labels them (only
// the powers of ten when the axis spans more than three decades; every
// mark when fewer than two would be labelled). gonum's plot.LogTicks
// labels only powers of ten, often one or none on our ranges.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return ts
	}
	wide := math.Log10(hi/lo) > 3
	labelled := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (!wide && (m == 2 || m == 5)) {
				t.Label = label(v)
				labelled++
			}
			ts = append(ts, t)
		}
	}
	if labelled < 2 {
		for i := range ts {
			ts[i].Label = label(ts[i].Value)
		}
	}
	return ts
}

func label(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// Ticks are gonum's default tick marks labelled without trailing zeros
// ("25" rather than "25.00").
type Ticks struct{}

// Ticks implements plot.Ticker.
func (Ticks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = label(ts[i].Value)
		}
	}
	return ts
}

// IntTicks labels every integer of an axis (every k-th when there are more
// than max), for axes that count hours, bounds or classes.
type IntTicks struct{ Max int }

// Ticks implements plot.Ticker.
func (t IntTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if !(last >= first) || last-first > 1e6 {
		return nil
	}
	n := int(last-first) + 1
	step := 1
	if t.Max > 0 && n > t.Max {
		step = (n + t.Max - 1) / t.Max
	}
	var ts []plot.Tick
	for v := first; v <= last; v++ {
		tk := plot.Tick{Value: v}
		if int(v-first)%step == 0 {
			tk.Label = strconv.Itoa(int(v))
		}
		ts = append(ts, tk)
	}
	return ts
}

// StackBars adds one bar series per name, stacked in order (the first at the
// bottom) in rainbow colours, with the legend listing them top-down as they
// appear in the stack.
func StackBars(p *plot.Plot, width vg.Length, names []string, values []plotter.Values) error {
	cols := palette.Rainbow(max(len(names), 1), 0, 0.85, 0.8, 0.9, 1).Colors()
	bars := make([]*plotter.BarChart, len(names))
	for k := range names {
		b, err := plotter.NewBarChart(values[k], width)
		if err != nil {
			return fmt.Errorf("plots: %s: %w", names[k], err)
		}
		b.Color = cols[k]
		b.LineStyle.Width = 0
		if k > 0 {
			b.StackOn(bars[k-1])
		}
		bars[k] = b
		p.Add(b)
	}
	for k := len(names) - 1; k >= 0; k-- {
		p.Legend.Add(names[k], bars[k])
	}
	return nil
}

// SourceWidth is the longest line of a source title, in characters: what
// fits across a 7-inch plot at the default title font.
const SourceWidth = 80

// Source shortens a data-source description for a plot title: the part
// before the first ';' outside parentheses, wrapped at spaces into lines
// of at most SourceWidth characters, at most two lines. Text beyond them is
// replaced by "…" and any parenthesis left open is closed, so a title never
// ends mid-parenthesis.
func Source(s string) string {
	depth := 0
	for i, r := range s {
		if r == '(' {
			depth++
		} else if r == ')' {
			depth--
		} else if r == ';' && depth == 0 {
			s = s[:i]
			break
		}
	}
	words := strings.Fields(s)
	var lines []string
	line, i := "", 0
	for ; i < len(words); i++ {
		w := words[i]
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= SourceWidth:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
		if len(lines) == 2 {
			break
		}
	}
	cut := i < len(words)
	if !cut && line != "" {
		lines = append(lines, line)
	}
	out := strings.Join(lines, "\n")
	if cut {
		out += " …"
	}
	if open := strings.Count(out, "(") - strings.Count(out, ")"); open > 0 {
		out += strings.Repeat(")", open)
	}
	return out
}
