//go:build linux

package bmv2harness

import (
	"context"
	"net"

	"github.com/p4ctl/p4ctl/pkg/afpacket"
)

// dialInNetNS connects to addr from inside network namespace ns (a name
// under /var/run/netns) with afpacket.InNetNS: the socket stays in ns, the
// thread returns to its own namespace (or is discarded by the runtime).
func dialInNetNS(ctx context.Context, ns, addr string) (net.Conn, error) {
	var c net.Conn
	var derr error
	err := afpacket.InNetNS(ns, func() error {
		var d net.Dialer
		c, derr = d.DialContext(ctx, "tcp", addr)
		return nil
	})
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, err
	}
	return c, derr
}
