package dataplane

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// digester batches the program's latency_sample digests into P4Runtime
// DigestLists as the controller's DigestEntry configures them (P4Runtime
// spec "DigestEntry"): a list is sent when it holds max_list_size digests
// or its oldest digest is max_timeout_ns old (0: at once); until a list is
// acknowledged, or ack_timeout_ns after it was sent, a digest with the same
// data is not generated again. Digests of a digest no controller enabled
// are not generated (counted in Dropped).
type digester struct {
	now func() time.Time

	deliver sync.Mutex // taken before mu is released: lists leave in list-id order
	mu      sync.Mutex
	pending map[uint32]*batch // by digest id
	unacked map[unackedKey]unacked
	held    map[string]time.Time // data awaiting ack → until when it is suppressed
	subs    map[uint64]func(*p4v1.DigestList)
	nextSub uint64
	nextID  uint64
	stats   DigestStats
}

// DigestStats counts the embedded switch's digests.
type DigestStats struct {
	Generated  uint64 // digests put into a list
	Lists      uint64 // lists sent
	Suppressed uint64 // same data as a list not yet acknowledged
	Dropped    uint64 // no controller had enabled the digest
	Acked      uint64 // lists acknowledged
}

type batch struct {
	data  []*p4v1.P4Data
	keys  []string
	timer *time.Timer
	cfg   *p4v1.DigestEntry_Config
}

type unackedKey struct {
	digest uint32
	list   uint64
}

type unacked struct {
	keys  []string
	until time.Time
}

func newDigester() *digester {
	return &digester{now: time.Now, pending: map[uint32]*batch{}, unacked: map[unackedKey]unacked{},
		held: map[string]time.Time{}, subs: map[uint64]func(*p4v1.DigestList){}}
}

// sample is the model's DigestSink: it runs during a pass, so it only
// queues; lists leave from a timer goroutine.
func (d *digester) sample(p *engine.Pipeline, s pipeline.LatencySample) {
	dg, err := p.Digest(pipeline.DigestLatencySample)
	if err != nil {
		return
	}
	cfg, ok := dg.Config()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok {
		d.stats.Dropped++
		return
	}
	var key [8]byte
	binary.BigEndian.PutUint16(key[0:], s.Site)
	key[2] = s.Region
	if s.Lost {
		key[3] = 1
	}
	binary.BigEndian.PutUint32(key[4:], s.RTT)
	k := string(key[:])
	if until, ok := d.held[k]; ok {
		if d.now().Before(until) {
			d.stats.Suppressed++
			return
		}
		delete(d.held, k)
	}
	b := d.pending[dg.ID]
	if b == nil {
		b = &batch{cfg: cfg}
		d.pending[dg.ID] = b
	}
	lost := uint64(0)
	if s.Lost {
		lost = 1
	}
	b.data = append(b.data, &p4v1.P4Data{Data: &p4v1.P4Data_Struct{Struct: &p4v1.P4StructLike{Members: []*p4v1.P4Data{
		bits(uint64(s.Site)), bits(uint64(s.Region)), bits(lost), bits(uint64(s.RTT)),
	}}}})
	b.keys = append(b.keys, k)
	d.stats.Generated++
	id := dg.ID
	switch {
	case cfg.GetMaxTimeoutNs() == 0 || cfg.GetMaxListSize() > 0 && len(b.data) >= int(cfg.GetMaxListSize()):
		if b.timer != nil {
			b.timer.Stop()
		}
		b.timer = time.AfterFunc(0, func() { d.flush(id) })
	case b.timer == nil:
		b.timer = time.AfterFunc(time.Duration(cfg.GetMaxTimeoutNs()), func() { d.flush(id) })
	}
}

// bits is a canonical P4Runtime bytestring of v.
func bits(v uint64) *p4v1.P4Data {
	return &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: engine.EncodeBits(v)}}
}

// flush sends digest id's pending digests, in lists of at most
// max_list_size.
func (d *digester) flush(id uint32) {
	d.mu.Lock()
	b := d.pending[id]
	delete(d.pending, id)
	if b == nil || len(b.data) == 0 {
		d.mu.Unlock()
		return
	}
	now := d.now()
	for k, u := range d.unacked { // forget lists whose ack timed out
		if !now.Before(u.until) {
			delete(d.unacked, k)
		}
	}
	size := len(b.data)
	if m := int(b.cfg.GetMaxListSize()); m > 0 {
		size = m
	}
	var lists []*p4v1.DigestList
	for i := 0; i < len(b.data); i += size {
		j := min(i+size, len(b.data))
		d.nextID++
		l := &p4v1.DigestList{DigestId: id, ListId: d.nextID, Data: b.data[i:j], Timestamp: now.UnixNano()}
		lists = append(lists, l)
		if t := b.cfg.GetAckTimeoutNs(); t > 0 {
			until := now.Add(time.Duration(t))
			d.unacked[unackedKey{id, l.ListId}] = unacked{keys: b.keys[i:j], until: until}
			for _, k := range b.keys[i:j] {
				d.held[k] = until
			}
		}
	}
	d.stats.Lists += uint64(len(lists))
	subs := make([]func(*p4v1.DigestList), 0, len(d.subs))
	for _, fn := range d.subs {
		subs = append(subs, fn)
	}
	d.deliver.Lock()
	defer d.deliver.Unlock()
	d.mu.Unlock()
	for _, l := range lists {
		for _, fn := range subs {
			fn(l)
		}
	}
}

func (d *digester) subscribe(fn func(*p4v1.DigestList)) func() {
	d.mu.Lock()
	id := d.nextSub
	d.nextSub++
	d.subs[id] = fn
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.subs, id)
		d.mu.Unlock()
	}
}

func (d *digester) ack(ack *p4v1.DigestListAck) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := unackedKey{ack.GetDigestId(), ack.GetListId()}
	u, ok := d.unacked[k]
	if !ok {
		return // acked already, timed out, or never needed one
	}
	delete(d.unacked, k)
	for _, key := range u.keys {
		delete(d.held, key)
	}
	d.stats.Acked++
}

// SubscribeDigests implements p4rtserver.DigestTarget: fn receives every
// DigestList the switch sends (from a timer goroutine).
func (s *Switch) SubscribeDigests(fn func(*p4v1.DigestList)) (unsubscribe func()) {
	return s.digests.subscribe(fn)
}

// AckDigest implements p4rtserver.DigestTarget: the list's data may be
// generated again. Acks of unknown digests are INVALID_ARGUMENT; of lists
// acknowledged before, or whose ack timed out, ignored.
func (s *Switch) AckDigest(_ context.Context, ack *p4v1.DigestListAck) error {
	p := s.eng.Acquire()
	ok := false
	if p != nil {
		_, ok = p.DigestByID(ack.GetDigestId())
	}
	s.eng.Release()
	if !ok {
		return status.Errorf(codes.InvalidArgument, "DigestListAck: unknown digest id %d", ack.GetDigestId())
	}
	s.digests.ack(ack)
	return nil
}

// DigestStats returns the switch's digest counts.
func (s *Switch) DigestStats() DigestStats {
	s.digests.mu.Lock()
	defer s.digests.mu.Unlock()
	return s.digests.stats
}
