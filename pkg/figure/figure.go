// Package figure holds what every p4ctl plot shares: writing a plot as PNG
// and SVG with a short title and its provenance in a caption under the
// plot (and in the SVG's metadata), wrapped rather than cut, and tick
// marks that label log axes.
package figure

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Option changes how Save lays a figure out.
type Option func(*layout)

type layout struct {
	side      *plot.Plot
	sideWidth vg.Length
	caption   string
}

// Caption gives the figure its provenance — where its data came from, the
// signal, the machine and date of a measurement: Save draws it under the
// plot in a smaller font, wrapped to the figure's width, and writes it
// whole into the SVG as its <desc> (the title as its <title>). A title
// says what the plot shows, in a line or two, and names no file: the
// provenance goes here (issue 27 item 19: titles of four lines with file
// paths).
func Caption(text string) Option {
	return func(l *layout) { l.caption = strings.TrimSpace(text) }
}

// CaptionSize is the font size of a caption.
const CaptionSize = vg.Length(8) // points

// captionStyle is how a caption is drawn: small, dark grey, left-aligned.
func captionStyle() text.Style {
	return text.Style{
		Color:   color.Gray{Y: 60},
		Font:    font.From(plot.DefaultFont, CaptionSize),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// captionMargin is the room left and below a caption, and between it and
// the plot above.
const captionMargin = vg.Length(4) // points

// WrapCaption wraps text at spaces into lines that fit w at the caption's
// font (a word longer than a line stands on its own line); its own line
// breaks are kept.
func WrapCaption(text string, w vg.Length) string {
	sty := captionStyle()
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case sty.Width(line+" "+word) <= w:
				line += " " + word
			default:
				lines = append(lines, line)
				line = word
			}
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// Side draws side (e.g. a colour bar, plotter.ColorBar) in a column of
// width w right of the plot, level with its data area.
func Side(side *plot.Plot, w vg.Length) Option {
	return func(l *layout) { l.side, l.sideWidth = side, w }
}

// LegendGap is the room between the data area and a legend beside it.
const LegendGap = 6 * vg.Millimeter

// Save writes p as dir/name.png and dir/name.svg (creating dir) and returns
// the paths written. p's legend, when it has entries, is drawn in a column
// of its own right of the data area (decision 23: a legend never covers
// data), top-aligned with it.
func Save(p *plot.Plot, dir, name string, w, h vg.Length, opts ...Option) ([]string, error) {
	var l layout
	for _, o := range opts {
		o(&l)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: create %s: %w", dir, err)
	}
	legend := p.Legend
	p.Legend = plot.NewLegend() // the plot draws none of its own
	defer func() { p.Legend = legend }()
	var files []string
	for _, ext := range []string{"png", "svg"} {
		f := filepath.Join(dir, name+"."+ext)
		c, err := draw.NewFormattedCanvas(w, h, ext)
		if err != nil {
			return files, fmt.Errorf("plots: %s: %w", f, err)
		}
		layOut(p, &legend, l, draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return files, fmt.Errorf("plots: write %s: %w", f, err)
		}
		out := b.Bytes()
		if ext == "svg" {
			out = svgMetadata(out, p.Title.Text, l.caption)
		}
		if err := os.WriteFile(f, out, 0o644); err != nil {
			return files, fmt.Errorf("plots: write %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// svgMetadata puts title (its lines joined) and caption into svg as its
// <title> and <desc>, the first children of the <svg> element: what a
// browser shows as the figure's tooltip and a screen reader reads.
func svgMetadata(svg []byte, title, caption string) []byte {
	start := bytes.Index(svg, []byte("<svg"))
	if start < 0 {
		return svg
	}
	end := bytes.IndexByte(svg[start:], '>')
	if end < 0 {
		return svg
	}
	end += start + 1
	var meta bytes.Buffer
	for _, e := range []struct{ tag, text string }{
		{"title", strings.Join(strings.Fields(strings.ReplaceAll(title, "\n", " — ")), " ")},
		{"desc", caption},
	} {
		if e.text == "" {
			continue
		}
		meta.WriteString("\n<" + e.tag + ">")
		xml.EscapeText(&meta, []byte(e.text)) // writing to a bytes.Buffer does not fail
		meta.WriteString("</" + e.tag + ">")
	}
	return slices.Concat(svg[:end], meta.Bytes(), svg[end:])
}

// Plots saves the plots of one command into one directory at one size
// (Save), collecting the files written: the one plot-saving helper of
// every WritePlots.
type Plots struct {
	// Dir is where the files go; W × H the default size.
	Dir  string
	W, H vg.Length
	// Caption is the provenance every plot is saved with (Caption).
	Caption string
	// Files are the paths written so far, in order.
	Files []string
}

// Save writes p as Dir/name.png and .svg at the default size.
func (s *Plots) Save(p *plot.Plot, name string, opts ...Option) error {
	return s.SaveSized(p, name, s.W, s.H, opts...)
}

// SaveSized writes p as Dir/name.png and .svg at w × h, with the Caption
// unless opts give another.
func (s *Plots) SaveSized(p *plot.Plot, name string, w, h vg.Length, opts ...Option) error {
	if s.Caption != "" {
		opts = append([]Option{Caption(s.Caption)}, opts...)
	}
	fs, err := Save(p, s.Dir, name, w, h, opts...)
	s.Files = append(s.Files, fs...)
	return err
}

// layOut lays p out on c: the caption along the bottom, the plot above it,
// then, right of the plot, the side panel and the legend (entries of
// legend; none when it has none).
func layOut(p *plot.Plot, legend *plot.Legend, l layout, c draw.Canvas) {
	if l.caption != "" {
		sty := captionStyle()
		txt := WrapCaption(l.caption, c.Size().X-2*captionMargin)
		c.FillText(sty, vg.Point{X: c.Min.X + captionMargin, Y: c.Min.Y + captionMargin}, txt)
		c = draw.Crop(c, 0, 0, sty.Height(txt)+2*captionMargin, 0)
	}
	right := vg.Length(0)
	var lw vg.Length
	if legend != nil && legend.Rectangle(c).Size().X > 0 {
		lw = legend.Rectangle(c).Size().X + LegendGap
		right += lw
	}
	if l.side != nil {
		right += l.sideWidth
	}
	p.Draw(draw.Crop(c, 0, -right, 0, 0))
	// The data area's top: below the title, with the plot's own padding.
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	col := draw.Crop(c, c.Size().X-right, 0, 0, -top)
	if l.side != nil {
		l.side.Draw(draw.Crop(col, 0, -(right - l.sideWidth), 0, 0))
		col = draw.Crop(col, l.sideWidth, 0, 0, 0)
	}
	if lw > 0 {
		lg := *legend
		lg.Top, lg.Left = true, true
		lg.XOffs, lg.YOffs = 0, 0
		lg.Draw(draw.Crop(col, LegendGap, 0, 0, 0))
	}
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

// Log10Ticks label an axis that holds log10 of the values (drawn on
// gonum's linear scale) as LogTicks label a log axis: 1, 2, 5 × 10^k at
// their logarithms. Plotting log10(y) on a linear axis rather than y on
// plot.LogScale keeps gonum's axis-label layout right: it centres the
// label at the arithmetic midpoint of the range, which on a log axis lies
// near the top and pushes the data area down.
type Log10Ticks struct{}

// Ticks implements plot.Ticker.
func (Log10Ticks) Ticks(lo, hi float64) []plot.Tick {
	ts := LogTicks{}.Ticks(math.Pow(10, lo), math.Pow(10, hi))
	for i := range ts {
		ts[i].Value = math.Log10(ts[i].Value)
	}
	return ts
}

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
// bottom) in the given colours, with the legend listing them top-down as
// they appear in the stack.
func StackBars(p *plot.Plot, width vg.Length, names []string, colors []color.Color, values []plotter.Values) error {
	bars := make([]*plotter.BarChart, len(names))
	for k := range names {
		b, err := plotter.NewBarChart(values[k], width)
		if err != nil {
			return fmt.Errorf("plots: %s: %w", names[k], err)
		}
		b.Color = colors[k]
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

// regionColors are twelve colours far apart for the eye (d3's category10,
// then black and light blue: every pair is at least ΔE*ab 27 apart, so no
// two greens or blues are confused).
var regionColors = [...]color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x00, 0x00, 0x00, 0xff}, {0xae, 0xc7, 0xe8, 0xff},
}

// RegionColors is the number of distinct region colours.
const RegionColors = len(regionColors)

// RegionColor is the colour of catalog region index i (regions.Index) in
// every plot: keyed by the catalog, not by a plot's series, so a region
// keeps its colour whatever else a plot shows. Indices beyond the palette
// wrap around.
func RegionColor(i int) color.Color {
	return regionColors[((i%RegionColors)+RegionColors)%RegionColors]
}

// Dodge is the offset of series k of n around a shared x position, as a
// fraction of step (the distance between x positions): series whose
// values coincide are drawn side by side instead of one hiding the other.
func Dodge(k, n int, step float64) float64 {
	if n < 2 {
		return 0
	}
	const spread = 0.3 // of step, from the first series to the last
	return step * spread * (float64(k)/float64(n-1) - 0.5)
}

// StateCut says on a linear axis's label where the axis starts when it
// does not start at 0 (or ends, for an axis of negative values): a cut
// axis magnifies differences, and the label keeps a reader from taking
// lengths from 0 (issue 27 item 19: a saving axis cut to 43.7–44.25 %
// without saying so). It reads a.Min and a.Max: call it once they are set.
func StateCut(a *plot.Axis) {
	switch {
	case a.Min > 0:
		a.Label.Text += fmt.Sprintf("; axis cut: starts at %s, not 0", label(a.Min))
	case a.Max < 0:
		a.Label.Text += fmt.Sprintf("; axis cut: ends at %s, not 0", label(a.Max))
	}
}
