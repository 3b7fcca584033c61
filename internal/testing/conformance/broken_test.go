package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/p4ctl/p4ctl/internal/testing/conformance"
	"github.com/p4ctl/p4ctl/internal/testing/p4rttest"
	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/dataplane/p4rtserver"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// broken wraps the engine with one deliberate spec violation.
type broken struct {
	*engine.Engine
	bug string
}

func (b *broken) Write(ctx context.Context, ups []*p4v1.Update, a p4v1.WriteRequest_Atomicity) []error {
	if b.bug == "wide-values" {
		for _, u := range ups {
			for _, m := range u.GetEntity().GetTableEntry().GetMatch() {
				if ex := m.GetExact(); ex != nil && len(ex.Value) > 1 && ex.Value[0] == 0x80 {
					ex.Value = ex.Value[1:] // silently truncate instead of rejecting
				}
			}
		}
	}
	errs := b.Engine.Write(ctx, ups, a)
	if b.bug == "duplicates-ok" {
		for i, err := range errs {
			if status.Code(err) == codes.AlreadyExists {
				errs[i] = nil
			}
		}
	}
	return errs
}

func (b *broken) Read(ctx context.Context, e *p4v1.Entity, emit func(*p4v1.Entity) error) error {
	if b.bug == "no-wildcard" && e.GetTableEntry() != nil && e.GetTableEntry().GetTableId() == 0 {
		return nil
	}
	return b.Engine.Read(ctx, e, emit)
}

var _ p4rtserver.Target = (*broken)(nil)

// TestBrokenTarget runs the suite against a broken target; it only runs as
// the child of TestSuiteCatchesViolations.
func TestBrokenTarget(t *testing.T) {
	bug := os.Getenv("P4CTL_CONFORMANCE_BUG")
	if bug == "" {
		t.Skip("runs only as a child of TestSuiteCatchesViolations")
	}
	target := &broken{Engine: engine.New(engine.Options{}), bug: bug}
	sw := p4rttest.Start(t, p4rttest.WithTarget(target))
	conformance.Run(t, conformance.Conn{
		Name:     "broken (" + bug + ")",
		Dial:     func(t testing.TB, opts ...p4rt.Option) *p4rt.Client { return sw.Dial(t, opts...) },
		Pipeline: pipelineConfig(),
	})
}

// The suite can fail: each violation is caught by the subtest that owns it.
func TestSuiteCatchesViolations(t *testing.T) {
	if os.Getenv("P4CTL_CONFORMANCE_BUG") != "" {
		t.Skip("child process")
	}
	for bug, subtest := range map[string]string{
		"duplicates-ok": "--- FAIL: TestBrokenTarget/DuplicateInsert",
		"wide-values":   "--- FAIL: TestBrokenTarget/CanonicalBytestrings",
		"no-wildcard":   "--- FAIL: TestBrokenTarget/WildcardRead",
	} {
		t.Run(bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenTarget$", "-test.v")
			cmd.Env = append(os.Environ(), "P4CTL_CONFORMANCE_BUG="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a target with bug %q", bug)
			}
			if !strings.Contains(string(out), subtest) {
				t.Fatalf("bug %q: want %q in the output:\n%s", bug, subtest, out)
			}
		})
	}
}
