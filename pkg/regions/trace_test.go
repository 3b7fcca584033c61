package regions

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func hour(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestLoadTracesFixtures(t *testing.T) {
	for _, m := range []Metric{LCA, Direct} {
		src, err := LoadTraces("testdata/traces", LoadOptions{Metric: m})
		if err != nil {
			t.Fatal(err)
		}
		if z := src.Zones(); len(z) != 2 || z[0] != "IE" || z[1] != "SG" {
			t.Fatalf("zones %v", z)
		}
		if sk := src.Skipped(); len(sk) != 1 || !strings.HasSuffix(sk[0], "yearly.csv") {
			t.Errorf("skipped %v", sk)
		}
		// Period is the intersection: IE has 4 hours, SG 5.
		if p := src.Period(); !p.From.Equal(hour("2030-01-01T00:00:00Z")) || p.Hours() != 4 {
			t.Errorf("period %s", p)
		}
		v, err := src.Intensity("SG", hour("2030-01-01T02:59:59Z"))
		want := map[Metric]float64{LCA: 482, Direct: 402}[m]
		if err != nil || v != want {
			t.Errorf("%s SG 02:59 = %v, %v; want %v", m, v, err, want)
		}
		if v, _ := src.Intensity("IE", hour("2030-01-01T00:30:00Z")); v != 300.5 {
			t.Errorf("IE 00:30 = %v", v)
		}
		if _, err := src.Intensity("IE", hour("2030-01-01T04:00:00Z")); err == nil {
			t.Error("intensity outside the period accepted")
		}
		if _, err := src.Intensity("DE", hour("2030-01-01T00:00:00Z")); err == nil {
			t.Error("unknown zone accepted")
		}
		if want := "measured hourly traces 2030 from testdata/traces (Electricity Maps portal CSV (" + m.String() + "), normalized CSV; 2 zones"; !strings.Contains(src.Describe(), want) {
			t.Errorf("describe %q", src.Describe())
		}
	}
}

const normHdr = "timestamp_utc,zone,gco2_per_kwh\n"

func TestTraceErrorsNameFileAndLine(t *testing.T) {
	emHdr := "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO₂eq/kWh (direct),Carbon Intensity gCO₂eq/kWh (LCA)\n"
	cases := []struct {
		name, data, want string
	}{
		{"empty", "", "t.csv:1: empty file"},
		{"no rows", normHdr, "t.csv:2: no data rows"},
		{"bad header", "timestamp_utc,region,gco2_per_kwh\n", "t.csv:1: header"},
		{"wrong unit column", "timestamp_utc,zone,kgco2_per_kwh\n", "t.csv:1: wrong units"},
		{"kg values", normHdr + "2030-01-01T00:00:00Z,IE,0.3\n2030-01-01T01:00:00Z,IE,0.31\n", "t.csv:2: wrong units"},
		{"bad timestamp", normHdr + "2030-01-01 00:00,IE,3\n", "t.csv:2: timestamp"},
		{"not on the hour", normHdr + "2030-01-01T00:30:00Z,IE,3\n", "t.csv:2: timestamp 2030-01-01T00:30:00Z is not on the hour"},
		{"unknown zone", normHdr + "2030-01-01T00:00:00Z,XX,3\n", "t.csv:2: unknown zone \"XX\""},
		{"missing value", normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,\n", "t.csv:3: zone IE 2030-01-01T01:00:00Z: missing value"},
		{"not a number", normHdr + "2030-01-01T00:00:00Z,IE,abc\n", "t.csv:2: value \"abc\" is not a number"},
		{"NaN", normHdr + "2030-01-01T00:00:00Z,IE,NaN\n", "t.csv:2: value \"NaN\" is not finite"},
		{"negative", normHdr + "2030-01-01T00:00:00Z,IE,-5\n", "t.csv:2: negative intensity"},
		{"absurd", normHdr + "2030-01-01T00:00:00Z,IE,2500\n", "t.csv:2: absurd intensity 2500"},
		{"duplicate", normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,300\n", "t.csv:4: duplicate hour 2030-01-01T01:00:00Z for zone IE (first at line 3)"},
		{"unsorted", normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T02:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,300\n", "t.csv:4: unsorted: 2030-01-01T01:00:00Z for zone IE comes after 2030-01-01T02:00:00Z (line 3); sort the file by time"}, // two swapped rows: unsorted, not a gap (issue 15 item 6)
		{"swapped, filled", normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T02:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,300\n2030-01-01T03:00:00Z,IE,300\n", "t.csv:4: unsorted"},
		{"unsorted, filled", normHdr + "2030-01-01T01:00:00Z,IE,300\n2030-01-01T02:00:00Z,IE,300\n2030-01-01T00:00:00Z,IE,300\n", "t.csv:4: unsorted: 2030-01-01T00:00:00Z for zone IE comes after 2030-01-01T02:00:00Z (line 3)"},
		{"gap", normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T03:00:00Z,IE,300\n", "t.csv:3: gap of 2 hours for zone IE before 2030-01-01T03:00:00Z (previous line 2)"},
		{"short row", normHdr + "2030-01-01T00:00:00Z,IE\n", "t.csv:2: 2 fields, want at least 3"},
		{"em without zone id", "Datetime (UTC),Country,Carbon Intensity gCO₂eq/kWh (LCA)\n", "t.csv:1: Electricity Maps file without a \"Zone Id\" column"},
		{"em without LCA", "Datetime (UTC),Zone Id,Carbon Intensity gCO₂eq/kWh (direct)\n", "t.csv:1: Electricity Maps file without a \"Carbon Intensity gCO₂eq/kWh (LCA)\" column"},
		{"em wrong unit", "Datetime (UTC),Zone Id,Carbon Intensity lbCO₂eq/MWh (LCA)\n", "t.csv:1: wrong units: column \"Carbon Intensity lbCO₂eq/MWh (LCA)\""},
		{"em bad time", emHdr + "2030-01-01T00:00:00Z,Ireland,Ireland,IE,1,2\n", "t.csv:2: timestamp \"2030-01-01T00:00:00Z\": want 2006-01-02 15:04:05"},
		{"em unknown zone", emHdr + "2030-01-01 00:00:00,Poland,Poland,PL,1,2\n", "t.csv:2: unknown zone \"PL\""}, // FR joined the catalog (eu-west-3, issue 14)
		{"csv quoting", normHdr + "2030-01-01T00:00:00Z,\"IE,300\n", "t.csv:2:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := LoadOptions{}
			if strings.HasSuffix(c.name, ", filled") {
				o.Fill = FillPrevious
			}
			_, err := ParseTraces("t.csv", []byte(c.data), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n  got  %v\n  want %q", err, c.want)
			}
		})
	}
}

func TestTraceNotATrace(t *testing.T) {
	if _, err := ParseTraces("y.csv", []byte("zone,year,gco2_per_kwh_lca_yearly\nIE,2022,405\n"), LoadOptions{}); err == nil ||
		!strings.Contains(err.Error(), "no hourly traces") {
		t.Fatalf("err %v", err)
	}
	if _, err := LoadTraces(t.TempDir(), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "no *.csv files") {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestTraceZoneInTwoFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := dir + "/" + name
		if err := writeFile(p, data); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", normHdr+"2030-01-01T00:00:00Z,IE,300\n")
	b := write("b.csv", normHdr+"2030-01-01T01:00:00Z,IE,300\n")
	_, err := LoadTraceFiles([]string{a, b}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "b.csv:2: zone IE already loaded from "+a) {
		t.Fatalf("err %v", err)
	}
}

func TestTraceFill(t *testing.T) {
	data := normHdr + "2030-01-01T00:00:00Z,IE,100\n2030-01-01T03:00:00Z,IE,400\n"
	for _, c := range []struct {
		fill FillPolicy
		want []float64
	}{
		{FillPrevious, []float64{100, 100, 100, 400}},
		{FillLinear, []float64{100, 200, 300, 400}},
	} {
		src, err := ParseTraces("t.csv", []byte(data), LoadOptions{Fill: c.fill})
		if err != nil {
			t.Fatal(err)
		}
		if src.Filled() != 2 {
			t.Errorf("filled %d", src.Filled())
		}
		for h, w := range c.want {
			at := hour("2030-01-01T00:00:00Z").Add(time.Duration(h) * time.Hour)
			v, err := src.Intensity("IE", at)
			if err != nil || math.Abs(v-w) > 1e-9 {
				t.Errorf("fill %d hour %d = %v, %v; want %v", c.fill, h, v, err, w)
			}
			// A filled hour is as old as the last measured one before it.
			if got, want := src.ValueAge("IE", at), []time.Duration{0, time.Hour, 2 * time.Hour, 0}[h]; got != want {
				t.Errorf("fill %d hour %d: value age %s, want %s", c.fill, h, got, want)
			}
		}
		if a := src.ValueAge("DE", hour("2030-01-01T01:00:00Z")); a != 0 {
			t.Errorf("a zone without data: value age %s", a)
		}
	}
}

func TestParseOptions(t *testing.T) {
	if m, err := ParseMetric("direct"); err != nil || m != Direct {
		t.Error("direct")
	}
	if _, err := ParseMetric("scope3"); err == nil {
		t.Error("bad metric accepted")
	}
	if f, err := ParseFill("linear"); err != nil || f != FillLinear {
		t.Error("linear")
	}
	if _, err := ParseFill("zero"); err == nil {
		t.Error("bad fill accepted")
	}
	p, err := ParseMonth("2022-01")
	if err != nil || p.Hours() != 744 {
		t.Errorf("month %v %v", p, err)
	}
	if _, err := ParseMonth("2022-13"); err == nil {
		t.Error("bad month accepted")
	}
	p, err = ParsePeriod("2022-01-01", "2022-01-02T06:00:00Z")
	if err != nil || p.Hours() != 30 {
		t.Errorf("period %v %v", p, err)
	}
	if _, err := ParsePeriod("2022-01-02", "2022-01-01"); err == nil {
		t.Error("empty period accepted")
	}
}

func FuzzParseTraces(f *testing.F) {
	f.Add([]byte(normHdr + "2030-01-01T00:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,301\n"))
	f.Add([]byte("Datetime (UTC),Zone Id,Carbon Intensity gCO₂eq/kWh (LCA)\n2030-01-01 00:00:00,SG,480\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := ParseTraces("fuzz.csv", data, LoadOptions{Fill: FillLinear})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") && !strings.HasPrefix(err.Error(), "load traces") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		p := src.Period()
		for _, z := range src.Zones() {
			for h := 0; h < p.Hours() && h < 50; h++ {
				v, err := src.Intensity(z, p.From.Add(time.Duration(h)*time.Hour))
				if err != nil || !(v >= 0 && v <= MaxIntensity) {
					t.Fatalf("zone %s hour %d: %v %v", z, h, v, err)
				}
			}
		}
	})
}

// A directory that does not exist is named as such, not as one without
// *.csv files (issue 15 item 7).
func TestLoadTracesMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	_, err := LoadTraces(dir, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "directory "+dir+" does not exist") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadTraces(%s): %v", dir, err)
	}
}

// Issue 27 item 7: a trace with no header, another header or ';'
// separators was skipped silently (the error later blamed a zone without
// data), and a +05:30 timestamp failed as "not on the hour". Each names
// the file and the real cause; a yearly-averages table is still skipped.
func TestTraceRealCause(t *testing.T) {
	cases := []struct {
		name, data, want string
	}{
		{"no header", "2030-01-01T00:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,310\n", "t.csv:1: no header: the first line is data"},
		{"em rows without header", "2030-01-01 00:00:00,Ireland,Ireland,IE,1,2\n", "t.csv:1: no header"},
		{"semicolons", "timestamp_utc;zone;gco2_per_kwh\n2030-01-01T00:00:00Z;IE;300\n", "t.csv:1: fields separated by ';'"},
		{"semicolons, no header", "2030-01-01T00:00:00Z;IE;300\n", "t.csv:1: fields separated by ';'"},
		{"tabs", "timestamp_utc\tzone\tgco2_per_kwh\n", "t.csv:1: fields separated by tabs"},
		{"another header", "time,zone,value\n2030-01-01T00:00:00Z,IE,300\n", "t.csv:1: header \"time,zone,value\" is not a trace format"},
		{"another EM-like header", "Date,Zone,Carbon\n", "t.csv:1: header \"Date,Zone,Carbon\" is not a trace format"},
		{"+05:30 offset", normHdr + "2030-01-01T00:00:00+05:30,IE,300\n", "t.csv:2: timestamp 2030-01-01T00:00:00+05:30 is 2029-12-31T18:30:00Z in UTC: its offset is not a whole number of hours"},
		{"half past in UTC", normHdr + "2030-01-01T00:30:00+01:00,IE,300\n", "t.csv:2: timestamp 2030-01-01T00:30:00+01:00 is not on the hour (2029-12-31T23:30:00Z in UTC)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTraces("t.csv", []byte(c.data), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n  got  %v\n  want %q", err, c.want)
			}
		})
	}
	// Whole hours in another offset are fine.
	if _, err := ParseTraces("t.csv", []byte(normHdr+"2030-01-01T02:00:00+02:00,IE,300\n2030-01-01T03:00:00+02:00,IE,310\n"), LoadOptions{}); err != nil {
		t.Fatalf("+02:00 on the hour: %v", err)
	}
	// A skipped table is named where its absence shows.
	dir := t.TempDir()
	if err := writeFile(dir+"/ie.csv", normHdr+"2030-01-01T00:00:00Z,IE,300\n2030-01-01T01:00:00Z,IE,310\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(dir+"/yearly.csv", "zone,year,gco2_per_kwh_lca_yearly\nDE,2030,405\n"); err != nil {
		t.Fatal(err)
	}
	src, err := LoadTraces(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Intensity("DE", src.Period().From); err == nil || !strings.Contains(err.Error(), "skipped, not hourly traces: "+dir+"/yearly.csv") {
		t.Fatalf("missing zone: %v, want the skipped file named", err)
	}
}
