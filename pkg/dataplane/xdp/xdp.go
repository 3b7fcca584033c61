// Package xdp is p4ctl's SmartNIC-class target: the p4ctl program for the
// Linux XDP data path (bpf/p4ctl.c, compiled into bpfobj), loaded and
// managed with cilium/ebpf, behind the embedded switch's P4Runtime server.
// It is a dataplane.Datapath that follows the switch's P4Runtime state into
// the program's BPF maps (every table, register and counter of the P4Info
// has one: docs/XDP.md), reads back what the program writes, delivers its
// latency digests and packet-ins through BPF ring buffers, and attaches the
// program to network interfaces (Attach) or runs frames through it with
// BPF_PROG_RUN (Process), as the packet cases do.
//
//	sw, err := dataplane.New(dataplane.Options{Datapath: xdp.New(xdp.Options{})})
//
// Loading the program needs root (CAP_BPF, CAP_NET_ADMIN) and a kernel with
// BPF, BTF and XDP (5.17 or later: bpf_loop); errors say which is missing.
package xdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp/bpfobj"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Options configure the XDP datapath.
type Options struct {
	// Clock, when set, is the pass clock (µs) of the frames Process runs,
	// for tests that move time by hand; nil means the kernel's clock, µs
	// since the datapath was loaded, which attached ports use too.
	Clock program.Clock
	// CPUPort is the port whose frames go to the controller as PacketIn
	// (dataplane.DefaultCPUPort when 0).
	CPUPort uint32
}

// Datapath is the XDP program and its maps. It implements
// dataplane.Datapath, dataplane.Follower and dataplane.Transmitter.
type Datapath struct {
	opts Options
	env  dataplane.DatapathEnv
	log  *slog.Logger
	objs bpfobj.P4ctlObjects
	ncpu int

	h     *handles                        // under the engine's write lock
	cur   atomic.Pointer[engine.Pipeline] // for the digest reader
	bound atomic.Bool                     // a pipeline is bound

	ports *attachment // Attach

	slots    map[string]*slotted // the exact tables held in slotted arrays
	stores   map[string]store    // the direct tables held in hash and LPM maps
	defaults *slotted            // table_defaults
	sites    siteTable           // client_site

	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

var (
	_ dataplane.Datapath    = (*Datapath)(nil)
	_ dataplane.Follower    = (*Datapath)(nil)
	_ dataplane.Transmitter = (*Datapath)(nil)
)

// New returns the factory a dataplane.Switch starts the datapath with
// (dataplane.Options.Datapath). The Datapath it made is handed to started,
// when not nil, so that the caller can Attach ports to it.
func New(opts Options, started ...func(*Datapath)) dataplane.NewDatapath {
	return func(env dataplane.DatapathEnv) (dataplane.Datapath, error) {
		d, err := Load(env, opts)
		if err != nil {
			return nil, err
		}
		for _, fn := range started {
			fn(d)
		}
		return d, nil
	}
}

// ErrNotRoot means the process may not load BPF programs.
var ErrNotRoot = errors.New("loading the XDP program needs root (CAP_BPF and CAP_NET_ADMIN)")

// Load loads the program and its maps, with no pipeline bound (every frame
// is dropped until Bind) and no port attached.
func Load(env dataplane.DatapathEnv, opts Options) (*Datapath, error) {
	if opts.CPUPort == 0 {
		opts.CPUPort = dataplane.DefaultCPUPort
	}
	d := &Datapath{opts: opts, env: env, log: env.Log}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, loadError(err)
	}
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("load the XDP program: count the CPUs: %w", err)
	}
	d.ncpu = n
	if err := bpfobj.LoadP4ctlObjects(&d.objs, nil); err != nil {
		return nil, loadError(err)
	}
	d.makeSlots()
	d.makeStores()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		d.objs.Close()
		return nil, fmt.Errorf("load the XDP program: read the clock: %w", err)
	}
	cfg := bpfobj.P4ctlP4Config{StartNs: uint64(ts.Nano()), CpuPort: opts.CPUPort}
	if err := d.objs.Config.Put(uint32(0), &cfg); err != nil {
		d.objs.Close()
		return nil, fmt.Errorf("load the XDP program: write its configuration: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stop = cancel
	if err := d.startRings(ctx); err != nil {
		cancel()
		d.objs.Close()
		return nil, err
	}
	return d, nil
}

// loadError says what a failed load needs.
func loadError(err error) error {
	var ve *ebpf.VerifierError
	switch {
	case errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: %v", ErrNotRoot, err)
	case errors.As(err, &ve):
		log := ve.Log
		if len(log) > 8 {
			log = log[len(log)-8:]
		}
		return fmt.Errorf("the kernel's verifier refused the XDP program (a kernel without BPF loops, BTF or atomics: 5.17 or later is needed): %w\n%s", err, strings.Join(log, "\n"))
	case errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("this kernel cannot load the XDP program (BPF, BTF, ring buffers and XDP are needed): %w", err)
	}
	return fmt.Errorf("load the XDP program: %w", err)
}

// setConfig updates the configuration cell.
func (d *Datapath) setConfig(fn func(*bpfobj.P4ctlP4Config)) error {
	var cfg bpfobj.P4ctlP4Config
	if err := d.objs.Config.Lookup(uint32(0), &cfg); err != nil {
		return fmt.Errorf("read the XDP configuration: %w", err)
	}
	fn(&cfg)
	if err := d.objs.Config.Put(uint32(0), &cfg); err != nil {
		return fmt.Errorf("write the XDP configuration: %w", err)
	}
	return nil
}

// Bind loads p's state into the maps: every table entry and default
// action, the digest's enablement and, unless p carries the running
// pipeline's state (RECONCILE_AND_COMMIT), zeroed registers and counters.
func (d *Datapath) Bind(p *engine.Pipeline) error {
	d.h = nil
	d.bound.Store(false)
	if err := d.setConfig(func(c *bpfobj.P4ctlP4Config) { c.Pipeline = 0 }); err != nil {
		return err
	}
	h, err := resolve(p)
	if err != nil {
		return err
	}
	for _, tb := range h.tables {
		if err := d.loadTable(tb); err != nil {
			return err
		}
	}
	if !p.Carried() {
		if err := d.zeroState(); err != nil {
			return err
		}
	}
	d.h = h
	d.cur.Store(p)
	_, on := h.latencyDigest.Config()
	if err := d.setConfig(func(c *bpfobj.P4ctlP4Config) {
		c.Pipeline = 1
		c.Digests = b2u(on)
	}); err != nil {
		return err
	}
	d.bound.Store(true)
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Apply follows a committed batch: changed entries and defaults, and the
// registers, counters and digests the controller wrote.
func (d *Datapath) Apply(p *engine.Pipeline, ch *engine.Changes) error {
	h := d.h
	if h == nil || h.p != p {
		return errors.New("the XDP program is not bound to this pipeline")
	}
	var errs []error
	dirty := map[*table]bool{}
	for _, c := range ch.Entries {
		tb := h.tables[c.Table.Name]
		if tb == nil {
			continue
		}
		st := d.direct(tb)
		if st == nil {
			dirty[tb] = true
			continue
		}
		if c.Table.Has(c.Entry) {
			a, err := tb.action(&c.Entry.Action)
			if err == nil {
				err = st.put(c.Entry, &a)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("table %s: write an entry: %w", tb.t.Name, err))
			}
		} else if err := st.del(c.Entry); err != nil {
			errs = append(errs, fmt.Errorf("table %s: delete an entry: %w", tb.t.Name, err))
		}
	}
	for _, st := range d.stores {
		if err := st.flush(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, st := range d.slots {
		if err := st.flush(); err != nil {
			errs = append(errs, err)
		}
	}
	for tb := range dirty {
		if err := d.loadGroups(tb, ch); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range ch.Defaults {
		if tb := h.tables[t.Name]; tb != nil {
			if err := d.loadDefault(tb); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(ch.Registers) > 0 || len(ch.Counters) > 0 {
		if err := d.writeState(h, ch.Registers, ch.Counters); err != nil {
			errs = append(errs, err)
		}
	}
	if len(ch.Digests) > 0 {
		_, on := h.latencyDigest.Config()
		if err := d.setConfig(func(c *bpfobj.P4ctlP4Config) { c.Digests = b2u(on) }); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// loadTable makes tb's map hold exactly its entries, and its default.
func (d *Datapath) loadTable(tb *table) error {
	if err := d.loadDefault(tb); err != nil {
		return err
	}
	switch tb.t.Name {
	case pipeline.TableActiveEpoch:
		return nil
	case pipeline.TableClientSite, pipeline.TableSLAFeasibility, pipeline.TableCarbonRank:
		return d.loadGroups(tb, nil)
	}
	st := d.direct(tb)
	if st == nil {
		return nil
	}
	want := map[any]bool{}
	var firstErr error
	tb.t.Entries(func(e *engine.Entry) bool {
		a, err := tb.action(&e.Action)
		if err == nil {
			err = st.put(e, &a)
		}
		if err != nil {
			firstErr = fmt.Errorf("table %s: write an entry: %w", tb.t.Name, err)
			return false
		}
		want[st.keyOf(e)] = true
		return true
	})
	if firstErr != nil {
		return firstErr
	}
	if err := st.flush(); err != nil {
		return err
	}
	return st.retain(want)
}

// loadDefault writes tb's default action into table_defaults.
func (d *Datapath) loadDefault(tb *table) error {
	a, err := tb.action(tb.t.DefaultAction())
	if err != nil {
		return err
	}
	if err := d.defaults.write(uint32(tb.code), &a); err != nil {
		return fmt.Errorf("table %s: write the default action: %w", tb.t.Name, err)
	}
	return nil
}
