// Package ports gives the embedded switch (pkg/dataplane) data-plane ports
// on network interfaces, as `simple_switch_grpc -i 1@veth1` has them: one
// AF_PACKET socket per port (pkg/afpacket). A frame received on an
// interface enters the pipeline with that interface's port number; a frame
// the pipeline sends out of a port — whatever put it in: a port, a
// PacketOut, an in-process Inject — goes out of that port's interface.
//
//	sw, _ := dataplane.New(dataplane.Options{})
//	ps, err := ports.Open(sw, []ports.Spec{{Port: 1, Interface: "veth1"}}, ports.Options{})
//	err = ps.Run(ctx) // until ctx is done (nil) or a port fails (*PortError)
//
// A port whose interface goes down keeps its socket and receives again
// when the interface is up; one whose interface disappears (deleted, or
// moved to another network namespace) ends Run with a *PortError wrapping
// ErrInterfaceGone. Linux only: elsewhere Open fails.
package ports

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
)

// MaxPort is the largest port number (ports are 9 bits wide).
const MaxPort = 1<<9 - 1

// DefaultCheckInterval is how often Run checks that every port's interface
// still exists.
const DefaultCheckInterval = time.Second

// DefaultRecvBuffer is each port's socket receive buffer: room for bursts
// of a few thousand frames while the pipeline is busy.
const DefaultRecvBuffer = 4 << 20

// maxFrame bounds a received frame (interfaces with offloads off carry at
// most their MTU; 64 KiB covers any).
const maxFrame = 1 << 16

// ErrInterfaceGone is wrapped by the *PortError of a port whose interface
// was deleted or moved to another network namespace.
var ErrInterfaceGone = errors.New("interface disappeared (deleted or moved to another network namespace)")

// Spec is one port: the switch port number and the interface it is bound to.
type Spec struct {
	Port      uint32
	Interface string
}

// String returns s as simple_switch_grpc's -i takes it: PORT@IFACE.
func (s Spec) String() string { return fmt.Sprintf("%d@%s", s.Port, s.Interface) }

// ParseSpec parses PORT@IFACE, e.g. 1@veth1.
func ParseSpec(v string) (Spec, error) {
	port, ifc, ok := strings.Cut(v, "@")
	if !ok || port == "" || ifc == "" {
		return Spec{}, fmt.Errorf("port %q: want PORT@INTERFACE, e.g. 1@veth1", v)
	}
	n, err := strconv.ParseUint(port, 10, 32)
	if err != nil || n > MaxPort {
		return Spec{}, fmt.Errorf("port %q: port number %q is not in 0..%d", v, port, MaxPort)
	}
	if len(ifc) > 15 || strings.ContainsAny(ifc, "/ \t\n") {
		return Spec{}, fmt.Errorf("port %q: %q is not an interface name", v, ifc)
	}
	return Spec{Port: uint32(n), Interface: ifc}, nil
}

// Validate checks a set of ports for a switch whose CPU port is cpuPort:
// numbers in range, neither the CPU port nor the drop port, no number or
// interface used twice.
func Validate(specs []Spec, cpuPort uint32) error {
	byPort := map[uint32]string{}
	byIfc := map[string]uint32{}
	for _, s := range specs {
		switch {
		case s.Port > MaxPort:
			return fmt.Errorf("port %s: port number not in 0..%d", s, MaxPort)
		case s.Port == cpuPort:
			return fmt.Errorf("port %s: %d is the CPU port (PacketIn/PacketOut), not a data-plane port", s, s.Port)
		case s.Port == program.DropPortNumber:
			return fmt.Errorf("port %s: %d is the drop port", s, s.Port)
		case s.Interface == "":
			return fmt.Errorf("port %d: no interface", s.Port)
		}
		if ifc, dup := byPort[s.Port]; dup {
			return fmt.Errorf("port %d is given twice (%s and %s)", s.Port, ifc, s.Interface)
		}
		if p, dup := byIfc[s.Interface]; dup {
			return fmt.Errorf("interface %s is given twice (ports %d and %d)", s.Interface, p, s.Port)
		}
		byPort[s.Port], byIfc[s.Interface] = s.Interface, s.Port
	}
	return nil
}

// Options configure Open. The zero value opens the interfaces in the
// caller's network namespace and checks them every second.
type Options struct {
	// NetNS opens the interfaces inside this named network namespace
	// (/var/run/netns/NAME) rather than the caller's.
	NetNS string
	// CheckInterval is how often Run checks that every interface still
	// exists (default DefaultCheckInterval).
	CheckInterval time.Duration
	// RecvBuffer is each socket's receive buffer in bytes (default
	// DefaultRecvBuffer; negative keeps the system's default).
	RecvBuffer int
	// Log receives port events (an interface down, a first send error);
	// default: discarded.
	Log *slog.Logger

	open func(Spec) (socket, error) // tests: a fake socket
}

// socket is one port's packet I/O (an *afpacket.Port).
type socket interface {
	Recv(buf []byte) ([]byte, error)
	Send(frame []byte) error
	Attached() (bool, error)
	Close() error
}

// PortError is a port that failed: its interface disappeared, or its
// socket returned an error other than the interface going down.
type PortError struct {
	Spec
	Err error
}

// Error names the port and says what happened to it.
func (e *PortError) Error() string { return fmt.Sprintf("port %s: %v", e.Spec, e.Err) }

// Unwrap returns the cause.
func (e *PortError) Unwrap() error { return e.Err }

// Stats are one port's frame counts.
type Stats struct {
	Spec
	Received   uint64 `json:"received"`    // frames received and injected
	Sent       uint64 `json:"sent"`        // frames the switch sent out of it
	SendErrors uint64 `json:"send_errors"` // frames the interface refused (down, too long, …)
}

// Ports are a switch's data-plane ports. Open them, then Run.
type Ports struct {
	sw       *dataplane.Switch
	byPort   map[uint32]*port
	order    []*port
	interval time.Duration
	log      *slog.Logger

	unrouted  atomic.Uint64
	cancelOut func()
	closeOnce sync.Once
	closeErr  error
	running   atomic.Bool
}

type port struct {
	Spec
	sock      socket
	rx, tx    atomic.Uint64
	txErr     atomic.Uint64
	firstFail sync.Once
}

// Open opens one socket per spec and starts sending the switch's egress
// frames out of them; Run receives. On error nothing stays open.
func Open(sw *dataplane.Switch, specs []Spec, opts Options) (*Ports, error) {
	if err := Validate(specs, sw.CPUPort()); err != nil {
		return nil, err
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = DefaultCheckInterval
	}
	if opts.RecvBuffer == 0 {
		opts.RecvBuffer = DefaultRecvBuffer
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.open == nil {
		opts.open = func(s Spec) (socket, error) { return openSocket(s, opts.NetNS, opts.RecvBuffer) }
	}
	ps := &Ports{sw: sw, byPort: map[uint32]*port{}, interval: opts.CheckInterval, log: opts.Log}
	sorted := slices.Clone(specs)
	slices.SortFunc(sorted, func(a, b Spec) int { return int(a.Port) - int(b.Port) })
	for _, s := range sorted {
		sock, err := opts.open(s)
		if err != nil {
			ps.closeSockets()
			return nil, &PortError{Spec: s, Err: err}
		}
		p := &port{Spec: s, sock: sock}
		ps.byPort[s.Port] = p
		ps.order = append(ps.order, p)
	}
	ps.cancelOut = sw.OnEgress(ps.egress)
	return ps, nil
}

// egress sends a frame the switch emitted out of its port's interface.
func (ps *Ports) egress(e dataplane.Egress) {
	p, ok := ps.byPort[e.Port]
	if !ok {
		ps.unrouted.Add(1)
		return
	}
	if err := p.sock.Send(e.Frame); err != nil {
		p.txErr.Add(1)
		if !errors.Is(err, afpacket.ErrClosed) {
			p.firstFail.Do(func() {
				ps.log.Warn("port refused a frame (counted in its send errors; further ones are not logged)", "port", p.Port,
					"interface", p.Interface, "err", err.Error())
			})
		}
		return
	}
	p.tx.Add(1)
}

// Run receives on every port, injecting each frame into the switch with
// its port number, until ctx is done (it returns nil) or a port fails (a
// *PortError; the interface disappeared, or its socket failed). Either
// way every socket is closed when it returns. Run may be called once.
func (ps *Ports) Run(ctx context.Context) error {
	if !ps.running.CompareAndSwap(false, true) {
		return errors.New("ports: Run called twice")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, p := range ps.order {
		wg.Go(func() {
			if err := ps.receive(p); err != nil {
				cancel(err)
			}
		})
	}
	wg.Go(func() { ps.watch(ctx, cancel) })
	<-ctx.Done()
	cerr := ps.Close()
	wg.Wait()
	var pe *PortError
	if errors.As(context.Cause(ctx), &pe) {
		return pe
	}
	return cerr
}

// receive injects p's frames until its socket is closed or fails.
func (ps *Ports) receive(p *port) error {
	buf := make([]byte, maxFrame+4)
	for {
		f, err := p.sock.Recv(buf)
		switch {
		case err == nil:
			p.rx.Add(1)
			ps.sw.Inject(p.Port, f)
		case errors.Is(err, afpacket.ErrClosed):
			return nil
		case errors.Is(err, afpacket.ErrInterfaceDown):
			if perr := ps.check(p); perr != nil {
				return perr
			}
			ps.log.Warn("port's interface is down; it receives again when the interface is up", "port", p.Port, "interface", p.Interface)
		default:
			return &PortError{Spec: p.Spec, Err: err}
		}
	}
}

// check returns p's *PortError when its interface is gone.
func (ps *Ports) check(p *port) *PortError {
	ok, err := p.sock.Attached()
	switch {
	case errors.Is(err, afpacket.ErrClosed):
		return nil
	case err != nil:
		return &PortError{Spec: p.Spec, Err: err}
	case !ok:
		return &PortError{Spec: p.Spec, Err: ErrInterfaceGone}
	}
	return nil
}

// watch checks every port's interface each interval: one that disappeared
// while down raises no receive error.
func (ps *Ports) watch(ctx context.Context, fail context.CancelCauseFunc) {
	tick := time.NewTicker(ps.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, p := range ps.order {
			if err := ps.check(p); err != nil {
				fail(err)
				return
			}
		}
	}
}

// Close stops sending egress frames and closes every socket (a Run in
// progress returns). It is safe to call more than once.
func (ps *Ports) Close() error {
	ps.closeOnce.Do(func() {
		if ps.cancelOut != nil {
			ps.cancelOut()
		}
		ps.closeErr = ps.closeSockets()
	})
	return ps.closeErr
}

func (ps *Ports) closeSockets() error {
	var errs []error
	for _, p := range ps.order {
		if err := p.sock.Close(); err != nil && !errors.Is(err, afpacket.ErrClosed) {
			errs = append(errs, fmt.Errorf("close port %s: %w", p.Spec, err))
		}
	}
	return errors.Join(errs...)
}

// Specs returns the ports in port order.
func (ps *Ports) Specs() []Spec {
	out := make([]Spec, len(ps.order))
	for i, p := range ps.order {
		out[i] = p.Spec
	}
	return out
}

// Stats returns every port's frame counts, in port order.
func (ps *Ports) Stats() []Stats {
	out := make([]Stats, len(ps.order))
	for i, p := range ps.order {
		out[i] = Stats{Spec: p.Spec, Received: p.rx.Load(), Sent: p.tx.Load(), SendErrors: p.txErr.Load()}
	}
	return out
}

// Unrouted counts frames the switch sent out of a port number that has no
// interface (dropped, as on a switch with nothing plugged into the port).
func (ps *Ports) Unrouted() uint64 { return ps.unrouted.Load() }
