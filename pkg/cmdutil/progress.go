package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/p4ctl/p4ctl/pkg/output"
)

// NewProgressBar returns a progress bar drawing on w when w is a terminal,
// and nil otherwise (pipes, files, tests), so output stays clean.
func NewProgressBar(w io.Writer, desc string) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions(1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// NewProgress returns a progress callback drawing a bar on w when w is a
// terminal (nil otherwise) and a function that clears the bar.
func NewProgress(w io.Writer, desc string) (func(done, total int), func()) {
	bar := NewProgressBar(w, desc)
	if bar == nil {
		return nil, func() {}
	}
	finished := false
	return func(done, total int) {
			if total > bar.GetMax() {
				bar.ChangeMax(total)
			}
			_ = bar.Set(done)
		}, func() {
			if !finished {
				finished = true
				_ = bar.Finish()
				_ = bar.Clear()
			}
		}
}

// RunExperiment is the tail every experiment command shares: a progress
// bar on stderr while run runs, then the plots (plot, unless nil: see
// PlotsTo), the result printed in format (out says what is printed, given
// the plot files) and the plot files named on stderr. The result is
// returned for what a command checks after printing.
func RunExperiment[R any](s *Streams, format output.Format, desc string, run func(progress func(done, total int)) (R, error),
	plot func(R) ([]string, error), out func(R, []string) any) (R, error) {
	progress, done := NewProgress(s.Err, desc)
	defer done()
	res, err := run(progress)
	done() // the bar is gone before anything is printed
	if err != nil {
		return res, NothingLeft(err)
	}
	var files []string
	if plot != nil {
		if files, err = plot(res); err != nil {
			return res, err
		}
	}
	if err := output.Print(s.Out, format, out(res, files)); err != nil {
		return res, err
	}
	PrintPlots(s, files)
	return res, nil
}

// PlotsTo returns the plot step of RunExperiment: write into dir, or nil
// (no plots) when off.
func PlotsTo[R any](off bool, dir string, write func(R, string) ([]string, error)) func(R) ([]string, error) {
	if off {
		return nil
	}
	return func(r R) ([]string, error) { return write(r, dir) }
}

// PrintPlots names the plot files written, on stderr (every command that
// plots: stdout stays the result, so -o json stays parseable).
func PrintPlots(s *Streams, files []string) {
	if len(files) > 0 {
		fmt.Fprintf(s.Err, "plots: %s\n", strings.Join(files, ", "))
	}
}

// IsTerminal reports whether w is a terminal (for progress output).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// HourBar is a progress bar over replayed hours, drawn on stderr only
// when it is a terminal; its methods are safe for concurrent use and do
// nothing without a terminal.
type HourBar struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// NewHourBar returns a bar of hours drawing on w.
func NewHourBar(w io.Writer, hours int) *HourBar {
	if !IsTerminal(w) {
		return &HourBar{}
	}
	return &HourBar{bar: progressbar.NewOptions(hours, progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("replaying hours"), progressbar.OptionShowCount(),
		progressbar.OptionThrottle(50*time.Millisecond), progressbar.OptionClearOnFinish())}
}

// Set draws done hours (the total is the bar's).
func (b *HourBar) Set(done, _ int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Set(done)
	}
}

// Clear erases the bar, before a line is printed.
func (b *HourBar) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Clear()
	}
}

// Finish ends the bar; later calls do nothing.
func (b *HourBar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
		b.bar = nil
	}
}
