package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 27 item 1: `plan -c FIFO` (or any input file nobody writes to)
// blocked for ever and ignored Ctrl-C; every command that reads an input
// file now reads it under its context and names what it was doing.
func TestInputFileInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cases := [][]string{
		{"plan", "-c", fifo},
		{"diff", "-c", fifo, "--grpc-addr", "127.0.0.1:1"},
		{"eval", "carbon", "--sites", fifo, "--site", "x", "--quick"},
		{"push", "pipeline", "--grpc-addr", "127.0.0.1:1", "--p4info", fifo},
		{"get", "entries", "--grpc-addr", "127.0.0.1:1", "--config", fifo},
		{"run", "-c", mumbai, "--grpc-addr", "127.0.0.1:1", "--metrics-addr", "", "--p4info", fifo},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel)
			var out, errb bytes.Buffer
			done := make(chan int, 1)
			start := time.Now()
			go func() { done <- run(ctx, args, &out, &errb) }()
			select {
			case code := <-done:
				if code == exitOK {
					t.Fatalf("exit 0 after the interrupt\n%s%s", out.String(), errb.String())
				}
				if d := time.Since(start); d > 1300*time.Millisecond {
					t.Errorf("returned %v after start, want within 1 s of the interrupt", d)
				}
				if !strings.Contains(errb.String(), "interrupted") || !strings.Contains(errb.String(), fifo) {
					t.Errorf("stderr %q: want a line saying it was interrupted reading %s", errb.String(), fifo)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%v: still running 5 s after the interrupt", args)
			}
		})
	}
}

// Issue 27 item 1: input files are read up to a documented size; an
// endless device (/dev/zero) is refused at once, naming it.
func TestInputFileTooLarge(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, args := range [][]string{
		{"plan", "-c", "/dev/zero"},
		{"get", "entries", "--grpc-addr", "127.0.0.1:1", "--config", "/dev/zero"},
	} {
		start := time.Now()
		code, out, errs := p4ctl(t, args...)
		if code == exitOK || !strings.Contains(errs, "/dev/zero") || !strings.Contains(errs, "too large") {
			t.Errorf("%v: exit %d, stderr %q; want an error saying /dev/zero is too large\n%s", args, code, errs, out)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v took %v", args, d)
		}
	}
}

// Issue 27 item 1: the watchdog behind Ctrl-C: a command still busy one
// grace period after the signal ends the process, saying so; one that
// returns in time is left alone.
func TestWatchInterrupt(t *testing.T) {
	for _, returns := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		stopped := make(chan struct{})
		exited := make(chan int, 1)
		var errb bytes.Buffer
		go func() {
			watchInterrupt(ctx, done, func() {}, 50*time.Millisecond, &errb, func(c int) { exited <- c })
			close(stopped)
		}()
		cancel()
		if returns {
			close(done)
		}
		<-stopped
		select {
		case c := <-exited:
			if returns {
				t.Errorf("exit(%d) for a command that returned", c)
			} else if c != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("exit(%d), stderr %q; want %d and a line saying why", c, errb.String(), exitInterrupted)
			}
		default:
			if !returns {
				t.Error("a command busy after the grace period was not ended")
			}
		}
	}
}
