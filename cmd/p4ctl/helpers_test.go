package main

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// p4ctl runs the CLI with args as the binary would (a minute's deadline)
// and returns its exit code, stdout and stderr.
func p4ctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}
