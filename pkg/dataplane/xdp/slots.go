package xdp

import (
	"fmt"
	"time"

	"github.com/cilium/ebpf"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// slotGrace is the least time between two changes of one slotted cell: a
// packet that read the cell's live index before the first change must have
// finished reading that slot (an XDP pass runs to completion in
// microseconds) before the second change rewrites it.
const slotGrace = time.Millisecond

// slotted is an exact table held in a slotted array (bpf p4ctl_maps.h
// struct p4_slots): to change a cell, write the slot packets do not read
// (the live one rewritten with the bytes it has), then flip the cell's
// live index — one 4-byte write. Cells are the key itself.
type slotted struct {
	name        string
	slots, live *ebpf.Map
	keyOf0      func(*engine.Entry) uint32
	liveIdx     map[uint32]uint32    // the live slot of each cell written (others: 0)
	filled      map[uint32]bool      // cells whose live slot holds an action
	changed     map[uint32]time.Time // when each cell last flipped
}

func newSlotted(name string, slots, live *ebpf.Map) *slotted {
	return &slotted{name: name, slots: slots, live: live,
		keyOf0:  func(e *engine.Entry) uint32 { return uint32(e.Match(0).Value) },
		liveIdx: map[uint32]uint32{}, filled: map[uint32]bool{}, changed: map[uint32]time.Time{}}
}

// makeSlots sets up the slotted tables of d's maps.
func (d *Datapath) makeSlots() {
	d.slots = map[string]*slotted{
		pipeline.TableRegionNextHop:  newSlotted(pipeline.TableRegionNextHop, d.objs.RegionNextHop, d.objs.RegionNextHopLive),
		pipeline.TableServerPool:     newSlotted(pipeline.TableServerPool, d.objs.ServerPool, d.objs.ServerPoolLive),
		pipeline.TableExecClassCost:  newSlotted(pipeline.TableExecClassCost, d.objs.ExecClassCost, d.objs.ExecClassCostLive),
		pipeline.TableServerEndpoint: newSlotted(pipeline.TableServerEndpoint, d.objs.ServerEndpoint, d.objs.ServerEndpointLive),
		pipeline.TableReplySource:    newSlotted(pipeline.TableReplySource, d.objs.ReplySource, d.objs.ReplySourceLive),
	}
	d.defaults = newSlotted("table_defaults", d.objs.TableDefaults, d.objs.TableDefaultsLive)
}

// write makes cell key's action a (code 0: empty, a miss).
func (s *slotted) write(key uint32, a *bpfobj.P4ctlP4Action) error {
	if key >= s.slots.MaxEntries() {
		return fmt.Errorf("table %s: key %d beyond the program's array of %d", s.name, key, s.slots.MaxEntries())
	}
	if t, ok := s.changed[key]; ok {
		if d := time.Since(t); d < slotGrace {
			time.Sleep(slotGrace - d)
		}
	}
	var v bpfobj.P4ctlP4Slots
	if err := s.slots.Lookup(key, &v); err != nil {
		return err
	}
	next := s.liveIdx[key] ^ 1
	v.A[next] = *a
	if err := s.slots.Put(key, &v); err != nil {
		return err
	}
	if err := s.live.Put(key, next); err != nil {
		return err
	}
	s.liveIdx[key] = next
	s.changed[key] = time.Now()
	if a.Code != 0 {
		s.filled[key] = true
	} else {
		delete(s.filled, key)
	}
	return nil
}

func (s *slotted) put(e *engine.Entry, a *bpfobj.P4ctlP4Action) error { return s.write(s.keyOf0(e), a) }

func (s *slotted) del(e *engine.Entry) error {
	key := s.keyOf0(e)
	if !s.filled[key] {
		return nil
	}
	return s.write(key, &bpfobj.P4ctlP4Action{})
}

func (s *slotted) keyOf(e *engine.Entry) any { return s.keyOf0(e) }

func (s *slotted) retain(keep map[any]bool) error {
	for key := range s.filled {
		if !keep[key] {
			if err := s.write(key, &bpfobj.P4ctlP4Action{}); err != nil {
				return fmt.Errorf("table %s: empty a stale cell: %w", s.name, err)
			}
		}
	}
	return nil
}
