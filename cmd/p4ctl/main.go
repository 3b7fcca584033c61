// Command p4ctl compiles carbon-aware, SLA-constrained routing policy into
// P4 switch state, pushes it over P4Runtime, runs an embedded P4Runtime
// target, and reproduces the research evaluations. This package only wires
// flags to the packages under pkg/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go watchInterrupt(ctx, done, stop, interruptGrace, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(done)
	stop()
	os.Exit(code)
}
