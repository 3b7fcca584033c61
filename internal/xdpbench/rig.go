// Package xdpbench measures p4ctl's data planes on the same veths in one
// run: the XDP program (`p4ctl switch --datapath xdp`), a bare XDP
// redirect (the ceiling: what the kernel's XDP path costs with no
// decision), the embedded target's Go model and BMv2, each on a
// namespace's two veth pairs (clients behind port 1, servers behind port
// 2), loaded with the same plan (12 regions, 1 000 sites, 1 024 servers)
// and the same traffic from an in-kernel generator (an XDP program run
// with BPF_PROG_RUN in live-frame mode, as pktgen would), counted and
// timed by a sink program. It is a test rig (root, Linux), used by its
// benchmark (make bench) and its command (cmd/xdpbench).
package xdpbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/internal/xdpbench/rigobj"
	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Rig is the generator, the sink and the servers of one namespace: the
// generator sends out of h1 (into switch port 1), the sink counts what
// leaves the switch on h1 (replies) and h2 (requests, when the servers do
// not answer), the servers on h2 answer every request (closed loop).
type Rig struct {
	NetNS string
	objs  rigobj.RigObjects
	links []link.Link
	h1    int // ifindex of h1 in NetNS
}

// xdpMD is struct xdp_md, BPF_PROG_RUN's context.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// NewRig loads the rig's programs and attaches, in namespace ns, the sink
// (or, when answer, the servers) to h2 and the sink to h1.
func NewRig(ns string, answer bool) (*Rig, error) {
	r := &Rig{NetNS: ns}
	if err := rigobj.LoadRigObjects(&r.objs, nil); err != nil {
		return nil, fmt.Errorf("load the rig's programs: %w", err)
	}
	err := afpacket.InNetNS(ns, func() error {
		h1, err := netlink.LinkByName("h1")
		if err != nil {
			return err
		}
		h2, err := netlink.LinkByName("h2")
		if err != nil {
			return err
		}
		r.h1 = h1.Attrs().Index
		at := r.objs.Sink
		if answer {
			at = r.objs.Server
		}
		for _, a := range []struct {
			p   *ebpf.Program
			idx int
		}{{r.objs.Sink, h1.Attrs().Index}, {at, h2.Attrs().Index}} {
			l, err := link.AttachXDP(link.XDPOptions{Program: a.p, Interface: a.idx, Flags: link.XDPDriverMode})
			if err != nil {
				return fmt.Errorf("attach the rig to ifindex %d: %w", a.idx, err)
			}
			r.links = append(r.links, l)
		}
		return nil
	})
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// AttachBare attaches the bare redirect in the rig's namespace, sw1 → sw2
// and sw2 → sw1 (the closed loop's replies): the ceiling target.
func (r *Rig) AttachBare() error {
	return afpacket.InNetNS(r.NetNS, func() error {
		sw1, err := netlink.LinkByName("sw1")
		if err != nil {
			return err
		}
		sw2, err := netlink.LinkByName("sw2")
		if err != nil {
			return err
		}
		type devmapVal struct{ Ifindex, Prog uint32 }
		for _, way := range [][2]netlink.Link{{sw1, sw2}, {sw2, sw1}} {
			in, out := uint32(way[0].Attrs().Index), uint32(way[1].Attrs().Index)
			if err := r.objs.BareOut.Put(in, devmapVal{Ifindex: out}); err != nil {
				return fmt.Errorf("bare redirect %s → %s: %w", way[0].Attrs().Name, way[1].Attrs().Name, err)
			}
			l, err := link.AttachXDP(link.XDPOptions{Program: r.objs.Bare, Interface: int(in), Flags: link.XDPDriverMode})
			if err != nil {
				return fmt.Errorf("attach the bare redirect to %s: %w", way[0].Attrs().Name, err)
			}
			r.links = append(r.links, l)
		}
		return nil
	})
}

// AttachPass attaches an XDP_PASS program to the switch's port ifname in
// the rig's namespace: a veth delivers what its peer sends by XDP (the
// servers' XDP_TX) only when it runs XDP itself, so a switch that reads its
// ports with AF_PACKET needs it on the servers' side for the closed loop.
func (r *Rig) AttachPass(ifname string) error {
	return afpacket.InNetNS(r.NetNS, func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		xl, err := link.AttachXDP(link.XDPOptions{Program: r.objs.Pass, Interface: l.Attrs().Index, Flags: link.XDPDriverMode})
		if err != nil {
			return fmt.Errorf("attach XDP_PASS to %s: %w", ifname, err)
		}
		r.links = append(r.links, xl)
		return nil
	})
}

// Close detaches and frees the rig's programs.
func (r *Rig) Close() error {
	var errs []error
	for _, l := range r.links {
		errs = append(errs, l.Close())
	}
	errs = append(errs, r.objs.Close())
	return errors.Join(errs...)
}

// Traffic is what the generator sends.
type Traffic struct {
	Frame   []byte // a request frame (wire.Frame built), the generator's template
	Base    uint32 // first client address
	Sources uint32 // clients: Base + i*Stride, i < Sources
	Stride  uint32
	SLAs    uint32 // sla_ms over 1..SLAs
}

// SetTraffic configures the generator.
func (r *Rig) SetTraffic(t Traffic) error {
	c := rigobj.RigGenConfig{Base: t.Base, Sources: t.Sources, Stride: t.Stride, Slas: t.SLAs}
	if len(t.Frame) < len(c.Head)*8 {
		return fmt.Errorf("the generator's frame is %d bytes, want at least %d", len(t.Frame), len(c.Head)*8)
	}
	for i := range c.Head {
		c.Head[i] = binary.NativeEndian.Uint64(t.Frame[8*i:])
	}
	return r.objs.GenConf.Put(uint32(0), c)
}

// Counts are the sink's totals: frames, bytes, and the latency histogram
// (log-linear: LatencyLinear buckets of LatencyStep, then eight a doubling;
// see BucketEdge).
type Counts struct {
	Frames, Bytes uint64
	// Replies are the frames that were p4ctl replies (the closed loop's
	// measure: a request answered by its server and routed back).
	Replies uint64
	Latency []uint64
}

// latFirst is the sink's first latency cell (rig.c LAT_FIRST).
const latFirst = 3

// LatencyStep is the width of the sink's linear histogram buckets (rig.c
// LAT_STEP), and LatencyLinear their number (rig.c LAT_LINEAR): up to 32 µs
// a latency is known to 250 ns, beyond to an eighth of a doubling (≤ 12.5 %).
const (
	LatencyStep   = 250 * time.Nanosecond
	LatencyLinear = 128
)

// BucketEdge is the upper edge of latency bucket b (rig.c lat_bucket).
func BucketEdge(b int) time.Duration {
	if b < LatencyLinear {
		return time.Duration(b+1) * LatencyStep
	}
	octave, sub := (b-LatencyLinear)/8, (b-LatencyLinear)%8
	msb := octave + 7
	return time.Duration(uint64(8+sub+1)<<(msb-3)) * LatencyStep
}

// Frames reads how many frames the sink has counted, summed over the CPUs
// (one map read: Counts reads every bucket).
func (r *Rig) Frames() (uint64, error) {
	var vals []uint64
	if err := r.objs.SinkCounts.Lookup(uint32(0), &vals); err != nil {
		return 0, fmt.Errorf("read the sink: %w", err)
	}
	var sum uint64
	for _, v := range vals {
		sum += v
	}
	return sum, nil
}

// Counts reads the sink's totals, summed over the CPUs.
func (r *Rig) Counts() (Counts, error) {
	n := int(r.objs.SinkCounts.MaxEntries())
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return Counts{}, err
	}
	c := Counts{Latency: make([]uint64, n-latFirst)}
	vals := make([]uint64, ncpu)
	for i := 0; i < n; i++ {
		if err := r.objs.SinkCounts.Lookup(uint32(i), &vals); err != nil {
			return Counts{}, fmt.Errorf("read the sink: %w", err)
		}
		var sum uint64
		for _, v := range vals {
			sum += v
		}
		switch i {
		case 0:
			c.Frames = sum
		case 1:
			c.Bytes = sum
		case 2:
			c.Replies = sum
		default:
			c.Latency[i-latFirst] = sum
		}
	}
	return c, nil
}

// Sub is c − o.
func (c Counts) Sub(o Counts) Counts {
	out := Counts{Frames: c.Frames - o.Frames, Bytes: c.Bytes - o.Bytes, Replies: c.Replies - o.Replies, Latency: make([]uint64, len(c.Latency))}
	for i := range c.Latency {
		out.Latency[i] = c.Latency[i] - o.Latency[i]
	}
	return out
}

// Quantile is the q-quantile of the latency histogram (the upper edge of
// its bucket), 0 when empty.
func (c Counts) Quantile(q float64) time.Duration {
	var total uint64
	for _, v := range c.Latency {
		total += v
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var acc uint64
	for i, v := range c.Latency {
		acc += v
		if acc > want || acc == total {
			return BucketEdge(i)
		}
	}
	return BucketEdge(len(c.Latency) - 1)
}

// Generate runs the generator on CPU cpu for d (at least one batch):
// batches of batch frames out of h1, each a copy of the template with its
// fields varied (Traffic). It returns how many frames it sent.
func (r *Rig) Generate(frame []byte, cpu int, d time.Duration, batch uint32) (sent uint64, err error) {
	err = afpacket.InNetNS(r.NetNS, func() error {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin the generator to CPU %d: %w", cpu, err)
		}
		deadline := time.Now().Add(d)
		for first := true; first || time.Now().Before(deadline); first = false {
			_, err := r.objs.Gen.Run(&ebpf.RunOptions{Data: frame, Repeat: batch, Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES,
				Context: xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(r.h1)}})
			if err != nil {
				return fmt.Errorf("generate: %w", err)
			}
			sent += uint64(batch)
		}
		return nil
	})
	return sent, err
}

// minFrame is the generator's shortest template: the headers, the p4ctl
// header and an 8-byte timestamp.
const minFrame = 14 + 20 + 8 + wire.HeaderLen + 8

// CheckFrame reports whether frame can be the generator's template.
func CheckFrame(frame []byte) error {
	if len(frame) < minFrame {
		return fmt.Errorf("a %d-byte template; the generator needs %d (headers and an 8-byte timestamp)", len(frame), minFrame)
	}
	return nil
}

// cpuTime is the CPU time all CPUs spent busy since boot (/proc/stat: user,
// nice, system, irq, softirq, steal).
func cpuTime() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	var user, nice, system, idle, iowait, irq, softirq, steal uint64
	if _, err := fmt.Sscanf(string(b), "cpu %d %d %d %d %d %d %d %d", &user, &nice, &system, &idle, &iowait, &irq, &softirq, &steal); err != nil {
		return 0, fmt.Errorf("parse /proc/stat: %w", err)
	}
	ticks := user + nice + system + irq + softirq + steal
	return time.Duration(ticks) * time.Second / 100, nil // USER_HZ = 100
}
