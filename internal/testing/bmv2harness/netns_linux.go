//go:build linux

package bmv2harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// dialInNetNS connects to addr from inside network namespace ns (a name
// under /var/run/netns): on a locked OS thread it enters the namespace,
// dials, and returns to the original namespace. If returning fails the
// thread is left locked, so the Go runtime discards it with the goroutine.
func dialInNetNS(ctx context.Context, ns, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("open own netns: %w", err)}
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/var/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("open netns %s: %w", ns, err)}
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("enter netns %s: %w", ns, err)}
			return
		}
		var d net.Dialer
		c, derr := d.DialContext(ctx, "tcp", addr)
		if err := setns(orig); err != nil {
			// Stay locked: this thread is in the wrong namespace and dies
			// with the goroutine.
			if c != nil {
				c.Close()
			}
			ch <- result{nil, fmt.Errorf("leave netns %s: %w", ns, err)}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{c, derr}
	}()
	r := <-ch
	return r.c, r.err
}

func setns(f *os.File) error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) }
