package controller

import (
	"context"
	"fmt"
	"io"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// ApplyResult is what p4ctl apply pushed: the hour, the policy in force
// and every target's report.
type ApplyResult struct {
	Hour    time.Time     `json:"hour"`
	Policy  string        `json:"policy"`
	Stale   bool          `json:"stale,omitempty"`
	Reports []ApplyTarget `json:"targets"`
}

// ApplyTarget is one target's push: the driver's report, whose Duration
// runs to the flip (the new plan in force), and the whole time the target
// took, connection, --grace wait and cleanup included.
type ApplyTarget struct {
	Report
	Total time.Duration `json:"total_ns"`
}

// WriteText prints a line per target: its writes by phase, the epoch and
// the time taken.
func (r *ApplyResult) WriteText(w io.Writer) error {
	for _, rep := range r.Reports {
		epoch := fmt.Sprintf("epoch %d → %d", rep.From, rep.To)
		if rep.Unchanged {
			epoch = fmt.Sprintf("epoch %d kept", rep.To)
		}
		took := fmt.Sprintf("%s in all", roundDuration(rep.Total))
		if rep.ByPhase["cleanup"] > 0 {
			took = fmt.Sprintf("flip after %s, %s in all with the --grace wait and cleanup", roundDuration(rep.Duration), roundDuration(rep.Total))
		}
		fmt.Fprintf(w, "%s: policy %s for %s: %d writes (%s), %s, %s\n", rep.Target, rep.Policy, rep.Hour.Format(time.RFC3339),
			rep.Writes, phases(rep.ByPhase), epoch, took)
	}
	return nil
}

// roundDuration keeps three significant digits or so: 1.94ms, 1.01s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// phases lists the writes of each phase that wrote any.
func phases(m map[string]int) string {
	out := ""
	for _, p := range []string{"stage", "before", "flip", "after", "cleanup"} {
		if m[p] > 0 {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("%s %d", p, m[p])
		}
	}
	if out == "" {
		return "nothing to do"
	}
	return out
}

// DryRunResult is the plan of every target (p4ctl apply --dry-run): the
// update plans for -o json|yaml, with the WriteRequests in text.
type DryRunResult struct {
	Hour    time.Time       `json:"hour"`
	Policy  string          `json:"policy"`
	Targets []DryRunTarget  `json:"targets"`
	text    []dryRunRequest `json:"-"`
}

// DryRunTarget is one target's update plan.
type DryRunTarget struct {
	Target string               `json:"target"`
	Update *compiler.UpdatePlan `json:"update"`
}

type dryRunRequest struct {
	target string
	update *compiler.UpdatePlan
	reqs   []*p4v1.WriteRequest
}

// Add records target's update plan and the WriteRequests it would send.
func (r *DryRunResult) Add(target string, u *compiler.UpdatePlan, reqs []*p4v1.WriteRequest) {
	r.Targets = append(r.Targets, DryRunTarget{Target: target, Update: u})
	r.text = append(r.text, dryRunRequest{target: target, update: u, reqs: reqs})
}

// WriteText prints each target's update plan and its WriteRequests, in
// order.
func (r *DryRunResult) WriteText(w io.Writer) error {
	for _, t := range r.text {
		fmt.Fprintf(w, "# target %s: policy %s for %s\n", t.target, r.Policy, r.Hour.Format(time.RFC3339))
		if err := t.update.WriteText(w); err != nil {
			return err
		}
		if len(t.reqs) == 0 {
			continue
		}
		fmt.Fprintf(w, "# %d WriteRequests, in order (one per phase and operation)\n", len(t.reqs))
		if _, err := io.WriteString(w, p4rt.FormatWriteRequests(t.reqs)); err != nil {
			return err
		}
	}
	return nil
}

// DryRun returns the update Sync would write for p (Plan) and the
// WriteRequests that carry it, one per phase and operation, with the
// target's election id, without writing.
func (d *Driver) DryRun(ctx context.Context, p *Plan) (*compiler.UpdatePlan, []*p4v1.WriteRequest, error) {
	u, _, err := d.Plan(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	c, tr, _ := d.conn()
	var reqs []*p4v1.WriteRequest
	for _, ph := range u.Phases() {
		for _, run := range OpRuns(ph.Updates) {
			ups, err := tr.Updates(run)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range c.WriteRequests(ups) {
				r.ElectionId = &p4v1.Uint128{High: d.target.ElectionID.High, Low: d.target.ElectionID.Low}
				reqs = append(reqs, r)
			}
		}
	}
	return u, reqs, nil
}
