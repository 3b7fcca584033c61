package fnserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// MaxExec bounds every drawn execution time: a distribution whose draw
// exceeds it is clipped, so a heavy tail cannot wedge a server.
const MaxExec = time.Minute

// DistKind names an execution-time distribution.
type DistKind string

// Execution-time distributions.
const (
	Fixed       DistKind = "fixed"     // always Mean
	Exponential DistKind = "exp"       // exponential with mean Mean
	Uniform     DistKind = "uniform"   // uniform on [Min, Max]
	LogNormal   DistKind = "lognormal" // log-normal with mean Mean and coefficient of variation CV
	Gamma       DistKind = "gamma"     // gamma with mean Mean and coefficient of variation CV
	Pareto      DistKind = "pareto"    // classic Pareto with minimum Min and shape Shape
)

const kindsHelp = "fixed:D, exp:MEAN, uniform:MIN,MAX, lognormal:MEAN,CV, gamma:MEAN,CV, pareto:MIN,SHAPE"

// Dist is an execution-time distribution. The zero value always draws 0.
type Dist struct {
	Kind     DistKind
	Mean     time.Duration // fixed, exp, lognormal, gamma
	Min, Max time.Duration // uniform; Min also for pareto
	CV       float64       // lognormal, gamma
	Shape    float64       // pareto
}

// ParseDist parses "fixed:5ms", "exp:10ms", "uniform:1ms,5ms",
// "lognormal:10ms,1.5", "gamma:10ms,0.5" or "pareto:1ms,2.5".
func ParseDist(s string) (Dist, error) {
	kind, args, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Dist{}, fmt.Errorf("execution-time distribution %q: want KIND:ARGS (%s)", s, kindsHelp)
	}
	parts := strings.Split(args, ",")
	dur := func(i int) (time.Duration, error) {
		d, err := time.ParseDuration(strings.TrimSpace(parts[i]))
		if err != nil {
			return 0, fmt.Errorf("execution-time distribution %q: %w", s, err)
		}
		if d < 0 {
			return 0, fmt.Errorf("execution-time distribution %q: negative duration", s)
		}
		return d, nil
	}
	num := func(i int, what string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return 0, fmt.Errorf("execution-time distribution %q: %s must be a positive number", s, what)
		}
		return v, nil
	}
	want := func(n int) error {
		if len(parts) != n {
			return fmt.Errorf("execution-time distribution %q: %s takes %d argument(s) (%s)", s, kind, n, kindsHelp)
		}
		return nil
	}
	var d Dist
	var err error
	switch DistKind(kind) {
	case Fixed, Exponential:
		if err = want(1); err != nil {
			return Dist{}, err
		}
		d = Dist{Kind: DistKind(kind)}
		d.Mean, err = dur(0)
	case Uniform:
		if err = want(2); err != nil {
			return Dist{}, err
		}
		d = Dist{Kind: Uniform}
		if d.Min, err = dur(0); err == nil {
			d.Max, err = dur(1)
		}
		if err == nil && d.Max < d.Min {
			err = fmt.Errorf("execution-time distribution %q: max < min", s)
		}
	case LogNormal, Gamma:
		if err = want(2); err != nil {
			return Dist{}, err
		}
		d = Dist{Kind: DistKind(kind)}
		if d.Mean, err = dur(0); err == nil {
			d.CV, err = num(1, "the coefficient of variation")
		}
	case Pareto:
		if err = want(2); err != nil {
			return Dist{}, err
		}
		d = Dist{Kind: Pareto}
		if d.Min, err = dur(0); err == nil {
			d.Shape, err = num(1, "the shape")
		}
	default:
		return Dist{}, fmt.Errorf("execution-time distribution %q: unknown kind %q (%s)", s, kind, kindsHelp)
	}
	if err != nil {
		return Dist{}, err
	}
	if d.Mean > MaxExec || d.Max > MaxExec || d.Min > MaxExec {
		return Dist{}, fmt.Errorf("execution-time distribution %q: above the %v limit", s, MaxExec)
	}
	return d, nil
}

// String renders d in the syntax ParseDist reads.
func (d Dist) String() string {
	switch d.Kind {
	case Fixed, Exponential:
		return fmt.Sprintf("%s:%v", d.Kind, d.Mean)
	case Uniform:
		return fmt.Sprintf("uniform:%v,%v", d.Min, d.Max)
	case LogNormal, Gamma:
		return fmt.Sprintf("%s:%v,%g", d.Kind, d.Mean, d.CV)
	case Pareto:
		return fmt.Sprintf("pareto:%v,%g", d.Min, d.Shape)
	}
	return "fixed:0s"
}

// MeanDuration is the distribution's mean (Pareto with shape ≤ 1 has none:
// +Inf is reported as MaxExec).
func (d Dist) MeanDuration() time.Duration {
	switch d.Kind {
	case Fixed, Exponential, LogNormal, Gamma:
		return d.Mean
	case Uniform:
		return (d.Min + d.Max) / 2
	case Pareto:
		if d.Shape <= 1 {
			return MaxExec
		}
		return time.Duration(d.Shape * float64(d.Min) / (d.Shape - 1))
	}
	return 0
}

// Draw returns one execution time, clipped to [0, MaxExec].
func (d Dist) Draw(r *rand.Rand) time.Duration {
	var v float64 // nanoseconds
	switch d.Kind {
	case Fixed:
		v = float64(d.Mean)
	case Exponential:
		v = r.ExpFloat64() * float64(d.Mean)
	case Uniform:
		v = float64(d.Min) + r.Float64()*float64(d.Max-d.Min)
	case LogNormal:
		// mean m, cv c: sigma² = ln(1+c²), mu = ln m − sigma²/2.
		s2 := math.Log1p(d.CV * d.CV)
		mu := math.Log(float64(d.Mean)) - s2/2
		v = math.Exp(mu + math.Sqrt(s2)*r.NormFloat64())
	case Gamma:
		k := 1 / (d.CV * d.CV)
		v = distuv.Gamma{Alpha: k, Beta: k / float64(d.Mean), Src: r}.Rand()
	case Pareto:
		v = float64(d.Min) / math.Pow(1-r.Float64(), 1/d.Shape)
	}
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	if v > float64(MaxExec) {
		return MaxExec
	}
	return time.Duration(v)
}

// ParseClassDist parses "CLASS=DIST", e.g. "2=exp:100ms".
func ParseClassDist(s string) (uint8, Dist, error) {
	c, ds, ok := strings.Cut(s, "=")
	if !ok {
		return 0, Dist{}, fmt.Errorf("exec class %q: want CLASS=DIST, e.g. 1=exp:10ms", s)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(c), 10, 8)
	if err != nil {
		return 0, Dist{}, fmt.Errorf("exec class %q: class must be 0..255", s)
	}
	d, err := ParseDist(ds)
	if err != nil {
		return 0, Dist{}, err
	}
	return uint8(n), d, nil
}
