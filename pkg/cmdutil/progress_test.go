package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/output"
)

// Issue 27: an experiment ended by Ctrl-C said only "context canceled";
// it says it leaves nothing (no result printed, no plot written). Other
// failures are reported as they are.
func TestRunExperimentInterrupted(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("eval carbon: %w", context.Canceled), "eval carbon: context canceled: stopped before any result, nothing printed or written"},
		{errors.New("boom"), "boom"},
	} {
		var out, errb bytes.Buffer
		plotted := false
		_, err := RunExperiment(&Streams{Out: &out, Err: &errb}, output.Table, "test",
			func(func(int, int)) (int, error) { return 0, tc.err },
			func(int) ([]string, error) { plotted = true; return nil, nil },
			func(r int, _ []string) any { return r })
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.err) || plotted || out.Len() > 0 || strings.Contains(errb.String(), "plots:") {
			t.Errorf("%v: %v (plotted %v, out %q), want %q", tc.err, err, plotted, out.String(), tc.want)
		}
	}
}
