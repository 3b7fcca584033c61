// Package program is the Go model of the p4ctl P4 program (p4src/v1model),
// step for step as docs/PIPELINE.md describes it: it parses Ethernet/IPv4/
// UDP/p4ctl frames, applies the program's tables held by a generic
// match-action engine (pkg/dataplane/engine), updates its registers and
// counters, and rewrites the frame in place.
//
// Table handles, action ids and parameter positions are resolved by name
// once per installed pipeline (Bind), so processing a packet does not
// allocate.
package program

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Clock returns the current time in microseconds (BMv2: µs since the switch
// started). Only the low 48 bits are used.
type Clock func() uint64

// Model runs packets through the program. It is safe for concurrent use:
// passes are serialised (as BMv2's single ingress thread does), so a pass's
// register read-modify-write sequences are atomic; between the passes of a
// held request, other packets may run.
type Model struct {
	eng   *engine.Engine
	clock Clock

	mu sync.Mutex // serialises passes
	h  *handles   // written under the engine's write lock (Bind)
}

// New returns a model running on eng's tables. Call Bind with every pipeline
// eng installs (engine.Options.OnCommit).
func New(eng *engine.Engine, clock Clock) *Model {
	return &Model{eng: eng, clock: clock}
}

// handles are a pipeline's tables, actions, parameter positions, registers
// and counters, resolved by name.
type handles struct {
	p *engine.Pipeline

	clientSite, slaFeasibility, activeEpoch, carbonRank, regionNextHop,
	serverPool, execClassCost, serverEndpoint, l3Forward, l2Forward *engine.Table

	aSetClientSite, aSetFeasible, aSetActiveEpoch, aRouteToRegion, aDispatchLocal,
	aForwardRemote, aSetPool, aSetExecCost, aSetServerEndpoint, aForward, aDrop uint32

	pSite, pFeasible, pNearest, pEpoch, pRegion, pLocalCapacity,
	pRemotePort, pRemoteDmac, pRemoteAddr, pRemoteCapacity,
	pBase, pSizeMask, pPolicy, pBound, pMaxHolds, pOnFull, pTTL, pLongReserve, pLongMaxHolds,
	pCost, pIsLong, pEPPort, pEPDmac, pEPAddr, pFwdPort int

	rOutstanding, rWork, rLastSeen, rRegionOutstanding, rRegionFull *engine.Register
	cRouted, cFallback, cBound, cEvents                             *engine.Counter
}

// Bind resolves the program's names in p. It must be called with the
// engine's write lock held (engine.Options.OnCommit does). If p lacks a name
// the model needs, packets are dropped (NoPipeline) and the error is returned.
func (m *Model) Bind(p *engine.Pipeline) error {
	m.h = nil
	h, err := resolve(p)
	if err != nil {
		return err
	}
	m.h = h
	return nil
}

func resolve(p *engine.Pipeline) (*handles, error) {
	h := &handles{p: p}
	var errs []error
	tab := func(dst **engine.Table, name string) {
		t, err := p.Table(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = t
	}
	act := func(dst *uint32, name string) {
		id, err := p.ActionID(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = id
	}
	prm := func(dst *int, action, param string) {
		i, err := p.ParamIndex(action, param)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = i
	}
	reg := func(dst **engine.Register, name string) {
		r, err := p.Register(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = r
	}
	ctr := func(dst **engine.Counter, name string) {
		c, err := p.Counter(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = c
	}
	tab(&h.clientSite, pipeline.TableClientSite)
	tab(&h.slaFeasibility, pipeline.TableSLAFeasibility)
	tab(&h.activeEpoch, pipeline.TableActiveEpoch)
	tab(&h.carbonRank, pipeline.TableCarbonRank)
	tab(&h.regionNextHop, pipeline.TableRegionNextHop)
	tab(&h.serverPool, pipeline.TableServerPool)
	tab(&h.execClassCost, pipeline.TableExecClassCost)
	tab(&h.serverEndpoint, pipeline.TableServerEndpoint)
	tab(&h.l3Forward, pipeline.TableL3Forward)
	tab(&h.l2Forward, pipeline.TableL2Forward)
	act(&h.aSetClientSite, pipeline.ActionSetClientSite)
	act(&h.aSetFeasible, pipeline.ActionSetFeasible)
	act(&h.aSetActiveEpoch, pipeline.ActionSetActiveEpoch)
	act(&h.aRouteToRegion, pipeline.ActionRouteToRegion)
	act(&h.aDispatchLocal, pipeline.ActionDispatchLocal)
	act(&h.aForwardRemote, pipeline.ActionForwardRemote)
	act(&h.aSetPool, pipeline.ActionSetPool)
	act(&h.aSetExecCost, pipeline.ActionSetExecCost)
	act(&h.aSetServerEndpoint, pipeline.ActionSetServerEndpoint)
	act(&h.aForward, pipeline.ActionForward)
	act(&h.aDrop, pipeline.ActionDrop)
	prm(&h.pSite, pipeline.ActionSetClientSite, "site")
	prm(&h.pFeasible, pipeline.ActionSetFeasible, "feasible")
	prm(&h.pNearest, pipeline.ActionSetFeasible, "nearest")
	prm(&h.pEpoch, pipeline.ActionSetActiveEpoch, "epoch")
	prm(&h.pRegion, pipeline.ActionRouteToRegion, "region")
	prm(&h.pLocalCapacity, pipeline.ActionDispatchLocal, "capacity")
	prm(&h.pRemotePort, pipeline.ActionForwardRemote, "port")
	prm(&h.pRemoteDmac, pipeline.ActionForwardRemote, "dmac")
	prm(&h.pRemoteAddr, pipeline.ActionForwardRemote, "addr")
	prm(&h.pRemoteCapacity, pipeline.ActionForwardRemote, "capacity")
	prm(&h.pBase, pipeline.ActionSetPool, "base")
	prm(&h.pSizeMask, pipeline.ActionSetPool, "size_mask")
	prm(&h.pPolicy, pipeline.ActionSetPool, "policy")
	prm(&h.pBound, pipeline.ActionSetPool, "bound")
	prm(&h.pMaxHolds, pipeline.ActionSetPool, "max_holds")
	prm(&h.pOnFull, pipeline.ActionSetPool, "on_full")
	prm(&h.pTTL, pipeline.ActionSetPool, "credit_ttl_us")
	prm(&h.pLongReserve, pipeline.ActionSetPool, "long_reserve")
	prm(&h.pLongMaxHolds, pipeline.ActionSetPool, "long_max_holds")
	prm(&h.pCost, pipeline.ActionSetExecCost, "cost_us")
	prm(&h.pIsLong, pipeline.ActionSetExecCost, "is_long")
	prm(&h.pEPPort, pipeline.ActionSetServerEndpoint, "port")
	prm(&h.pEPDmac, pipeline.ActionSetServerEndpoint, "dmac")
	prm(&h.pEPAddr, pipeline.ActionSetServerEndpoint, "addr")
	prm(&h.pFwdPort, pipeline.ActionForward, "port")
	reg(&h.rOutstanding, pipeline.RegisterServerOutstanding)
	reg(&h.rWork, pipeline.RegisterServerWork)
	reg(&h.rLastSeen, pipeline.RegisterServerLastSeen)
	reg(&h.rRegionOutstanding, pipeline.RegisterRegionOutstanding)
	reg(&h.rRegionFull, pipeline.RegisterRegionFull)
	ctr(&h.cRouted, pipeline.CounterRegionRouted)
	ctr(&h.cFallback, pipeline.CounterRegionFallback)
	ctr(&h.cBound, pipeline.CounterServerBound)
	ctr(&h.cEvents, pipeline.CounterDispatchEvents)
	if len(errs) > 0 {
		return nil, fmt.Errorf("bind the p4ctl program model: %v", errs)
	}
	return h, nil
}

// Frame offsets (Ethernet II, option-less IPv4, UDP, p4ctl).
const (
	ethLen   = 14
	ipOff    = ethLen
	ipLen    = 20
	udpOff   = ipOff + ipLen
	udpLen   = 8
	hdrOff   = udpOff + udpLen
	minFrame = hdrOff + wire.HeaderLen

	etherTypeIPv4   = 0x0800
	protoUDP        = 17
	minUDPLength    = udpLen + wire.HeaderLen
	regionIndexMask = pipeline.MaxRegions - 1
	serverIndexMask = pipeline.MaxServers - 1
	timestampMask   = 1<<pipeline.WidthTimestamp - 1
)

// maxPasses bounds the hold loop: every hold increments the 8-bit
// hold_count and requires it to be below an 8-bit limit, so a request is
// held at most 255 times.
const maxPasses = 256

// Process runs one frame, received on inPort, through the program,
// rewriting it in place, and returns the outcome. A held request is
// re-run (recirculated) until it is bound, nacked or dropped; other
// packets may be processed between its passes.
func (m *Model) Process(frame []byte, inPort uint32) Result {
	var res Result
	for res.Passes < maxPasses {
		res.Passes++
		if !m.pass(frame, inPort, &res) {
			return res
		}
	}
	// Unreachable with a correct hold_count; never forward a held packet.
	res.Verdict, res.Reason = Dropped, NoPipeline
	return res
}

// pass runs one pass and reports whether the packet is held (recirculated).
func (m *Model) pass(pkt []byte, inPort uint32, res *Result) (held bool) {
	p := m.eng.Acquire()
	defer m.eng.Release()
	h := m.h
	if p == nil || h == nil || h.p != p {
		*res = Result{Verdict: Dropped, Reason: NoPipeline, Passes: res.Passes}
		return false
	}
	now := m.clock() & timestampMask // the ingress timestamp, taken before queueing for the pass
	m.mu.Lock()
	defer m.mu.Unlock()
	return h.run(pkt, inPort, now, res)
}

func be16(b []byte) uint64 { return uint64(binary.BigEndian.Uint16(b)) }
func be32(b []byte) uint64 { return uint64(binary.BigEndian.Uint32(b)) }
func be48(b []byte) uint64 {
	return uint64(binary.BigEndian.Uint16(b))<<32 | uint64(binary.BigEndian.Uint32(b[2:]))
}
func put48(b []byte, v uint64) {
	binary.BigEndian.PutUint16(b, uint16(v>>32))
	binary.BigEndian.PutUint32(b[2:], uint32(v))
}

func (h *handles) event(e pipeline.Event, n int) { h.cEvents.Count(uint64(e), n) }

// run is one pass of the ingress control (docs/PIPELINE.md "Ingress, step by
// step"; step numbers below refer to it).
func (h *handles) run(pkt []byte, inPort uint32, now uint64, res *Result) (held bool) {
	n := len(pkt)
	drop := func(r DropReason) bool {
		res.Verdict, res.Reason, res.Port = Dropped, r, 0
		return false
	}
	forward := func(port uint64) bool {
		if port == DropPortNumber {
			return drop(DropPort)
		}
		res.Verdict, res.Reason, res.Port = Forwarded, NotDropped, uint32(port)
		return false
	}
	// l3 applies l3_forward (plain IPv4, replies, nacks).
	l3 := func() bool {
		key := [1]uint64{be32(pkt[ipOff+16:])}
		_, a := h.l3Forward.Apply(key[:], n)
		if a.ID == h.aForward {
			return forward(a.Params[h.pFwdPort])
		}
		return drop(L3Drop)
	}

	// Step 1: parser. Any extraction past the end of the frame is a parser error.
	if n < ethLen {
		h.event(pipeline.EventMalformed, n)
		return drop(Malformed)
	}
	if be16(pkt[12:]) != etherTypeIPv4 {
		// Step 2: not IPv4.
		key := [1]uint64{be48(pkt[0:])}
		_, a := h.l2Forward.Apply(key[:], n)
		if a.ID == h.aForward {
			return forward(a.Params[h.pFwdPort])
		}
		return drop(L2Drop)
	}
	if n < udpOff {
		h.event(pipeline.EventMalformed, n)
		return drop(Malformed)
	}
	if pkt[ipOff]&0x0f != 5 || pkt[ipOff+9] != protoUDP {
		return l3() // step 2: IPv4 without a p4ctl header
	}
	if n < hdrOff {
		h.event(pipeline.EventMalformed, n)
		return drop(Malformed)
	}
	if be16(pkt[udpOff:]) != wire.UDPPort && be16(pkt[udpOff+2:]) != wire.UDPPort {
		return l3()
	}
	if n < minFrame {
		h.event(pipeline.EventMalformed, n)
		return drop(Malformed)
	}
	hdr := pkt[hdrOff:minFrame]

	// Step 3.
	version, typ := hdr[0]>>4, wire.MsgType(hdr[0]&0x0f)
	if be16(pkt[udpOff+4:]) < minUDPLength || version != wire.Version || !typ.Valid() {
		h.event(pipeline.EventMalformed, n)
		return drop(Malformed)
	}
	if typ == wire.MsgNack {
		return l3()
	}

	// Step 4.
	var cost, isLong uint64
	{
		key := [1]uint64{uint64(hdr[4])}
		if _, a := h.execClassCost.Apply(key[:], n); a.ID == h.aSetExecCost {
			cost, isLong = a.Params[h.pCost], a.Params[h.pIsLong]
		}
	}

	isRequest := typ == wire.MsgRequest
	var region, server uint64
	if isRequest {
		// Step 5: region selection.
		var site, feasible, nearest, epoch uint64
		{
			key := [1]uint64{be32(pkt[ipOff+12:])}
			if _, a := h.clientSite.Apply(key[:], n); a.ID == h.aSetClientSite {
				site = a.Params[h.pSite]
			}
		}
		binary.BigEndian.PutUint16(hdr[6:], uint16(site))
		{
			key := [2]uint64{site, be16(hdr[2:])}
			if _, a := h.slaFeasibility.Apply(key[:], n); a.ID == h.aSetFeasible {
				feasible, nearest = a.Params[h.pFeasible], a.Params[h.pNearest]
			}
		}
		if _, a := h.activeEpoch.Apply(nil, n); a.ID == h.aSetActiveEpoch {
			epoch = a.Params[h.pEpoch]
		}
		full := h.rRegionFull.Read(0)
		cand := feasible &^ full
		if cand == 0 {
			cand = feasible
		} else if cand != feasible {
			hdr[1] |= byte(wire.FlagSpilled)
			h.event(pipeline.EventSpilled, n)
		}
		ranked := false
		{
			key := [3]uint64{epoch, site, cand}
			if _, a := h.carbonRank.Apply(key[:], n); a.ID == h.aRouteToRegion {
				region, ranked = a.Params[h.pRegion], true
			}
		}
		if !ranked {
			region = nearest
			hdr[1] |= byte(wire.FlagFallback)
			h.event(pipeline.EventFallback, n)
			h.cFallback.Count(nearest&regionIndexMask, n)
		}
		hdr[8] = byte(region)
	} else {
		// Step 6: reply.
		region, server = uint64(hdr[8]), be16(hdr[10:])
	}

	// Step 7.
	var nextHop int
	var capacity, nhPort, nhDmac, nhAddr uint64
	{
		key := [1]uint64{region}
		_, a := h.regionNextHop.Apply(key[:], n)
		switch a.ID {
		case h.aDispatchLocal:
			nextHop, capacity = pipeline.NextHopLocal, a.Params[h.pLocalCapacity]
		case h.aForwardRemote:
			nextHop, capacity = pipeline.NextHopRemote, a.Params[h.pRemoteCapacity]
			nhPort, nhDmac, nhAddr = a.Params[h.pRemotePort], a.Params[h.pRemoteDmac], a.Params[h.pRemoteAddr]
		}
	}
	regionIdx := region & regionIndexMask
	var regionBit uint64
	if region < 32 {
		regionBit = 1 << region
	}

	if isRequest {
		switch nextHop {
		case pipeline.NextHopRemote:
			// Step 8: remote region.
			put48(pkt[0:], nhDmac)
			binary.BigEndian.PutUint32(pkt[ipOff+16:], uint32(nhAddr))
			binary.BigEndian.PutUint16(hdr[10:], wire.NoServer)
			h.cRouted.Count(regionIdx, n)
			finishRewrite(pkt)
			return forward(nhPort)
		case pipeline.NextHopLocal:
		default:
			h.event(pipeline.EventUnreachable, n)
			return drop(Unreachable)
		}
		// Step 9: server dispatch.
		key := [1]uint64{region}
		_, a := h.serverPool.Apply(key[:], n)
		if a.ID != h.aSetPool {
			h.event(pipeline.EventUnreachable, n)
			return drop(Unreachable)
		}
		prm := a.Params
		base, sizeMask, policy := prm[h.pBase], prm[h.pSizeMask], pipeline.Policy(prm[h.pPolicy])
		bound, maxHolds, onFull := prm[h.pBound], prm[h.pMaxHolds], pipeline.OnFull(prm[h.pOnFull])
		ttl, longReserve, longMaxHolds := prm[h.pTTL], prm[h.pLongReserve], prm[h.pLongMaxHolds]

		// 9.2 candidates: the aligned group of four around the hash,
		// starting at the hash's own position in it.
		cands := pipeline.CandidateServers(uint16(base), uint16(sizeMask), candidateHash(pkt, hdr))
		var c, out, work [pipeline.Candidates]uint64
		var stale [pipeline.Candidates]bool
		for j := range c {
			c[j] = uint64(cands[j])
			idx := c[j] & serverIndexMask
			// 9.3 read; expired credits read as 0.
			out[j], work[j] = h.rOutstanding.Read(idx), h.rWork.Read(idx)
			last := h.rLastSeen.Read(idx)
			if ttl != 0 && out[j] != 0 && (now-last)&timestampMask > ttl {
				stale[j], out[j], work[j] = true, 0, 0
			}
		}
		// 9.4 pick.
		p := 0
		switch policy {
		case pipeline.PolicyP2C:
			if out[1] < out[0] {
				p = 1
			}
		case pipeline.PolicyP2CWork:
			if work[1] < work[0] || (work[1] == work[0] && out[1] < out[0]) {
				p = 1
			}
		case pipeline.PolicyJBSQ, pipeline.PolicyJIQ:
			for j := 1; j < len(out); j++ {
				if out[j] < out[p] {
					p = j
				}
			}
		}
		// 9.5 limit.
		limit := bound
		if policy == pipeline.PolicyJIQ {
			limit = 1
		}
		holdCount := uint64(hdr[5])
		hold, nack := false, false
		switch {
		case isLong == 1 && longReserve != 0 && limit != 0 && holdCount < longMaxHolds &&
			(out[p]+longReserve)&0xFFFF >= limit:
			// 9.6 bounded preemption.
			hold = true
			hdr[1] |= byte(wire.FlagLongDeferred)
			h.event(pipeline.EventLongDeferred, n)
		case limit != 0 && out[p] >= limit:
			// 9.7 all sampled servers at the bound.
			switch {
			case holdCount < maxHolds:
				hold = true
			case onFull == pipeline.OnFullForce:
				hdr[1] |= byte(wire.FlagForced)
				h.event(pipeline.EventForced, n)
			default:
				nack = true
			}
		}
		if hold {
			// 9.8 hold: recirculate with the header as modified so far.
			hdr[5]++
			hdr[1] |= byte(wire.FlagHeld)
			h.event(pipeline.EventHold, n)
			return true
		}
		if nack {
			// 9.10 nack back to the client.
			var mac [6]byte
			copy(mac[:], pkt[0:6])
			copy(pkt[0:6], pkt[6:12])
			copy(pkt[6:12], mac[:])
			var addr [4]byte
			copy(addr[:], pkt[ipOff+12:ipOff+16])
			copy(pkt[ipOff+12:ipOff+16], pkt[ipOff+16:ipOff+20])
			copy(pkt[ipOff+16:ipOff+20], addr[:])
			sp := binary.BigEndian.Uint16(pkt[udpOff:])
			binary.BigEndian.PutUint16(pkt[udpOff:], binary.BigEndian.Uint16(pkt[udpOff+2:]))
			binary.BigEndian.PutUint16(pkt[udpOff+2:], sp)
			hdr[0] = hdr[0]&0xf0 | byte(wire.MsgNack)
			finishRewrite(pkt)
			h.event(pipeline.EventNack, n)
			if inPort == DropPortNumber {
				return drop(DropPort)
			}
			res.Verdict, res.Reason, res.Port = Nacked, NotDropped, inPort
			return false
		}
		// 9.9 bind.
		s := c[p]
		sidx := s & serverIndexMask
		h.rOutstanding.Write(sidx, out[p]+1)
		h.rWork.Write(sidx, work[p]+cost)
		h.rLastSeen.Write(sidx, now)
		if stale[p] {
			h.event(pipeline.EventStaleReset, n)
		}
		ro := (h.rRegionOutstanding.Read(regionIdx) + 1) & 0xFFFFFFFF
		h.rRegionOutstanding.Write(regionIdx, ro)
		if capacity != 0 && ro >= capacity {
			h.rRegionFull.Write(0, h.rRegionFull.Read(0)|regionBit)
		}
		h.cBound.Count(sidx, n)
		h.cRouted.Count(regionIdx, n)
		binary.BigEndian.PutUint16(hdr[10:], uint16(s))
		server = s
	} else if server == wire.NoServer {
		// Step 10: reply from a remote region.
		return l3()
	}

	// Step 11.
	key := [1]uint64{server}
	_, a := h.serverEndpoint.Apply(key[:], n)
	found := a.ID == h.aSetServerEndpoint
	if isRequest {
		if !found {
			h.event(pipeline.EventUnreachable, n)
			return drop(Unreachable)
		}
		put48(pkt[0:], a.Params[h.pEPDmac])
		binary.BigEndian.PutUint32(pkt[ipOff+16:], uint32(a.Params[h.pEPAddr]))
		finishRewrite(pkt)
		return forward(a.Params[h.pEPPort])
	}
	if !found || be32(pkt[ipOff+12:]) != a.Params[h.pEPAddr] {
		h.event(pipeline.EventReplyRejected, n)
		return drop(ReplyRejected)
	}
	// Release the server's slot.
	sidx := server & serverIndexMask
	o, w := h.rOutstanding.Read(sidx), h.rWork.Read(sidx)
	if o != 0 {
		o--
	}
	if w >= cost {
		w -= cost
	} else {
		w = 0
	}
	h.rOutstanding.Write(sidx, o)
	h.rWork.Write(sidx, w)
	h.rLastSeen.Write(sidx, now)
	ro := h.rRegionOutstanding.Read(regionIdx)
	if ro != 0 {
		ro--
	}
	h.rRegionOutstanding.Write(regionIdx, ro)
	if capacity == 0 || ro < capacity {
		h.rRegionFull.Write(0, h.rRegionFull.Read(0)&^regionBit)
	}
	h.event(pipeline.EventReplyReleased, n)
	return l3()
}

// candidateHash is pipeline.CandidateHash of the packet's fields without
// allocating: the standard reflected CRC-32 (v1model's HashAlgorithm.crc32)
// of ipv4.src_addr ++ udp.src_port ++ request_id ++ hold_count, low 16 bits.
func candidateHash(pkt, hdr []byte) uint16 {
	tab := crc32.IEEETable
	crc := ^uint32(0)
	step := func(b byte) { crc = tab[byte(crc)^b] ^ crc>>8 }
	for _, b := range pkt[ipOff+12 : ipOff+16] {
		step(b)
	}
	step(pkt[udpOff])
	step(pkt[udpOff+1])
	for _, b := range hdr[12:16] {
		step(b)
	}
	step(hdr[5])
	return uint16(^crc)
}

// finishRewrite applies step 12 to a rewritten request (or nack): UDP
// checksum 0 and a recomputed IPv4 header checksum.
func finishRewrite(pkt []byte) {
	pkt[udpOff+6], pkt[udpOff+7] = 0, 0
	ip := pkt[ipOff : ipOff+ipLen]
	ip[10], ip[11] = 0, 0
	var sum uint32
	for i := 0; i < ipLen; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
}
