package testnet

import (
	"net"
	"sync"
	"testing"
)

// SilentListener listens on loopback, accepts every connection and never
// answers (a hung switch, another service: no HTTP/2 handshake completes),
// until t's cleanup closes it and what it accepted; it returns its address.
func SilentListener(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}
