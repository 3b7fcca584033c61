//go:build !linux

// Command standin is a Linux-only test aid (AF_PACKET); see main.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "standin: Linux only (AF_PACKET)")
	os.Exit(1)
}
