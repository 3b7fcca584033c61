//go:build linux

package bmv2tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// mumbai is the README's configuration.
const mumbai = "../examples/mumbai.yaml"

// regionPorts maps each egress port of a configuration to the region
// behind it (a local pool's servers, a remote region's gateway), and lists
// every port a switch of it needs (the clients' too).
func regionPorts(cfg *config.Config) (byPort map[int]regions.Index, ports []int, err error) {
	byPort = map[int]regions.Index{}
	seen := map[int]bool{}
	add := func(p int) {
		if !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	for _, r := range cfg.Regions {
		reg, ok := regions.LookupRegion(r.ID)
		if !ok {
			return nil, nil, fmt.Errorf("region %s is not in the catalog", r.ID)
		}
		idx := reg.Index
		switch {
		case r.NextHop.Local != nil:
			for _, s := range r.NextHop.Local.Servers {
				byPort[s.Port] = idx
				add(s.Port)
			}
		case r.NextHop.Remote != nil:
			byPort[r.NextHop.Remote.Port] = idx
			add(r.NextHop.Remote.Port)
		}
	}
	for _, rt := range cfg.Routes.L3 {
		if !rt.Drop {
			add(rt.Port)
		}
	}
	sort.Ints(ports)
	return byPort, ports, nil
}

// `p4ctl switch --datapath xdp` driven by `p4ctl run` over a 24-hour
// replay of the README's configuration: after every hour the daemon
// planned (pushed, or found unchanged), `p4ctl diff` finds no drift, and a
// request of every site and SLA class, sent into the switch's veths,
// leaves on a port of the region policy C gives for that hour (the
// controller's planner, pkg/regions).
func TestRunReplayXDP(t *testing.T) {
	bmv2harness.RequireNetNS(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("ethtool is needed to turn GRO on at the XDP ports' veth peers (apt-get install ethtool)")
	}
	if testing.Short() {
		t.Skip("a 24-hour replay takes over a minute (-short)")
	}
	cfg, err := config.Load(mumbai)
	if err != nil {
		t.Fatal(err)
	}
	byPort, ports, err := regionPorts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bin := p4ctlBinary(t)
	sw := bmv2harness.StartT(t, bmv2harness.Config{P4ctl: bin, Extra: []string{"--datapath", "xdp"}, PortIDs: ports, HostGRO: true})
	var pp []*packetPort
	byNum := map[uint32]*packetPort{}
	for i, port := range ports {
		p, err := openPacketPort(sw.NetNS, sw.Hosts[i], uint32(port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.close)
		pp = append(pp, p)
		byNum[uint32(port)] = p
	}
	src, err := cfg.OpenCarbon()
	if err != nil {
		t.Fatal(err)
	}
	planner, err := controller.NewPlanner(cfg, &controller.CarbonFeed{Source: src, MapYears: cfg.Carbon.Source == config.SourceOffline}, nil)
	if err != nil {
		t.Fatal(err)
	}

	const hours = 24
	start := time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := sw.Command(ctx, bin, "run", "-c", mumbai, "--grpc-addr", sw.Addr, "--replay", start.Format("2006-01-02T15"),
		"--speed", "720x", "--hours", fmt.Sprint(hours), "--grace", "1ms", "--log-format", "json",
		"--p4info", buildDir()+"/p4ctl.p4info.txtpb")
	logs, err := run.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan time.Time, hours) // the hours the daemon planned
	var runLog strings.Builder
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			runLog.Write(sc.Bytes())
			runLog.WriteByte('\n')
			var l struct {
				Msg, Hour string
			}
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "plan" {
				if h, err := time.Parse(time.RFC3339, l.Hour); err == nil {
					pushed <- h
				}
			}
		}
		close(pushed)
	}()

	id := uint32(0)
	checked := 0
	for h := range pushed {
		plan := planner.Plan(h)
		// The daemon logs the plan, then writes it (or finds nothing to
		// write): diff is clean once it is done, well before the next hour
		// (5 s of wall time each).
		diff := func() ([]byte, error) {
			return sw.Command(ctx, bin, "diff", "-c", mumbai, "--grpc-addr", sw.Addr, "--at", h.Format("2006-01-02T15")).CombinedOutput()
		}
		var out []byte
		for deadline := time.Now().Add(3 * time.Second); ; {
			if out, err = diff(); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("hour %s: diff never clean: %v\n%s", h.Format(time.RFC3339), err, out)
				break
			}
			time.Sleep(100 * time.Millisecond) // polling the daemon's progress
		}
		for si, site := range cfg.Sites {
			client := pc.Host{MAC: 0x02000000aa00 | uint64(si), IP: clientAddr(t, site), Port: clientPort(t, cfg, clientAddr(t, site))}
			for _, cls := range cfg.SLAClasses {
				id++
				want := plan.Decide(si, float64(cls.MS)).Region
				frame := pc.Bytes(pc.Request(client, id, uint16(cls.MS), 0))
				in := byNum[client.Port]
				if err := in.send(frame); err != nil {
					t.Fatal(err)
				}
				got, err := readAll(pp, time.Second, 20*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				region, port, ok := leftOn(got, id, byPort)
				if ok && region != want {
					// Still this hour's state? (A very slow machine may let the
					// daemon move on while the requests are checked.)
					if out, err := diff(); err != nil {
						t.Errorf("hour %s: the switch left the hour while it was checked: %s", h.Format("15h"), out)
					}
				}
				switch {
				case !ok:
					t.Errorf("hour %s, site %s, SLA %d ms: request %d did not leave the switch (%d frames out)", h.Format("15h"), site.Name, cls.MS, id, len(got))
				case region != want:
					t.Errorf("hour %s, site %s, SLA %d ms: left on port %d (region %d), policy C gives region %d",
						h.Format("15h"), site.Name, cls.MS, port, region, want)
				}
			}
		}
		checked++
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("p4ctl run: %v\n%s", err, runLog.String())
	}
	if checked != hours {
		t.Fatalf("checked %d hours, want %d\n%s", checked, hours, runLog.String())
	}
	if t.Failed() {
		swLog, _ := os.ReadFile(sw.Log)
		t.Logf("p4ctl run's log:\n%s\nthe switch's log:\n%s", runLog.String(), swLog)
	}
	t.Logf("%d hours checked, %d requests", checked, id)
}

// clientAddr is an address of site's first prefix.
func clientAddr(t *testing.T, s config.Site) uint32 {
	t.Helper()
	if len(s.Prefixes) == 0 {
		t.Fatalf("site %s has no prefix", s.Name)
	}
	a := s.Prefixes[0].Addr().As4()
	return (uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])) + 5
}

// clientPort is the port the configuration routes addr to.
func clientPort(t *testing.T, cfg *config.Config, addr uint32) uint32 {
	t.Helper()
	ip := netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)})
	best, port := -1, uint32(0)
	for _, rt := range cfg.Routes.L3 {
		if rt.Drop || !rt.Prefix.Contains(ip) {
			continue
		}
		if rt.Prefix.Bits() > best {
			best, port = rt.Prefix.Bits(), uint32(rt.Port)
		}
	}
	if best < 0 {
		t.Fatalf("no route to client %s", ip)
	}
	return port
}

// leftOn finds request id among the frames out and returns the region of
// its port.
func leftOn(got []captured, id uint32, byPort map[int]regions.Index) (regions.Index, uint32, bool) {
	for _, c := range got {
		f, ok, err := wire.ParseFrame(c.frame)
		if err != nil || !ok || f.Header.Type != wire.MsgRequest || f.Header.RequestID != id {
			continue
		}
		r, ok := byPort[int(c.port)]
		return r, c.port, ok
	}
	return 0, 0, false
}
