// Package inputfile reads the files an operator hands p4ctl (controller
// configurations, carbon traces, P4Info files, sites files) with a bound
// on their size and under a context: /dev/zero, /dev/urandom or a FIFO
// nobody writes to are refused or abandoned instead of being read without
// end, and an interrupt (the command's context) ends the read at once.
package inputfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// MaxSize is the largest input file p4ctl reads, in bytes (64 MiB): far
// beyond any configuration the tables can hold (a generated 10 000-site
// configuration is a few MB), a year of hourly traces per zone (about
// 300 kB) or a P4Info (tens of kB).
const MaxSize = 64 << 20

// chunk is how much is read between two looks at the context.
const chunk = 1 << 20

// ErrTooLarge is returned (wrapped) for a file larger than the limit.
var ErrTooLarge = errors.New("file too large")

// Read reads the file at path, at most limit bytes (MaxSize when limit ≤
// 0). A larger file (or an endless one: /dev/zero, /dev/urandom) is an
// error wrapping ErrTooLarge, naming the file and the limit. The read ends
// when ctx is done, also while it waits for a writer to open a FIFO or for
// data from a pipe, with an error wrapping ctx.Err().
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxSize
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			opened <- nil
			done <- result{nil, err}
			return
		}
		opened <- f
		b, err := readLimited(ctx, f, path, limit)
		f.Close()
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
	}
	// Interrupted: unblock the reader so that its goroutine ends too. A
	// FIFO without a writer blocks in open(2): open it for writing
	// (non-blocking, succeeds because a reader waits), which lets that
	// open return; a pollable file (pipe, FIFO) blocked in read(2) ends
	// with its deadline.
	select {
	case f := <-opened:
		if f != nil {
			_ = f.SetReadDeadline(time.Unix(1, 0)) // in the past: a blocked read ends
		}
	default:
		if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}
	return nil, fmt.Errorf("read %s: %w", path, ctx.Err())
}

// readLimited reads f in chunks, looking at ctx between them.
func readLimited(ctx context.Context, f *os.File, path string, limit int64) ([]byte, error) {
	var buf []byte
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, fmt.Errorf("read %s: %w: %d bytes, the limit is %d (%s)", path, ErrTooLarge, st.Size(), limit, human(limit))
		}
		buf = make([]byte, 0, st.Size()+1)
	}
	r := io.LimitReader(f, limit+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(chunk, limit+1-int64(len(buf))))...)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("read %s: %w: more than %d bytes (%s; a device such as /dev/zero, or the wrong file?)", path, ErrTooLarge, limit, human(limit))
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("read %s: %w", path, ctx.Err())
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// human formats a byte count in MiB or kiB.
func human(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d kiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
