package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/p4ctl/p4ctl/pkg/output"
)

// newProgressBar returns a progress bar drawing on w when w is a terminal,
// and nil otherwise (pipes, files, tests), so output stays clean.
func newProgressBar(w io.Writer, desc string) *progressbar.ProgressBar {
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

// newProgress returns a progress callback drawing a bar on w when w is a
// terminal (nil otherwise) and a function that clears the bar.
func newProgress(w io.Writer, desc string) (func(done, total int), func()) {
	bar := newProgressBar(w, desc)
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

// runExperiment is the tail every experiment command shares: a progress
// bar on stderr while run runs, then the plots (plot, unless nil: see
// plotsTo), the result printed in format (out says what is printed, given
// the plot files) and the plot files named on stderr. The result is
// returned for what a command checks after printing.
func runExperiment[R any](s *streams, format output.Format, desc string, run func(progress func(done, total int)) (R, error),
	plot func(R) ([]string, error), out func(R, []string) any) (R, error) {
	progress, done := newProgress(s.Err, desc)
	defer done()
	res, err := run(progress)
	done() // the bar is gone before anything is printed
	if err != nil {
		return res, err
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
	printPlots(s, files)
	return res, nil
}

// plotsTo returns the plot step of runExperiment: write into dir, or nil
// (no plots) when off.
func plotsTo[R any](off bool, dir string, write func(R, string) ([]string, error)) func(R) ([]string, error) {
	if off {
		return nil
	}
	return func(r R) ([]string, error) { return write(r, dir) }
}
