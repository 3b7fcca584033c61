package xdp

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/pkg/dataplane/ports"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
)

// AttachOptions configure Attach.
type AttachOptions struct {
	// Generic attaches in generic (skb) mode everywhere, for interfaces
	// whose driver has no native XDP. By default Attach tries native mode
	// and falls back to generic mode, with a warning, per interface.
	Generic bool
}

// attachment is what Attach set up, undone by detach.
type attachment struct {
	nl       *netlink.Handle // a netlink socket in the namespace Attach ran in
	links    []link.Link
	recircNS *os.File // the recirculation pair's namespace, held open
	specs    []ports.Spec
	modes    []string
}

// Attach attaches the program to each port's interface, in the network
// namespace of the calling thread, and creates the recirculation port in a
// namespace of its own. The program stays attached until Close, or until
// the process ends: the attachments are BPF links and the recirculation
// namespace is held by nothing else, so the kernel removes them with the
// process, even on SIGKILL. Attach may be called once.
func (d *Datapath) Attach(specs []ports.Spec, opts AttachOptions) (err error) {
	if d.ports != nil {
		return errors.New("the XDP program is already attached")
	}
	nl, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("open a netlink socket: %w", err)
	}
	a := &attachment{nl: nl, specs: specs}
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

// makeRecirculation creates the recirculation port: a veth pair in a
// network namespace of its own, which nothing but this process holds (so
// the kernel removes it, and the pair, when the process ends, even on
// SIGKILL, and two switches never share one), with the program attached to
// its receiving end and its sending end in recirc_port. The program
// redirects across namespaces as within one.
func (a *attachment) makeRecirculation(d *Datapath) error {
	type result struct {
		ns  *os.File
		rc1 int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// A locked thread that leaves for a new namespace and comes back;
		// if it cannot come back it stays locked and dies with the goroutine.
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("open the switch's network namespace: %w", err)}
			return
		}
		defer home.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("create the recirculation namespace: %w", err)}
			return
		}
		ns, rc1, err := a.recirculationPair(d)
		if serr := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); serr != nil {
			if ns != nil {
				ns.Close()
			}
			ch <- result{err: fmt.Errorf("return from the recirculation namespace: %w", serr)}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{ns, rc1, err}
	}()
	r := <-ch
	if r.err != nil {
		return r.err
	}
	a.recircNS = r.ns
	return nil
}

// recirculationPair runs in the recirculation namespace: the veth pair up,
// p4ctl_recirc on rc1, rc0 in recirc_port. It returns the namespace (held
// open) and rc1's index. (Interface indexes are per namespace: rc1's may
// equal a port's, which is why the program's role comes from the entry
// point attached, never from the index.)
func (a *attachment) recirculationPair(d *Datapath) (*os.File, int, error) {
	ns, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return nil, 0, fmt.Errorf("open the recirculation namespace: %w", err)
	}
	fail := func(err error) (*os.File, int, error) {
		ns.Close()
		return nil, 0, err
	}
	nl, err := netlink.NewHandle()
	if err != nil {
		return fail(fmt.Errorf("recirculation namespace: netlink: %w", err))
	}
	defer nl.Close()
	if err := nl.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: recircNames[0]}, PeerName: recircNames[1]}); err != nil {
		return fail(fmt.Errorf("create the recirculation veth pair: %w", err))
	}
	var idx [2]int
	for i, n := range recircNames {
		l, err := nl.LinkByName(n)
		if err == nil {
			err = nl.LinkSetUp(l)
		}
		if err != nil {
			return fail(fmt.Errorf("bring the recirculation interface %s up: %w", n, err))
		}
		idx[i] = l.Attrs().Index
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: d.objs.P4ctlRecirc, Interface: idx[1], Flags: link.XDPDriverMode})
	if err != nil {
		return fail(fmt.Errorf("attach the XDP program to the recirculation port: %w", err))
	}
	a.links = append(a.links, l)
	if err := d.objs.RecircPort.Put(uint32(0), bpfobj.P4ctlBpfDevmapVal{Ifindex: uint32(idx[0])}); err != nil {
		return fail(fmt.Errorf("recirculation port %s: %w", recircNames[0], err))
	}
	return ns, idx[1], nil
}

// recircNames are the recirculation pair's ends, in its own namespace:
// where held requests are sent, and where the program reads them back.
var recircNames = [2]string{"recirc0", "recirc1"}

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
	if a.recircNS != nil {
		// The last reference to the recirculation namespace: the kernel
		// removes it and its veth pair.
		errs = append(errs, a.recircNS.Close())
		a.recircNS = nil
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
