//go:build linux

// Package afpacket is raw Ethernet I/O on one Linux interface: an
// AF_PACKET socket bound to the interface, optionally opened inside a named
// network namespace. The embedded switch's data-plane ports
// (pkg/dataplane/ports) and the testbeds (bmv2-tests) use it.
//
// Received frames are returned as they were on the wire: the kernel's own
// transmissions on the interface are skipped, a VLAN tag the kernel moved
// into packet metadata (VLAN offload) is put back, as libpcap does, and a
// TCP or UDP checksum the sender left to checksum offload (a veth peer
// with tx-checksumming on) is completed.
//
// The socket is nonblocking underneath and served by the Go runtime's
// poller, so a Recv blocked on a blocking Port returns when the Port is
// closed.
package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
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

// Port is an AF_PACKET socket bound to one interface. Send and Recv may be
// called concurrently (one receiver at a time).
type Port struct {
	Name    string // interface name
	Ifindex int    // the interface's index when the port was opened

	fd          int
	file        *os.File // owns fd; its poller wakes blocked calls
	rc          syscall.RawConn
	nonblocking bool
	closed      atomic.Bool
	oob         []byte
}

// Open opens interface name in the calling thread's network namespace.
// On a nonblocking port Recv returns ErrWouldBlock instead of waiting,
// which suits callers that poll several ports (Fd); on a blocking one Recv
// waits for a frame, or until Close.
func Open(name string, nonblocking bool) (*Port, error) {
	ni, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", name, err)
	}
	// Protocol 0 until bound: a socket created for ETH_P_ALL receives from
	// every interface until bind narrows it to one.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket for %s: %w", name, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("PACKET_AUXDATA on %s: %w", name, err)
	}
	// Our own transmissions need not be queued to us at all (Linux ≥ 4.20;
	// Recv skips them anyway where the option is missing).
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ni.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind AF_PACKET socket to %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), "afpacket:"+name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("AF_PACKET socket for %s: %w", name, err)
	}
	return &Port{Name: name, Ifindex: ni.Index, fd: fd, file: f, rc: rc, nonblocking: nonblocking,
		oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{}))))}, nil
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

// Fd is the socket, for poll(2) on nonblocking ports. It stays owned by
// the port.
func (p *Port) Fd() int { return p.fd }

// Close closes the socket; a Recv or Send waiting on it returns ErrClosed.
func (p *Port) Close() error {
	p.closed.Store(true)
	return p.file.Close()
}

// SetBuffers sets the socket's receive and send buffer sizes in bytes
// (0 keeps one), as root may beyond net.core.rmem_max/wmem_max.
func (p *Port) SetBuffers(recv, send int) error {
	var err error
	cerr := p.rc.Control(func(fd uintptr) {
		set := func(force, plain, n int) error {
			if n <= 0 {
				return nil
			}
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, force, n) == nil {
				return nil
			}
			return unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, plain, n)
		}
		err = errors.Join(set(unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, recv), set(unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, send))
	})
	if err = errors.Join(cerr, err); err != nil {
		return fmt.Errorf("socket buffers of %s: %w", p.Name, err)
	}
	return nil
}

// Send transmits frame (at least MinFrame bytes) on the interface, waiting
// while the socket's send buffer is full.
func (p *Port) Send(frame []byte) error {
	if len(frame) < MinFrame {
		return fmt.Errorf("send on %s: %d-byte frame is shorter than an Ethernet header", p.Name, len(frame))
	}
	var err error
	werr := p.rc.Write(func(fd uintptr) bool {
		_, err = unix.Write(int(fd), frame)
		return !errors.Is(err, unix.EAGAIN)
	})
	if werr != nil {
		return fmt.Errorf("send on %s: %w", p.Name, p.closedErr(werr))
	}
	if err != nil {
		return fmt.Errorf("send on %s: %w", p.Name, err)
	}
	return nil
}

// Recv reads the next frame received on the interface into buf (which
// needs 4 spare bytes for a restored VLAN tag) and returns it. Frames the
// interface sent are skipped. A nonblocking port returns ErrWouldBlock when
// no frame is ready; a blocking one waits.
func (p *Port) Recv(buf []byte) ([]byte, error) {
	if len(buf) < MinFrame+4 {
		return nil, fmt.Errorf("receive on %s: %d-byte buffer is too small", p.Name, len(buf))
	}
	var (
		n, oobn int
		err     error
	)
	rerr := p.rc.Read(func(fd uintptr) bool {
		for {
			var from unix.Sockaddr
			n, oobn, _, from, err = unix.Recvmsg(int(fd), buf[:len(buf)-4], p.oob, 0)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return p.nonblocking // wait in the poller, unless nonblocking
			case err != nil:
				return true
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			return true
		}
	})
	if rerr != nil {
		return nil, fmt.Errorf("receive on %s: %w", p.Name, p.closedErr(rerr))
	}
	switch {
	case errors.Is(err, unix.EAGAIN):
		return nil, ErrWouldBlock
	case errors.Is(err, unix.ENETDOWN):
		return nil, fmt.Errorf("receive on %s: %w (%w)", p.Name, ErrInterfaceDown, err)
	case err != nil:
		return nil, fmt.Errorf("receive on %s: %w", p.Name, err)
	}
	return fixup(buf, n, p.oob[:oobn]), nil
}

// Attached reports whether the socket is still bound to the interface it
// was opened on. The kernel unbinds a packet socket when its interface is
// deleted or moved to another namespace; a port that is merely down stays
// attached.
func (p *Port) Attached() (bool, error) {
	var (
		sa  unix.Sockaddr
		err error
	)
	cerr := p.rc.Control(func(fd uintptr) { sa, err = unix.Getsockname(int(fd)) })
	if err = errors.Join(p.closedErr(cerr), err); err != nil {
		return false, fmt.Errorf("check %s: %w", p.Name, err)
	}
	ll, ok := sa.(*unix.SockaddrLinklayer)
	return ok && ll.Ifindex == p.Ifindex, nil
}

// closedErr maps the poller's error on a closed port to ErrClosed.
func (p *Port) closedErr(err error) error {
	if err != nil && (p.closed.Load() || errors.Is(err, os.ErrClosed)) {
		return ErrClosed
	}
	return err
}

// fixup returns the frame of buf[:n] as it was on the wire, using the
// packet's auxiliary data: a VLAN tag the kernel stripped is put back, and
// a checksum left to offload is completed.
func fixup(buf []byte, n int, oob []byte) []byte {
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
		if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
			tpid := uint16(0x8100)
			if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
				tpid = aux.Vlan_tpid
			}
			frame = buf[:n+4]
			copy(frame[16:], buf[12:n])
			binary.BigEndian.PutUint16(frame[12:], tpid)
			binary.BigEndian.PutUint16(frame[14:], aux.Vlan_tci)
		}
		if aux.Status&unix.TP_STATUS_CSUMNOTREADY != 0 {
			CompleteChecksum(frame)
		}
		return frame
	}
	return frame
}
