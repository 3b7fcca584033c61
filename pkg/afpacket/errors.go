package afpacket

import (
	"errors"
	"net"
)

// ErrWouldBlock is returned by Recv on a nonblocking port with nothing to
// read.
var ErrWouldBlock = errors.New("no frame ready")

// ErrInterfaceDown is wrapped by Recv's error when the interface went down
// (or away: Port.Attached tells which). The port receives again once the
// interface is up.
var ErrInterfaceDown = errors.New("interface down")

// ErrClosed is wrapped by Recv and Send on a closed port.
var ErrClosed = net.ErrClosed
