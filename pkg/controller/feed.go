package controller

import (
	"context"
	"fmt"

	"github.com/p4ctl/p4ctl/pkg/carbonapi"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// NewCarbonFeed is the feed of a source opened already, mapping years when
// the source stands for any year (regions.MapsYears: the offline model).
func NewCarbonFeed(src regions.CarbonSource) *CarbonFeed {
	return &CarbonFeed{Source: src, MapYears: regions.MapsYears(src)}
}

// OpenCarbonFeed opens the feed of cfg's carbon source: a live API client
// (carbonapi.FromConfig with o: Electricity Maps or WattTime, refreshed
// before each plan) or the offline model or CSV traces
// (config.OpenCarbonContext, reading under ctx). It is the one place a
// configuration becomes a carbon feed.
func OpenCarbonFeed(ctx context.Context, cfg *config.Config, o carbonapi.Options) (*CarbonFeed, error) {
	if cfg.Carbon.Live() {
		src, err := carbonapi.FromConfig(cfg, o)
		if err != nil {
			return nil, fmt.Errorf("carbon: %w", err)
		}
		return &CarbonFeed{Source: src}, nil
	}
	src, err := cfg.OpenCarbonContext(ctx)
	if err != nil {
		return nil, err
	}
	return NewCarbonFeed(src), nil
}
