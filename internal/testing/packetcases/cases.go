package packetcases

import (
	"encoding/binary"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Expected verdicts (the names program.Verdict prints).
const (
	Forwarded = "forwarded"
	Dropped   = "dropped"
	Nacked    = "nacked"
)

// Expected drop reasons (the names program.DropReason prints). BMv2 cannot
// report them; its harness checks the counters instead.
const (
	ReasonMalformed     = "malformed"
	ReasonUnreachable   = "unreachable"
	ReasonReplyRejected = "reply-rejected"
	ReasonL2Drop        = "l2-drop"
	ReasonL3Drop        = "l3-drop"
	ReasonDropPort      = "drop-port"
)

// Expect is what must leave the switch for one input frame.
type Expect struct {
	Verdict string // Forwarded, Dropped or Nacked
	Port    uint32 // egress port (Forwarded, Nacked)
	Frame   []byte // exact bytes (Forwarded, Nacked)
	Reason  string // drop reason (Dropped)
}

// Packet is one input frame and its expected outcome.
type Packet struct {
	Note string
	// After is how long after the previous packet this one is sent: the
	// embedded target's clock is advanced by it, BMv2's harness sleeps it.
	// Only credit-TTL cases need it; ticks are chosen so that the harness's
	// own gaps between packets (tens of ms) never expire a credit.
	After  time.Duration
	Port   uint32 // ingress port
	Frame  []byte
	Expect Expect
}

// Count is the expected packet count of one counter cell after a case. A
// case's counters not listed must be 0.
type Count struct {
	Counter string
	Index   uint64
	Packets uint64
}

// Cell is the expected value of one register cell after a case (cells not
// listed are not checked): the bits of Mask (0 = all bits) must equal Value.
type Cell struct {
	Register string
	Index    uint64
	Value    uint64
	Mask     uint64
}

// Matches reports whether a register value satisfies the expectation.
func (c Cell) Matches(v uint64) bool {
	m := c.Mask
	if m == 0 {
		m = ^uint64(0)
	}
	return v&m == c.Value&m
}

// Sample is one expected latency_sample digest (docs/PIPELINE.md "Latency
// probes"). RTT is the sum of the Packet.After gaps between the timed
// request and its reply (or, Lost, the request that replaced its probe):
// the embedded target's clock moves only by them, so it reports RTT
// exactly; BMv2 reports RTT plus its harness's own gaps.
type Sample struct {
	Site   uint16
	Region uint8
	Lost   bool
	RTT    time.Duration
}

// Case is one packet test: install Entries on a fresh switch (pipeline just
// set, no state, the latency digest enabled), send Packets in order, then
// check Counters, Registers and the Digests generated, in order (none
// besides).
type Case struct {
	Name      string
	Doc       string
	Entries   []Entry
	Packets   []Packet
	Counters  []Count
	Registers []Cell
	Digests   []Sample
}

func forwarded(port uint32, frame []byte) Expect {
	return Expect{Verdict: Forwarded, Port: port, Frame: frame}
}
func dropped(reason string) Expect { return Expect{Verdict: Dropped, Reason: reason} }
func nacked(port uint32, frame []byte) Expect {
	return Expect{Verdict: Nacked, Port: port, Frame: frame}
}

func event(e pipeline.Event, n uint64) Count {
	return Count{Counter: e.Lane().Counter(), Index: uint64(e), Packets: n}
}
func routed(region uint8, n uint64) Count {
	return Count{Counter: pipeline.CounterRegionRouted, Index: uint64(region), Packets: n}
}
func fellBack(region uint8, n uint64) Count {
	return Count{Counter: pipeline.CounterRegionFallback, Index: uint64(region), Packets: n}
}
func bound(server uint16, n uint64) Count {
	return Count{Counter: pipeline.CounterServerBound, Index: uint64(server), Packets: n}
}

// outstanding is server's outstanding count: the low 32 bits of its credit
// cell (the last tick depends on the switch's clock).
func outstanding(server uint16, v uint64) Cell {
	slot, idx := pipeline.Slot(server)
	return Cell{Register: pipeline.RegisterServerCredit(slot), Index: idx, Value: v, Mask: 0xFFFFFFFF}
}
func work(server uint16, v uint64) Cell {
	return Cell{Register: pipeline.RegisterServerWork, Index: uint64(server), Value: v}
}
func regionOut(region uint8, v uint64) Cell {
	return Cell{Register: pipeline.RegisterRegionOutstanding, Index: uint64(region), Value: v}
}

// base are the entries every dispatch case shares: client sites 1 and 2,
// routes back to both clients.
func base() []Entry {
	return []Entry{
		ClientSite(IPv4(10, 0, 1, 0), 24, 1),
		ClientSite(IPv4(10, 0, 2, 0), 24, 2),
		L3Route(IPv4(10, 0, 1, 0), 24, 1),
		L3Route(IPv4(10, 0, 2, 0), 24, 2),
	}
}

// members returns the endpoint and reply-source entries of servers ids.
func members(ids ...uint16) []Entry {
	var e []Entry
	for _, s := range ids {
		e = append(e, Serves(s, Server(s))...)
	}
	return e
}

// singleRegion: every SLA of sites 1 and 2 is feasible in region r only,
// which is ranked, local, and has pool p with endpoints for its servers.
func singleRegion(r uint8, capacity uint32, p Pool) []Entry {
	e := append(base(),
		Feasibility(1, 0, 0xFFFF, 1<<r, r),
		Feasibility(2, 0, 0xFFFF, 1<<r, r),
		CarbonRank(0, r, 0),
		LocalRegion(r, capacity),
		p.Entry(r))
	for s := p.Base; s <= p.Base+p.SizeMask; s++ {
		e = append(e, members(s)...)
	}
	return e
}

// one is a one-server pool that takes every request on its first pass
// (random, unbounded): for cases about region selection, not dispatch.
func one(server uint16) Pool { return Pool{Base: server, Policy: pipeline.PolicyRandom} }

// sent sends a request from client site c.
func sent(note string, f wire.Frame) Packet {
	return Packet{Note: note, Port: portOf(f), Frame: Bytes(f)}
}

func portOf(f wire.Frame) uint32 { return uint32(f.SrcIP.To4()[2]) } // clients: 10.0.<site>.1 on port <site>

// boundTo is request f's expected outcome when bound to server s.
func boundTo(f wire.Frame, s uint16, site uint16, region uint8, flags wire.Flags, holds uint8) Expect {
	return forwarded(Server(s).Port, Bound(f, Server(s), s, site, region, flags, holds))
}

// emitted returns the header of request f as the switch emits it bound to s.
func emitted(f wire.Frame, s uint16, site uint16, region uint8) wire.Frame {
	out := f
	out.Header.Server, out.Header.Site, out.Header.Region = s, site, region
	return out
}

// hashOf is the dispatch hash of request f (docs/PIPELINE.md step 10.1).
func hashOf(f wire.Frame) uint16 {
	var src [4]byte
	copy(src[:], f.SrcIP.To4())
	return pipeline.CandidateHash(src, f.SrcPort, f.Header.RequestID, f.Header.HoldCount)
}

// dispatcher is the cases' oracle for unbounded pools without expiry: it
// predicts, from the candidates alone (pipeline.CandidateServers), which
// server each request binds to and how many level rounds that costs —
// jbsq/jiq: an idle candidate if there is one, else (one level round) the
// least loaded, ties to the lowest id; p2c: the less loaded of candidates 0
// and 1, ties to 0; p2c-work: the less expected work, then outstanding;
// random: candidate 0.
type dispatcher struct {
	pool      Pool
	out, work map[uint16]uint64
	levels    uint64
}

func newDispatcher(p Pool) *dispatcher {
	return &dispatcher{pool: p, out: map[uint16]uint64{}, work: map[uint16]uint64{}}
}

// bind returns the server request f binds to and records it (cost in µs).
func (d *dispatcher) bind(f wire.Frame, cost uint64) uint16 {
	c, n := pipeline.CandidateServers(d.pool.Policy, d.pool.Base, d.pool.SizeMask, hashOf(f))
	p := 0
	switch d.pool.Policy {
	case pipeline.PolicyP2C:
		if d.out[c[1]] < d.out[c[0]] {
			p = 1
		}
	case pipeline.PolicyP2CWork:
		if d.work[c[1]] < d.work[c[0]] || (d.work[c[1]] == d.work[c[0]] && d.out[c[1]] < d.out[c[0]]) {
			p = 1
		}
	case pipeline.PolicyJBSQ, pipeline.PolicyJIQ:
		for j := 1; j < n; j++ {
			if d.out[c[j]] < d.out[c[p]] {
				p = j
			}
		}
		if d.out[c[p]] != 0 {
			d.levels++
		}
	}
	s := c[p]
	d.out[s]++
	d.work[s] += cost
	return s
}

// counts returns the server_bound counts, region_routed of region r and the
// level rounds.
func (d *dispatcher) counts(r uint8) []Count {
	var total uint64
	var cs []Count
	for s := d.pool.Base; s <= d.pool.Base+d.pool.SizeMask; s++ {
		if d.out[s] > 0 {
			cs = append(cs, bound(s, d.out[s]))
			total += d.out[s]
		}
	}
	if d.levels > 0 {
		cs = append(cs, event(pipeline.EventLevelRound, d.levels))
	}
	return append(cs, routed(r, total))
}

// plain builds a non-p4ctl IPv4 frame (TCP when tcp, else UDP).
func plain(src, dst Host, tcp bool, dport uint16) []byte {
	eth := &layers.Ethernet{SrcMAC: src.HW(), DstMAC: MAC(SwitchMAC), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, SrcIP: src.Addr(), DstIP: dst.Addr()}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	var err error
	if tcp {
		ip.Protocol = layers.IPProtocolTCP
		t := &layers.TCP{SrcPort: 33000, DstPort: layers.TCPPort(dport), SYN: true, Window: 1024}
		_ = t.SetNetworkLayerForChecksum(ip)
		err = gopacket.SerializeLayers(buf, opts, eth, ip, t, gopacket.Payload("x"))
	} else {
		ip.Protocol = layers.IPProtocolUDP
		u := &layers.UDP{SrcPort: 33000, DstPort: layers.UDPPort(dport)}
		_ = u.SetNetworkLayerForChecksum(ip)
		err = gopacket.SerializeLayers(buf, opts, eth, ip, u, gopacket.Payload("dns?"))
	}
	if err != nil {
		panic("packetcases: " + err.Error())
	}
	return buf.Bytes()
}

// withOptions returns a p4ctl request behind an IPv4 header with one 4-byte
// option (ihl = 6): plain IPv4 traffic for the program.
func withOptions(f wire.Frame) []byte {
	b := Bytes(f)
	out := make([]byte, 0, len(b)+4)
	out = append(out, b[:34]...)
	out = append(out, 1, 1, 1, 0) // NOP, NOP, NOP, EOL
	out = append(out, b[34:]...)
	out[14] = 0x46
	binary.BigEndian.PutUint16(out[16:], binary.BigEndian.Uint16(out[16:])+4)
	out[24], out[25] = 0, 0
	var sum uint32
	for i := 14; i < 38; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(out[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(out[24:], ^uint16(sum))
	return out
}

// Cases returns the shared packet-test table. Each call builds it afresh.
func Cases() []Case {
	var cs []Case
	add := func(c Case) { cs = append(cs, c) }

	c1, c2 := Client(1), Client(2)
	req := func(c Host, id uint32, sla uint16, class uint8) wire.Frame { return Request(c, id, sla, class) }
	jbsq := func(base, mask uint16, b uint16) Pool {
		return Pool{Base: base, SizeMask: mask, Policy: pipeline.PolicyJBSQ, Bound: b}
	}

	// --- plain L2 / L3 traffic --------------------------------------------
	{
		arp := func(dst uint64, ethType uint16) []byte {
			b := make([]byte, 42)
			copy(b[0:6], MAC(dst))
			copy(b[6:12], c1.HW())
			binary.BigEndian.PutUint16(b[12:], ethType)
			for i := 14; i < len(b); i++ {
				b[i] = byte(i)
			}
			return b
		}
		known, vlan := arp(0x02000000aaaa, 0x0806), arp(0x02000000aaaa, 0x8100)
		add(Case{Name: "l2-forward", Doc: "non-IPv4 frames use l2_forward and leave unmodified; a miss drops",
			Entries: []Entry{L2Route(0x02000000aaaa, 7)},
			Packets: []Packet{
				{Note: "ARP to a known MAC", Port: 1, Frame: known, Expect: forwarded(7, known)},
				{Note: "VLAN-tagged frame to a known MAC", Port: 1, Frame: vlan, Expect: forwarded(7, vlan)},
				{Note: "unknown MAC", Port: 1, Frame: arp(0x02000000bbbb, 0x0806), Expect: dropped(ReasonL2Drop)},
			}})
	}
	{
		tcp := plain(c1, c2, true, 80)
		udp := plain(c1, c2, false, 53)
		opts := withOptions(req(c1, 9, 500, 0))
		opts[30], opts[31], opts[32], opts[33] = 10, 0, 2, 1 // to client 2
		nack := Bytes(wire.Frame{SrcMAC: MAC(SwitchMAC), DstMAC: c2.HW(), SrcIP: IP(VIP), DstIP: c2.Addr(),
			SrcPort: wire.UDPPort, DstPort: ClientPort, Header: wire.Header{Version: wire.Version, Type: wire.MsgNack, RequestID: 3}})
		add(Case{Name: "l3-forward", Doc: "IPv4 without a p4ctl header, and nacks, use l3_forward and leave unmodified",
			Entries: append(base(), L3Route(IPv4(10, 0, 3, 0), 24, 511)),
			Packets: []Packet{
				{Note: "TCP", Port: 1, Frame: tcp, Expect: forwarded(2, tcp)},
				{Note: "UDP to port 53", Port: 1, Frame: udp, Expect: forwarded(2, udp)},
				{Note: "UDP to 9800 behind IPv4 options", Port: 1, Frame: opts, Expect: forwarded(2, opts)},
				{Note: "a nack passing through", Port: 5, Frame: nack, Expect: forwarded(2, nack)},
				{Note: "no route", Port: 1, Frame: plain(c1, Host{IP: IPv4(10, 9, 9, 9)}, false, 53), Expect: dropped(ReasonL3Drop)},
				{Note: "route to the drop port 511", Port: 1, Frame: plain(c1, Client(3), true, 22), Expect: dropped(ReasonDropPort)},
			}})
	}

	// --- malformed ----------------------------------------------------------
	{
		good := Bytes(req(c1, 1, 500, 0))
		patch := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
		hdr := func(h wire.Header) []byte { f := req(c1, 1, 500, 0); f.Header = h; return Bytes(f) }
		udpShort := Bytes(req(c1, 1, 500, 0))
		udpShort = udpShort[:42+10]
		binary.BigEndian.PutUint16(udpShort[38:], 18)
		padded := patch(func(b []byte) []byte { binary.BigEndian.PutUint16(b[38:], 23); return b })
		pkts := []Packet{
			{Note: "truncated Ethernet", Frame: good[:10]},
			{Note: "truncated IPv4", Frame: good[:14+12]},
			{Note: "truncated UDP", Frame: good[:34+4]},
			{Note: "p4ctl header truncated", Frame: udpShort},
			{Note: "udp.length 23 < 24 (padded frame)", Frame: padded},
			{Note: "version 2", Frame: hdr(wire.Header{Version: 2, Type: wire.MsgRequest, SLAms: 500, RequestID: 1})},
			{Note: "version 0 reply", Frame: hdr(wire.Header{Version: 0, Type: wire.MsgReply, RequestID: 1})},
			{Note: "type 0", Frame: hdr(wire.Header{Version: 1, Type: 0, RequestID: 1})},
			{Note: "type 4", Frame: hdr(wire.Header{Version: 1, Type: 4, RequestID: 1})},
			{Note: "truncated UDP, not p4ctl", Frame: plain(c1, c2, false, 53)[:36]},
		}
		for i := range pkts {
			pkts[i].Port, pkts[i].Expect = 1, dropped(ReasonMalformed)
		}
		add(Case{Name: "malformed", Doc: "parser errors and bad p4ctl headers are dropped and counted, never forwarded",
			Entries: singleRegion(0, 0, jbsq(0, 0, 0)), Packets: pkts,
			Counters: []Count{event(pipeline.EventMalformed, uint64(len(pkts)))}})
	}

	// --- dispatch: chain order and threshold rounds -------------------------
	{
		p := jbsq(0, 3, 2)
		var pkts []Packet
		for i, s := range []uint16{0, 0, 1, 1, 2, 2, 3, 3} {
			f := req(c1, uint32(i+1), 500, 0)
			pkts = append(pkts, Packet{Note: "the first server below the bound, in slot order", Port: 1, Frame: Bytes(f), Expect: boundTo(f, s, 1, 0, 0, 0)})
		}
		f := req(c1, 9, 500, 0)
		pkts = append(pkts, Packet{Note: "every server at the bound, no holds: nack", Port: 1, Frame: Bytes(f), Expect: nacked(1, Nack(f, 1, 0, 0, 0))})
		var regs []Cell
		var ctrs []Count
		for s := uint16(0); s < 4; s++ {
			regs = append(regs, outstanding(s, 2), work(s, 0))
			ctrs = append(ctrs, bound(s, 2))
		}
		add(Case{Name: "jbsq-chain", Doc: "JBSQ(2) over a pool of 4: each request takes the first server below the bound in slot order; at the bound it is refused",
			Entries: singleRegion(0, 0, p), Packets: pkts,
			Counters:  append(ctrs, routed(0, 8), event(pipeline.EventNack, 1)),
			Registers: append(regs, regionOut(0, 8))})
	}
	{
		p := jbsq(0, 3, 0)
		var pkts []Packet
		for i, s := range []uint16{0, 1, 2, 3} {
			f := req(c1, uint32(i+1), 500, 0)
			pkts = append(pkts, Packet{Note: "unbounded: an idle server first", Port: 1, Frame: Bytes(f), Expect: boundTo(f, s, 1, 0, 0, 0)})
		}
		for i, s := range []uint16{0, 1, 2, 3, 0} {
			f := req(c1, uint32(i+5), 500, 0)
			pkts = append(pkts, Packet{Note: "none idle: a level round binds the least loaded (ties to the lowest slot)", Port: 1, Frame: Bytes(f), Expect: boundTo(f, s, 1, 0, 0, 0)})
		}
		add(Case{Name: "jbsq-level-rounds", Doc: "unbounded JBSQ: the first pass takes an idle server; with none idle, one level round at the least refused count + 1 takes the least loaded",
			Entries: singleRegion(0, 0, p), Packets: pkts,
			Counters:  []Count{bound(0, 3), bound(1, 2), bound(2, 2), bound(3, 2), routed(0, 9), event(pipeline.EventLevelRound, 5)},
			Registers: []Cell{outstanding(0, 3), outstanding(1, 2), outstanding(2, 2), outstanding(3, 2), regionOut(0, 9)}})
	}

	// --- region selection ---------------------------------------------------
	{
		e := []Entry{
			ClientSite(IPv4(10, 0, 0, 0), 8, 3), ClientSite(IPv4(10, 0, 2, 0), 24, 2),
			Feasibility(3, 0, 199, 0, 1), Feasibility(3, 200, 399, 0b10, 1), Feasibility(3, 400, 0xFFFF, 0b11, 1),
			Feasibility(2, 0, 0xFFFF, 0b01, 0),
			Feasibility(0, 0, 0xFFFF, 0b01, 0),
			CarbonRank(0, 0, 0), CarbonRank(0, 1, 1),
			LocalRegion(0, 0), LocalRegion(1, 0), one(0).Entry(0), one(4).Entry(1),
		}
		e = append(e, members(0, 4)...)
		c9 := Client(9) // 10.0.9.1: /8 site 3
		r100, r300, r399, r400 := req(c9, 1, 100, 0), req(c9, 2, 300, 0), req(c9, 3, 399, 0), req(c9, 4, 400, 0)
		r2 := req(c2, 5, 100, 0)
		unknown := req(Host{MAC: 0x020000000b01, IP: IPv4(11, 0, 0, 1), Port: 11}, 6, 100, 0)
		pk := func(note string, f wire.Frame, ex Expect) Packet { p := sent(note, f); p.Expect = ex; return p }
		add(Case{Name: "sites-and-sla-ranges", Doc: "client_site is longest-prefix; sla_feasibility ranges; carbon_rank takes the cleanest candidate; no feasible region falls back to the nearest",
			Entries: e,
			Packets: []Packet{
				pk("SLA 100: nothing feasible, fallback to nearest r1", r100, boundTo(r100, 4, 3, 1, wire.FlagFallback, 0)),
				pk("SLA 300: only r1", r300, boundTo(r300, 4, 3, 1, 0, 0)),
				pk("SLA 399: upper bound of the range", r399, boundTo(r399, 4, 3, 1, 0, 0)),
				pk("SLA 400: r0 and r1, r0 is cleaner", r400, boundTo(r400, 0, 3, 0, 0, 0)),
				pk("site 2 by the /24", r2, boundTo(r2, 0, 2, 0, 0, 0)),
				{Note: "source without a site: site 0", Port: 11, Frame: Bytes(unknown), Expect: boundTo(unknown, 0, 0, 0, 0, 0)},
			},
			Counters: []Count{event(pipeline.EventFallback, 1), fellBack(1, 1), routed(1, 3), routed(0, 3),
				bound(4, 3), bound(0, 3)}})
	}
	for _, c := range []struct {
		name   string
		active bool
		want   uint8
	}{{"epoch-default-0", false, 0}, {"epoch-active-1", true, 1}} {
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b11, 0),
			CarbonRank(0, 0, 0), CarbonRank(0, 1, 1), // generation 0: r0 cleanest
			CarbonRank(1, 1, 0), CarbonRank(1, 0, 1), // generation 1: r1 cleanest
			LocalRegion(0, 0), LocalRegion(1, 0), one(0).Entry(0), one(4).Entry(1))
		e = append(e, members(0, 4)...)
		if c.active {
			e = append(e, ActiveEpoch(1))
		}
		f := req(c1, 1, 500, 0)
		s := uint16(c.want) * 4
		add(Case{Name: c.name, Doc: "carbon_rank is keyed by the epoch active_epoch's default action selects",
			Entries:  e,
			Packets:  []Packet{{Port: 1, Frame: Bytes(f), Expect: boundTo(f, s, 1, c.want, 0, 0)}},
			Counters: []Count{routed(c.want, 1), bound(s, 1)}})
	}
	{
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b11, 0), Feasibility(2, 0, 0xFFFF, 0b11, 0),
			CarbonRank(0, 0, 0), CarbonRank(0, 1, 1), CarbonRankSite(0, 2, 1, 0), CarbonRankSite(0, 2, 0, 1),
			LocalRegion(0, 0), LocalRegion(1, 0), one(0).Entry(0), one(4).Entry(1))
		e = append(e, members(0, 4)...)
		f1, f2 := req(c1, 1, 500, 0), req(c2, 2, 500, 0)
		add(Case{Name: "per-site-ranking", Doc: "policy D: entries with an exact site mask at higher priority override the global ranking",
			Entries: e,
			Packets: []Packet{
				{Note: "site 1: global ranking", Port: 1, Frame: Bytes(f1), Expect: boundTo(f1, 0, 1, 0, 0, 0)},
				{Note: "site 2: its own ranking", Port: 2, Frame: Bytes(f2), Expect: boundTo(f2, 4, 2, 1, 0, 0)},
			},
			Counters: []Count{routed(0, 1), routed(1, 1), bound(0, 1), bound(4, 1)}})
	}
	{
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b01, 1),
			Entry{Table: pipeline.TableCarbonRank, Match: []Match{Exact(pipeline.FieldEpoch, 0), Ternary(pipeline.FieldFeasible, 1, 1)},
				Priority: 32, Action: pipeline.ActionNoAction},
			LocalRegion(0, 0), LocalRegion(1, 0), one(0).Entry(0), one(4).Entry(1))
		e = append(e, members(0, 4)...)
		f := req(c1, 1, 500, 0)
		add(Case{Name: "rank-noaction-falls-back", Doc: "a carbon_rank entry whose action is NoAction behaves as a miss: fallback to the nearest region",
			Entries:  e,
			Packets:  []Packet{{Port: 1, Frame: Bytes(f), Expect: boundTo(f, 4, 1, 1, wire.FlagFallback, 0)}},
			Counters: []Count{event(pipeline.EventFallback, 1), fellBack(1, 1), routed(1, 1), bound(4, 1)}})
	}
	{
		gw := Gateway()
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b100, 2), CarbonRank(0, 2, 0), RemoteRegion(2, gw))
		f := req(c1, 1, 800, 0)
		out := f
		out.DstMAC, out.DstIP = gw.HW(), gw.Addr()
		out.Header.Site, out.Header.Region, out.Header.Server = 1, 2, wire.NoServer
		add(Case{Name: "remote-region", Doc: "a remote region's requests are rewritten toward its gateway with server_id 0xFFFF",
			Entries:  e,
			Packets:  []Packet{{Port: 1, Frame: Bytes(f), Expect: forwarded(gw.Port, Rewritten(out))}},
			Counters: []Count{routed(2, 1)}})
	}
	{
		e := append(base(),
			Feasibility(1, 0, 299, 0b1000, 3), Feasibility(1, 300, 599, 0b10, 1), Feasibility(1, 600, 0xFFFF, 0b01, 0),
			CarbonRank(0, 0, 0), CarbonRank(0, 1, 1), CarbonRank(0, 3, 2),
			LocalRegion(0, 0), LocalRegion(1, 0), one(0).Entry(0)) // no next hop for r3, no pool for r1, no endpoint for server 0
		add(Case{Name: "unreachable", Doc: "no next hop, no pool, or no endpoint for the bound server: dropped and counted",
			Entries: e,
			Packets: []Packet{
				{Note: "region 3 has no next hop", Port: 1, Frame: Bytes(req(c1, 1, 100, 0)), Expect: dropped(ReasonUnreachable)},
				{Note: "region 1 has no pool", Port: 1, Frame: Bytes(req(c1, 2, 400, 0)), Expect: dropped(ReasonUnreachable)},
				{Note: "server 0 has no endpoint (bound first)", Port: 1, Frame: Bytes(req(c1, 3, 700, 0)), Expect: dropped(ReasonUnreachable)},
			},
			Counters:  []Count{event(pipeline.EventUnreachable, 3), routed(0, 1), bound(0, 1)},
			Registers: []Cell{outstanding(0, 1), regionOut(0, 1)}})
	}

	// --- capacity: an atomic acquire, spill on refusal -------------------------
	{
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b11, 0),
			CarbonRank(0, 1, 0), CarbonRank(0, 0, 1), // r1 cleanest
			LocalRegion(0, 0), LocalRegion(1, 1), one(0).Entry(0), one(4).Entry(1))
		e = append(e, members(0, 4)...)
		r1, r2, r3 := req(c1, 1, 500, 0), req(c1, 2, 500, 0), req(c1, 3, 500, 0)
		reply := Reply(emitted(r1, 4, 1, 1), Server(4), 4)
		add(Case{Name: "spill", Doc: "a region at capacity refuses the acquire; the request retries without it (spilled); a reply releases it",
			Entries: e,
			Packets: []Packet{
				{Note: "r1 takes its only slot", Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 4, 1, 1, 0, 0)},
				{Note: "r1 refuses: spilled to r0", Port: 1, Frame: Bytes(r2), Expect: boundTo(r2, 0, 1, 0, wire.FlagSpilled, 0)},
				{Note: "server 4's reply frees r1", Port: Server(4).Port, Frame: Bytes(reply), Expect: forwarded(1, Bytes(reply))},
				{Note: "r1 again", Port: 1, Frame: Bytes(r3), Expect: boundTo(r3, 4, 1, 1, 0, 0)},
			},
			Counters: []Count{event(pipeline.EventRegionFull, 1), event(pipeline.EventSpilled, 1), event(pipeline.EventReplyReleased, 1),
				routed(1, 2), routed(0, 1), bound(4, 2), bound(0, 1)},
			Registers: []Cell{regionOut(1, 1), regionOut(0, 1), outstanding(4, 1)},
			Digests:   []Sample{{Site: 1, Region: 1}}})
	}
	{
		r1, r2 := req(c1, 1, 500, 0), req(c1, 2, 500, 0)
		reply := Reply(emitted(r1, 4, 1, 1), Server(4), 4)
		add(Case{Name: "all-feasible-full", Doc: "when every feasible region refused, the request selects afresh and acquires regardless of capacity (no spill); releases count down",
			Entries: singleRegion(1, 1, one(4)),
			Packets: []Packet{
				{Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 4, 1, 1, 0, 0)},
				{Note: "r1 full but the only feasible region", Port: 1, Frame: Bytes(r2), Expect: boundTo(r2, 4, 1, 1, 0, 0)},
				{Note: "reply: one left", Port: Server(4).Port, Frame: Bytes(reply), Expect: forwarded(1, Bytes(reply))},
			},
			Counters:  []Count{routed(1, 2), bound(4, 2), event(pipeline.EventRegionFull, 1), event(pipeline.EventReplyReleased, 1)},
			Registers: []Cell{regionOut(1, 1), outstanding(4, 1)},
			Digests:   []Sample{{Site: 1, Region: 1}}})
	}

	// --- every candidate refused: holds, nack, force ---------------------------
	for _, force := range []bool{false, true} {
		p := jbsq(0, 0, 1)
		p.MaxHolds = 2
		name, ex2 := "full-pool-nack", Expect{}
		r1, r2 := req(c1, 1, 500, 0), req(c1, 2, 500, 0)
		counters := []Count{event(pipeline.EventHold, 2), routed(0, 1), bound(0, 1)}
		regs := []Cell{outstanding(0, 1), regionOut(0, 1)}
		if force {
			p.OnFull = pipeline.OnFullForce
			name = "full-pool-force"
			ex2 = boundTo(r2, 0, 1, 0, wire.FlagHeld|wire.FlagForced, 2)
			counters = []Count{event(pipeline.EventHold, 2), event(pipeline.EventLevelRound, 1), event(pipeline.EventForced, 1), routed(0, 2), bound(0, 2)}
			regs = []Cell{outstanding(0, 2), regionOut(0, 2)}
		} else {
			ex2 = nacked(1, Nack(r2, 1, 0, wire.FlagHeld, 2))
			counters = append(counters, event(pipeline.EventNack, 1))
		}
		add(Case{Name: name, Doc: "a request every candidate refuses is held max_holds times (resampled), then nacked (its region credit returned) or forced (a round at the least count, without the bound) per on_full",
			Entries: singleRegion(0, 0, p),
			Packets: []Packet{
				{Note: "takes the only slot", Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 0, 1, 0, 0, 0)},
				{Note: "held twice, then " + map[bool]string{false: "nacked", true: "forced"}[force], Port: 1, Frame: Bytes(r2), Expect: ex2},
			},
			Counters: counters, Registers: regs})
	}
	{
		p := Pool{Base: 0, SizeMask: 3, Policy: pipeline.PolicyJIQ, Bound: 9}
		var pkts []Packet
		for i := 0; i < 4; i++ {
			f := req(c1, uint32(i+1), 500, 0)
			pkts = append(pkts, Packet{Note: "an idle server", Port: 1, Frame: Bytes(f), Expect: boundTo(f, uint16(i), 1, 0, 0, 0)})
		}
		f := req(c1, 5, 500, 0)
		pkts = append(pkts, Packet{Note: "no idle server, no holds: nack", Port: 1, Frame: Bytes(f), Expect: nacked(1, Nack(f, 1, 0, 0, 0))})
		add(Case{Name: "jiq", Doc: "JIQ binds only to idle servers (bound 1 whatever the pool's bound), first in slot order",
			Entries: singleRegion(0, 0, p), Packets: pkts,
			Counters: []Count{bound(0, 1), bound(1, 1), bound(2, 1), bound(3, 1), routed(0, 4), event(pipeline.EventNack, 1)}})
	}
	{
		p := Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 2, LongReserve: 1, LongMaxHolds: 1}
		e := append(singleRegion(0, 0, p), ExecCost(7, 100, true), ExecCost(1, 10, false))
		l1, l2, s3 := req(c1, 1, 500, 7), req(c1, 2, 500, 7), req(c1, 3, 500, 1)
		add(Case{Name: "long-deferral", Doc: "bounded preemption: a long request may only take a server below bound - long_reserve while it has long_max_holds left; short ones use the whole bound",
			Entries: e,
			Packets: []Packet{
				{Note: "long, 0 < 2 - 1: bound", Port: 1, Frame: Bytes(l1), Expect: boundTo(l1, 0, 1, 0, 0, 0)},
				{Note: "long, 1 ≥ 2 - 1: deferred once, then bound under the whole bound", Port: 1, Frame: Bytes(l2), Expect: boundTo(l2, 0, 1, 0, wire.FlagHeld|wire.FlagLongDeferred, 1)},
				{Note: "short at the bound, no holds: nack", Port: 1, Frame: Bytes(s3), Expect: nacked(1, Nack(s3, 1, 0, 0, 0))},
			},
			Counters: []Count{event(pipeline.EventHold, 1), event(pipeline.EventLongDeferred, 1),
				event(pipeline.EventNack, 1), routed(0, 2), bound(0, 2)},
			Registers: []Cell{outstanding(0, 2), work(0, 200)}})
	}

	// --- credit TTL: expired credits are claimed, atomically ------------------
	{
		// credit_tick 16: ticks of 32.768 ms, so a credit expires between
		// 229 and 295 ms after its last touch (pipeline.TTLRange); the
		// harnesses' gaps between packets are far shorter.
		p := Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 1, CreditTick: 16}
		r1, r2, r3, r4 := req(c1, 1, 500, 0), req(c1, 2, 500, 0), req(c1, 3, 500, 0), req(c1, 4, 500, 0)
		add(Case{Name: "credit-ttl", Doc: "a credit untouched beyond its TTL (its reply lost) is claimed with count 1 by the next request; the claim touches it, so the one after is refused",
			Entries: singleRegion(0, 0, p),
			Packets: []Packet{
				{Note: "takes the only slot; its reply never comes", Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 0, 1, 0, 0, 0)},
				{Note: "at the bound: nack", Port: 1, Frame: Bytes(r2), Expect: nacked(1, Nack(r2, 1, 0, 0, 0))},
				{Note: "400 ms later the credit has expired: claimed", After: 400 * time.Millisecond, Port: 1, Frame: Bytes(r3), Expect: boundTo(r3, 0, 1, 0, 0, 0)},
				{Note: "just claimed, not expired: nack", Port: 1, Frame: Bytes(r4), Expect: nacked(1, Nack(r4, 1, 0, 0, 0))},
			},
			Counters:  []Count{event(pipeline.EventStaleReset, 1), event(pipeline.EventNack, 2), routed(0, 2), bound(0, 2)},
			Registers: []Cell{outstanding(0, 1), regionOut(0, 2)}})
	}
	{
		p := Pool{Base: 0, SizeMask: 0, Policy: pipeline.PolicyJBSQ, Bound: 2, CreditTick: 16}
		var f [5]wire.Frame
		for i := range f {
			f[i] = req(c1, uint32(i+1), 500, 0)
		}
		add(Case{Name: "race-for-expired-credit", Doc: "two requests arrive for one expired credit: the first claims it (count 1), the second only increments it (count 2) — no lost increment — and a third is refused at the bound",
			Entries: singleRegion(0, 0, p),
			Packets: []Packet{
				{Note: "first slot", Port: 1, Frame: Bytes(f[0]), Expect: boundTo(f[0], 0, 1, 0, 0, 0)},
				{Note: "second slot; both replies lost", Port: 1, Frame: Bytes(f[1]), Expect: boundTo(f[1], 0, 1, 0, 0, 0)},
				{Note: "expired: claimed with count 1", After: 400 * time.Millisecond, Port: 1, Frame: Bytes(f[2]), Expect: boundTo(f[2], 0, 1, 0, 0, 0)},
				{Note: "right behind it: count 1 < 2, incremented, not claimed again", Port: 1, Frame: Bytes(f[3]), Expect: boundTo(f[3], 0, 1, 0, 0, 0)},
				{Note: "count 2 = bound: nack", Port: 1, Frame: Bytes(f[4]), Expect: nacked(1, Nack(f[4], 1, 0, 0, 0))},
			},
			Counters: []Count{event(pipeline.EventStaleReset, 1), event(pipeline.EventNack, 1),
				routed(0, 4), bound(0, 4)},
			Registers: []Cell{outstanding(0, 2), regionOut(0, 4)}})
	}

	// --- replies ----------------------------------------------------------------
	{
		p := jbsq(0, 0, 1)
		e := append(singleRegion(0, 1, p), ExecCost(3, 50, false))
		r1, r2 := req(c1, 1, 500, 3), req(c1, 2, 500, 3)
		reply := Reply(emitted(r1, 0, 1, 0), Server(0), 0)
		add(Case{Name: "reply-release", Doc: "a reply from the server's address releases its credit, its work and its region's credit, and is forwarded unmodified",
			Entries: e,
			Packets: []Packet{
				{Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 0, 1, 0, 0, 0)},
				{Note: "reply", Port: Server(0).Port, Frame: Bytes(reply), Expect: forwarded(1, Bytes(reply))},
				{Note: "slot free again", Port: 1, Frame: Bytes(r2), Expect: boundTo(r2, 0, 1, 0, 0, 0)},
			},
			Counters:  []Count{event(pipeline.EventReplyReleased, 1), routed(0, 2), bound(0, 2)},
			Registers: []Cell{outstanding(0, 1), work(0, 50), regionOut(0, 1)},
			Digests:   []Sample{{Site: 1, Region: 0}}})
	}
	{
		r1 := req(c1, 1, 500, 0)
		spoofed := Reply(emitted(r1, 0, 1, 0), Host{MAC: 0x02000000dead, IP: IPv4(10, 9, 9, 9), Port: 30}, 0)
		unknown := Reply(emitted(r1, 0, 1, 0), Server(77), 77)
		remote := Reply(emitted(r1, wire.NoServer, 1, 2), Gateway(), wire.NoServer)
		add(Case{Name: "reply-rejected", Doc: "replies not from the server's reply source, or for an unknown server, are dropped; remote replies (0xFFFF) pass without release",
			Entries: singleRegion(0, 0, jbsq(0, 0, 1)),
			Packets: []Packet{
				{Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, 0, 1, 0, 0, 0)},
				{Note: "spoofed source", Port: 30, Frame: Bytes(spoofed), Expect: dropped(ReasonReplyRejected)},
				{Note: "unknown server 77", Port: Server(77).Port, Frame: Bytes(unknown), Expect: dropped(ReasonReplyRejected)},
				{Note: "remote reply", Port: 20, Frame: Bytes(remote), Expect: forwarded(1, Bytes(remote))},
			},
			Counters:  []Count{event(pipeline.EventReplyRejected, 2), routed(0, 1), bound(0, 1)},
			Registers: []Cell{outstanding(0, 1), regionOut(0, 1)}})
	}

	// --- latency probes -----------------------------------------------------------
	{
		p := one(0)
		// ids 1, 5 and 9 share site 1's probe way 1 to region 0.
		r1, r5, r9 := req(c1, 1, 500, 0), req(c1, 5, 500, 0), req(c1, 9, 500, 0)
		const b1, b5, b9 = 0, 0, 0
		rep := func(f wire.Frame, s uint16) wire.Frame { return Reply(emitted(f, s, 1, 0), Server(s), s) }
		idx := uint64(pipeline.ProbeIndex(1, 0, 1))
		add(Case{Name: "latency-probe", Doc: "a request takes its (site, region) probe as it leaves; a later one with the same probe finds it busy; the matching reply frees it and reports the round trip; another request's reply does not",
			Entries: singleRegion(0, 0, p),
			Packets: []Packet{
				{Note: "r1 takes the probe", Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, b1, 1, 0, 0, 0)},
				{Note: "r5: probe busy", After: 10 * time.Millisecond, Port: 1, Frame: Bytes(r5), Expect: boundTo(r5, b5, 1, 0, 0, 0)},
				{Note: "r5's reply: not the timed request", After: 20 * time.Millisecond, Port: Server(b5).Port, Frame: Bytes(rep(r5, b5)), Expect: forwarded(1, Bytes(rep(r5, b5)))},
				{Note: "r1's reply: 50 ms", After: 20 * time.Millisecond, Port: Server(b1).Port, Frame: Bytes(rep(r1, b1)), Expect: forwarded(1, Bytes(rep(r1, b1)))},
				{Note: "r9 takes the freed probe", Port: 1, Frame: Bytes(r9), Expect: boundTo(r9, b9, 1, 0, 0, 0)},
			},
			Counters:  []Count{event(pipeline.EventReplyReleased, 2), routed(0, 3), bound(0, 3)},
			Registers: []Cell{{Register: pipeline.RegisterLatencyProbe, Index: idx, Value: 9 << 32, Mask: 0xFFFFFFFF << 32}},
			Digests:   []Sample{{Site: 1, Region: 0, RTT: 50 * time.Millisecond}}})

		late := 4300 * time.Millisecond // > pipeline.ProbeTimeout µs
		add(Case{Name: "latency-probe-lost", Doc: "a probe whose reply does not come within the timeout is taken by the next request, which reports the wait as lost; the late reply then matches nothing",
			Entries: singleRegion(0, 0, p),
			Packets: []Packet{
				{Note: "r1 takes the probe; its reply is late", Port: 1, Frame: Bytes(r1), Expect: boundTo(r1, b1, 1, 0, 0, 0)},
				{Note: "r9 after the timeout: replaces it, lost", After: late, Port: 1, Frame: Bytes(r9), Expect: boundTo(r9, b9, 1, 0, 0, 0)},
				{Note: "r1's late reply: no longer timed", After: 5 * time.Millisecond, Port: Server(b1).Port, Frame: Bytes(rep(r1, b1)), Expect: forwarded(1, Bytes(rep(r1, b1)))},
				{Note: "r9's reply", After: 5 * time.Millisecond, Port: Server(b9).Port, Frame: Bytes(rep(r9, b9)), Expect: forwarded(1, Bytes(rep(r9, b9)))},
			},
			Counters:  []Count{event(pipeline.EventReplyReleased, 2), routed(0, 2), bound(0, 2)},
			Registers: []Cell{{Register: pipeline.RegisterLatencyProbe, Index: idx, Value: 0}},
			Digests:   []Sample{{Site: 1, Region: 0, Lost: true, RTT: late}, {Site: 1, Region: 0, RTT: 10 * time.Millisecond}}})
	}
	{
		gw := Gateway()
		e := append(base(), Feasibility(1, 0, 0xFFFF, 0b100, 2), CarbonRank(0, 2, 0), RemoteRegion(2, gw))
		f := req(c1, 3, 800, 0)
		out := f
		out.DstMAC, out.DstIP = gw.HW(), gw.Addr()
		out.Header.Site, out.Header.Region, out.Header.Server = 1, 2, wire.NoServer
		reply := Reply(out, gw, wire.NoServer)
		add(Case{Name: "latency-probe-remote", Doc: "requests to a remote region are timed too: its reply (server 0xFFFF) frees the probe",
			Entries: e,
			Packets: []Packet{
				{Port: 1, Frame: Bytes(f), Expect: forwarded(gw.Port, Rewritten(out))},
				{Note: "the remote region's reply, 30 ms later", After: 30 * time.Millisecond, Port: gw.Port, Frame: Bytes(reply), Expect: forwarded(1, Bytes(reply))},
			},
			Counters: []Count{routed(2, 1)},
			Digests:  []Sample{{Site: 1, Region: 2, RTT: 30 * time.Millisecond}}})
	}

	// --- policies -----------------------------------------------------------------
	for _, c := range []struct {
		name, doc string
		pool      Pool
	}{
		{"p2c", "power of two: the less outstanding of candidates 0 and 1, ties to 0",
			Pool{Base: 0, SizeMask: 3, Policy: pipeline.PolicyP2C}},
		{"p2c-work", "power of two on expected remaining work (ties: outstanding), with long and short exec classes",
			Pool{Base: 0, SizeMask: 3, Policy: pipeline.PolicyP2CWork}},
		{"random-pool-8", "random binds candidate 0: base + (h & size_mask), h the CRC-32 of src, sport, request id, hold count",
			Pool{Base: 8, SizeMask: 7, Policy: pipeline.PolicyRandom}},
		{"jbsq-pool-16", "pools above 4 servers are sampled: JBSQ over the aligned group of 4 the hash selects",
			Pool{Base: 16, SizeMask: 15, Policy: pipeline.PolicyJBSQ}},
	} {
		d := newDispatcher(c.pool)
		e := append(singleRegion(0, 0, c.pool), ExecCost(1, 100, false), ExecCost(2, 10, false))
		var pkts []Packet
		for i := 0; i < 12; i++ {
			class, cost := uint8(2), uint64(10)
			if i%3 == 0 {
				class, cost = 1, 100
			}
			f := req(c1, uint32(77+i*7919), 500, class)
			pkts = append(pkts, Packet{Port: 1, Frame: Bytes(f), Expect: boundTo(f, d.bind(f, cost), 1, 0, 0, 0)})
		}
		var regs []Cell
		for s := c.pool.Base; s <= c.pool.Base+c.pool.SizeMask; s++ {
			regs = append(regs, outstanding(s, d.out[s]), work(s, d.work[s]))
		}
		add(Case{Name: c.name, Doc: c.doc, Entries: e, Packets: pkts, Counters: d.counts(0), Registers: regs})
	}
	return cs
}
