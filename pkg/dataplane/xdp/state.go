package xdp

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/contract"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// loadGroups rebuilds the map values of a range or ternary table: those of
// the groups ch touched, or all of them when ch is nil.
func (d *Datapath) loadGroups(tb *table, ch *engine.Changes) error {
	switch tb.t.Name {
	case pipeline.TableClientSite:
		return d.loadSites(tb)
	case pipeline.TableSLAFeasibility:
		return loadGrouped(tb, ch, d.objs.SlaFeasibility, slaSiteOf, tb.slaRanges, nil)
	case pipeline.TableCarbonRank:
		epochs := map[uint8]bool{}
		err := loadGrouped(tb, ch, d.objs.CarbonRank, rankGroupOf, tb.rankGroup, func(k rankGroupKey) { epochs[k.Epoch] = true })
		if err != nil {
			return err
		}
		return d.loadRankKinds(tb, epochs, ch == nil)
	}
	return nil
}

// loadGrouped writes one map value per group of tb's entries (key: groupOf)
// built by build, for the groups ch touched (all when ch is nil), and
// deletes the values of groups left empty. touched sees every group
// written or deleted.
func loadGrouped[K comparable, V any](tb *table, ch *engine.Changes, m *ebpf.Map, groupOf func(*engine.Entry) K,
	build func([]*engine.Entry, *V) error, touched func(K)) error {
	want := map[K][]*engine.Entry{}
	if ch != nil {
		// The touched groups, from one entry each: a group's entries are
		// among that entry's siblings (the entries sharing its exact
		// fields), so a batch reads its groups, not the whole table.
		reps := map[K]*engine.Entry{}
		for _, c := range ch.Entries {
			if c.Table == tb.t {
				reps[groupOf(c.Entry)] = c.Entry
			}
		}
		for k, rep := range reps {
			want[k] = nil
			tb.t.Siblings(rep, func(e *engine.Entry) bool {
				if groupOf(e) == k {
					want[k] = append(want[k], e)
				}
				return true
			})
		}
	} else {
		tb.t.Entries(func(e *engine.Entry) bool {
			k := groupOf(e)
			want[k] = append(want[k], e)
			return true
		})
	}
	var keys []K
	var vals []V
	for k, entries := range want {
		if touched != nil {
			touched(k)
		}
		if len(entries) == 0 {
			if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return fmt.Errorf("table %s: delete a group: %w", tb.t.Name, err)
			}
			continue
		}
		var zero V
		vals = append(vals, zero)
		if err := build(entries, &vals[len(vals)-1]); err != nil {
			return err
		}
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		// Each group's value is replaced whole (a hash map's update), so a
		// lookup sees the group before or after, never between.
		if _, err := m.BatchUpdate(keys, vals, nil); err != nil {
			return fmt.Errorf("table %s: write %d groups: %w", tb.t.Name, len(keys), err)
		}
	}
	if ch != nil {
		return nil
	}
	// A full load: remove the groups that are no more.
	var stale []K
	var k K
	it := m.Iterate()
	var v V
	for it.Next(&k, &v) {
		if _, ok := want[k]; !ok {
			stale = append(stale, k)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("table %s: list the map: %w", tb.t.Name, err)
	}
	for _, k := range stale {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("table %s: delete a stale group: %w", tb.t.Name, err)
		}
	}
	return nil
}

// loadRankKinds writes, for each epoch (all when all), which kinds of
// carbon_rank groups it has: a lookup skips the others.
func (d *Datapath) loadRankKinds(tb *table, epochs map[uint8]bool, all bool) error {
	kinds := map[uint8]uint32{}
	tb.t.Entries(func(e *engine.Entry) bool {
		g := rankGroupOf(e)
		kinds[g.Epoch] |= 1 << g.Kind
		return true
	})
	for ep := 0; ep < 256; ep++ {
		if !all && !epochs[uint8(ep)] {
			continue
		}
		if err := d.objs.CarbonRankKinds.Put(uint32(ep), kinds[uint8(ep)]); err != nil {
			return fmt.Errorf("table %s: write epoch %d's group kinds: %w", tb.t.Name, ep, err)
		}
	}
	return nil
}

// Registers and counters. The program writes them; the engine's cells are
// a copy, refreshed by Sync before the controller reads them, and what the
// controller writes is copied into the maps.

// creditCell is the map index of server_credit_<slot>[i].
func creditCell(slot int, i uint64) uint32 { return uint32(slot*pipeline.SlotCells) + uint32(i) }

// zeroState zeroes every register and counter (a fresh pipeline).
func (d *Datapath) zeroState() error {
	for _, rm := range d.registerMaps() {
		if err := rm.write(0, make([]uint64, rm.m.MaxEntries())); err != nil {
			return fmt.Errorf("zero the XDP registers: %w", err)
		}
	}
	for _, m := range d.counterMaps() {
		zero := make([]bpfobj.P4ctlP4Count, d.ncpu)
		for i := 0; i < int(m.m.MaxEntries()); i++ {
			if err := m.m.Put(uint32(i), zero); err != nil {
				return fmt.Errorf("zero the XDP counters: %w", err)
			}
		}
	}
	return nil
}

// counterMap pairs a counter's map with the engine's counter.
type counterMap struct {
	m      *ebpf.Map
	offset uint32 // the counter's first cell in m
	c      func(h *handles) *engine.Counter
}

func (d *Datapath) counterMaps() []counterMap {
	out := []counterMap{
		{d.objs.RegionRouted, 0, func(h *handles) *engine.Counter { return h.routed }},
		{d.objs.RegionFallback, 0, func(h *handles) *engine.Counter { return h.fallback }},
		{d.objs.ServerBound, 0, func(h *handles) *engine.Counter { return h.bound }},
	}
	for i := range pipeline.Lanes() {
		out = append(out, counterMap{d.objs.DispatchEvents, uint32(i * pipeline.NumEvents),
			func(h *handles) *engine.Counter { return h.lanes[i] }})
	}
	return out
}

// writeState copies registers and counters the controller wrote into the
// maps (a counter's value goes to the first CPU's cell, the others' to 0).
func (d *Datapath) writeState(h *handles, regs []*engine.Register, ctrs []*engine.Counter) error {
	for _, r := range regs {
		rm, offset, ok := d.registerMap(h, r)
		if !ok {
			continue
		}
		vals := make([]uint64, r.Size)
		for i := range vals {
			vals[i] = r.Read(uint64(i))
		}
		if err := rm.write(offset, vals); err != nil {
			return fmt.Errorf("write register %s: %w", r.Name, err)
		}
	}
	for _, c := range ctrs {
		for _, cm := range d.counterMaps() {
			if cm.c(h) != c {
				continue
			}
			vals := make([]bpfobj.P4ctlP4Count, d.ncpu)
			for i := 0; i < c.Size; i++ {
				vals[0].Packets, vals[0].Bytes = c.Get(uint64(i))
				if err := cm.m.Put(cm.offset+uint32(i), vals); err != nil {
					return fmt.Errorf("write counter %s: %w", c.Name, err)
				}
			}
		}
	}
	return nil
}

// readPerCPU reads n cells of a per-CPU array map: cell i of CPU c at
// i*ncpu + c.
func readPerCPU[V any](m *ebpf.Map, n, ncpu int) ([]V, error) {
	keys, vals := make([]uint32, n), make([]V, n*ncpu)
	var cursor ebpf.MapBatchCursor
	got := 0
	for got < n {
		c, err := m.BatchLookup(&cursor, keys[got:], vals[got*ncpu:], nil)
		got += c
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// Sync copies the program's registers and counters into p's cells: those
// of the register or counter named name ("" for every one), at index (-1
// for every cell).
func (d *Datapath) Sync(p *engine.Pipeline, name string, index int64) error {
	h := d.h
	if h == nil || h.p != p {
		return nil
	}
	for _, r := range append(h.credit[:], h.work, h.regionOut, h.probe) {
		if name != "" && name != r.Name {
			continue
		}
		rm, offset, _ := d.registerMap(h, r)
		if index >= 0 {
			if index >= int64(r.Size) {
				continue
			}
			v, err := rm.read(offset+uint32(index), 1)
			if err != nil {
				return fmt.Errorf("read register %s[%d]: %w", r.Name, index, err)
			}
			r.Write(uint64(index), v[0])
			continue
		}
		v, err := rm.read(offset, r.Size)
		if err != nil {
			return fmt.Errorf("read register %s: %w", r.Name, err)
		}
		for i, x := range v {
			r.Write(uint64(i), x)
		}
	}
	for _, cm := range d.counterMaps() {
		c := cm.c(h)
		if name != "" && name != c.Name {
			continue
		}
		if index >= 0 {
			if index >= int64(c.Size) {
				continue
			}
			vals := make([]bpfobj.P4ctlP4Count, d.ncpu)
			if err := cm.m.Lookup(cm.offset+uint32(index), &vals); err != nil {
				return fmt.Errorf("read counter %s[%d]: %w", c.Name, index, err)
			}
			pk, by := sumCPUs(vals)
			c.Set(uint64(index), pk, by)
			continue
		}
		all, err := readPerCPU[bpfobj.P4ctlP4Count](cm.m, int(cm.m.MaxEntries()), d.ncpu)
		if err != nil {
			return fmt.Errorf("read counter %s: %w", c.Name, err)
		}
		for i := 0; i < c.Size; i++ {
			cell := (int(cm.offset) + i) * d.ncpu
			pk, by := sumCPUs(all[cell : cell+d.ncpu])
			c.Set(uint64(i), pk, by)
		}
	}
	return nil
}

func sumCPUs(v []bpfobj.P4ctlP4Count) (packets, bytes uint64) {
	for _, c := range v {
		packets += c.Packets
		bytes += c.Bytes
	}
	return packets, bytes
}

// Stats returns the datapath's own counts (contract.StatName), summed over
// the CPUs: passes, recirculations, and what it dropped or lost besides the
// program's counters.
func (d *Datapath) Stats() (map[string]uint64, error) {
	all, err := readPerCPU[uint64](d.objs.DatapathStats, contract.NumStats, d.ncpu)
	if err != nil {
		return nil, fmt.Errorf("read the XDP datapath's statistics: %w", err)
	}
	out := make(map[string]uint64, contract.NumStats)
	for i := 0; i < contract.NumStats; i++ {
		var sum uint64
		for c := 0; c < d.ncpu; c++ {
			sum += all[i*d.ncpu+c]
		}
		out[contract.StatName(i)] = sum
	}
	return out, nil
}

// ProgramStats returns how many passes p4ctl_inject (BPF_PROG_RUN) has
// run and their total run time, from the kernel's BPF statistics (zero
// unless /proc/sys/kernel/bpf_stats_enabled is 1).
func (d *Datapath) ProgramStats() (runs uint64, total time.Duration, err error) {
	st, err := d.objs.P4ctlInject.Stats()
	if err != nil {
		return 0, 0, fmt.Errorf("read the XDP program's statistics: %w", err)
	}
	return st.RunCount, st.Runtime, nil
}
