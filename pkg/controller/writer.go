package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Writer applies P4Runtime updates to one switch, in order. The controller
// writes every phase of a generation through it; tests wrap it to stop a
// controller after any number of updates.
type Writer interface {
	Write(ctx context.Context, updates []*p4v1.Update) error
}

// ClientWriter writes through a p4rt client with retry-safe semantics: an
// INSERT that finds the entry becomes a MODIFY, a DELETE of a missing entry
// counts as done (p4rt.Client.ApplyRetrySafe), so re-applying a plan after a
// crash never fails on ALREADY_EXISTS.
type ClientWriter struct{ Client *p4rt.Client }

// Write implements Writer.
func (w ClientWriter) Write(ctx context.Context, updates []*p4v1.Update) error {
	return w.Client.ApplyRetrySafe(ctx, updates)
}

// ErrWriteLimit is returned by a LimitWriter once its budget is spent: the
// controller behaves as if it had been killed at that point.
var ErrWriteLimit = errors.New("write limit reached (simulated controller crash)")

// LimitWriter passes at most Remaining updates to W, then fails every
// write with ErrWriteLimit. A write that crosses the limit is cut: its first
// updates reach the switch, the rest never do — exactly what a controller
// killed between two updates leaves behind. It is the fault injector of the
// crash tests.
type LimitWriter struct {
	W Writer

	mu        sync.Mutex
	remaining int
}

// NewLimitWriter returns a writer that lets n updates through.
func NewLimitWriter(w Writer, n int) *LimitWriter { return &LimitWriter{W: w, remaining: n} }

// Write implements Writer.
func (l *LimitWriter) Write(ctx context.Context, updates []*p4v1.Update) error {
	l.mu.Lock()
	n := min(l.remaining, len(updates))
	l.remaining -= n
	l.mu.Unlock()
	if n > 0 {
		if err := l.W.Write(ctx, updates[:n]); err != nil {
			return err
		}
	}
	if n < len(updates) {
		return fmt.Errorf("after %d of %d updates: %w", n, len(updates), ErrWriteLimit)
	}
	return nil
}
