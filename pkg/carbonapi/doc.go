// Package carbonapi is the live carbon-intensity source of the controller
// daemon (p4ctl run): clients for the Electricity Maps API v3 and the
// WattTime API v3, a per-zone cache, and [Source], which implements
// regions.CarbonSource over them.
//
// # What the daemon calls
//
//	src, err := carbonapi.FromConfig(cfg, carbonapi.Options{Logger: log})
//	...
//	err = src.Refresh(ctx)        // fetch every zone within Options.RefreshTimeout (errors are per zone; the cache is kept)
//	at, fresh := src.StaleAt()    // when the cached data crosses the bound: set a timer, do not wait for Refresh
//	if err := src.Check(); errors.Is(err, carbonapi.ErrStale) {
//		// some zone has no value younger than the staleness bound:
//		// compile policy A (nearest region, latency only) until it recovers
//	} else {
//		tab, err := regions.NewCarbonTable(src, set, regions.Period{From: hour, To: hour.Add(time.Hour)})
//		...
//	}
//	for _, st := range src.Status() { dataAge.WithLabelValues(st.Zone).Set(st.AgeSeconds()) } // +Inf: no data
//
// # Safe policy (staleness)
//
// Every value carries the data's own timestamp (Electricity Maps:
// `datetime`, the start of the hour it describes; WattTime: the forecast's
// `generated_at`) and the time it was fetched. The age of a value is now
// minus the data's timestamp. For the current hour, Intensity serves the
// value of that hour, or else the last known value of an earlier hour, as
// long as its age is at most the staleness bound; beyond the bound it
// returns a *StaleError (errors.Is(err, ErrStale)), and the daemon falls
// back to latency-only routing (policy A, nearest region). Past hours are
// served as recorded, without a staleness check; future hours are not
// served by Intensity (see Source.Forecast).
//
// # Units
//
// Electricity Maps gives gCO2eq/kWh (lifecycle or direct, chosen with the
// `emissionFactorType` query parameter and checked in the response).
// WattTime's co2_moer forecast is a marginal operating emissions rate in
// lbs CO2/MWh, converted with 1 lb/MWh = 0.453592 g/kWh; it is a marginal
// rate, not an average intensity, and is not comparable with Electricity
// Maps numbers. WattTime's signal-index is a percentile (0–100) of a
// region's MOER relative to that region's own recent history: it is not an
// intensity and does not rank regions against each other (a 10th
// percentile on a coal grid can be dirtier than a 90th on a hydro grid), so
// the router never uses it; [WattTime.SignalIndex] is offered for display
// and time-shifting within one region only.
//
// # Secrets
//
// Tokens and passwords are [Secret] values: they format, marshal and log as
// "[redacted]", travel only in request headers, and every error that quotes
// a response body has them (and their Basic-auth encoding) removed.
//
// No test touches the network: they run against httptest servers that
// speak the documented JSON (testdata/).
package carbonapi
