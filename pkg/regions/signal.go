package regions

import (
	"fmt"
	"strings"
)

// Signal is the kind of carbon intensity the numbers are. An average
// intensity (Electricity Maps, lifecycle or direct; CSV traces of it; the
// offline model) is the emissions of the grid's whole mix per kWh; a
// marginal rate (WattTime's co2_moer) is the emissions of the generator
// that answers one more kWh. They rank regions differently and their
// gCO2 estimates mean different things, so every output says which one it
// used.
type Signal uint8

// Signals.
const (
	// SignalLCA is an average intensity, lifecycle (Electricity Maps LCA):
	// the default.
	SignalLCA Signal = iota
	// SignalDirect is an average intensity, direct (operational) emissions
	// only.
	SignalDirect
	// SignalMarginal is a marginal operating emissions rate (WattTime
	// MOER, converted to gCO2/kWh).
	SignalMarginal
)

// ParseSignal parses "lca" (or ""), "direct" or "marginal".
func ParseSignal(s string) (Signal, error) {
	switch strings.ToLower(s) {
	case "", "lca":
		return SignalLCA, nil
	case "direct":
		return SignalDirect, nil
	case "marginal":
		return SignalMarginal, nil
	}
	return SignalLCA, fmt.Errorf("signal %q: want lca, direct or marginal", s)
}

// String returns "lca", "direct" or "marginal" (what ParseSignal reads).
func (s Signal) String() string {
	switch s {
	case SignalDirect:
		return "direct"
	case SignalMarginal:
		return "marginal"
	}
	return "lca"
}

// Marginal reports whether the signal is a marginal rate.
func (s Signal) Marginal() bool { return s == SignalMarginal }

// Type is "average" or "marginal".
func (s Signal) Type() string {
	if s.Marginal() {
		return "marginal"
	}
	return "average"
}

// Describe says what the numbers are, for outputs: "average (lifecycle)",
// "average (direct)" or "marginal (MOER)".
func (s Signal) Describe() string {
	switch s {
	case SignalDirect:
		return "average (direct)"
	case SignalMarginal:
		return "marginal (MOER)"
	}
	return "average (lifecycle)"
}

// Metric is the Electricity Maps column the signal reads from portal CSVs
// (LCA for a marginal signal, whose CSVs have one value column).
func (s Signal) Metric() Metric {
	if s == SignalDirect {
		return Direct
	}
	return LCA
}

// MarshalText writes String.
func (s Signal) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
