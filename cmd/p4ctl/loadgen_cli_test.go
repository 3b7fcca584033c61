package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loadgen to a port where nothing listens exits 1 and says so, instead of
// reporting 0 replies with exit 0 (issue 15 item 13).
func TestLoadgenNothingAnswers(t *testing.T) {
	port := freeUDPPort(t)
	code, out, errs := p4ctl(t, "loadgen", "--target", "127.0.0.1:"+strconv.Itoa(port), "--rate", "100", "--duration", "200ms", "--timeout", "100ms")
	expect(t, "loadgen to a dead port", code, exitError, out, errs, "nothing answered any of", "no answer from 127.0.0.1:"+strconv.Itoa(port))
}

// Output paths are checked before the work starts: a directory given as
// --json fails at once, not after the run (issue 15 item 5); so does an
// --out-dir that is a file, on every plotting command.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(freeUDPPort(t))
	for _, args := range [][]string{
		{"loadgen", "--target", "127.0.0.1:" + port, "--duration", "20s", "--json", dir},
		{"loadgen", "--target", "127.0.0.1:" + port, "--duration", "20s", "--csv", filepath.Join(dir, "no", "such", "dir.csv")},
		{"eval", "carbon", "--runs", "30", "--out-dir", file},
		{"sim", "micro", "e1", "--out-dir", file},
		{"sim", "serverless", "--out-dir", file},
		{"tune", "jbsq", "--out-dir", file},
		{"demo", "--out-dir", file},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			start := time.Now()
			code, out, errs := p4ctl(t, args...)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %v: the work ran before the output path was checked", took)
			}
			expect(t, strings.Join(args, " "), code, exitUsage, out, errs, "--")
		})
	}
}

// openPTY returns the two ends of a pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty: %v", err)
	}
	return m, s
}

// screen replays terminal output (carriage returns, newlines, erase-line
// sequences, overwrites) into the lines a person would see.
func screen(b []byte) []string {
	rows := [][]rune{{}}
	row, col := 0, 0
	rs := []rune(string(b))
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			row++
			if row == len(rows) {
				rows = append(rows, []rune{})
			}
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'K' {
				if string(rs[i+2:j]) == "2" {
					rows[row] = []rune{}
				} else if col < len(rows[row]) {
					rows[row] = rows[row][:col]
				}
			}
			i = j
		case r < 0x20:
		default:
			for len(rows[row]) <= col {
				rows[row] = append(rows[row], ' ')
			}
			rows[row][col] = r
			col++
		}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.TrimRight(string(r), " ")
	}
	return out
}

// On a terminal the progress bar is cleared before the report, which
// starts on a line of its own, also when the run ends before the bar's end
// (issue 15 item 14).
func TestLoadgenProgressBarCleared(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&buf, master); close(copied) }()
	port := strconv.Itoa(freeUDPPort(t))
	// Interrupted (as by ^C) at a fifth of its duration: the bar stands at
	// ~20 %, short of the end where it would clear itself.
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	run(ctx, []string{"loadgen", "--target", "127.0.0.1:" + port, "--rate", "50", "--duration", "6s", "--timeout", "100ms"}, slave, slave)
	slave.Close()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	lines := screen(buf.Bytes())
	report := -1
	for i, l := range lines {
		if strings.Contains(l, "loadgen:") || strings.Contains(l, "%|") {
			t.Errorf("line %d still shows the progress bar: %q", i, l)
		}
		if strings.Contains(l, "sent ") && report < 0 {
			report = i
			if !strings.HasPrefix(l, "sent ") {
				t.Errorf("the report is glued to something: %q", l)
			}
		}
	}
	if report < 0 {
		t.Fatalf("no report on the terminal:\n%s", strings.Join(lines, "\n"))
	}
}
