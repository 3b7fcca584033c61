package packetcases

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Entries of the program's tables, built from pipeline constants.

// ClientSite maps a source prefix to a client site.
func ClientSite(prefix uint32, plen int, site uint16) Entry {
	return Entry{Table: pipeline.TableClientSite, Match: []Match{LPM(pipeline.FieldSrcAddr, uint64(prefix), plen)},
		Action: pipeline.ActionSetClientSite, Params: []Param{{"site", uint64(site)}}}
}

// Feasibility maps (site, SLA in [lo, hi]) to a feasible-region bitmap and
// the site's nearest region.
// The full range [0, 65535] is a don't care and is omitted, as P4Runtime
// requires.
func Feasibility(site, lo, hi uint16, feasible uint32, nearest uint8) Entry {
	m := []Match{Exact(pipeline.FieldSite, uint64(site))}
	if lo != 0 || hi != 0xFFFF {
		m = append(m, Range(pipeline.FieldSLA, uint64(lo), uint64(hi)))
	}
	return Entry{Table: pipeline.TableSLAFeasibility, Match: m,
		Action: pipeline.ActionSetFeasible, Priority: 1,
		Params: []Param{{"feasible", uint64(feasible)}, {"nearest", uint64(nearest)}}}
}

// ActiveEpoch sets the keyless active_epoch table's default action.
func ActiveEpoch(epoch uint8) Entry {
	return Entry{Table: pipeline.TableActiveEpoch, Default: true, Action: pipeline.ActionSetActiveEpoch,
		Params: []Param{{"epoch", uint64(epoch)}}}
}

// CarbonRank ranks region at rank (0 = cleanest) in generation epoch, for
// every site: feasible = (1<<region)/(1<<region), priority MaxRegions-rank.
func CarbonRank(epoch, region uint8, rank int) Entry {
	bit := uint64(1) << region
	return Entry{Table: pipeline.TableCarbonRank,
		Match:    []Match{Exact(pipeline.FieldEpoch, uint64(epoch)), Ternary(pipeline.FieldFeasible, bit, bit)},
		Priority: int32(pipeline.MaxRegions - rank), Action: pipeline.ActionRouteToRegion,
		Params: []Param{{"region", uint64(region)}}}
}

// CarbonRankSite is CarbonRank for one site only (policy D), at priority
// 2*MaxRegions-rank so that it wins over the all-sites ranking.
func CarbonRankSite(epoch uint8, site uint16, region uint8, rank int) Entry {
	e := CarbonRank(epoch, region, rank)
	e.Match = append(e.Match, Ternary(pipeline.FieldSite, uint64(site), 0xFFFF))
	e.Priority += pipeline.MaxRegions
	return e
}

// LocalRegion makes region a local pool with an outstanding-request capacity
// (0 = unlimited).
func LocalRegion(region uint8, capacity uint32) Entry {
	return Entry{Table: pipeline.TableRegionNextHop, Match: []Match{Exact(pipeline.FieldRegion, uint64(region))},
		Action: pipeline.ActionDispatchLocal, Params: []Param{{"capacity", uint64(capacity)}}}
}

// RemoteRegion forwards region's requests to a gateway.
func RemoteRegion(region uint8, gw Host) Entry {
	return Entry{Table: pipeline.TableRegionNextHop, Match: []Match{Exact(pipeline.FieldRegion, uint64(region))},
		Action: pipeline.ActionForwardRemote, Params: []Param{{"port", uint64(gw.Port)}, {"dmac", gw.MAC},
			{"addr", uint64(gw.IP)}, {"capacity", 0}}}
}

// Pool is a server_pool entry's parameters.
type Pool struct {
	Base, SizeMask uint16
	Policy         pipeline.Policy
	Bound          uint16
	MaxHolds       uint8
	OnFull         pipeline.OnFull
	CreditTick     uint8 // 0 = no expiry (pipeline.CreditTickFor)
	LongReserve    uint16
	LongMaxHolds   uint8
}

// Entry returns the server_pool entry of region.
func (p Pool) Entry(region uint8) Entry {
	return Entry{Table: pipeline.TableServerPool, Match: []Match{Exact(pipeline.FieldRegion, uint64(region))},
		Action: pipeline.ActionSetPool, Params: []Param{
			{"base", uint64(p.Base)}, {"size_mask", uint64(p.SizeMask)}, {"policy", uint64(p.Policy)},
			{"bound", uint64(p.Bound)}, {"max_holds", uint64(p.MaxHolds)}, {"on_full", uint64(p.OnFull)},
			{"credit_tick", uint64(p.CreditTick)}, {"long_reserve", uint64(p.LongReserve)},
			{"long_max_holds", uint64(p.LongMaxHolds)}}}
}

// ExecCost sets an exec class's expected cost and long flag.
func ExecCost(class uint8, costUs uint32, long bool) Entry {
	l := uint64(0)
	if long {
		l = 1
	}
	return Entry{Table: pipeline.TableExecClassCost, Match: []Match{Exact(pipeline.FieldExecClass, uint64(class))},
		Action: pipeline.ActionSetExecCost, Params: []Param{{"cost_us", uint64(costUs)}, {"is_long", l}}}
}

// Endpoint declares where bound requests for server id go (server_endpoint).
func Endpoint(id uint16, h Host) Entry {
	return Entry{Table: pipeline.TableServerEndpoint, Match: []Match{Exact(pipeline.FieldServer, uint64(id))},
		Action: pipeline.ActionSetServerEndpoint, Params: []Param{{"port", uint64(h.Port)}, {"dmac", h.MAC}, {"addr", uint64(h.IP)}}}
}

// ReplySource declares the address server id's replies must come from
// (reply_source).
func ReplySource(id uint16, h Host) Entry {
	return Entry{Table: pipeline.TableReplySource, Match: []Match{Exact(pipeline.FieldServer, uint64(id))},
		Action: pipeline.ActionSetReplySource, Params: []Param{{"addr", uint64(h.IP)}}}
}

// Serves is the pair of entries a pool member needs: its endpoint and its
// reply source.
func Serves(id uint16, h Host) []Entry { return []Entry{Endpoint(id, h), ReplySource(id, h)} }

// L3Route forwards an IPv4 destination prefix to port.
func L3Route(prefix uint32, plen int, port uint32) Entry {
	return Entry{Table: pipeline.TableL3Forward, Match: []Match{LPM(pipeline.FieldDstAddr, uint64(prefix), plen)},
		Action: pipeline.ActionForward, Params: []Param{{"port", uint64(port)}}}
}

// L2Route forwards a destination MAC to port.
func L2Route(mac uint64, port uint32) Entry {
	return Entry{Table: pipeline.TableL2Forward, Match: []Match{Exact(pipeline.FieldDstMAC, mac)},
		Action: pipeline.ActionForward, Params: []Param{{"port", uint64(port)}}}
}

// Host is an endpoint of the test topology: MAC, IPv4 address and the switch
// port it hangs off.
type Host struct {
	MAC  uint64
	IP   uint32
	Port uint32
}

// HW returns h's MAC address.
func (h Host) HW() net.HardwareAddr { return MAC(h.MAC) }

// Addr returns h's IPv4 address.
func (h Host) Addr() net.IP { return IP(h.IP) }

// MAC converts a 48-bit number to a hardware address.
func MAC(v uint64) net.HardwareAddr {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return net.HardwareAddr(b[2:8])
}

// IP converts a 32-bit number to an IPv4 address.
func IP(v uint32) net.IP {
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
}

// IPv4 builds an address from its four bytes.
func IPv4(a, b, c, d byte) uint32 { return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(d) }

// The test topology: clients at sites 1 and 2, servers (Server), a remote
// regions' gateway, and the service VIP the clients send requests to.
const (
	// SwitchMAC is the destination MAC clients use for the service VIP.
	SwitchMAC = 0x0200000000fe
	// VIP is the service address clients send requests to (10.255.0.1).
	VIP = 0x0aff0001
)

// Client returns the client host of site 1 (10.0.1.1, port 1) or 2
// (10.0.2.1, port 2); other sites n give 10.0.n.1 on port n.
func Client(site uint8) Host {
	return Host{MAC: 0x020000000001 | uint64(site)<<8, IP: IPv4(10, 0, site, 1), Port: uint32(site)}
}

// Gateway is the remote regions' gateway (10.200.0.1, port 20).
func Gateway() Host { return Host{MAC: 0x020000002001, IP: IPv4(10, 200, 0, 1), Port: 20} }

// ClientPort is the UDP source port of every test client.
const ClientPort = 40000

// Server returns server id's host: 10.1.<id/256>.<id%256>, port 100+id%400.
func Server(id uint16) Host {
	return Host{MAC: 0x020000100000 | uint64(id), IP: IPv4(10, 1, byte(id>>8), byte(id)), Port: 100 + uint32(id)%400}
}

// Request returns a request frame from client to the VIP.
func Request(client Host, id uint32, slaMs uint16, class uint8) wire.Frame {
	return wire.Frame{SrcMAC: client.HW(), DstMAC: MAC(SwitchMAC), SrcIP: client.Addr(), DstIP: IP(VIP),
		SrcPort: ClientPort, DstPort: wire.UDPPort, Header: wire.NewRequest(id, slaMs, class), Payload: []byte("req")}
}

// Reply returns server s's reply to a request as it left the switch toward s.
func Reply(req wire.Frame, s Host, server uint16) wire.Frame {
	return wire.Frame{SrcMAC: s.HW(), DstMAC: req.SrcMAC, SrcIP: s.Addr(), DstIP: req.SrcIP,
		SrcPort: wire.UDPPort, DstPort: req.SrcPort, Header: req.Header.Reply(server), Payload: []byte("resp")}
}

// Bytes builds f (valid IPv4 and UDP checksums).
func Bytes(f wire.Frame) []byte {
	b, err := f.Build()
	if err != nil {
		panic(fmt.Sprintf("packetcases: build frame: %v", err)) // static test data: a bug here is a programming error
	}
	return b
}

// Rewritten returns f as the switch emits a rewritten request or nack: built
// with a fresh IPv4 checksum and the UDP checksum set to 0.
func Rewritten(f wire.Frame) []byte {
	b := Bytes(f)
	b[14+20+6], b[14+20+7] = 0, 0
	return b
}

// Bound returns the frame of request req as the switch emits it after
// binding it to server id (host s) with the given switch-set header fields.
func Bound(req wire.Frame, s Host, id uint16, site uint16, region uint8, flags wire.Flags, holds uint8) []byte {
	out := req
	out.DstMAC, out.DstIP = s.HW(), s.Addr()
	out.Header.Server, out.Header.Site, out.Header.Region = id, site, region
	out.Header.Flags, out.Header.HoldCount = flags, holds
	return Rewritten(out)
}

// Nack returns request req turned into a nack after holds holds.
func Nack(req wire.Frame, site uint16, region uint8, flags wire.Flags, holds uint8) []byte {
	out := req
	out.SrcMAC, out.DstMAC = req.DstMAC, req.SrcMAC
	out.SrcIP, out.DstIP = req.DstIP, req.SrcIP
	out.SrcPort, out.DstPort = req.DstPort, req.SrcPort
	out.Header.Type = wire.MsgNack
	out.Header.Site, out.Header.Region, out.Header.Flags, out.Header.HoldCount = site, region, flags, holds
	return Rewritten(out)
}
