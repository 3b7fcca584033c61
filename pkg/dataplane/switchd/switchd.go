// Package switchd runs a switch the way `p4ctl switch` does: the embedded
// Switch on the Go model or the XDP program, its data-plane ports, and
// P4Runtime in front, from start to shutdown. The command wires flags to
// Options; tests and embedders call Run directly.
package switchd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/ports"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
)

// ShutdownTimeout bounds the P4Runtime server's graceful stop once Run's
// context is done.
const ShutdownTimeout = 5 * time.Second

// Options say what switch Run brings up.
type Options struct {
	// Addr is the P4Runtime host:port (port 0 picks one); DeviceID the
	// device id the server answers for.
	Addr     string
	DeviceID uint64
	// P4Info replaces the built-in program's P4Info; NoPipeline starts
	// with no pipeline until SetForwardingPipelineConfig.
	P4Info     *p4configv1.P4Info
	NoPipeline bool
	// CPUPort is the port of PacketIn/PacketOut.
	CPUPort uint32
	// TLS, when its CertFile is set, serves P4Runtime over TLS.
	TLS p4rtserver.TLS
	// Ports are the data-plane ports and their interfaces, opened in the
	// network namespace NetNS ("" for the caller's).
	Ports []ports.Spec
	NetNS string
	// XDP runs the XDP program instead of the Go model (XDPGeneric: in
	// the kernel's generic mode).
	XDP, XDPGeneric bool
	// Log receives the switch's events.
	Log *slog.Logger
	// Ready, when set, is called once P4Runtime listens.
	Ready func(Started)
	// Stopped, when set, is called after a clean shutdown with what the
	// switch held (Switch.Left): it goes with the process.
	Stopped func(left string)
}

// Started is what Run announces once P4Runtime listens.
type Started struct {
	// Addr is the address clients dial; Listen the listener's own.
	Addr   string
	Listen net.Addr
	// Pipeline and Ports say, in words, what the switch holds.
	Pipeline, Ports string
}

// Run brings the switch up, serves P4Runtime and moves frames between the
// data-plane ports and their interfaces until ctx is done, the server
// stops or a port fails; it shuts everything down before it returns.
// Interfaces and TLS files that cannot be used fail it before anything
// listens.
func Run(ctx context.Context, o Options) error {
	opts := dataplane.Options{P4Info: o.P4Info, NoPipeline: o.NoPipeline, CPUPort: o.CPUPort, Log: o.Log}
	var dp *xdp.Datapath
	if o.XDP {
		opts.Datapath = xdp.New(xdp.Options{CPUPort: o.CPUPort}, func(d *xdp.Datapath) { dp = d })
	}
	sw, err := dataplane.New(opts)
	if err != nil {
		return err
	}
	defer sw.Close()
	var pp *ports.Ports
	switch {
	case dp != nil && len(o.Ports) > 0:
		attach := func() error { return dp.Attach(o.Ports, xdp.AttachOptions{Generic: o.XDPGeneric}) }
		if o.NetNS != "" {
			err = afpacket.InNetNS(o.NetNS, attach)
		} else {
			err = attach()
		}
		if err != nil {
			return err
		}
	case len(o.Ports) > 0:
		// Opened before the server listens, so that a missing interface
		// fails before anything is announced.
		pp, err = ports.Open(sw, o.Ports, ports.Options{NetNS: o.NetNS, Log: o.Log})
		if err != nil {
			return err
		}
		defer pp.Close()
	}
	sopts := []p4rtserver.Option{p4rtserver.WithAddress(o.Addr), p4rtserver.WithDeviceID(o.DeviceID)}
	if o.TLS.CertFile != "" {
		sopts = append(sopts, p4rtserver.WithTLS(o.TLS))
	}
	emb, err := dataplane.Serve(sw, dataplane.ServeOptions{Addr: o.Addr, Remote: true, Server: sopts})
	if err != nil {
		return err
	}
	if o.Ready != nil {
		o.Ready(Started{Addr: emb.Addr(), Listen: emb.ListenAddr(), Pipeline: pipelineNote(o), Ports: portNote(pp, dp, len(o.Ports))})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	portErr := make(chan error, 1)
	if pp != nil {
		go func() {
			err := pp.Run(ctx)
			if err != nil {
				cancel() // a port failed: stop serving
			}
			portErr <- err
		}()
	} else {
		close(portErr)
	}
	select {
	case <-ctx.Done():
	case <-emb.Done():
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer scancel()
	_ = emb.Shutdown(sctx)
	<-emb.Done()
	if perr := <-portErr; perr != nil {
		return perr
	}
	if err := emb.Err(); err != nil {
		return err
	}
	if o.Stopped != nil {
		o.Stopped(sw.Left())
	}
	return nil
}

// pipelineNote says what program the switch starts with.
func pipelineNote(o Options) string {
	if o.NoPipeline {
		return "no pipeline until SetForwardingPipelineConfig"
	}
	return "p4ctl program loaded"
}

// portNote says what ports the switch moves frames on.
func portNote(pp *ports.Ports, dp *xdp.Datapath, n int) string {
	switch {
	case pp != nil:
		var specs []string
		for _, sp := range pp.Specs() {
			specs = append(specs, sp.String())
		}
		return "ports " + strings.Join(specs, " ")
	case dp != nil && n > 0:
		specs, modes := dp.Ports()
		var list []string
		for i, sp := range specs {
			list = append(list, fmt.Sprintf("%s (%s)", sp, modes[i]))
		}
		return "XDP ports " + strings.Join(list, " ")
	case dp != nil:
		return "XDP program loaded, no data-plane ports"
	}
	return "no data-plane ports"
}
