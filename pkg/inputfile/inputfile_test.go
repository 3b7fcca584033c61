package inputfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.yaml")
	want := strings.Repeat("x", 3*chunk+17)
	if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(context.Background(), p, 0)
	if err != nil || string(got) != want {
		t.Fatalf("Read: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if _, err := Read(context.Background(), p, int64(len(want)-1)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Fatalf("Read over the limit: %v, want ErrTooLarge naming %s", err, p)
	}
	if _, err := Read(context.Background(), filepath.Join(t.TempDir(), "missing"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// Issue 27 item 1: plan -c /dev/zero read without bound (0.5 → 2.3 GB in
// 12 s).
func TestReadEndlessDevice(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skipf("%s: %v", dev, err)
		}
		start := time.Now()
		_, err := Read(context.Background(), dev, 4<<20)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), dev) {
			t.Errorf("Read(%s): %v, want ErrTooLarge naming it", dev, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Read(%s) took %v", dev, d)
		}
	}
}

// Issue 27 item 1: a FIFO nobody writes to blocked p4ctl for ever, Ctrl-C
// included.
func TestReadFIFOInterrupted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, name := range []string{"no writer", "silent writer"} {
		t.Run(name, func(t *testing.T) {
			if name == "silent writer" {
				// Opened once the reader waits; writes nothing.
				go func() {
					time.Sleep(50 * time.Millisecond)
					w, err := os.OpenFile(p, os.O_WRONLY, 0)
					if err == nil {
						time.Sleep(3 * time.Second)
						w.Close()
					}
				}()
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			_, err := Read(ctx, p, 0)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
				t.Fatalf("Read: %v, want context.Canceled naming the file", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("Read returned %v after the interrupt", d)
			}
		})
	}
}
