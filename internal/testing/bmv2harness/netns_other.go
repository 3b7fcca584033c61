//go:build !linux

package bmv2harness

import (
	"context"
	"errors"
	"net"
)

func dialInNetNS(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("network namespaces need Linux")
}
