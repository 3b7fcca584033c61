package compiler

import (
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// String renders the entry on one line, names without the control prefix,
// values in their natural notation:
//
//	carbon_rank epoch=1 site=* feasible=has(3:eu-west-1) priority=30 -> route_to_region(region=3:eu-west-1)
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(short(e.Table))
	if e.Default {
		b.WriteString(" default")
	}
	for _, m := range e.Match {
		b.WriteByte(' ')
		b.WriteString(m.Field)
		b.WriteByte('=')
		b.WriteString(formatMatch(m))
	}
	if e.Priority != 0 {
		b.WriteString(" priority=" + strconv.Itoa(int(e.Priority)))
	}
	b.WriteString(" -> ")
	b.WriteString(short(e.Action))
	b.WriteByte('(')
	for i, p := range e.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name + "=" + formatParam(e.Action, p))
	}
	b.WriteByte(')')
	return b.String()
}

func short(name string) string { return strings.TrimPrefix(name, pipeline.Control+".") }

func formatMatch(m Match) string {
	switch m.Kind {
	case pipeline.LPM:
		return ipv4(m.Value) + "/" + strconv.Itoa(m.PrefixLen)
	case pipeline.Range:
		return strconv.FormatUint(m.Value, 10) + ".." + strconv.FormatUint(m.High, 10)
	case pipeline.Ternary:
		switch {
		case m.Mask == 0:
			return "*"
		case m.Field == pipeline.FieldFeasible && bits.OnesCount64(m.Mask) == 1 && m.Value&m.Mask == m.Mask:
			return "has(" + region(uint64(bits.TrailingZeros64(m.Mask))) + ")"
		case m.Field == pipeline.FieldSite && m.Mask == 1<<pipeline.WidthSite-1:
			return strconv.FormatUint(m.Value, 10)
		}
		return fmt.Sprintf("%#x&&&%#x", m.Value&m.Mask, m.Mask)
	}
	if m.Field == pipeline.FieldDstMAC {
		return config.MAC(m.Value).String()
	}
	if m.Field == pipeline.FieldRegion {
		return region(m.Value)
	}
	return strconv.FormatUint(m.Value, 10)
}

func formatParam(action string, p Param) string {
	switch p.Name {
	case pipeline.ParamDMAC:
		return config.MAC(p.Value).String()
	case pipeline.ParamAddr:
		return ipv4(p.Value)
	case pipeline.ParamFeasible:
		return regions.RegionSet(p.Value).String()
	case pipeline.ParamNearest, pipeline.ParamRegion:
		return region(p.Value)
	case pipeline.ParamPolicy:
		if action == pipeline.ActionSetPool {
			return pipeline.Policy(p.Value).String()
		}
	case pipeline.ParamOnFull:
		if p.Value == uint64(pipeline.OnFullForce) {
			return "force"
		}
		return "nack"
	case pipeline.ParamCreditTick:
		if action == pipeline.ActionSetPool {
			if p.Value == 0 {
				return "0 (no expiry)"
			}
			lo, hi := pipeline.TTLRange(uint8(p.Value))
			return fmt.Sprintf("%d (expires %v–%v after a touch)", p.Value, lo, hi)
		}
	case pipeline.ParamSizeMask:
		return fmt.Sprintf("%#x", p.Value)
	}
	return strconv.FormatUint(p.Value, 10)
}

func region(v uint64) string {
	if r, ok := regions.RegionAt(regions.Index(v)); ok {
		return strconv.FormatUint(v, 10) + ":" + r.ID
	}
	return strconv.FormatUint(v, 10)
}

func ipv4(v uint64) string {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

// WriteText writes the state as a header (policy, epoch, carbon hour and
// source, ranking) followed by one line per entry, grouped by table.
func (s *State) WriteText(w io.Writer) error {
	var b strings.Builder
	m := s.Meta
	fmt.Fprintf(&b, "# policy %s", m.Policy)
	switch m.Policy {
	case regions.PolicyCPlus.String():
		fmt.Fprintf(&b, " (alpha %g, missing cold latency: %s)", m.Alpha, m.ColdMissing)
	case regions.PolicyD.String():
		fmt.Fprintf(&b, " (w %g)", m.Weight)
	}
	fmt.Fprintf(&b, ", epoch %d\n", m.Epoch)
	if !m.Hour.IsZero() || m.Source != "" {
		fmt.Fprintf(&b, "# carbon at %s from %s\n", m.Hour.UTC().Format(time.RFC3339), m.Source)
	}
	if m.Signal != "" {
		fmt.Fprintf(&b, "# signal: %s\n", m.Signal)
	}
	if m.Hysteresis != "" {
		fmt.Fprintf(&b, "# hysteresis: %s (the ranking below is the held one, not this hour's order)\n", m.Hysteresis)
	}
	if !m.Requested.IsZero() {
		fmt.Fprintf(&b, "# (requested %s, mapped into the model's year)\n", m.Requested.UTC().Format(time.RFC3339))
	}
	if len(m.Ranking) > 0 {
		b.WriteString("# ranking:")
		for _, r := range m.Ranking {
			fmt.Fprintf(&b, " %d:%s(%.0f)", r.Index, r.Region, r.Carbon)
		}
		b.WriteString("\n")
	}
	if m.SiteRankings > 0 {
		fmt.Fprintf(&b, "# %d site(s) with their own ranking\n", m.SiteRankings)
	}
	fmt.Fprintf(&b, "# %d entries\n", len(s.Entries))
	last := ""
	for _, e := range s.Entries {
		if e.Table != last {
			fmt.Fprintf(&b, "\n## %s (%d)\n", short(e.Table), len(s.Table(e.Table)))
			last = e.Table
		}
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes the generation plan phase by phase, one update per line.
func (g Generation) WriteText(w io.Writer) error {
	var b strings.Builder
	if g.Unchanged {
		fmt.Fprintf(&b, "# ranking unchanged: epoch stays %d, %d writes\n", g.From, g.Writes())
	} else {
		fmt.Fprintf(&b, "# epoch %d -> %d: %d writes (%d install, %d flip, %d cleanup)\n", g.From, g.To, g.Writes(), len(g.Install), len(g.Flip), len(g.Cleanup))
	}
	for _, ph := range []struct {
		name string
		us   []Update
	}{{"install", g.Install}, {"flip", g.Flip}, {"cleanup (after the grace period)", g.Cleanup}} {
		if len(ph.us) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n", ph.name)
		for _, u := range ph.us {
			fmt.Fprintf(&b, "%-6s %s\n", u.Op, u.Entry)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
