package regions

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Every catalog zone has an offline model: measured parameters for the
// first MeasuredRegions, the proxy model for the rest, whose yearly mean is
// the published yearly average it was scaled to.
func TestProxyZonesCoverTheCatalog(t *testing.T) {
	proxy, err := ProxyParams()
	if err != nil {
		t.Fatal(err)
	}
	if len(proxy) != NumRegions-MeasuredRegions {
		t.Fatalf("%d proxy zones, want %d", len(proxy), NumRegions-MeasuredRegions)
	}
	for i, r := range Catalog() {
		if measured := i < MeasuredRegions; IsProxyZone(r.Zone) == measured {
			t.Errorf("%s (index %d, zone %s): proxy %v", r.ID, i, r.Zone, !measured)
		}
	}
	syn, err := NewSynthetic(3, DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	if len(syn.Zones()) != NumRegions {
		t.Fatalf("model zones %v", syn.Zones())
	}
	all, err := PoolOf(NumRegions)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewCarbonTable(syn, all, DefaultSyntheticPeriod())
	if err != nil {
		t.Fatal(err)
	}
	for _, zp := range proxy {
		r, _ := LookupRegion(zp.Zone)
		if m := tab.Mean(r.Index); math.Abs(m-zp.YearlyEM)/zp.YearlyEM > 0.05 {
			t.Errorf("%s yearly mean %.1f, scaled to %v", zp.Zone, m, zp.YearlyEM)
		}
	}
}

// The proxy's diurnal shape is the donor's moved by the difference in
// solar time: CISO (−121.9°) is 9 hours west of DE (8.7°), rounded, so
// its hour h+9 (UTC) is DE's hour h.
func TestProxyDiurnalFollowsSolarTime(t *testing.T) {
	proxy, err := ProxyParams()
	if err != nil {
		t.Fatal(err)
	}
	var de ZoneParams
	for _, zp := range SyntheticParams() {
		if zp.Zone == "DE" {
			de = zp
		}
	}
	for _, zp := range proxy {
		if zp.Zone != "US-CAL-CISO" {
			continue
		}
		for s := range 4 {
			for h := range 24 {
				if zp.Diurnal[s][(h+9)%24] != de.Diurnal[s][h] {
					t.Fatalf("season %d: CISO hour %d = %v, DE hour %d = %v", s, (h+9)%24, zp.Diurnal[s][(h+9)%24], h, de.Diurnal[s][h])
				}
			}
		}
		return
	}
	t.Fatal("no US-CAL-CISO proxy")
}

// Adding the proxy zones changed no measured zone's series, and outputs
// name the proxy model only when a proxy zone is used.
func TestProxyDoesNotChangeMeasuredZones(t *testing.T) {
	p := DefaultSyntheticPeriod()
	withProxies, err := NewSynthetic(5, p)
	if err != nil {
		t.Fatal(err)
	}
	measuredOnly, err := NewSyntheticFrom(SyntheticParams(), 5, p, SyntheticBasis)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range measuredOnly.Zones() {
		for h := 0; h < p.Hours(); h += 97 {
			at := p.From.Add(time.Duration(h) * time.Hour)
			a, _ := withProxies.Intensity(z, at)
			b, _ := measuredOnly.Intensity(z, at)
			if a != b {
				t.Fatalf("%s at %s: %v with proxies, %v without", z, at, a, b)
			}
		}
	}
	if d := withProxies.DescribeZones([]string{"IN-WE", "IE"}); d != withProxies.Describe() {
		t.Errorf("measured zones described as %q", d)
	}
	if d := withProxies.DescribeZones([]string{"IE", "GB", "FR", "GB"}); !strings.HasSuffix(d, "; zones FR, GB: "+ProxyBasis) {
		t.Errorf("proxy zones described as %q", d)
	}
}
