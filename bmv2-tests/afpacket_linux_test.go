//go:build linux

package bmv2tests

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
)

// packetPort is the host end of one switch port's veth pair: frames sent
// on it enter the switch on that port; frames the switch sends out of that
// port are read from it.
type packetPort struct {
	port uint32 // switch port number
	*afpacket.Port
}

func openPacketPort(ns, ifc string, port uint32) (*packetPort, error) {
	p, err := afpacket.OpenIn(ns, ifc, true)
	if err != nil {
		return nil, fmt.Errorf("port %d: %w", port, err)
	}
	return &packetPort{port: port, Port: p}, nil
}

func (p *packetPort) close()                  { p.Close() }
func (p *packetPort) send(frame []byte) error { return p.Send(frame) }

// captured is a frame read from a port.
type captured struct {
	port  uint32
	frame []byte
}

// readAll collects every frame the ports receive, waiting up to wait for
// the first and then until they have been quiet for quiet. IPv6 frames
// (the kernel's own neighbour discovery on the veths) are ignored.
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
			fds[i] = unix.PollFd{Fd: int32(p.Fd()), Events: unix.POLLIN}
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
				f, err := p.Recv(buf)
				if errors.Is(err, afpacket.ErrWouldBlock) {
					break
				}
				if err != nil {
					return out, err
				}
				if len(f) >= 14 && f[12] == 0x86 && f[13] == 0xdd {
					continue
				}
				out = append(out, captured{port: p.port, frame: append([]byte(nil), f...)})
				deadline = time.Now().Add(quiet)
			}
		}
	}
}
