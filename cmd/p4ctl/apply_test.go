package main

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// apply reports the time to the flip and the whole time, the --grace wait
// included, instead of a 1.9 ms for a command that took a second (issue 15
// item 17).
func TestApplyReportsBothDurations(t *testing.T) {
	sw := embeddedSwitch(t)
	conn := []string{"--grpc-addr", sw.Addr()}
	code, out, errs := p4ctl(t, append([]string{"apply", "-c", mumbai, "--grace", "0"}, conn...)...)
	expect(t, "apply hour 0", code, exitOK, out, errs, "in all")
	start := time.Now()
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--hour", "1", "--grace", "300ms"}, conn...)...)
	took := time.Since(start)
	expect(t, "apply hour 1", code, exitOK, out, errs, "flip after ", "in all with the --grace wait")
	m := regexp.MustCompile(`, ([0-9.]+[µm]?s) in all`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total in %q", out)
	}
	total, err := time.ParseDuration(m[1])
	if err != nil || total < 300*time.Millisecond || total > took {
		t.Errorf("total %s (%v): want ≥ the 300ms grace and ≤ the %v the command took", m[1], err, took)
	}
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--hour", "2", "--grace", "100ms", "-o", "json"}, conn...)...)
	expect(t, "apply -o json", code, exitOK, out, errs)
	var res struct {
		Targets []struct {
			Duration time.Duration `json:"duration_ns"`
			Total    time.Duration `json:"total_ns"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Targets) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if r := res.Targets[0]; r.Total < 100*time.Millisecond || r.Duration >= r.Total {
		t.Errorf("json: duration %v, total %v", r.Duration, r.Total)
	}
}
