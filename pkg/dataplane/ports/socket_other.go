//go:build !linux

package ports

import "errors"

func openSocket(Spec, string, int) (socket, error) {
	return nil, errors.New("data-plane ports need Linux (AF_PACKET sockets)")
}
