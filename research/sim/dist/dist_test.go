package dist

import (
	"math"
	"testing"
)

func moments(n int, draw func() float64) (mean, cv float64) {
	var s, s2 float64
	for i := 0; i < n; i++ {
		x := draw()
		s += x
		s2 += x * x
	}
	mean = s / float64(n)
	v := s2/float64(n) - mean*mean
	return mean, math.Sqrt(v) / mean
}

func TestIntervalMomentsMatch(t *testing.T) {
	cases := []struct {
		kind ArrivalKind
		cv   float64
	}{
		{ArrivalH2, 0}, {ArrivalH2, 1}, {ArrivalH2, 1.5}, {ArrivalH2, 2.5},
		{ArrivalGamma, 0.5}, {ArrivalGamma, 1.5}, {ArrivalGamma, 2.5},
	}
	for _, c := range cases {
		d, err := NewInterval(c.kind, 2, c.cv)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRand(7, 1)
		m, cv := moments(400000, func() float64 { return d.Sample(r) })
		if math.Abs(m-2)/2 > 0.02 {
			t.Errorf("%s cv=%v: mean %v, want 2", c.kind, c.cv, m)
		}
		if math.Abs(cv-c.cv) > 0.04*math.Max(c.cv, 0.25) {
			t.Errorf("%s cv=%v: measured cv %v", c.kind, c.cv, cv)
		}
	}
}

func TestServiceMomentsMatch(t *testing.T) {
	for _, k := range []ServiceKind{ServiceFixed, ServiceExponential, ServiceBimodal, ServiceLognormal} {
		s, err := NewService(ServiceSpec{Kind: k, Mean: 5})
		if err != nil {
			t.Fatal(err)
		}
		r := NewRand(3, 2)
		m, cv := moments(400000, func() float64 { return s.Sample(r) })
		if math.Abs(m-5)/5 > 0.02 {
			t.Errorf("%s: mean %v, want 5", k, m)
		}
		if want := math.Sqrt(s.SCV()); math.Abs(cv-want) > 0.05*math.Max(want, 0.1) {
			t.Errorf("%s: cv %v, want %v", k, cv, want)
		}
	}
}

func TestBadSpecsRejected(t *testing.T) {
	if _, err := NewInterval("weird", 1, 1); err == nil {
		t.Error("unknown arrival kind accepted")
	}
	if _, err := NewInterval(ArrivalH2, 0, 1); err == nil {
		t.Error("zero mean accepted")
	}
	if _, err := NewInterval(ArrivalH2, 1, -1); err == nil {
		t.Error("negative cv accepted")
	}
	if _, err := NewService(ServiceSpec{Kind: "pareto", Mean: 1}); err == nil {
		t.Error("unknown service kind accepted")
	}
	if _, err := NewService(ServiceSpec{Kind: ServiceBimodal, Mean: 1, BimodalP: 1.5}); err == nil {
		t.Error("bimodal p > 1 accepted")
	}
	if _, err := ParseServiceKind("nope"); err == nil {
		t.Error("ParseServiceKind accepted nope")
	}
	if _, err := NewZipf(0, 1); err == nil {
		t.Error("empty zipf accepted")
	}
}

func TestZipfFrequencies(t *testing.T) {
	z, err := NewZipf(50, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i := 0; i < z.N(); i++ {
		sum += z.PMF(i)
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("pmf sums to %v", sum)
	}
	r := NewRand(1, 1)
	counts := make([]int, z.N())
	const n = 500000
	for i := 0; i < n; i++ {
		counts[z.Sample(r)]++
	}
	for _, i := range []int{0, 1, 10, 49} {
		got := float64(counts[i]) / n
		if math.Abs(got-z.PMF(i)) > 0.1*z.PMF(i) {
			t.Errorf("rank %d: freq %v, pmf %v", i, got, z.PMF(i))
		}
	}
	if z.PMF(0) <= z.PMF(1) {
		t.Error("rank 0 not the most popular")
	}
}

func TestStreamsDiffer(t *testing.T) {
	a, b, c := NewRand(1, 1), NewRand(1, 2), NewRand(1, 1)
	x, y, z := a.Uint64(), b.Uint64(), c.Uint64()
	if x == y || x != z {
		t.Fatalf("streams: %x %x %x", x, y, z)
	}
}
