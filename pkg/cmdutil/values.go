package cmdutil

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// ParseSpeed accepts a replay speed as "3600", "3600x" or "max" (returned
// as 0: unpaced): a finite factor in (0, 1e9], the rule of the
// configuration's schedule.replay.speed, whose 0 is refused too (issue 27:
// --speed 0x was accepted here and refused there). NaN and infinities are
// refused (a NaN factor once made the replay clock wait for ever).
func ParseSpeed(given string) (float64, error) {
	s := strings.TrimSpace(strings.ToLower(given))
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e9 {
		return 0, fmt.Errorf("%q: want a factor > 0 such as 3600x (one hour per second, at most 1e9x), or max for no pacing", given)
	}
	return v, nil
}

// ParseHour accepts RFC 3339 and the shorter 2006-01-02T15[:04] (UTC).
func ParseHour(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2022-01-10T12:00:00Z) or 2022-01-10T12", s)
}

// CheckHostPort validates a host:port flag value: a port number 1..65535,
// or 0 too when listen (the system picks a free port). The host may be
// empty only when listen (every interface).
func CheckHostPort(flag, addr string, listen bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Usagef("%s %q: want host:port", flag, addr)
	}
	n, err := strconv.Atoi(port)
	lo := 1
	if listen {
		lo = 0
	}
	if err != nil || n < lo || n > 65535 {
		return Usagef("%s %q: want host:port with a port number %d..65535", flag, addr, lo)
	}
	if host == "" && !listen {
		return Usagef("%s %q: want host:port (the host is missing)", flag, addr)
	}
	return nil
}

// IsLoopbackAddr reports whether the host of host:port addr is localhost
// or a loopback address.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MaxEnergyPerRequestWh bounds --energy-per-request-wh: a kilowatt-hour
// per request is already far beyond any function, and much larger values
// overflow the gCO2 totals to +Inf.
const MaxEnergyPerRequestWh = 1000

// CheckEnergy validates an --energy-per-request-wh value: finite, > 0 and
// at most MaxEnergyPerRequestWh.
func CheckEnergy(flag string, wh float64) error {
	if math.IsNaN(wh) || math.IsInf(wh, 0) || wh <= 0 || wh > MaxEnergyPerRequestWh {
		return Usagef("%s %v: want a number of Wh in (0, %d]", flag, wh, MaxEnergyPerRequestWh)
	}
	return nil
}

// IntInRange checks that flag's value v is in lo..hi; why says what the
// upper bound protects.
func IntInRange(flag string, v, lo, hi int, why string) error {
	if v < lo || v > hi {
		return Usagef("%s %d: want %d..%d (%s)", flag, v, lo, hi, why)
	}
	return nil
}

// CheckFiniteFloats refuses NaN and ±Inf in every float flag (float64 or
// float64 slice) given on fs, naming the flag: pflag parses both, and a
// NaN compares false with every bound, so range checks alone let it pass.
func CheckFiniteFloats(fs *pflag.FlagSet) error {
	if fs == nil {
		return nil
	}
	var err error
	fs.Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		var vals []string
		switch f.Value.Type() {
		case "float64", "float32":
			vals = []string{f.Value.String()}
		case "float64Slice", "float32Slice":
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				vals = sv.GetSlice()
			}
		}
		for _, v := range vals {
			if x, perr := strconv.ParseFloat(v, 64); perr != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				err = Usagef("--%s %s: want a finite number", f.Name, v)
				return
			}
		}
	})
	return err
}

// NewLogger returns a structured logger on w in format (text or json) at
// level (debug, info, warn or error); other values are usage errors
// naming --log-format and --log-level.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, Usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, Usagef("--log-format %q: want text or json", format)
}
