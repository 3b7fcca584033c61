package fnserver

import (
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Every metric follows Prometheus naming: snake_case, counters end in
// _total, units in seconds (issue 15 item 12: p4ctl_serve_badHeadertotal).
func TestMetricNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.start(0)
	m.done(0, 1, 2, true)
	m.malformed()
	m.unexpected()
	m.dropped()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^p4ctl_serve_[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	names := map[string]bool{}
	for _, f := range fams {
		n := f.GetName()
		names[n] = true
		if !snake.MatchString(n) {
			t.Errorf("%s: not snake_case under p4ctl_serve_", n)
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(n, "_total") {
			t.Errorf("counter %s does not end in _total", n)
		}
		if f.GetType() != dto.MetricType_COUNTER && strings.HasSuffix(n, "_total") {
			t.Errorf("%s ends in _total but is a %s", n, f.GetType())
		}
	}
	if !names["p4ctl_serve_malformed_total"] {
		t.Errorf("no p4ctl_serve_malformed_total in %v", names)
	}
}
