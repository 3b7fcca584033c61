package soak

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/p4ctl/p4ctl/internal/testing/routecheck"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/dataplane/xdp"
	"github.com/p4ctl/p4ctl/pkg/demo"
)

// deviceID is every soak switch's P4Runtime device id.
const deviceID = 1

// life is one run of an embedded switch, from its start to its kill: the
// switch, its P4Runtime server and the checker of the plans it may hold.
type life struct {
	sw    *dataplane.Switch
	srv   *p4rtserver.Server
	ck    *routecheck.Checker
	done  <-chan struct{} // closed when Serve returned
	serve func()          // stops the traffic's servers answering on sw
}

// slot is one switch of the soak, killed and restarted at one loopback
// address; the controller knows it by name.
type slot struct {
	name string
	addr string // fixed after the first start

	cur atomic.Pointer[life] // nil while the switch is down

	mu       sync.Mutex
	inflight map[*controller.Plan]int // pushes begun and not ended (OnSync)

	kills int
	xdp   bool // runs the XDP program (pkg/dataplane/xdp)
}

// start starts a new life of the switch: empty tables, with the p4ctl
// program loaded or (noPipeline) waiting for SetForwardingPipelineConfig.
// Plans whose push is in flight may write into the new life, so its checker
// allows them.
func (s *slot) start(tr *demo.Traffic, noPipeline bool) error {
	opts := dataplane.Options{NoPipeline: noPipeline}
	if s.xdp {
		opts.Datapath = xdp.New(xdp.Options{})
	}
	sw, err := dataplane.New(opts)
	if err != nil {
		return fmt.Errorf("switch %s: %w", s.name, err)
	}
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lis net.Listener
	for try := 0; ; try++ {
		lis, err = net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || try == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond) // the port of the previous life may linger a moment
	}
	if err != nil {
		sw.Close()
		return fmt.Errorf("switch %s: listen on %s: %w", s.name, addr, err)
	}
	s.addr = lis.Addr().String()
	emb, err := dataplane.Serve(sw, dataplane.ServeOptions{Listener: lis, Server: []p4rtserver.Option{p4rtserver.WithDeviceID(deviceID)}})
	if err != nil {
		sw.Close()
		return fmt.Errorf("switch %s: %w", s.name, err)
	}
	l := &life{sw: sw, srv: emb.Server, ck: routecheck.New(), done: emb.Done()}
	l.serve = tr.Serve(sw)
	s.mu.Lock() // with onSync: no push starts unseen between the two
	for p := range s.inflight {
		l.ck.Begin(p)
	}
	s.cur.Store(l)
	s.mu.Unlock()
	return nil
}

// kill stops the switch at once: its P4Runtime server and everything on
// it go, as with a SIGKILL; the traffic stops reaching it. It reports
// whether the switch was up.
func (s *slot) kill() bool {
	l := s.cur.Swap(nil)
	if l == nil {
		return false
	}
	l.srv.Stop()
	<-l.done
	l.serve()
	if err := l.sw.Close(); err != nil { // an XDP switch unloads its program
		fmt.Fprintf(os.Stderr, "soak: close switch %s: %v\n", s.name, err)
	}
	s.kills++
	return true
}

// onSync follows the controller's pushes to this switch.
func (s *slot) onSync(e controller.SyncEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Done {
		if s.inflight[e.Plan]--; s.inflight[e.Plan] <= 0 {
			delete(s.inflight, e.Plan)
		}
	} else {
		s.inflight[e.Plan]++
	}
	l := s.cur.Load()
	if l == nil {
		return
	}
	switch {
	case !e.Done:
		l.ck.Begin(e.Plan)
	case e.Err == nil:
		l.ck.End(e.Plan)
	}
}
