package xdp

import (
	"fmt"
	"slices"
	"time"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
)

// siteTable is client_site as the program holds it (bpf p4ctl_maps.h
// struct site_table): the prefixes resolved into disjoint intervals, two
// sets, one live; a change writes the other set and flips.
type siteTable struct {
	shadow  bpfobj.P4ctlSiteTable
	live    uint32
	changed time.Time
}

// siteIntervals resolves client_site's entries (longest prefix wins) into
// set.
func (tb *table) siteIntervals(entries []*engine.Entry, set *bpfobj.P4ctlSiteSet) error {
	type pfx struct {
		lo, hi uint64
		plen   int
		val    uint32
	}
	ps := make([]pfx, 0, len(entries))
	bounds := []uint64{0}
	for _, e := range entries {
		a, err := tb.action(&e.Action)
		if err != nil {
			return err
		}
		m := e.Match(0)
		p := pfx{lo: m.Value, plen: m.PrefixLen, val: uint32(a.Code)<<16 | uint32(a.Site)}
		if !m.Present {
			p.lo, p.plen = 0, 0
		}
		p.hi = p.lo | (1<<(32-p.plen) - 1)
		ps = append(ps, p)
		bounds = append(bounds, p.lo)
		if p.hi < 1<<32-1 {
			bounds = append(bounds, p.hi+1)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	// Paint the elementary intervals, shorter prefixes first: a longer
	// prefix, painted later, wins where it lies.
	slices.SortFunc(ps, func(a, b pfx) int { return a.plen - b.plen })
	vals := make([]uint32, len(bounds))
	for _, p := range ps {
		i, _ := slices.BinarySearch(bounds, p.lo)
		for ; i < len(bounds) && bounds[i] <= p.hi; i++ {
			vals[i] = p.val
		}
	}
	n := 0
	for i, b := range bounds {
		if i > 0 && vals[i] == set.Site[n-1] {
			continue // the same as the interval before
		}
		if n == len(set.Start) {
			return fmt.Errorf("table %s: its prefixes need more than %d intervals", tb.t.Name, len(set.Start))
		}
		set.Start[n], set.Site[n] = uint32(b), vals[i]
		n++
	}
	for i := n; i < len(set.Start); i++ {
		set.Start[i], set.Site[i] = 1<<32-1, set.Site[n-1]
	}
	return nil
}

// loadSites rebuilds client_site from all its entries into the set packets
// do not read, then flips.
func (d *Datapath) loadSites(tb *table) error {
	var entries []*engine.Entry
	tb.t.Entries(func(e *engine.Entry) bool {
		entries = append(entries, e)
		return true
	})
	st := &d.sites
	next := st.live ^ 1
	if err := tb.siteIntervals(entries, &st.shadow.Set[next]); err != nil {
		return err
	}
	if d := time.Since(st.changed); d < slotGrace {
		time.Sleep(slotGrace - d)
	}
	if err := d.objs.ClientSite.Put(uint32(0), &st.shadow); err != nil {
		return fmt.Errorf("table %s: write the intervals: %w", tb.t.Name, err)
	}
	if err := d.objs.ClientSiteLive.Put(uint32(0), next); err != nil {
		return fmt.Errorf("table %s: flip the intervals: %w", tb.t.Name, err)
	}
	st.live, st.changed = next, time.Now()
	return nil
}
