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
	liveIdx     map[uint32]uint32              // the live slot of each cell written (others: 0)
	shadow      map[uint32]bpfobj.P4ctlP4Slots // what each cell written holds
	filled      map[uint32]bool                // cells whose live slot holds an action
	changed     map[uint32]time.Time           // when each cell last flipped
	pending     map[uint32]bpfobj.P4ctlP4Action
	order       []uint32 // pending keys, first queued first
}

func newSlotted(name string, slots, live *ebpf.Map) *slotted {
	return &slotted{name: name, slots: slots, live: live,
		keyOf0:  func(e *engine.Entry) uint32 { return uint32(e.Match(0).Value) },
		liveIdx: map[uint32]uint32{}, shadow: map[uint32]bpfobj.P4ctlP4Slots{}, filled: map[uint32]bool{},
		changed: map[uint32]time.Time{}, pending: map[uint32]bpfobj.P4ctlP4Action{}}
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

// put queues cell key's action a (code 0: empty, a miss); a later put of
// the same key before the flush wins.
func (s *slotted) queue(key uint32, a *bpfobj.P4ctlP4Action) error {
	if key >= s.slots.MaxEntries() {
		return fmt.Errorf("table %s: key %d beyond the program's array of %d", s.name, key, s.slots.MaxEntries())
	}
	if _, ok := s.pending[key]; !ok {
		s.order = append(s.order, key)
	}
	s.pending[key] = *a
	return nil
}

// flush writes the queued cells: every new slot (the live ones rewritten
// with the bytes they hold) in one batch, then every live index in another.
// A cell changed less than slotGrace ago waits for it.
func (s *slotted) flush() error {
	if len(s.order) == 0 {
		return nil
	}
	now := time.Now()
	var wait time.Duration
	keys := make([]uint32, len(s.order))
	vals := make([]bpfobj.P4ctlP4Slots, len(s.order))
	lives := make([]uint32, len(s.order))
	for i, key := range s.order {
		if t, ok := s.changed[key]; ok {
			wait = max(wait, slotGrace-now.Sub(t))
		}
		v := s.shadow[key]
		next := s.liveIdx[key] ^ 1
		v.A[next] = s.pending[key]
		keys[i], vals[i], lives[i] = key, v, next
	}
	if wait > 0 {
		time.Sleep(wait)
	}
	s.order = s.order[:0]
	clear(s.pending)
	if _, err := s.slots.BatchUpdate(keys, vals, nil); err != nil {
		return fmt.Errorf("table %s: write slots: %w", s.name, err)
	}
	if _, err := s.live.BatchUpdate(keys, lives, nil); err != nil {
		return fmt.Errorf("table %s: flip slots: %w", s.name, err)
	}
	at := time.Now()
	for i, key := range keys {
		s.shadow[key], s.liveIdx[key], s.changed[key] = vals[i], lives[i], at
		if vals[i].A[lives[i]].Code != 0 {
			s.filled[key] = true
		} else {
			delete(s.filled, key)
		}
	}
	return nil
}

// write changes one cell at once (queue and flush).
func (s *slotted) write(key uint32, a *bpfobj.P4ctlP4Action) error {
	if err := s.queue(key, a); err != nil {
		return err
	}
	return s.flush()
}

func (s *slotted) put(e *engine.Entry, a *bpfobj.P4ctlP4Action) error { return s.queue(s.keyOf0(e), a) }

func (s *slotted) del(e *engine.Entry) error {
	key := s.keyOf0(e)
	if _, queued := s.pending[key]; !s.filled[key] && !queued {
		return nil
	}
	return s.queue(key, &bpfobj.P4ctlP4Action{})
}

func (s *slotted) keyOf(e *engine.Entry) any { return s.keyOf0(e) }

func (s *slotted) retain(keep map[any]bool) error {
	for key := range s.filled {
		if !keep[key] {
			if err := s.queue(key, &bpfobj.P4ctlP4Action{}); err != nil {
				return err
			}
		}
	}
	if err := s.flush(); err != nil {
		return fmt.Errorf("table %s: empty stale cells: %w", s.name, err)
	}
	return nil
}
