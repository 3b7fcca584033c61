package xdpbench

import (
	"fmt"

	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// The plan's shape: 12 regions (8 local, each a pool of 128 servers: 1 024
// servers; 4 remote, behind a gateway), 1 000 client sites, each with four
// SLA intervals (4 000 sla_feasibility entries: nearly the table's 4 096),
// one shared carbon ranking.
const (
	Regions      = 12
	LocalRegions = 8
	PoolSize     = 128
	Sites        = 1000
	Servers      = LocalRegions * PoolSize
	// ClientPort and ServerPort are the switch ports of the two veth pairs.
	ClientPort = 1
	ServerPort = 2
)

// siteAddr is site s's client address: 11.(s>>8).(s&255).1.
func siteAddr(s int) uint32 { return pc.IPv4(11, byte(s>>8), byte(s), 1) }

// Plan returns the entries of the benchmark's plan. closed: pools are jbsq
// with bound 4 (the servers answer, replies release); otherwise random
// pools without a bound (every request is one claim and leaves).
func Plan(closed bool) []pc.Entry {
	var es []pc.Entry
	for s := 1; s <= Sites; s++ {
		es = append(es, pc.ClientSite(siteAddr(s)&^0xff, 24, uint16(s)))
		// Four intervals: nothing below t1, then 3, 7 and all 12 regions.
		t1, t2, t3 := uint16(20+s%30), uint16(80+s%50), uint16(200+s%100)
		near := uint8(s % Regions)
		set := func(k int) uint32 {
			var m uint32
			for j := 0; j < k; j++ {
				m |= 1 << ((s + j*5) % Regions)
			}
			return m | 1<<near
		}
		es = append(es, pc.Feasibility(uint16(s), 0, t1-1, 0, near), pc.Feasibility(uint16(s), t1, t2-1, set(3), near),
			pc.Feasibility(uint16(s), t2, t3-1, set(7), near), pc.Feasibility(uint16(s), t3, 0xFFFF, set(Regions), near))
	}
	for k := 0; k < Regions; k++ {
		es = append(es, pc.CarbonRank(1, uint8((k*7+3)%Regions), k)) // a fixed permutation as the ranking
	}
	es = append(es, pc.ActiveEpoch(1))
	gw := pc.Host{MAC: 0x020000002001, IP: pc.IPv4(10, 200, 0, 1), Port: ServerPort}
	for r := 0; r < Regions; r++ {
		if r >= LocalRegions {
			es = append(es, pc.RemoteRegion(uint8(r), gw))
			continue
		}
		es = append(es, pc.LocalRegion(uint8(r), 0))
		pool := pc.Pool{Base: uint16(r * PoolSize), SizeMask: PoolSize - 1, Policy: pipeline.PolicyRandom}
		if closed {
			pool = pc.Pool{Base: uint16(r * PoolSize), SizeMask: PoolSize - 1, Policy: pipeline.PolicyJBSQ, Bound: 4, MaxHolds: 2, OnFull: pipeline.OnFullForce}
		}
		es = append(es, pool.Entry(uint8(r)))
	}
	for id := 0; id < Servers; id++ {
		h := pc.Server(uint16(id))
		h.Port = ServerPort
		es = append(es, pc.Serves(uint16(id), h)...)
	}
	es = append(es, pc.ExecCost(0, 100, false), pc.L3Route(pc.IPv4(11, 0, 0, 0), 14, ClientPort))
	return es
}

// Template is the generator's request frame (site 1; the generator varies
// the client, the request id, the UDP source port and the SLA).
func Template() ([]byte, Traffic, error) {
	f := pc.Request(pc.Client(1), 0, 100, 0)
	f.SrcIP = pc.IP(siteAddr(1))
	f.Payload = make([]byte, 8) // the generator's timestamp
	b, err := f.Build()
	if err != nil {
		return nil, Traffic{}, fmt.Errorf("build the generator's frame: %w", err)
	}
	if err := CheckFrame(b); err != nil {
		return nil, Traffic{}, err
	}
	if b[14+20+8]>>4 != wire.Version {
		return nil, Traffic{}, fmt.Errorf("template: not a p4ctl request")
	}
	return b, Traffic{Frame: b, Base: siteAddr(1), Sources: Sites, Stride: 256, SLAs: 400}, nil
}
