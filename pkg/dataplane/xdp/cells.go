package xdp

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
)

// registerMap is the array map holding registers, and its cells' layout:
// plain 32- or 64-bit cells, or one cache line each (struct line32,
// line64) for the cells several CPUs update at once.
type registerMap struct {
	m    *ebpf.Map
	kind cellKind
}

type cellKind uint8

const (
	cell32 cellKind = iota
	cell64
	line32
	line64
)

// registerMaps lists the maps holding the program's registers.
func (d *Datapath) registerMaps() []registerMap {
	return []registerMap{
		{d.objs.ServerCredit, line64},
		{d.objs.ServerWorkUs, cell32},
		{d.objs.RegionOutstanding, line32},
		{d.objs.LatencyProbe, cell64},
	}
}

// registerMap returns where register r lives: its map and its first cell.
func (d *Datapath) registerMap(h *handles, r *engine.Register) (registerMap, uint32, bool) {
	switch r {
	case h.work:
		return registerMap{d.objs.ServerWorkUs, cell32}, 0, true
	case h.regionOut:
		return registerMap{d.objs.RegionOutstanding, line32}, 0, true
	case h.probe:
		return registerMap{d.objs.LatencyProbe, cell64}, 0, true
	}
	for k, c := range h.credit {
		if r == c {
			return registerMap{d.objs.ServerCredit, line64}, creditCell(k, 0), true
		}
	}
	return registerMap{}, 0, false
}

// write stores vals into the cells from offset on, in one batch.
func (rm registerMap) write(offset uint32, vals []uint64) error {
	keys := make([]uint32, len(vals))
	for i := range keys {
		keys[i] = offset + uint32(i)
	}
	var err error
	switch rm.kind {
	case cell32:
		_, err = rm.m.BatchUpdate(keys, convert(vals, func(v uint64) uint32 { return uint32(v) }), nil)
	case cell64:
		_, err = rm.m.BatchUpdate(keys, vals, nil)
	case line32:
		_, err = rm.m.BatchUpdate(keys, convert(vals, func(v uint64) bpfobj.P4ctlLine32 { return bpfobj.P4ctlLine32{V: uint32(v)} }), nil)
	case line64:
		_, err = rm.m.BatchUpdate(keys, convert(vals, func(v uint64) bpfobj.P4ctlLine64 { return bpfobj.P4ctlLine64{V: v} }), nil)
	}
	return err
}

// read returns n cells from offset on.
func (rm registerMap) read(offset uint32, n int) ([]uint64, error) {
	if n == 1 {
		v, err := rm.readOne(offset)
		return []uint64{v}, err
	}
	total := int(offset) + n
	var all []uint64
	var err error
	switch rm.kind {
	case cell32:
		var v []uint32
		v, err = readArray[uint32](rm.m, total)
		all = convert(v, func(x uint32) uint64 { return uint64(x) })
	case cell64:
		all, err = readArray[uint64](rm.m, total)
	case line32:
		var v []bpfobj.P4ctlLine32
		v, err = readArray[bpfobj.P4ctlLine32](rm.m, total)
		all = convert(v, func(x bpfobj.P4ctlLine32) uint64 { return uint64(x.V) })
	case line64:
		var v []bpfobj.P4ctlLine64
		v, err = readArray[bpfobj.P4ctlLine64](rm.m, total)
		all = convert(v, func(x bpfobj.P4ctlLine64) uint64 { return x.V })
	}
	if err != nil {
		return nil, err
	}
	if len(all) < total {
		return nil, fmt.Errorf("%d of %d cells read", len(all), total)
	}
	return all[offset:total], nil
}

// readOne reads cell i.
func (rm registerMap) readOne(i uint32) (uint64, error) {
	switch rm.kind {
	case cell32:
		var v uint32
		err := rm.m.Lookup(i, &v)
		return uint64(v), err
	case cell64:
		var v uint64
		err := rm.m.Lookup(i, &v)
		return v, err
	case line32:
		var v bpfobj.P4ctlLine32
		err := rm.m.Lookup(i, &v)
		return uint64(v.V), err
	}
	var v bpfobj.P4ctlLine64
	err := rm.m.Lookup(i, &v)
	return v.V, err
}

func convert[A, B any](in []A, f func(A) B) []B {
	out := make([]B, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// readArray reads the first n cells of an array map.
func readArray[V any](m *ebpf.Map, n int) ([]V, error) {
	keys, vals := make([]uint32, n), make([]V, n)
	var cursor ebpf.MapBatchCursor
	got := 0
	for got < n {
		c, err := m.BatchLookup(&cursor, keys[got:], vals[got:], nil)
		got += c
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return vals[:got], nil
}
