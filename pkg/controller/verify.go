package controller

import (
	"context"
	"time"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Defaults of the periodic verification (p4ctl run --verify-every,
// --verify-full-every): the versioned tables every few seconds — one Read
// of a few entries per generation — and everything every minute.
const (
	DefaultVerifyInterval     = 5 * time.Second
	DefaultFullVerifyInterval = time.Minute
)

// verify checks, between pushes, that the switch still holds the state
// this primary last wrote — the versioned part (ReadVersioned), or with
// full everything (ReadState) — and on drift (another client wrote, with
// our election id or after taking over and leaving) drops the cache and
// schedules a resync, which Run performs at once; the repair is counted
// when it succeeds. A read that fails schedules a resync too (the switch
// may have restarted; the resync checks its pipeline).
func (d *Driver) verify(ctx context.Context, full bool) {
	client, tr, _ := d.conn()
	if client == nil || tr == nil || !client.State().Primary || d.needsSync() {
		return
	}
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	want := d.installed
	if want == nil {
		return // not known: the next push reads the switch back anyway
	}
	kind, first, err := findDrift(ctx, client, tr, want, full)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		d.log.Warn("verification read failed; resyncing", "err", err)
		kind = ""
	} else if kind == "" {
		return
	} else {
		d.log.Warn("drift: the switch no longer holds the state last written; repairing", "kind", kind, "full_read", full, "first", first)
	}
	d.installed = nil
	d.mu.Lock()
	d.resync = true
	if kind != "" {
		d.repair = kind
	}
	d.mu.Unlock()
}

// findDrift compares the switch with want: its versioned part, or with
// full everything. It returns the kind of drift (RepairActiveEpoch when
// active_epoch differs, else RepairEntries; "" for none) and the first
// differing entry.
func findDrift(ctx context.Context, c *p4rt.Client, tr *Translator, want *compiler.State, full bool) (kind, first string, err error) {
	var got *compiler.State
	if full {
		got, err = ReadState(ctx, c, tr)
	} else {
		got, err = ReadVersioned(ctx, c, tr)
		want = versioned(want)
	}
	if err != nil {
		return "", "", err
	}
	ch := compiler.Diff(got, want)
	if ch.Empty() {
		return "", "", nil
	}
	kind = RepairEntries
	for _, l := range [][]compiler.Entry{ch.Insert, ch.Modify, ch.Delete} {
		for _, e := range l {
			if first == "" {
				first = e.String()
			}
			if e.Table == pipeline.TableActiveEpoch {
				kind, first = RepairActiveEpoch, e.String()
			}
		}
	}
	return kind, first, nil
}

// versioned returns the part of s that ReadVersioned reads: carbon_rank
// entries (not its default) and active_epoch's default.
func versioned(s *compiler.State) *compiler.State {
	v := &compiler.State{Meta: s.Meta}
	for _, e := range s.Entries {
		if (e.Table == pipeline.TableCarbonRank && !e.Default) || (e.Table == pipeline.TableActiveEpoch && e.Default) {
			v.Entries = append(v.Entries, e)
		}
	}
	return v
}
