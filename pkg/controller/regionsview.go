package controller

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// RegionView is one region as a switch sees it (p4ctl get regions).
type RegionView struct {
	Index       int    `json:"index"`
	Region      string `json:"region"`
	City        string `json:"city"`
	NextHop     string `json:"next_hop"`
	Rank        *int   `json:"rank,omitempty"` // in the active generation's shared ranking (0 = cleanest)
	Routed      int64  `json:"routed"`
	Fallback    int64  `json:"fallback"`
	Outstanding uint64 `json:"outstanding"`
	// Capacity is the local pool's capacity (0 = unlimited); Full is
	// outstanding ≥ capacity, when the next request would spill.
	Capacity uint64 `json:"capacity,omitempty"`
	Full     bool   `json:"full,omitempty"`
}

// RegionsView is every region a switch has an entry, a count or
// outstanding requests for, by index, under its active epoch.
type RegionsView struct {
	Epoch   uint8        `json:"active_epoch"`
	Regions []RegionView `json:"regions"`
}

// TableHeaders implements output.Tabular.
func (r RegionsView) TableHeaders() []string {
	return []string{"INDEX", "REGION", "CITY", "NEXT HOP", "RANK", "ROUTED", "FALLBACK", "OUTSTANDING", "FULL"}
}

// TableRows implements output.Tabular.
func (r RegionsView) TableRows() [][]string {
	var out [][]string
	for _, x := range r.Regions {
		rank := "-"
		if x.Rank != nil {
			rank = strconv.Itoa(*x.Rank)
		}
		full := ""
		if x.Full {
			full = "yes"
		}
		out = append(out, []string{strconv.Itoa(x.Index), x.Region, x.City, x.NextHop, rank,
			strconv.FormatInt(x.Routed, 10), strconv.FormatInt(x.Fallback, 10), strconv.FormatUint(x.Outstanding, 10), full})
	}
	return out
}

// RegisterReader reads the cells of a register (index -1: all): a
// p4rt.Client, or bmv2rt.Registers where BMv2 answers over Thrift.
type RegisterReader interface {
	Read(ctx context.Context, name string, index int64) ([]p4rt.RegisterCell, error)
}

// ReadRegions reads the regions view of a switch running the p4ctl
// program: next hops from region_next_hop, ranks from the active
// generation's shared ranking (compiler.State.SharedRanking), counts from
// region_routed and region_fallback, outstanding requests from
// region_outstanding (through regs).
func ReadRegions(ctx context.Context, c *p4rt.Client, tr *Translator, regs RegisterReader) (*RegionsView, error) {
	st, err := ReadState(ctx, c, tr)
	if err != nil {
		return nil, err
	}
	res := &RegionsView{Epoch: st.ActiveEpoch()}
	byIdx := map[int]*RegionView{}
	row := func(i int) *RegionView {
		if r, ok := byIdx[i]; ok {
			return r
		}
		r := &RegionView{Index: i, Region: strconv.Itoa(i)}
		if reg, ok := regions.RegionAt(regions.Index(i)); ok {
			r.Region, r.City = reg.ID, reg.City
		}
		byIdx[i] = r
		return r
	}
	for _, e := range st.Table(pipeline.TableRegionNextHop) {
		if e.Default {
			continue
		}
		m, _ := e.Field(pipeline.FieldRegion)
		r := row(int(m.Value))
		capacity, _ := e.Param(pipeline.ParamCapacity)
		switch e.Action {
		case pipeline.ActionDispatchLocal:
			r.Capacity = capacity
			r.NextHop = "local pool (capacity unlimited)"
			if capacity != 0 {
				r.NextHop = fmt.Sprintf("local pool (capacity %d)", capacity)
			}
		case pipeline.ActionForwardRemote:
			port, _ := e.Param(pipeline.ParamPort)
			r.NextHop = fmt.Sprintf("remote via port %d", port)
		default:
			r.NextHop = strings.TrimPrefix(e.Action, pipeline.Control+".")
		}
	}
	for i, reg := range st.SharedRanking() {
		k := i
		row(int(reg)).Rank = &k
	}
	for _, name := range []string{pipeline.CounterRegionRouted, pipeline.CounterRegionFallback} {
		cells, err := c.ReadCounter(ctx, name, -1)
		if err != nil {
			return nil, err
		}
		for _, cell := range cells {
			if cell.Packets == 0 && byIdx[int(cell.Index)] == nil {
				continue
			}
			r := row(int(cell.Index))
			if name == pipeline.CounterRegionRouted {
				r.Routed = cell.Packets
			} else {
				r.Fallback = cell.Packets
			}
		}
	}
	outs, err := regs.Read(ctx, pipeline.RegisterRegionOutstanding, -1)
	if err != nil {
		return nil, err
	}
	for _, cell := range outs {
		if r, ok := byIdx[int(cell.Index)]; ok || cell.Value > 0 {
			if !ok {
				r = row(int(cell.Index))
			}
			r.Outstanding = cell.Value
			r.Full = r.Capacity != 0 && cell.Value >= r.Capacity
		}
	}
	for _, r := range byIdx {
		res.Regions = append(res.Regions, *r)
	}
	sort.Slice(res.Regions, func(i, j int) bool { return res.Regions[i].Index < res.Regions[j].Index })
	return res, nil
}
