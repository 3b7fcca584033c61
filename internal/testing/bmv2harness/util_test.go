package bmv2harness_test

import (
	"net"
	"strconv"
	"time"
)

type netDialer struct{}

func (netDialer) dial(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, 300*time.Millisecond)
}

func itoa(i int) string { return strconv.Itoa(i) }
