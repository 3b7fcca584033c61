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
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
