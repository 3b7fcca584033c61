package controller_test

import (
	"math"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/controller"
)

// A replay speed must be a finite factor ≥ 0: NaN made the clock never
// reach the next hour (p4ctl run --speed NaNx hung).
func TestReplayClockRejectsNonFiniteSpeed(t *testing.T) {
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		if _, err := controller.NewReplayClock(start, v); err == nil {
			t.Errorf("speed %v accepted", v)
		}
	}
	for _, v := range []float64{0, 1, 3600} {
		if _, err := controller.NewReplayClock(start, v); err != nil {
			t.Errorf("speed %v: %v", v, err)
		}
	}
}
