package controller

import (
	"testing"
	"time"
)

// p4ctl_target_lag_hours: a target this replica is primary of and keeps in
// step lags 0, an unreachable one grows by an hour per plan, and one this
// replica is a backup of is not reported at all (its primary applies the
// plans; a growing lag would look like a switch that is down) — until the
// replica becomes its primary.
func TestLagNotReportedByBackups(t *testing.T) {
	m := NewMetrics()
	m.observeArbitration("primary", true, true)
	m.observeArbitration("backup", true, false)
	m.observeArbitration("down", false, false)
	h := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := h.Add(time.Duration(i) * time.Hour)
		m.ObservePlan(&Plan{Hour: at})
		m.observePush("primary", Report{Hour: at, Writes: 1}, nil)
	}
	lag := m.Lag()
	if lag["primary"] != 0 || lag["down"] != 5 {
		t.Errorf("lag %v: want primary 0, down 5", lag)
	}
	if _, ok := lag["backup"]; ok {
		t.Errorf("a backup's lag is reported: %v", lag)
	}
	m.observeArbitration("backup", true, true) // takes over
	if lag := m.Lag(); lag["backup"] != 5 {
		t.Errorf("after taking over, the backup's lag is %v, want 5 (it has applied nothing yet)", lag["backup"])
	}
}
