package controller

import (
	"context"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// ReadState reads back everything a switch holds in the p4ctl program's
// tables — all entries and every table's default entry — in one Read, and
// returns it in compiled form (Translator.Entry). Reads need no
// arbitration: backups and `p4ctl diff` use it too.
func ReadState(ctx context.Context, c *p4rt.Client, tr *Translator) (*compiler.State, error) {
	req := []*p4v1.Entity{p4rt.TableEntity(&p4v1.TableEntry{})}
	for _, t := range pipeline.Schema().Tables {
		req = append(req, p4rt.TableEntity(&p4v1.TableEntry{TableId: tr.tables[t.Name].id, IsDefaultAction: true}))
	}
	st, err := readEntries(ctx, c, tr, req)
	if err != nil {
		return nil, fmt.Errorf("read switch state: %w", err)
	}
	return st, nil
}

// ReadVersioned reads back the versioned part of a switch's state in one
// Read: active_epoch's default entry and every carbon_rank entry (not its
// default). It is the cheap check of the periodic verification: a few
// entries per generation, and the part whose corruption misroutes every
// request.
func ReadVersioned(ctx context.Context, c *p4rt.Client, tr *Translator) (*compiler.State, error) {
	req := []*p4v1.Entity{
		p4rt.TableEntity(&p4v1.TableEntry{TableId: tr.tables[pipeline.TableActiveEpoch].id, IsDefaultAction: true}),
		p4rt.TableEntity(&p4v1.TableEntry{TableId: tr.tables[pipeline.TableCarbonRank].id}),
	}
	st, err := readEntries(ctx, c, tr, req)
	if err != nil {
		return nil, fmt.Errorf("read active_epoch and carbon_rank: %w", err)
	}
	return st, nil
}

// readEntries reads the table entries req names and returns them in
// compiled form, each once.
func readEntries(ctx context.Context, c *p4rt.Client, tr *Translator, req []*p4v1.Entity) (*compiler.State, error) {
	var entries []compiler.Entry
	var errs []error
	err := c.Read(ctx, req, func(e *p4v1.Entity) error {
		te := e.GetTableEntry()
		if te == nil {
			return nil
		}
		ce, err := tr.Entry(te)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		entries = append(entries, ce)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d entries do not decode, first: %w", len(errs), errs[0])
	}
	// A default entry may come back twice (from the wildcard and from its
	// own request, depending on the server): keep one.
	seen := make(map[string]bool, len(entries))
	out := entries[:0]
	for _, e := range entries {
		k := e.Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	st, err := compiler.NewState(out)
	if err != nil {
		return nil, err
	}
	st.Meta.Epoch = st.ActiveEpoch()
	return st, nil
}
