package program

import (
	"encoding/binary"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

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
	timestampMask   = 1<<pipeline.WidthTimestamp - 1
)

// carry is what a recirculated request takes into its next pass: BMv2's
// @field_list(1) metadata and Tofino's bridge header (docs/PIPELINE.md
// "Recirculation"). The zero value is a request's first pass.
type carry struct {
	round pipeline.Round
	// regionHeld: the request holds a credit of region hdr.region_id (taken
	// by an earlier pass); region selection and the acquire are skipped.
	regionHeld bool
	// spill: retry region selection over cand (the feasible regions minus
	// those that refused), with the site's nearest region nearest.
	spill   bool
	cand    uint64
	nearest uint64
	// exhausted: every feasible region refused; select afresh and acquire
	// regardless of capacity.
	exhausted bool
	// nackRelease: return the region credit and send the NACK.
	nackRelease bool
}

// Process runs one frame, received on inPort, through the program,
// rewriting it in place, and returns the outcome. A recirculated request is
// re-run until it is bound, nacked or dropped; other packets may be
// processed between its passes.
func (m *Model) Process(frame []byte, inPort uint32) Result {
	var res Result
	var c carry
	for res.Passes < pipeline.MaxPasses {
		res.Passes++
		if !m.pass(frame, inPort, &c, &res) {
			return res
		}
	}
	// Unreachable with a correct program; never forward a held packet.
	res.Verdict, res.Reason = Dropped, NoPipeline
	return res
}

// pass runs one pass and reports whether the packet is recirculated.
func (m *Model) pass(pkt []byte, inPort uint32, c *carry, res *Result) (recirculate bool) {
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
	return h.run(pkt, inPort, now, c, res)
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

// event counts e in its lane.
func (h *handles) event(e pipeline.Event, n int) { h.cEvents[e.Lane()].Count(uint64(e), n) }

// Credit reads server s's credit cell (server_credit_<slot>[index]); with
// SetCredit and Work, the handles are pipeline.Pool.Dispatch's credit store.
func (h *handles) Credit(s uint16) pipeline.Credit {
	slot, idx := pipeline.Slot(s)
	return pipeline.CreditFromCell(h.rCredit[slot].Read(idx))
}

// SetCredit writes server s's credit cell.
func (h *handles) SetCredit(s uint16, c pipeline.Credit) {
	slot, idx := pipeline.Slot(s)
	h.rCredit[slot].Write(idx, c.Cell())
}

// Work reads server s's server_work_us.
func (h *handles) Work(s uint16) uint64 { return h.rWork.Read(serverIndex(s)) }

func serverIndex(s uint16) uint64 { return uint64(s) & (pipeline.MaxServers - 1) }

// pool decodes a set_pool action's parameters.
func (h *handles) pool(prm []uint64) pipeline.Pool {
	return pipeline.Pool{
		Base: uint16(prm[h.pBase]), SizeMask: uint16(prm[h.pSizeMask]), Policy: pipeline.Policy(prm[h.pPolicy]),
		Bound: uint16(prm[h.pBound]), MaxHolds: uint8(prm[h.pMaxHolds]), OnFull: pipeline.OnFull(prm[h.pOnFull]),
		CreditTick: uint8(prm[h.pTick]), LongReserve: uint16(prm[h.pLongReserve]), LongMaxHolds: uint8(prm[h.pLongMaxHolds]),
	}
}

// run is one pass of the ingress control (docs/PIPELINE.md "Ingress, step by
// step"; step numbers below refer to it).
func (h *handles) run(pkt []byte, inPort uint32, now uint64, c *carry, res *Result) (recirculate bool) {
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

	if typ == wire.MsgReply {
		return h.reply(pkt, hdr, now, cost, l3, drop)
	}

	// Step 5: the NACK pass of a request that holds a region credit.
	region := uint64(hdr[8])
	if c.nackRelease {
		v := uint32(h.rRegionOutstanding.Read(region & regionIndexMask))
		pipeline.RegionRelease(&v)
		h.rRegionOutstanding.Write(region&regionIndexMask, uint64(v))
		return h.nack(pkt, hdr, inPort, n, res, drop)
	}

	// Step 6: region selection (skipped while the request holds its region).
	var cand, nearest uint64
	fallback := false
	if !c.regionHeld {
		var site, epoch uint64
		{
			key := [1]uint64{be32(pkt[ipOff+12:])}
			if _, a := h.clientSite.Apply(key[:], n); a.ID == h.aSetClientSite {
				site = a.Params[h.pSite]
			}
		}
		binary.BigEndian.PutUint16(hdr[6:], uint16(site))
		if c.spill {
			cand, nearest = c.cand, c.nearest
			hdr[1] |= byte(wire.FlagSpilled)
			h.event(pipeline.EventSpilled, n)
		} else {
			key := [2]uint64{site, be16(hdr[2:])}
			if _, a := h.slaFeasibility.Apply(key[:], n); a.ID == h.aSetFeasible {
				cand, nearest = a.Params[h.pFeasible], a.Params[h.pNearest]
			}
		}
		if _, a := h.activeEpoch.Apply(nil, n); a.ID == h.aSetActiveEpoch {
			epoch = a.Params[h.pEpoch]
		}
		ranked := false
		{
			key := [3]uint64{epoch, site, cand}
			if _, a := h.carbonRank.Apply(key[:], n); a.ID == h.aRouteToRegion {
				region, ranked = a.Params[h.pRegion], true
			}
		}
		if !ranked {
			region, fallback = nearest, true
			hdr[1] |= byte(wire.FlagFallback)
			h.event(pipeline.EventFallback, n)
			h.cFallback.Count(nearest&regionIndexMask, n)
		}
		hdr[8] = byte(region)
	}
	regionIdx := region & regionIndexMask

	// Step 7.
	key := [1]uint64{region}
	_, nh := h.regionNextHop.Apply(key[:], n)
	switch nh.ID {
	case h.aForwardRemote:
		// Step 8: remote region.
		put48(pkt[0:], nh.Params[h.pRemoteDmac])
		binary.BigEndian.PutUint32(pkt[ipOff+16:], uint32(nh.Params[h.pRemoteAddr]))
		binary.BigEndian.PutUint16(hdr[10:], wire.NoServer)
		h.cRouted.Count(regionIdx, n)
		h.probeTake(hdr, now)
		finishRewrite(pkt)
		return forward(nh.Params[h.pRemotePort])
	case h.aDispatchLocal:
	default:
		h.event(pipeline.EventUnreachable, n)
		return drop(Unreachable)
	}
	_, pa := h.serverPool.Apply(key[:], n)
	if pa.ID != h.aSetPool {
		h.event(pipeline.EventUnreachable, n)
		return drop(Unreachable)
	}
	pool := h.pool(pa.Params)

	// Step 9: the region's capacity, one atomic acquire.
	if !c.regionHeld {
		v := uint32(h.rRegionOutstanding.Read(regionIdx))
		ok := pipeline.RegionAcquire(&v, uint32(nh.Params[h.pLocalCapacity]), c.exhausted || fallback)
		if !ok {
			var bit uint64
			if region < pipeline.MaxRegions {
				bit = 1 << region
			}
			*c = carry{}
			if rest := cand &^ bit; rest != 0 {
				c.spill, c.cand, c.nearest = true, rest, nearest
			} else {
				c.exhausted = true
			}
			h.event(pipeline.EventRegionFull, n)
			return true
		}
		h.rRegionOutstanding.Write(regionIdx, uint64(v))
		*c = carry{regionHeld: true}
	}

	// Step 10: server dispatch.
	return h.dispatch(pkt, hdr, inPort, now, cost, isLong, pool, regionIdx, c, res, forward, drop)
}

// dispatch is step 10: one pass of pipeline.Pool.Dispatch over the credit
// registers, then the bind or what follows the refusal.
func (h *handles) dispatch(pkt, hdr []byte, inPort uint32, now, cost, isLong uint64, pool pipeline.Pool,
	regionIdx uint64, c *carry, res *Result, forward func(uint64) bool, drop func(DropReason) bool) bool {
	n := len(pkt)
	d := pool.Dispatch(h, c.round, candidateHash(pkt, hdr), isLong == 1, hdr[5], now)
	if d.Bound {
		return h.bind(pkt, hdr, d.Server, d.StaleReset, now, cost, regionIdx, c, forward, drop)
	}

	// 10.4 every candidate refused.
	switch d.Step.Kind {
	case pipeline.StepLevel, pipeline.StepForce:
		c.round = d.Step.Next()
		h.event(pipeline.EventLevelRound, n)
	case pipeline.StepHold, pipeline.StepLongDeferred:
		hdr[5]++
		hdr[1] |= byte(wire.FlagHeld)
		if d.Step.Kind == pipeline.StepLongDeferred {
			hdr[1] |= byte(wire.FlagLongDeferred)
			h.event(pipeline.EventLongDeferred, n)
		}
		h.event(pipeline.EventHold, n)
		c.round = d.Step.Next()
	case pipeline.StepNack:
		c.nackRelease = true
	}
	return true
}

// bind is steps 10.5 and 10.6: server s took the request (its claim reset
// a stale credit if stale); the request goes to it.
func (h *handles) bind(pkt, hdr []byte, s uint16, stale bool, now, cost, regionIdx uint64, c *carry,
	forward func(uint64) bool, drop func(DropReason) bool) bool {
	n := len(pkt)
	w := h.rWork.Read(serverIndex(s))
	if stale {
		w = 0
		h.event(pipeline.EventStaleReset, n)
	}
	h.rWork.Write(serverIndex(s), w+cost)
	if c.round.Forced {
		hdr[1] |= byte(wire.FlagForced)
		h.event(pipeline.EventForced, n)
	}
	h.cBound.Count(serverIndex(s), n)
	h.cRouted.Count(regionIdx, n)
	binary.BigEndian.PutUint16(hdr[10:], s)
	h.probeTake(hdr, now)
	// 10.6 toward the server.
	key := [1]uint64{uint64(s)}
	_, a := h.serverEndpoint.Apply(key[:], n)
	if a.ID != h.aSetServerEndpoint {
		h.event(pipeline.EventUnreachable, n)
		return drop(Unreachable)
	}
	put48(pkt[0:], a.Params[h.pEPDmac])
	binary.BigEndian.PutUint32(pkt[ipOff+16:], uint32(a.Params[h.pEPAddr]))
	finishRewrite(pkt)
	return forward(a.Params[h.pEPPort])
}

// nack is the NACK pass: the request turned around to the client.
func (h *handles) nack(pkt, hdr []byte, inPort uint32, n int, res *Result, drop func(DropReason) bool) bool {
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

// reply is step 11: a server's reply releases its credit and its region's.
func (h *handles) reply(pkt, hdr []byte, now, cost uint64, l3 func() bool, drop func(DropReason) bool) bool {
	n := len(pkt)
	region, server := uint64(hdr[8]), uint16(be16(hdr[10:]))
	if server == wire.NoServer {
		h.probeMatch(hdr, now)
		return l3() // a remote region's reply
	}
	key := [1]uint64{uint64(server)}
	if _, a := h.replySource.Apply(key[:], n); a.ID != h.aSetReplySource || be32(pkt[ipOff+12:]) != a.Params[h.pReplyAddr] {
		h.event(pipeline.EventReplyRejected, n)
		return drop(ReplyRejected)
	}
	regionIdx := region & regionIndexMask
	v := uint32(h.rRegionOutstanding.Read(regionIdx))
	pipeline.RegionRelease(&v)
	h.rRegionOutstanding.Write(regionIdx, uint64(v))
	var tick uint8
	rkey := [1]uint64{region}
	if _, pa := h.serverPool.Apply(rkey[:], n); pa.ID == h.aSetPool {
		tick = uint8(pa.Params[h.pTick])
	}
	cr := h.Credit(server)
	pipeline.Release(&cr, pipeline.NowTick(now, tick))
	h.SetCredit(server, cr)
	w := h.rWork.Read(serverIndex(server))
	h.rWork.Write(serverIndex(server), w-min(w, cost))
	h.event(pipeline.EventReplyReleased, n)
	h.probeMatch(hdr, now)
	return l3()
}

// probeKey returns a request's or reply's probe cell index and request id.
func probeKey(hdr []byte) (idx uint64, id uint32) {
	id = binary.BigEndian.Uint32(hdr[12:])
	return uint64(pipeline.ProbeIndex(binary.BigEndian.Uint16(hdr[6:]), hdr[8], id)), id
}

// probeTake is a request's latency probe step when it is bound to a local
// server or forwarded to a remote region (docs/PIPELINE.md "Latency
// probes"): a lost sample is reported when it replaces a probe whose reply
// never came.
func (h *handles) probeTake(hdr []byte, now uint64) {
	idx, id := probeKey(hdr)
	p := pipeline.ProbeFromCell(h.rProbe.Read(idx))
	lost := pipeline.ProbeTake(&p, id, uint32(now))
	h.rProbe.Write(idx, p.Cell())
	if lost != 0 && h.digest != nil {
		h.digest(h.p, pipeline.LatencySample{Site: binary.BigEndian.Uint16(hdr[6:]), Region: hdr[8], Lost: true, RTT: uint32(now) - lost})
	}
}

// probeMatch is a reply's latency probe step: the round trip of the request
// its probe timed.
func (h *handles) probeMatch(hdr []byte, now uint64) {
	idx, id := probeKey(hdr)
	p := pipeline.ProbeFromCell(h.rProbe.Read(idx))
	sent := pipeline.ProbeMatch(&p, id)
	if sent == 0 {
		return
	}
	h.rProbe.Write(idx, p.Cell())
	if h.digest != nil {
		h.digest(h.p, pipeline.LatencySample{Site: binary.BigEndian.Uint16(hdr[6:]), Region: hdr[8], RTT: uint32(now) - sent})
	}
}

// candidateHash is pipeline.CandidateHash of the packet's fields (the
// one definition; it does not allocate).
func candidateHash(pkt, hdr []byte) uint16 {
	var src [4]byte
	copy(src[:], pkt[ipOff+12:ipOff+16])
	return pipeline.CandidateHash(src, binary.BigEndian.Uint16(pkt[udpOff:]), binary.BigEndian.Uint32(hdr[12:]), hdr[5])
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
