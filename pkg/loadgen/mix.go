package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Share is one value of a mix and its weight (weights need not sum to 1).
type Share[T uint8 | uint16] struct {
	Value  T       `json:"value"`
	Weight float64 `json:"weight"`
}

// Mix is a discrete distribution over values: SLA classes (ms) or exec
// classes.
type Mix[T uint8 | uint16] []Share[T]

// DefaultSLAMix is the carbon-routing paper's mixed traffic: 20/30/20/20/10 %
// over SLA classes 300/500/800/1000/3000 ms.
func DefaultSLAMix() Mix[uint16] {
	return Mix[uint16]{{300, 0.20}, {500, 0.30}, {800, 0.20}, {1000, 0.20}, {3000, 0.10}}
}

// DefaultExecMix sends every request as exec class 0 (the shortest class of
// examples/mumbai.yaml).
func DefaultExecMix() Mix[uint8] { return Mix[uint8]{{0, 1}} }

// ParseMix parses "300:20,500:30,800:20" (value:weight, weights in any
// unit; percentages are the usual choice). A bare "500" is 100 % of 500.
func ParseMix[T uint8 | uint16](s string, bits int) (Mix[T], error) {
	var m Mix[T]
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		vs, ws, hasW := strings.Cut(part, ":")
		v, err := strconv.ParseUint(strings.TrimSpace(vs), 10, bits)
		if err != nil {
			return nil, fmt.Errorf("mix %q: value %q: want 0..%d", s, vs, uint64(1)<<bits-1)
		}
		w := 1.0
		if hasW {
			w, err = strconv.ParseFloat(strings.TrimSpace(ws), 64)
			if err != nil || w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("mix %q: weight %q: want a number >= 0", s, ws)
			}
		}
		m = append(m, Share[T]{T(v), w})
	}
	return m, m.Validate()
}

// Validate checks that the mix is non-empty with a positive total weight.
func (m Mix[T]) Validate() error {
	if len(m) == 0 {
		return fmt.Errorf("empty mix")
	}
	var total float64
	seen := map[T]bool{}
	for _, s := range m {
		if s.Weight < 0 || math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) {
			return fmt.Errorf("mix: weight %v of %v: want a finite number >= 0", s.Weight, s.Value)
		}
		if seen[s.Value] {
			return fmt.Errorf("mix: value %v listed twice", s.Value)
		}
		seen[s.Value] = true
		total += s.Weight
	}
	if total <= 0 {
		return fmt.Errorf("mix: weights sum to 0")
	}
	return nil
}

// String renders the mix as ParseMix reads it, weights as percentages.
func (m Mix[T]) String() string {
	var total float64
	for _, s := range m {
		total += s.Weight
	}
	parts := make([]string, len(m))
	for i, s := range m {
		parts[i] = fmt.Sprintf("%d:%g", s.Value, math.Round(1e4*s.Weight/total)/100)
	}
	return strings.Join(parts, ",")
}

// sampler draws from a mix by scanning cumulative weights (mixes have a
// handful of values).
type sampler[T uint8 | uint16] struct {
	values []T
	cum    []float64
}

func newSampler[T uint8 | uint16](m Mix[T]) sampler[T] {
	s := sampler[T]{}
	var total float64
	for _, sh := range m {
		total += sh.Weight
	}
	var c float64
	for _, sh := range m {
		if sh.Weight == 0 {
			continue
		}
		c += sh.Weight / total
		s.values = append(s.values, sh.Value)
		s.cum = append(s.cum, c)
	}
	s.cum[len(s.cum)-1] = 1
	return s
}

func (s sampler[T]) draw(r *rand.Rand) T {
	u := r.Float64()
	for i, c := range s.cum {
		if u < c {
			return s.values[i]
		}
	}
	return s.values[len(s.values)-1]
}
