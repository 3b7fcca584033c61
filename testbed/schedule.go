package testbed

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// Applied is one carbon hour the controller daemon (`p4ctl run`) applied to
// the switch, as its log tells: when it planned the hour (the hitless push
// starts then) and when it reported the push done (after the flip, the
// grace period and the cleanup).
type Applied struct {
	Hour    time.Time `json:"hour"`
	Planned time.Time `json:"planned"`
	Pushed  time.Time `json:"pushed,omitzero"` // zero: the push never finished
}

// ReadDaemonLog reads the JSON log of `p4ctl run --log-format json` and
// returns the hours it applied, in the order it planned them. Lines that
// are not JSON objects (e.g. a panic trace) are skipped; an unreadable
// time or hour on a "plan" or "pushed" line is an error (with its line
// number).
func ReadDaemonLog(r io.Reader) ([]Applied, error) {
	var out []Applied
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
			Hour string    `json:"hour"`
		}
		b := sc.Bytes()
		if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &line) != nil {
			continue
		}
		if line.Msg != "plan" && line.Msg != "pushed" {
			continue
		}
		hour, err := time.Parse(time.RFC3339, line.Hour)
		if err != nil || line.Time.IsZero() {
			return nil, fmt.Errorf("daemon log line %d: %q line without a valid time and hour", n, line.Msg)
		}
		switch line.Msg {
		case "plan":
			out = append(out, Applied{Hour: hour, Planned: line.Time})
		case "pushed":
			i := slices.IndexFunc(out, func(a Applied) bool { return a.Hour.Equal(hour) && a.Pushed.IsZero() })
			if i < 0 {
				return nil, fmt.Errorf("daemon log line %d: hour %s pushed but never planned", n, line.Hour)
			}
			out[i].Pushed = line.Time
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("daemon log: %w", err)
	}
	return out, nil
}

// DefaultFlipMargin widens every flip window on both sides: the time a
// request may take from its send to the switch's decision, and the
// millisecond resolution of the daemon's log.
const DefaultFlipMargin = 50 * time.Millisecond

// Schedule maps a request's wall-clock send time to the hours whose tables
// may have decided it. Hour i's tables take over in a flip window that
// opens when the daemon plans it and closes when its flip is certainly
// done: its "pushed" line minus the grace period (the daemon waits the
// grace period after the flip, then deletes the old generation, then
// logs). A request sent in a window may have been decided by either hour.
type Schedule struct {
	Applied []Applied
	Grace   time.Duration // the daemon's --grace
	Margin  time.Duration // added to both sides of each window
}

// At returns the indices into s.Applied of the hours that may have decided
// a request sent at t: the hour in force, or the two hours around a flip
// (earlier first). Before the first hour it returns the first; with no
// hours, nil.
func (s *Schedule) At(t time.Time) []int {
	if len(s.Applied) == 0 {
		return nil
	}
	i := 0
	for j := len(s.Applied) - 1; j > 0; j-- {
		if !t.Before(s.Applied[j].Planned.Add(-s.Margin)) {
			i = j
			break
		}
	}
	if i == 0 {
		return []int{0}
	}
	if end, open := s.flipBy(i); open || t.Before(end.Add(s.Margin)) || t.Equal(end.Add(s.Margin)) {
		return []int{i - 1, i}
	}
	return []int{i}
}

// flipBy is when hour i's flip is certainly done; open is true when the
// log never says (the push did not finish).
func (s *Schedule) flipBy(i int) (t time.Time, open bool) {
	a := s.Applied[i]
	if a.Pushed.IsZero() {
		return time.Time{}, true
	}
	return a.Pushed.Add(-s.Grace), false
}
