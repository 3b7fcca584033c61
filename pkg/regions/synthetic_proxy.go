package regions

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// ProxyZone describes the offline carbon model of a catalog zone that has
// no measured hourly trace in the shared data (catalog indices ≥
// MeasuredRegions): the measured model of a donor zone with a similar
// generation mix (its monthly profile, diurnal shape and noise, from
// SyntheticParams), scaled to the zone's own Electricity Maps yearly LCA
// average and with its diurnal shape moved by the difference in solar time.
// It is a model built from one published number per zone, not data: every
// output that uses it says so (Synthetic.DescribeZones).
type ProxyZone struct {
	Zone string
	// Donor is the measured zone whose shape is borrowed.
	Donor string
	// YearlyEM is the zone's Electricity Maps yearly LCA average for
	// SyntheticParamsYear (gCO2eq/kWh) as republished by
	// thegreenwebfoundation/co2.js (ODbL; data/output/electricity-maps/
	// yearly_2022.json, commit 189915db7c57e9a873818a1cda7fb17e4f3d98a2).
	YearlyEM float64
}

// proxyZones are the catalog's proxy zones, in catalog order. Donors: a
// measured zone of a similar mix — solar-heavy grids take DE's midday dip,
// hydro and nuclear grids SE-SE3's flat profile, gas-fired ones SG's, coal
// and gas mixes the nearest measured grid of that kind.
var proxyZones = [...]ProxyZone{
	{"US-CAL-CISO", "DE", 262},
	{"CA-QC", "SE-SE3", 28},
	{"GB", "IE", 235},
	{"FR", "SE-SE3", 91},
	{"IT-NO", "DE", 365},
	{"ES", "DE", 220},
	{"CH", "SE-SE3", 122},
	{"BH", "SG", 488},
	{"AE", "SG", 406},
	{"IL", "SG", 530},
	{"HK", "JP-TK", 604},
	{"IN-SO", "IN-WE", 487},
	{"ID", "IN-WE", 649},
	{"AU-VIC", "AU-NSW", 535},
	{"JP-KN", "JP-TK", 433},
	{"CA-AB", "US-MIDA-PJM", 455},
	{"MX", "US-MIDA-PJM", 377},
	{"MY-WM", "SG", 645},
	{"TH", "SG", 497},
	{"TW", "KR", 535},
}

// IsProxyZone reports whether zone's offline carbon comes from the proxy
// model rather than from parameters measured on its own trace.
func IsProxyZone(zone string) bool {
	for _, p := range proxyZones {
		if p.Zone == zone {
			return true
		}
	}
	return false
}

// ProxyParams derives the ZoneParams of every proxy zone from its donor's
// measured parameters: MonthlyMean, Min and Max scaled by YearlyEM over the
// donor's yearly mean (hour-weighted mean of its monthly means); Diurnal
// rotated by the difference in solar time between the two zones' catalog
// longitudes (15° per hour), so the donor's local-noon dip falls on the
// zone's local noon; the noise parameters (DailySigma, DailyPhi,
// HourlySigma, HourlyPhi) as the donor's. A zone whose donor or catalog
// region is missing is an error (a programming error, caught by tests).
func ProxyParams() ([]ZoneParams, error) {
	measured := map[string]ZoneParams{}
	for _, zp := range SyntheticParams() {
		measured[zp.Zone] = zp
	}
	lon := map[string]float64{}
	for _, r := range catalog {
		lon[r.Zone] = r.Lon
	}
	hours := [12]float64{744, 672, 744, 720, 744, 720, 744, 744, 720, 744, 720, 744} // 2022, not a leap year
	out := make([]ZoneParams, 0, len(proxyZones))
	for _, pz := range proxyZones {
		d, ok := measured[pz.Donor]
		if !ok {
			return nil, fmt.Errorf("proxy zone %s: donor %s has no measured parameters", pz.Zone, pz.Donor)
		}
		zl, ok1 := lon[pz.Zone]
		dl, ok2 := lon[pz.Donor]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("proxy zone %s: zone or donor %s not in the catalog", pz.Zone, pz.Donor)
		}
		var sum, n float64
		for m, v := range d.MonthlyMean {
			sum += v * hours[m]
			n += hours[m]
		}
		scale := pz.YearlyEM / (sum / n)
		zp := ZoneParams{Zone: pz.Zone, DailySigma: d.DailySigma, DailyPhi: d.DailyPhi,
			HourlySigma: d.HourlySigma, HourlyPhi: d.HourlyPhi,
			Min: round4(d.Min * scale), Max: round4(d.Max * scale), YearlyEM: pz.YearlyEM}
		for m := range zp.MonthlyMean {
			zp.MonthlyMean[m] = round4(d.MonthlyMean[m] * scale)
		}
		// East of the donor by k hours of solar time: the zone's hour h
		// (UTC) looks like the donor's hour h+k.
		k := int(math.Round((zl - dl) / 15))
		for s := range zp.Diurnal {
			for h := range 24 {
				zp.Diurnal[s][h] = d.Diurnal[s][((h+k)%24+24)%24]
			}
		}
		out = append(out, zp)
	}
	return out, nil
}

// ProxyBasis says how proxy zones are modelled; DescribeZones appends it.
const ProxyBasis = "proxy model, not measured data: a measured zone's shape scaled to the zone's Electricity Maps 2022 yearly average (co2.js)"

// DescribeZones describes the source as used for zones: Describe, plus
// which of the zones come from the proxy model, if any. A configuration of
// measured zones only reads exactly Describe.
func (s *Synthetic) DescribeZones(zones []string) string {
	var proxy []string
	for _, z := range zones {
		if IsProxyZone(z) && !slices.Contains(proxy, z) {
			proxy = append(proxy, z)
		}
	}
	if len(proxy) == 0 {
		return s.Describe()
	}
	slices.Sort(proxy)
	return s.Describe() + "; zones " + strings.Join(proxy, ", ") + ": " + ProxyBasis
}
