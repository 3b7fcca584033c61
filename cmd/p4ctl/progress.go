package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newProgress returns a progress callback drawing a bar on w when w is a
// terminal (nil otherwise) and a function that clears the bar.
func newProgress(w io.Writer, desc string) (func(done, total int), func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
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
