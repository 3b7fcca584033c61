package configgen

import "github.com/p4ctl/p4ctl/research/geo"

// metro is a place generated sites cluster around.
type metro struct {
	name   string
	at     geo.Point
	weight float64 // metropolitan population, millions, rounded: only the share of sites
}

// metros are large metropolitan areas on every continent: city-centre
// coordinates (±0.1°) and rounded populations (millions; an order of
// magnitude, used only to share sites out). Public geographic facts, typed
// in; they decide where generated sites are, nothing else.
var metros = [...]metro{
	{"tokyo", geo.Point{Lat: 35.68, Lon: 139.69}, 37}, {"delhi", geo.Point{Lat: 28.61, Lon: 77.21}, 32},
	{"shanghai", geo.Point{Lat: 31.23, Lon: 121.47}, 28}, {"dhaka", geo.Point{Lat: 23.81, Lon: 90.41}, 22},
	{"sao-paulo", geo.Point{Lat: -23.55, Lon: -46.63}, 22}, {"mexico-city", geo.Point{Lat: 19.43, Lon: -99.13}, 22},
	{"cairo", geo.Point{Lat: 30.04, Lon: 31.24}, 21}, {"beijing", geo.Point{Lat: 39.90, Lon: 116.40}, 21},
	{"mumbai", geo.Point{Lat: 19.08, Lon: 72.88}, 21}, {"osaka", geo.Point{Lat: 34.69, Lon: 135.50}, 19},
	{"new-york", geo.Point{Lat: 40.71, Lon: -74.01}, 19}, {"karachi", geo.Point{Lat: 24.86, Lon: 67.01}, 17},
	{"istanbul", geo.Point{Lat: 41.01, Lon: 28.98}, 15}, {"buenos-aires", geo.Point{Lat: -34.60, Lon: -58.38}, 15},
	{"kolkata", geo.Point{Lat: 22.57, Lon: 88.36}, 15}, {"lagos", geo.Point{Lat: 6.52, Lon: 3.38}, 15},
	{"kinshasa", geo.Point{Lat: -4.44, Lon: 15.27}, 15}, {"manila", geo.Point{Lat: 14.60, Lon: 120.98}, 14},
	{"guangzhou", geo.Point{Lat: 23.13, Lon: 113.26}, 14}, {"rio-de-janeiro", geo.Point{Lat: -22.91, Lon: -43.17}, 13},
	{"los-angeles", geo.Point{Lat: 34.05, Lon: -118.24}, 13}, {"lahore", geo.Point{Lat: 31.55, Lon: 74.34}, 13},
	{"bangalore", geo.Point{Lat: 12.97, Lon: 77.59}, 13}, {"moscow", geo.Point{Lat: 55.76, Lon: 37.62}, 12},
	{"shenzhen", geo.Point{Lat: 22.54, Lon: 114.06}, 12}, {"paris", geo.Point{Lat: 48.86, Lon: 2.35}, 11},
	{"bogota", geo.Point{Lat: 4.71, Lon: -74.07}, 11}, {"jakarta", geo.Point{Lat: -6.21, Lon: 106.85}, 11},
	{"chennai", geo.Point{Lat: 13.08, Lon: 80.27}, 11}, {"lima", geo.Point{Lat: -12.05, Lon: -77.04}, 11},
	{"bangkok", geo.Point{Lat: 13.76, Lon: 100.50}, 11}, {"seoul", geo.Point{Lat: 37.57, Lon: 126.98}, 10},
	{"hyderabad", geo.Point{Lat: 17.39, Lon: 78.49}, 10}, {"london", geo.Point{Lat: 51.51, Lon: -0.13}, 9},
	{"tehran", geo.Point{Lat: 35.69, Lon: 51.39}, 9}, {"chicago", geo.Point{Lat: 41.88, Lon: -87.63}, 9},
	{"nagoya", geo.Point{Lat: 35.18, Lon: 136.91}, 9}, {"ho-chi-minh-city", geo.Point{Lat: 10.82, Lon: 106.63}, 9},
	{"luanda", geo.Point{Lat: -8.84, Lon: 13.23}, 8}, {"kuala-lumpur", geo.Point{Lat: 3.14, Lon: 101.69}, 8},
	{"hong-kong", geo.Point{Lat: 22.32, Lon: 114.17}, 7}, {"riyadh", geo.Point{Lat: 24.71, Lon: 46.68}, 7},
	{"baghdad", geo.Point{Lat: 33.31, Lon: 44.37}, 7}, {"santiago", geo.Point{Lat: -33.45, Lon: -70.67}, 7},
	{"madrid", geo.Point{Lat: 40.42, Lon: -3.70}, 7}, {"taipei", geo.Point{Lat: 25.03, Lon: 121.57}, 7},
	{"toronto", geo.Point{Lat: 43.65, Lon: -79.38}, 6}, {"dallas", geo.Point{Lat: 32.78, Lon: -96.80}, 6},
	{"houston", geo.Point{Lat: 29.76, Lon: -95.37}, 6}, {"miami", geo.Point{Lat: 25.76, Lon: -80.19}, 6},
	{"atlanta", geo.Point{Lat: 33.75, Lon: -84.39}, 6}, {"washington", geo.Point{Lat: 38.91, Lon: -77.04}, 6},
	{"singapore", geo.Point{Lat: 1.35, Lon: 103.82}, 6}, {"johannesburg", geo.Point{Lat: -26.20, Lon: 28.05}, 6},
	{"nairobi", geo.Point{Lat: -1.29, Lon: 36.82}, 5}, {"sydney", geo.Point{Lat: -33.87, Lon: 151.21}, 5},
	{"melbourne", geo.Point{Lat: -37.81, Lon: 144.96}, 5}, {"san-francisco", geo.Point{Lat: 37.77, Lon: -122.42}, 5},
	{"cape-town", geo.Point{Lat: -33.92, Lon: 18.42}, 5}, {"berlin", geo.Point{Lat: 52.52, Lon: 13.40}, 4},
	{"seattle", geo.Point{Lat: 47.61, Lon: -122.33}, 4}, {"tel-aviv", geo.Point{Lat: 32.09, Lon: 34.78}, 4},
	{"montreal", geo.Point{Lat: 45.50, Lon: -73.57}, 4}, {"dubai", geo.Point{Lat: 25.20, Lon: 55.27}, 3},
	{"milan", geo.Point{Lat: 45.46, Lon: 9.19}, 3}, {"frankfurt", geo.Point{Lat: 50.11, Lon: 8.68}, 2},
	{"stockholm", geo.Point{Lat: 59.33, Lon: 18.07}, 2}, {"auckland", geo.Point{Lat: -36.85, Lon: 174.76}, 2},
	{"dublin", geo.Point{Lat: 53.35, Lon: -6.26}, 1.5}, {"calgary", geo.Point{Lat: 51.05, Lon: -114.07}, 1.5},
}
