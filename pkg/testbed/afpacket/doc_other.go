//go:build !linux

// Package afpacket is raw Ethernet I/O for the testbeds; it exists on
// Linux only (AF_PACKET).
package afpacket
