package packetcases

import (
	"fmt"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Digests records the latency_sample digests a switch sends while a case
// runs, in list order, for comparison with Case.Digests. Safe for
// concurrent use (the switch delivers lists from its own goroutine).
type Digests struct {
	mu   sync.Mutex
	got  []Sample
	errs []error
}

// Add decodes a DigestList's samples (rtt in µs: v1model and the embedded
// target) and records them.
func (d *Digests) Add(l *p4v1.DigestList) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, data := range l.GetData() {
		v, err := p4rt.DecodeStruct(data, pipeline.DigestWidths())
		var s pipeline.LatencySample
		if err == nil {
			s, err = pipeline.SampleFromMembers(v)
		}
		if err != nil {
			d.errs = append(d.errs, fmt.Errorf("digest list %d, item %d: %w", l.GetListId(), i, err))
			continue
		}
		d.got = append(d.got, Sample{Site: s.Site, Region: s.Region, Lost: s.Lost, RTT: time.Duration(s.RTT) * time.Microsecond})
	}
}

// Wait returns the samples once there are n (or after timeout), then,
// after grace, everything received (so that an unexpected extra shows),
// and the decoding errors.
func (d *Digests) Wait(n int, timeout, grace time.Duration) ([]Sample, error) {
	count := func() int {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.got)
	}
	for deadline := time.Now().Add(timeout); count() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(grace)
	d.mu.Lock()
	defer d.mu.Unlock()
	var err error
	if len(d.errs) > 0 {
		err = fmt.Errorf("%d undecodable digests, first: %w", len(d.errs), d.errs[0])
	}
	return append([]Sample(nil), d.got...), err
}

// MatchSamples compares received samples with a case's: the same number,
// in order, with the same site, region and lost flag, and each round trip
// within [want.RTT, want.RTT + slack] (0 slack: exact, the embedded
// target's clock; BMv2's runs in real time while its harness works).
func MatchSamples(got, want []Sample, slack time.Duration) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d latency digests %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Site != w.Site || g.Region != w.Region || g.Lost != w.Lost || g.RTT < w.RTT || g.RTT > w.RTT+slack {
			return fmt.Errorf("latency digest %d: %+v, want %+v (rtt within +%s)", i, g, w, slack)
		}
	}
	return nil
}
