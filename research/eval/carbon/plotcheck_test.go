package carbon

import (
	"image/color"
	"testing"
)

// luminance is the relative luminance (Rec. 709) of c, 0..1.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

// Issue 27 item 19: the carbon heatmap used a diverging colour map (blue –
// white – red) for a one-directional quantity. Golden check of the colour
// map's kind: sequential, i.e. luminance monotonic from the cleanest to
// the dirtiest value (here: darker as dirtier), never light in the middle.
func TestHeatmapColormapSequential(t *testing.T) {
	cm := heatmapColors()
	cm.SetMin(0)
	cm.SetMax(1000)
	prev := 2.0
	for v := 0.0; v <= 1000; v += 50 {
		c, err := cm.At(v)
		if err != nil {
			t.Fatal(err)
		}
		l := luminance(c)
		if l > prev+1e-9 {
			t.Fatalf("luminance rises again at %v gCO2eq/kWh (%.3f after %.3f): not a sequential map", v, l, prev)
		}
		prev = l
	}
	lo, _ := cm.At(0)
	hi, _ := cm.At(1000)
	if luminance(lo)-luminance(hi) < 0.5 {
		t.Errorf("the map spans luminance %.2f..%.2f only", luminance(hi), luminance(lo))
	}
}
