package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/contract"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// This file is the control side of the translation (docs/XDP.md "Tables"):
// the engine's entries, default actions, registers and counters, as the
// XDP program's maps hold them.

// Limits of the program's representation of the range and ternary tables:
// Admit refuses an insert beyond them with RESOURCE_EXHAUSTED.
const (
	// MaxSLAEntriesPerSite bounds sla_feasibility's entries of one site, so
	// that their ranges resolve into at most 2n+1 ≤ slaIntervals intervals.
	MaxSLAEntriesPerSite = (slaIntervals - 1) / 2
	// MaxRankRulesPerGroup bounds carbon_rank's entries of one epoch and
	// site (or of one epoch across sites): the rules a lookup may scan.
	MaxRankRulesPerGroup = rankRules
)

const (
	slaIntervals = len(bpfobj.P4ctlSlaRanges{}.Iv)
	rankRules    = len(bpfobj.P4ctlRankGroup{}.R)
	slaEnd       = 1<<pipeline.WidthSLA - 1 // the start of the unused tail, which repeats the last interval
)

// table is one P4Info table of the running pipeline and how its actions
// are coded in the maps.
type table struct {
	t      *engine.Table
	code   int                 // contract.TableCode
	codes  map[uint32]uint8    // engine action id -> contract.ActionCode
	params map[uint32][]string // engine action id -> its parameters' names, in the P4Info's order
}

// handles are the running pipeline's tables, registers and counters.
type handles struct {
	p      *engine.Pipeline
	tables map[string]*table

	credit                  [pipeline.Candidates]*engine.Register
	work, regionOut, probe  *engine.Register
	routed, fallback, bound *engine.Counter
	lanes                   [4]*engine.Counter
	latencyDigest           *engine.Digest
}

// resolve binds the contract's names in p.
func resolve(p *engine.Pipeline) (*handles, error) {
	h := &handles{p: p, tables: map[string]*table{}}
	var errs []error
	for _, st := range pipeline.Schema().Tables {
		et, err := p.Table(st.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		code, _ := contract.TableCode(st.Name)
		tb := &table{t: et, code: code, codes: map[uint32]uint8{}, params: map[uint32][]string{}}
		for _, an := range st.Actions {
			id, err := p.ActionID(an)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c, _ := contract.ActionCode(st, an)
			tb.codes[id] = c
			a, _ := pipeline.LookupAction(an)
			names := make([]string, len(a.Params))
			for _, prm := range a.Params {
				j, err := p.ParamIndex(an, prm.Name)
				if err != nil || j >= len(names) {
					errs = append(errs, fmt.Errorf("action %s: parameter %s: %v", an, prm.Name, err))
					continue
				}
				names[j] = prm.Name // the P4Info's order
			}
			tb.params[id] = names
		}
		h.tables[st.Name] = tb
	}
	reg := func(name string) *engine.Register {
		r, err := p.Register(name)
		if err != nil {
			errs = append(errs, err)
		}
		return r
	}
	ctr := func(name string) *engine.Counter {
		c, err := p.Counter(name)
		if err != nil {
			errs = append(errs, err)
		}
		return c
	}
	for k := range h.credit {
		h.credit[k] = reg(pipeline.RegisterServerCredit(k))
	}
	h.work = reg(pipeline.RegisterServerWork)
	h.regionOut = reg(pipeline.RegisterRegionOutstanding)
	h.probe = reg(pipeline.RegisterLatencyProbe)
	h.routed = ctr(pipeline.CounterRegionRouted)
	h.fallback = ctr(pipeline.CounterRegionFallback)
	h.bound = ctr(pipeline.CounterServerBound)
	for i, l := range pipeline.Lanes() {
		h.lanes[i] = ctr(l.Counter())
	}
	d, err := p.Digest(pipeline.DigestLatencySample)
	if err != nil {
		errs = append(errs, err)
	}
	h.latencyDigest = d
	if len(errs) > 0 {
		return nil, fmt.Errorf("bind the p4ctl XDP program to the pipeline: %w", errors.Join(errs...))
	}
	return h, nil
}

// action encodes an action call for the maps: each parameter in the
// field of its name.
func (tb *table) action(call *engine.ActionCall) (bpfobj.P4ctlP4Action, error) {
	var a bpfobj.P4ctlP4Action
	code, ok := tb.codes[call.ID]
	if !ok {
		return a, fmt.Errorf("table %s: action id %d is not the contract's", tb.t.Name, call.ID)
	}
	a.Code = code
	for i, name := range tb.params[call.ID] {
		if i >= len(call.Params) {
			return a, fmt.Errorf("table %s: action id %d has %d parameters, want %d", tb.t.Name, call.ID, len(call.Params), len(tb.params[call.ID]))
		}
		v := call.Params[i]
		switch name {
		case pipeline.ParamSite:
			a.Site = uint16(v)
		case pipeline.ParamFeasible:
			a.Feasible = uint32(v)
		case pipeline.ParamNearest:
			a.Nearest = uint8(v)
		case pipeline.ParamEpoch:
			a.Epoch = uint8(v)
		case pipeline.ParamRegion:
			a.Region = uint8(v)
		case pipeline.ParamCapacity:
			a.Capacity = uint32(v)
		case pipeline.ParamPort:
			a.Port = uint16(v)
		case pipeline.ParamDMAC:
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], v)
			copy(a.Dmac[:], b[2:])
		case pipeline.ParamAddr:
			a.Addr = uint32(v)
		case pipeline.ParamBase:
			a.Base = uint16(v)
		case pipeline.ParamSizeMask:
			a.SizeMask = uint16(v)
		case pipeline.ParamPolicy:
			a.Policy = uint8(v)
		case pipeline.ParamBound:
			a.Bound = uint16(v)
		case pipeline.ParamMaxHolds:
			a.MaxHolds = uint8(v)
		case pipeline.ParamOnFull:
			a.OnFull = uint8(v)
		case pipeline.ParamCreditTick:
			a.CreditTick = uint8(v)
		case pipeline.ParamLongReserve:
			a.LongReserve = uint16(v)
		case pipeline.ParamLongMaxHolds:
			a.LongMaxHolds = uint8(v)
		case pipeline.ParamCostMicros:
			a.CostUs = uint32(v)
		case pipeline.ParamIsLong:
			a.IsLong = uint8(v)
		default:
			return a, fmt.Errorf("table %s: parameter %s has no field in the program's p4_action", tb.t.Name, name)
		}
	}
	return a, nil
}

// Keys of the direct tables (one map entry per table entry).

func lpmKey(e *engine.Entry) bpfobj.P4ctlLpmV4Key {
	m := e.Match(0)
	k := bpfobj.P4ctlLpmV4Key{Prefixlen: uint32(m.PrefixLen)}
	binary.BigEndian.PutUint32(k.Addr[:], uint32(m.Value))
	return k
}

// direct returns the store of a direct table (one map cell per table
// entry), or nil for the grouped and keyless ones.
func (d *Datapath) direct(tb *table) store {
	if st := d.stores[tb.t.Name]; st != nil {
		return st
	}
	if sl := d.slots[tb.t.Name]; sl != nil {
		return sl
	}
	return nil
}

// makeStores sets up the direct tables held in hash and LPM maps.
func (d *Datapath) makeStores() {
	d.stores = map[string]store{
		pipeline.TableL3Forward: newMapStore(pipeline.TableL3Forward, d.objs.L3Forward, lpmKey),
		pipeline.TableL2Forward: newMapStore(pipeline.TableL2Forward, d.objs.L2Forward, func(e *engine.Entry) uint64 { return e.Match(0).Value }),
	}
}

// store is where a direct table's entries live. put and del queue their
// change (a later change of the same key wins); flush writes the queue
// with BPF's batch commands.
type store interface {
	put(e *engine.Entry, a *bpfobj.P4ctlP4Action) error
	del(e *engine.Entry) error
	flush() error
	// keyOf is e's key (comparable).
	keyOf(e *engine.Entry) any
	// retain removes every entry whose key is not in keep (after a flush).
	retain(keep map[any]bool) error
}

// mapStore is a hash or LPM map keyed by key(e).
type mapStore[K comparable] struct {
	name string
	m    *ebpf.Map
	key  func(*engine.Entry) K
	keys []K
	vals []bpfobj.P4ctlP4Action
	at   map[K]int // pending key -> its index in keys
}

func newMapStore[K comparable](name string, m *ebpf.Map, key func(*engine.Entry) K) *mapStore[K] {
	return &mapStore[K]{name: name, m: m, key: key, at: map[K]int{}}
}

func (s *mapStore[K]) put(e *engine.Entry, a *bpfobj.P4ctlP4Action) error {
	k := s.key(e)
	if i, ok := s.at[k]; ok {
		s.vals[i] = *a
		return nil
	}
	s.at[k] = len(s.keys)
	s.keys = append(s.keys, k)
	s.vals = append(s.vals, *a)
	return nil
}

func (s *mapStore[K]) del(e *engine.Entry) error {
	k := s.key(e)
	if _, ok := s.at[k]; ok {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if err := s.m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return err
	}
	return nil
}

func (s *mapStore[K]) flush() error {
	if len(s.keys) == 0 {
		return nil
	}
	_, err := s.m.BatchUpdate(s.keys, s.vals, nil)
	s.keys, s.vals = s.keys[:0], s.vals[:0]
	clear(s.at)
	if err != nil {
		return fmt.Errorf("table %s: write entries: %w", s.name, err)
	}
	return nil
}

func (s *mapStore[K]) keyOf(e *engine.Entry) any { return s.key(e) }

func (s *mapStore[K]) retain(keep map[any]bool) error {
	var stale []K
	var k K
	var v bpfobj.P4ctlP4Action
	it := s.m.Iterate()
	for it.Next(&k, &v) {
		if !keep[k] {
			stale = append(stale, k)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("table %s: list the map: %w", s.name, err)
	}
	for _, k := range stale {
		if err := s.m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("table %s: delete a stale entry: %w", s.name, err)
		}
	}
	return nil
}

// Groups of the range and ternary tables: one map value per group, rebuilt
// whole when any of its entries changes.

type rankGroupKey = bpfobj.P4ctlRankKey

func rankGroupOf(e *engine.Entry) rankGroupKey {
	epoch, site := e.Match(0), e.Match(1)
	switch {
	case !site.Present || site.Mask == 0:
		return rankGroupKey{Epoch: uint8(epoch.Value), Kind: contract.RankAny}
	case site.Mask == 1<<pipeline.WidthSite-1:
		return rankGroupKey{Epoch: uint8(epoch.Value), Kind: contract.RankSite, Site: uint16(site.Value)}
	}
	return rankGroupKey{Epoch: uint8(epoch.Value), Kind: contract.RankMasked}
}

func slaSiteOf(e *engine.Entry) uint32 { return uint32(e.Match(0).Value) }

// Admit refuses an insert the program's maps cannot hold: more than
// MaxSLAEntriesPerSite entries of one site in sla_feasibility, more than
// MaxRankRulesPerGroup in one carbon_rank group.
func (d *Datapath) Admit(t *engine.Table, e *engine.Entry) error {
	switch t.Name {
	case pipeline.TableSLAFeasibility:
		site, n := slaSiteOf(e), 0
		t.Siblings(e, func(*engine.Entry) bool { n++; return true }) // the entries of e's site
		if n >= MaxSLAEntriesPerSite {
			return status.Errorf(codes.ResourceExhausted, "table %s: site %d has %d entries, the XDP program's most per site (docs/XDP.md \"Limits\")",
				t.Name, site, MaxSLAEntriesPerSite)
		}
	case pipeline.TableCarbonRank:
		g, n := rankGroupOf(e), 0
		t.Siblings(e, func(o *engine.Entry) bool { // the entries of e's epoch
			if rankGroupOf(o) == g {
				n++
			}
			return true
		})
		if n >= MaxRankRulesPerGroup {
			return status.Errorf(codes.ResourceExhausted, "table %s: epoch %d already has %d entries of this site match, the XDP program's most per group (docs/XDP.md \"Limits\")",
				t.Name, g.Epoch, MaxRankRulesPerGroup)
		}
	}
	return nil
}

// slaRanges resolves one site's entries, by precedence, into the disjoint
// intervals sla_feasibility holds, written into r.
func (tb *table) slaRanges(entries []*engine.Entry, r *bpfobj.P4ctlSlaRanges) error {
	// Each entry's action once, then the elementary intervals between the
	// entries' bounds, each won by the entry that precedes the others.
	var actsBuf [MaxSLAEntriesPerSite]bpfobj.P4ctlP4Action
	acts := actsBuf[:0]
	var boundsBuf [2*MaxSLAEntriesPerSite + 1]uint64
	bounds := append(boundsBuf[:0], 0)
	for _, e := range entries {
		a, err := tb.action(&e.Action)
		if err != nil {
			return err
		}
		acts = append(acts, a)
		m := e.Match(1)
		bounds = append(bounds, m.Low)
		if m.High < slaEnd {
			bounds = append(bounds, m.High+1)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	n := 0
	for i, b := range bounds {
		win := -1
		for j, e := range entries {
			if m := e.Match(1); m.Low <= b && b <= m.High && (win < 0 || e.Precedes(entries[win])) {
				win = j
			}
		}
		var iv bpfobj.P4ctlSlaInterval
		if win >= 0 {
			iv.Code, iv.Feasible, iv.Nearest = acts[win].Code, acts[win].Feasible, acts[win].Nearest
		}
		if i > 0 && iv == r.Iv[n-1] {
			continue // the same action as the interval before: one interval
		}
		if n == slaIntervals {
			return fmt.Errorf("table %s: a site's ranges need more than %d intervals", tb.t.Name, slaIntervals)
		}
		r.Start[n], r.Iv[n] = uint16(b), iv
		n++
	}
	for i := n; i < slaIntervals; i++ {
		r.Start[i], r.Iv[i] = slaEnd, r.Iv[n-1]
	}
	return nil
}

// rankGroup sorts one carbon_rank group's entries by precedence into
// rules, written into g.
func (tb *table) rankGroup(entries []*engine.Entry, g *bpfobj.P4ctlRankGroup) error {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b *engine.Entry) int {
		switch {
		case a.Precedes(b):
			return -1
		case b.Precedes(a):
			return 1
		}
		return 0
	})
	if len(entries) > rankRules {
		return fmt.Errorf("table %s: %d entries in one group, the program holds %d", tb.t.Name, len(entries), rankRules)
	}
	*g = bpfobj.P4ctlRankGroup{}
	for i, e := range entries {
		a, err := tb.action(&e.Action)
		if err != nil {
			return err
		}
		site, feas := e.Match(1), e.Match(2)
		r := bpfobj.P4ctlRankRule{Prio: uint32(e.Priority()), Seq: uint32(e.Seq()), Region: a.Region, Code: a.Code}
		if site.Present {
			r.Sval, r.Smask = uint16(site.Value), uint16(site.Mask)
		}
		if feas.Present {
			r.Fval, r.Fmask = uint32(feas.Value), uint32(feas.Mask)
		}
		g.R[i] = r
	}
	g.N = uint32(len(entries))
	return nil
}
