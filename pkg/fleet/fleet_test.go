package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
)

// A small fleet through two replayed days with one switch down: every
// reachable switch ends exactly in the final plan, the replay did not wait
// for the unreachable one (every hour went on without it, and the run
// took far less than its connection backoff would), and the lag metric
// names it and only it.
func TestFleetWithOneSwitchDown(t *testing.T) {
	cfg, err := config.Load("../../examples/mumbai.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const switches, hours = 8, 48
	res, err := Run(ctx, Options{Config: cfg, Switches: switches, Unreachable: 1, Hours: hours, SampleEvery: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res.Clean != switches || len(res.Dirty) > 0 {
		t.Fatalf("clean %d of %d: %v", res.Clean, switches, res.Dirty)
	}
	if len(res.UpdateMs) != hours || res.TicksWithUnreachable != hours {
		t.Errorf("%d updates, %d of them without the unreachable switch; want %d", len(res.UpdateMs), res.TicksWithUnreachable, hours)
	}
	if len(res.Lag) != 1 || res.Lag["down-000"] < hours-1 {
		t.Errorf("lag %v, want down-000 alone, ≥ %d h", res.Lag, hours-1)
	}
	if res.UpdateP99 <= 0 || res.HoursPerSec <= 0 || len(res.Samples) < hours/8 || res.Entries == 0 {
		t.Errorf("result %+v", res)
	}
}
