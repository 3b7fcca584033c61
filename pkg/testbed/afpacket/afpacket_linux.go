//go:build linux

// Package afpacket is raw Ethernet I/O on one Linux interface for the
// testbeds (bmv2-tests, the Mininet stand-in switch): an AF_PACKET socket
// bound to the interface, optionally opened inside a named network
// namespace. Received frames are returned as they were on the wire: the
// kernel's own transmissions on the interface are skipped, and a VLAN tag
// the kernel moved into packet metadata (VLAN offload) is put back, as
// libpcap does.
package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MinFrame is the shortest frame a port can send: an Ethernet header.
// (The kernel refuses shorter raw frames; no wire carries them.)
const MinFrame = 14

// InNetNS runs fn on an OS thread inside network namespace ns (a name under
// /var/run/netns). Sockets fn creates stay in ns. If the thread cannot
// return to its namespace it stays locked, so the runtime discards it.
func InNetNS(ns string, fn func() error) error {
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

// Port is an AF_PACKET socket bound to one interface.
type Port struct {
	Name string // interface name
	fd   int
	oob  []byte
}

// Open opens interface name in the calling thread's network namespace.
// nonblocking sockets suit callers that poll several ports (Fd).
func Open(name string, nonblocking bool) (*Port, error) {
	ni, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	typ := unix.SOCK_RAW | unix.SOCK_CLOEXEC
	if nonblocking {
		typ |= unix.SOCK_NONBLOCK
	}
	fd, err := unix.Socket(unix.AF_PACKET, typ, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("PACKET_AUXDATA: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ni.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind %s: %w", name, err)
	}
	return &Port{Name: name, fd: fd, oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{}))))}, nil
}

// OpenIn opens interface name inside network namespace ns.
func OpenIn(ns, name string, nonblocking bool) (*Port, error) {
	var p *Port
	err := InNetNS(ns, func() error {
		var err error
		p, err = Open(name, nonblocking)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", name, ns, err)
	}
	return p, nil
}

// Fd is the socket, for poll(2).
func (p *Port) Fd() int { return p.fd }

// Close closes the socket.
func (p *Port) Close() error { return unix.Close(p.fd) }

// Send transmits frame (at least MinFrame bytes) on the interface.
func (p *Port) Send(frame []byte) error {
	if len(frame) < MinFrame {
		return fmt.Errorf("send on %s: %d-byte frame is shorter than an Ethernet header", p.Name, len(frame))
	}
	if _, err := unix.Write(p.fd, frame); err != nil {
		return fmt.Errorf("send on %s: %w", p.Name, err)
	}
	return nil
}

// ErrWouldBlock is returned by Recv on a nonblocking port with nothing to
// read.
var ErrWouldBlock = errors.New("no frame ready")

// Recv reads the next frame received on the interface into buf (which
// needs 4 spare bytes for a restored VLAN tag) and returns it. Frames the
// interface sent are skipped.
func (p *Port) Recv(buf []byte) ([]byte, error) {
	for {
		n, oobn, _, from, err := unix.Recvmsg(p.fd, buf[:len(buf)-4], p.oob, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) {
				return nil, ErrWouldBlock
			}
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return nil, fmt.Errorf("receive on %s: %w", p.Name, err)
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		return restoreVLAN(buf, n, p.oob[:oobn]), nil
	}
}

// restoreVLAN puts back the 802.1Q tag the kernel moved into auxdata.
func restoreVLAN(buf []byte, n int, oob []byte) []byte {
	frame := buf[:n]
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || n < 12 {
		return frame
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA ||
			len(m.Data) < int(unsafe.Sizeof(unix.TpacketAuxdata{})) {
			continue
		}
		aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
		if aux.Status&unix.TP_STATUS_VLAN_VALID == 0 {
			return frame
		}
		tpid := uint16(0x8100)
		if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
			tpid = aux.Vlan_tpid
		}
		frame = buf[:n+4]
		copy(frame[16:], buf[12:n])
		binary.BigEndian.PutUint16(frame[12:], tpid)
		binary.BigEndian.PutUint16(frame[14:], aux.Vlan_tci)
		return frame
	}
	return frame
}
