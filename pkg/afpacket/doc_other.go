//go:build !linux

// Package afpacket is raw Ethernet I/O on one network interface
// (AF_PACKET sockets); its sockets exist on Linux only. CompleteChecksum
// is portable.
package afpacket
