package xdp

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"github.com/p4ctl/p4ctl/pkg/dataplane/ports"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
)

// AttachOptions configure Attach.
type AttachOptions struct {
	// Generic attaches in generic (skb) mode everywhere, for interfaces
	// whose driver has no native XDP. By default Attach tries native mode
	// and falls back to generic mode, with a warning, per interface.
	Generic bool
	// Recirculation names the veth pair Attach creates as the
	// recirculation port: NAME0 (where held requests are sent) and NAME1
	// (where the program reads them back). Default "p4rc". A pair of that
	// name left by a switch that was killed is replaced.
	Recirculation string
}

// DefaultRecirculation is the recirculation veth pair's default name.
const DefaultRecirculation = "p4rc"

// attachment is what Attach set up, undone by detach.
type attachment struct {
	nl     *netlink.Handle // a netlink socket in the namespace Attach ran in
	links  []link.Link
	recirc [2]string
	specs  []ports.Spec
	modes  []string
}

// Attach attaches the program to each port's interface and creates the
// recirculation port, in the network namespace of the calling thread. The
// program stays attached until Close, or until the process ends (the
// attachments are BPF links, which the kernel removes with the process,
// even on SIGKILL). Attach may be called once.
func (d *Datapath) Attach(specs []ports.Spec, opts AttachOptions) (err error) {
	if d.ports != nil {
		return errors.New("the XDP program is already attached")
	}
	if opts.Recirculation == "" {
		opts.Recirculation = DefaultRecirculation
	}
	nl, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("open a netlink socket: %w", err)
	}
	a := &attachment{nl: nl, recirc: [2]string{opts.Recirculation + "0", opts.Recirculation + "1"}, specs: specs}
	defer func() {
		if err != nil {
			a.detach(d)
		}
	}()
	if err := a.makeRecirculation(d); err != nil {
		return err
	}
	for _, p := range specs {
		l, err := nl.LinkByName(p.Interface)
		if err != nil {
			return fmt.Errorf("port %d: interface %s: %w", p.Port, p.Interface, err)
		}
		ifindex := l.Attrs().Index
		if ifindex >= int(d.objs.PortOfIfindex.MaxEntries()) {
			return fmt.Errorf("port %d: interface %s has index %d; the XDP program maps indexes below %d", p.Port, p.Interface, ifindex, d.objs.PortOfIfindex.MaxEntries())
		}
		if err := d.objs.PortOfIfindex.Put(uint32(ifindex), p.Port+1); err != nil {
			return fmt.Errorf("port %d: map interface %s: %w", p.Port, p.Interface, err)
		}
		if err := d.objs.TxPorts.Put(p.Port, bpfobj.P4ctlBpfDevmapVal{Ifindex: uint32(ifindex)}); err != nil {
			return fmt.Errorf("port %d: interface %s as an egress port: %w", p.Port, p.Interface, err)
		}
		mode, err := a.attach(d, ifindex, p.Interface, opts.Generic)
		if err != nil {
			return fmt.Errorf("port %d: %w", p.Port, err)
		}
		a.modes = append(a.modes, mode)
	}
	d.ports = a
	return nil
}

// attach attaches p4ctl_port to ifindex: native mode, else (or when
// generic) generic mode with a warning.
func (a *attachment) attach(d *Datapath, ifindex int, name string, generic bool) (string, error) {
	if !generic {
		l, err := link.AttachXDP(link.XDPOptions{Program: d.objs.P4ctlPort, Interface: ifindex, Flags: link.XDPDriverMode})
		if err == nil {
			a.links = append(a.links, l)
			return "native", nil
		}
		d.log.Warn("interface has no native XDP: attaching in generic mode, slower (an skb per frame)",
			"interface", name, "err", err)
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: d.objs.P4ctlPort, Interface: ifindex, Flags: link.XDPGenericMode})
	if err != nil {
		return "", fmt.Errorf("attach the XDP program to %s: %w", name, err)
	}
	a.links = append(a.links, l)
	return "generic", nil
}

// makeRecirculation creates the recirculation veth pair and attaches the
// program to its receiving end.
func (a *attachment) makeRecirculation(d *Datapath) error {
	for _, n := range a.recirc {
		if l, err := a.nl.LinkByName(n); err == nil {
			if err := a.nl.LinkDel(l); err != nil {
				return fmt.Errorf("remove the stale recirculation interface %s: %w", n, err)
			}
		}
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.recirc[0]}, PeerName: a.recirc[1]}
	if err := a.nl.LinkAdd(veth); err != nil {
		return fmt.Errorf("create the recirculation veth pair %s/%s: %w", a.recirc[0], a.recirc[1], err)
	}
	var idx [2]int
	for i, n := range a.recirc {
		l, err := a.nl.LinkByName(n)
		if err == nil {
			err = a.nl.LinkSetUp(l)
		}
		if err != nil {
			return fmt.Errorf("bring the recirculation interface %s up: %w", n, err)
		}
		idx[i] = l.Attrs().Index
	}
	if _, err := a.attach(d, idx[1], a.recirc[1], false); err != nil {
		return fmt.Errorf("recirculation port: %w", err)
	}
	if err := d.objs.RecircPort.Put(uint32(0), bpfobj.P4ctlBpfDevmapVal{Ifindex: uint32(idx[0])}); err != nil {
		return fmt.Errorf("recirculation port %s: %w", a.recirc[0], err)
	}
	return d.setConfig(func(c *bpfobj.P4ctlP4Config) { c.RecircIfindex = uint32(idx[1]) })
}

// detach undoes Attach: the program leaves every interface, the
// recirculation pair is deleted.
func (a *attachment) detach(d *Datapath) error {
	var errs []error
	for _, l := range a.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	a.links = nil
	for _, n := range a.recirc[:1] { // deleting one end deletes the pair
		if l, err := a.nl.LinkByName(n); err == nil {
			if err := a.nl.LinkDel(l); err != nil {
				errs = append(errs, fmt.Errorf("delete the recirculation pair %s: %w", n, err))
			}
		}
	}
	a.nl.Close()
	return errors.Join(errs...)
}

// Ports returns the attached ports and each one's XDP mode (native or
// generic).
func (d *Datapath) Ports() (specs []ports.Spec, modes []string) {
	if d.ports == nil {
		return nil, nil
	}
	return append([]ports.Spec(nil), d.ports.specs...), append([]string(nil), d.ports.modes...)
}

// Close detaches the program from every interface, stops the ring
// readers and frees the program and its maps.
func (d *Datapath) Close() error {
	var err error
	d.closed.Do(func() {
		if d.ports != nil {
			err = d.ports.detach(d)
			d.ports = nil
		}
		d.stop()
		d.wg.Wait()
		err = errors.Join(err, d.objs.Close())
	})
	return err
}
