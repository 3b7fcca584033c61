//go:build linux

package ports

import "github.com/p4ctl/p4ctl/pkg/afpacket"

// openSocket opens s's interface (in namespace ns unless ns is "") as a
// blocking port with a receive buffer of recvBuf bytes (< 0: the system's).
func openSocket(s Spec, ns string, recvBuf int) (socket, error) {
	var (
		p   *afpacket.Port
		err error
	)
	if ns != "" {
		p, err = afpacket.OpenIn(ns, s.Interface, false)
	} else {
		p, err = afpacket.Open(s.Interface, false)
	}
	if err != nil {
		return nil, err
	}
	if recvBuf > 0 {
		if err := p.SetBuffers(recvBuf, 0); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}
