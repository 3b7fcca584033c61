//go:build linux

package bmv2tests

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// inNetNS runs fn on an OS thread that has entered network namespace ns
// (a name under /var/run/netns). Sockets fn creates stay in ns. If the
// thread cannot return to its namespace it stays locked, so the runtime
// discards it.
func inNetNS(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open own netns: %w", err)
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open netns %s: %w", ns, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter netns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leave netns %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// packetPort is an AF_PACKET socket bound to one interface: frames written
// to it enter the switch port at the veth's other end; frames the switch
// sends out of that port are read from it.
type packetPort struct {
	port  uint32 // switch port number
	ifc   string
	fd    int
	index int
}

// openPacketPort opens an AF_PACKET socket on interface ifc inside ns.
func openPacketPort(ns, ifc string, port uint32) (*packetPort, error) {
	p := &packetPort{port: port, ifc: ifc, fd: -1}
	err := inNetNS(ns, func() error {
		ni, err := net.InterfaceByName(ifc)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return fmt.Errorf("AF_PACKET socket: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ni.Index}); err != nil {
			unix.Close(fd)
			return fmt.Errorf("bind %s: %w", ifc, err)
		}
		p.fd, p.index = fd, ni.Index
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("port %d (%s): %w", port, ifc, err)
	}
	return p, nil
}

func (p *packetPort) close() { unix.Close(p.fd) }

func (p *packetPort) send(frame []byte) error {
	if _, err := unix.Write(p.fd, frame); err != nil {
		return fmt.Errorf("send on port %d (%s): %w", p.port, p.ifc, err)
	}
	return nil
}

// captured is a frame read from a port.
type captured struct {
	port  uint32
	frame []byte
}

// ignorable frames are the kernel's own chatter on the veths (IPv6
// neighbour discovery and MLD before IPv6 is disabled), never test traffic.
func ignorable(frame []byte) bool {
	return len(frame) >= 14 && binary.BigEndian.Uint16(frame[12:14]) == 0x86dd
}

// readAll drains every frame the ports have received (not the ones they
// sent), waiting up to wait for the first one and then quiet for more.
func readAll(ports []*packetPort, wait, quiet time.Duration) ([]captured, error) {
	var out []captured
	fds := make([]unix.PollFd, len(ports))
	buf := make([]byte, 65536)
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return out, nil
		}
		for i, p := range ports {
			fds[i] = unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN}
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return out, fmt.Errorf("poll: %w", err)
		}
		if n == 0 {
			return out, nil
		}
		for i, p := range ports {
			if fds[i].Revents&unix.POLLIN == 0 {
				continue
			}
			for {
				m, from, err := unix.Recvfrom(p.fd, buf, unix.MSG_DONTWAIT)
				if err != nil {
					if errors.Is(err, unix.EAGAIN) {
						break
					}
					return out, fmt.Errorf("read port %d: %w", p.port, err)
				}
				if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
					continue // our own injection
				}
				if ignorable(buf[:m]) {
					continue
				}
				out = append(out, captured{port: p.port, frame: append([]byte(nil), buf[:m]...)})
				deadline = time.Now().Add(quiet)
			}
		}
	}
}
