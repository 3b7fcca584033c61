//go:build linux

// Command standin is a TEST AID, not a switch: it accepts the part of
// simple_switch_grpc's command line that mininet/p4ctl_topo.py uses and
// runs p4ctl's embedded target (pkg/dataplane, the Go model of the P4
// program) behind its P4Runtime server, moving frames between the switch
// ports and the named interfaces with AF_PACKET. It lets the Mininet
// scripts (topology, addressing, readiness, push, serve, loadgen, summary,
// teardown) be exercised on machines without BMv2:
//
//	go build -o /tmp/standin ./mininet/standin
//	sudo P4CTL_BMV2=/tmp/standin MININET_P4INFO=... MININET_BMV2_JSON=... make mininet
//
// Results of such a run are results of the embedded target, never of BMv2,
// and must be labelled so. Accepted options: --no-p4, --device-id N,
// -i PORT@IFACE (repeatable), and after "--": --grpc-server-addr HOST:PORT,
// --cpu-port N; --thrift-port, --log-file, --log-level, --log-flush,
// --log-console and --notifications-addr are accepted and ignored (so
// pkg/p4rt/bmv2harness and bmv2-tests can start it too).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/program"
)

type options struct {
	noP4     bool
	deviceID uint64
	grpcAddr string
	cpuPort  uint32
	ports    map[uint32]string
}

func parseArgs(args []string) (options, error) {
	o := options{deviceID: 1, grpcAddr: "127.0.0.1:9559", ports: map[uint32]string{}}
	next := func(i *int) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("%s needs a value", args[*i])
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		var v string
		var err error
		switch a := args[i]; a {
		case "--", "--no-p4":
			o.noP4 = o.noP4 || a == "--no-p4"
		case "--device-id":
			if v, err = next(&i); err == nil {
				o.deviceID, err = strconv.ParseUint(v, 10, 64)
			}
		case "--thrift-port", "--log-file", "--log-level", "--notifications-addr":
			_, err = next(&i) // accepted and ignored
		case "--log-flush", "--log-console":
		case "--grpc-server-addr":
			o.grpcAddr, err = next(&i)
		case "--cpu-port":
			if v, err = next(&i); err == nil {
				var n uint64
				n, err = strconv.ParseUint(v, 10, 9)
				o.cpuPort = uint32(n)
			}
		case "-i", "--interface":
			if v, err = next(&i); err == nil {
				port, ifc, ok := strings.Cut(v, "@")
				n, perr := strconv.ParseUint(port, 10, 9)
				if !ok || perr != nil || ifc == "" {
					err = fmt.Errorf("-i %q: want PORT@IFACE", v)
				}
				o.ports[uint32(n)] = ifc
			}
		default:
			err = fmt.Errorf("unsupported option %q (this stand-in accepts only what mininet/p4ctl_topo.py passes)", a)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := parseArgs(os.Args[1:])
	if err != nil {
		return err
	}
	opts := dataplane.Options{NoPipeline: o.noP4, CPUPort: o.cpuPort}
	sw, err := dataplane.New(opts)
	if err != nil {
		return err
	}
	ports := map[uint32]*afpacket.Port{}
	for port, ifc := range o.ports {
		p, err := afpacket.Open(ifc, false)
		if err != nil {
			return fmt.Errorf("port %d: %w", port, err)
		}
		ports[port] = p
	}
	srv := p4rtserver.New(sw, p4rtserver.WithAddress(o.grpcAddr), p4rtserver.WithDeviceID(o.deviceID))
	lis, err := srv.Listen()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "standin: embedded p4ctl target (NOT BMv2), P4Runtime on %s, %d ports\n", lis.Addr(), len(ports))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for port, p := range ports {
		go func() {
			buf := make([]byte, 65536)
			for {
				frame, err := p.Recv(buf)
				if err != nil {
					return
				}
				out := sw.Inject(port, frame)
				if out.Verdict == program.Dropped {
					continue
				}
				if ep, ok := ports[out.Port]; ok {
					_ = ep.Send(out.Frame)
				}
			}
		}()
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	return srv.Serve(lis)
}
