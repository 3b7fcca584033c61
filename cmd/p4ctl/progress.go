package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
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
