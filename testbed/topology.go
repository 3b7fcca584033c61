package testbed

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// DefaultLatencyScale is the factor applied to site→region P95 latencies
// when they are emulated: 1, the measured latencies themselves (a 2-minute
// run at 50 requests/s per site still sends 12,000 requests). Smaller
// factors make requests shorter but shrink the margins between a region's
// P95 and the SLA by the same factor, while the testbed's own overhead does
// not shrink (mininet/README.md, "Latency scaling").
const DefaultLatencyScale = 1.0

// Defaults of a testbed topology.
const (
	DefaultService   = "10.0.0.100"        // the VIP clients send requests to
	DefaultSwitchMAC = "02:00:00:00:00:fe" // the MAC hosts send their frames to
)

// Topology is the testbed derived from a controller configuration: one
// client host per site and one host per server of every local pool (and
// per remote region's gateway), each on the switch port the configuration
// names, with the latency each server host must add toward each site.
// `mininet/p4ctl_topo.py` builds exactly this; the loopback fabric wires
// the same hosts to UDP sockets.
type Topology struct {
	Service      string       `json:"service"`
	SwitchMAC    string       `json:"switch_mac"`
	LatencyScale float64      `json:"latency_scale"`
	Clients      []ClientHost `json:"clients"`
	Servers      []ServerHost `json:"servers"`
	// ExecClasses are the execution times the servers emulate: every
	// configured exec class's cost × the latency scale, as the mean of an
	// exponential distribution.
	ExecClasses []ExecTime `json:"exec_classes"`
}

// ExecTime is the emulated execution time of one exec class.
type ExecTime struct {
	Class  int     `json:"class"`
	MeanUs float64 `json:"mean_us"`
}

// ClientHost is a site's client host.
type ClientHost struct {
	Name   string `json:"name"`
	Site   string `json:"site"`
	SiteID int    `json:"site_id"`
	Port   int    `json:"port"`   // switch port: the l3_forward route of the site's prefix
	MAC    string `json:"mac"`    // unique per site
	IP     string `json:"ip"`     // first address of the site's first prefix
	Prefix string `json:"prefix"` // the site's first prefix
}

// ServerHost is a server of a local pool, or a remote region's gateway
// (ServerID wire.NoServer).
type ServerHost struct {
	Name        string      `json:"name"`
	Region      string      `json:"region"`
	RegionIndex int         `json:"region_index"`
	ServerID    int         `json:"server_id"`
	Port        int         `json:"port"`
	MAC         string      `json:"mac"`
	IP          string      `json:"ip"`
	Delays      []SiteDelay `json:"delays"`
}

// SiteDelay is the latency a server host adds on its path toward a site:
// the site→region P95 round-trip time × the latency scale (all of it on
// the reply path, so the round trip grows by exactly DelayMs).
type SiteDelay struct {
	Site    string  `json:"site"`
	Prefix  string  `json:"prefix"`
	P95ms   float64 `json:"p95_ms"`
	DelayMs float64 `json:"delay_ms"`
}

// Plan derives the testbed topology from a validated configuration. Every
// site needs an l3 route (cfg.Routes.L3) covering its first prefix: that
// route's port is where its client host attaches.
func Plan(cfg *config.Config, scale float64) (*Topology, error) {
	if !(scale >= 0 && scale <= 10) {
		return nil, fmt.Errorf("plan: latency scale %v: want 0..10", scale)
	}
	t := &Topology{Service: DefaultService, SwitchMAC: DefaultSwitchMAC, LatencyScale: scale}
	for _, e := range cfg.ExecClasses {
		t.ExecClasses = append(t.ExecClasses, ExecTime{Class: e.ID, MeanUs: math.Round(float64(e.CostUS)*scale*1000) / 1000})
	}
	used := map[int]string{}
	claim := func(port int, who string) error {
		if prev, ok := used[port]; ok {
			return fmt.Errorf("plan: port %d is used by %s and %s", port, prev, who)
		}
		used[port] = who
		return nil
	}
	for _, s := range cfg.Sites {
		if len(s.Prefixes) == 0 {
			return nil, fmt.Errorf("plan: site %s has no prefix", s.Name)
		}
		p := s.Prefixes[0].Prefix
		port, ok := routePort(cfg, p.Addr())
		if !ok {
			return nil, fmt.Errorf("plan: site %s: no l3 route forwards %v to a port (routes.l3)", s.Name, p)
		}
		ip := p.Addr().Next()
		if !p.Contains(ip) {
			return nil, fmt.Errorf("plan: site %s: prefix %v has no host address", s.Name, p)
		}
		name := "c" + s.Name
		if err := claim(port, name); err != nil {
			return nil, err
		}
		t.Clients = append(t.Clients, ClientHost{Name: name, Site: s.Name, SiteID: s.ID, Port: port,
			MAC: fmt.Sprintf("02:00:0c:%02x:%02x:01", s.ID>>8, s.ID&0xff), IP: ip.String(), Prefix: p.String()})
	}
	for _, r := range cfg.Regions {
		idx, ok := cfg.RegionIndex(r)
		if !ok {
			return nil, fmt.Errorf("plan: unknown region %s", r.ID)
		}
		delays, err := siteDelays(cfg, r.ID, scale)
		if err != nil {
			return nil, err
		}
		add := func(name string, id, port int, mac config.MAC, ip config.IPv4) error {
			if err := claim(port, name); err != nil {
				return err
			}
			t.Servers = append(t.Servers, ServerHost{Name: name, Region: r.ID, RegionIndex: int(idx), ServerID: id,
				Port: port, MAC: mac.String(), IP: ip.Addr.String(), Delays: delays})
			return nil
		}
		if l := r.NextHop.Local; l != nil {
			for _, s := range l.Servers {
				if err := add(fmt.Sprintf("s%d", s.ID), s.ID, s.Port, s.MAC, s.IP); err != nil {
					return nil, err
				}
			}
		} else if rm := r.NextHop.Remote; rm != nil {
			if err := add(fmt.Sprintf("g%d", idx), wire.NoServer, rm.Port, rm.MAC, rm.IP); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// routePort is the port of the longest l3 route (not a drop) containing a.
func routePort(cfg *config.Config, a netip.Addr) (int, bool) {
	best, port := -1, 0
	for _, r := range cfg.Routes.L3 {
		if r.Drop || !r.Prefix.Contains(a) || r.Prefix.Bits() <= best {
			continue
		}
		best, port = r.Prefix.Bits(), r.Port
	}
	return port, best >= 0
}

func siteDelays(cfg *config.Config, region string, scale float64) ([]SiteDelay, error) {
	var out []SiteDelay
	var bits []int
	for _, s := range cfg.Sites {
		l, ok := cfg.SiteLatency(s)[region]
		if !ok {
			continue // no latency known: the region is never feasible for the site
		}
		d := math.Round(l.P95*scale*1000) / 1000
		for _, p := range s.Prefixes {
			out = append(out, SiteDelay{Site: s.Name, Prefix: p.String(), P95ms: l.P95, DelayMs: d})
			bits = append(bits, p.Bits())
		}
	}
	// Longest prefix first: hosts apply the first matching delay.
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bits[b] - bits[a] })
	sorted := make([]SiteDelay, len(out))
	for i, j := range order {
		sorted[i] = out[j]
	}
	return sorted, nil
}

// WriteJSON writes the topology as indented JSON (what the Mininet script
// reads).
func (t *Topology) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
