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
// --thrift-port N (ignored), -i PORT@IFACE (repeatable), and after "--":
// --grpc-server-addr HOST:PORT, --cpu-port N.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
		case "--thrift-port":
			_, err = next(&i)
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

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPort(ifc string) (int, error) {
	ni, err := net.InterfaceByName(ifc)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return -1, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ni.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind %s: %w", ifc, err)
	}
	return fd, nil
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
	fds := map[uint32]int{}
	for port, ifc := range o.ports {
		fd, err := openPort(ifc)
		if err != nil {
			return fmt.Errorf("port %d: %w", port, err)
		}
		fds[port] = fd
	}
	srv := p4rtserver.New(sw, p4rtserver.WithAddress(o.grpcAddr), p4rtserver.WithDeviceID(o.deviceID))
	lis, err := srv.Listen()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "standin: embedded p4ctl target (NOT BMv2), P4Runtime on %s, %d ports\n", lis.Addr(), len(fds))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var wmu sync.Mutex // one writer at a time per process is plenty here
	for port, fd := range fds {
		go func() {
			buf := make([]byte, 65536)
			for {
				n, from, err := unix.Recvfrom(fd, buf, 0)
				if err != nil {
					if errors.Is(err, unix.EINTR) {
						continue
					}
					return
				}
				if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
					continue
				}
				out := sw.Inject(port, buf[:n])
				if out.Verdict == program.Dropped {
					continue
				}
				if efd, ok := fds[out.Port]; ok {
					wmu.Lock()
					_, _ = unix.Write(efd, out.Frame)
					wmu.Unlock()
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
