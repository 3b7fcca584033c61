package testnet

import (
	"errors"
	"testing"
	"time"
)

// RecvIPv4 polls a nonblocking packet socket's recv (wouldBlock: its "no
// frame yet" error) until an IPv4 frame arrives or within has passed, and
// returns a copy of that frame (nil when none came). Other frames (the
// kernel's IPv6 chatter, ARP) are passed over; any other error fails t.
func RecvIPv4(t testing.TB, recv func([]byte) ([]byte, error), wouldBlock error, within time.Duration) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		g, err := recv(buf)
		switch {
		case errors.Is(err, wouldBlock):
			time.Sleep(time.Millisecond) // polling interval of a nonblocking read
		case err != nil:
			t.Fatal(err)
		case len(g) >= 14 && g[12] == 0x08 && g[13] == 0x00:
			return append([]byte(nil), g...)
		}
	}
	return nil
}
