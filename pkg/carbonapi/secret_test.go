package carbonapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/config"
)

// Every secret of these tests contains this marker; no output may.
const marker = "SECRET"

func TestSecretFormatting(t *testing.T) {
	s := NewSecret("  tok-" + marker + "\n")
	cfg := Config{Kind: config.SourceElectricityMapsAPI, Token: s, Zones: []string{"DE"}}
	var out bytes.Buffer
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, f+"\n", s)
		fmt.Fprintf(&out, f+"\n", cfg)
		fmt.Fprintf(&out, f+"\n", &cfg)
	}
	out.WriteString(s.String() + s.GoString())
	b, _ := json.Marshal(cfg)
	out.Write(b)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("x", "token", s, "cfg", cfg)
	if strings.Contains(out.String(), marker) {
		t.Errorf("secret printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "[redacted]") {
		t.Error("no [redacted] in the output: the test checks nothing")
	}
	if s.v() != "tok-"+marker {
		t.Errorf("white space not trimmed: %q", s.v())
	}
}

func TestLoadSecret(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	if err := os.WriteFile(file, []byte("file-"+marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("P4CTL_TEST_TOKEN", "env-"+marker)
	t.Setenv("P4CTL_TEST_EMPTY", "")
	for _, c := range []struct {
		env, file, want, err string
	}{
		{"P4CTL_TEST_TOKEN", "", "env-" + marker, ""},
		{"P4CTL_TEST_TOKEN", file, "env-" + marker, ""}, // env wins
		{"P4CTL_TEST_EMPTY", file, "file-" + marker, ""},
		{"P4CTL_TEST_UNSET", file, "file-" + marker, ""},
		{"", file, "file-" + marker, ""},
		{"P4CTL_TEST_UNSET", "", "", "environment variable P4CTL_TEST_UNSET is not set"},
		{"", filepath.Join(dir, "missing"), "", "no such file"},
		{"", empty, "", "is empty"},
		{"", "", "", "no environment variable or file"},
	} {
		s, err := LoadSecret(c.env, c.file)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: got %v, want %q", c.env, c.file, err, c.err)
			}
			continue
		}
		if err != nil || s.v() != c.want {
			t.Errorf("%s %s: %q %v", c.env, c.file, s.v(), err)
		}
	}
}

// TestTokenNeverLeaked drives every failure path against servers that echo
// the credentials back, and checks no error, log line or printout holds
// them.
func TestTokenNeverLeaked(t *testing.T) {
	var logs bytes.Buffer
	var texts []string
	collect := func(err error) {
		if err != nil {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
	}
	ctx := context.Background()
	clk := newClock(tRef())

	// Electricity Maps.
	em := newEMServer(t, clk.Now)
	em.echo = true
	em.token = "the-right-" + marker
	bad, err := New(Config{Kind: config.SourceElectricityMapsAPI, BaseURL: em.srv.URL, Token: NewSecret("wrong-" + marker), Zones: []string{"DE", "IE"}},
		testOptions(clk, &sleeper{}, &logs))
	if err != nil {
		t.Fatal(err)
	}
	collect(bad.Refresh(ctx)) // 401 echoing the wrong token
	collect(bad.Check())
	b, _ := json.Marshal(bad.Status())
	texts = append(texts, string(b), fmt.Sprintf("%+v %#v", bad, bad), bad.Describe())

	tok := em.token
	good := newEMClient(t, em.srv.URL, testOptions(clk, &sleeper{}, &logs))
	good.token = NewSecret(em.token)
	if good.token.v() != tok {
		t.Fatal("token not set")
	}
	good.d.red.add(em.token)
	em.push(latestPath,
		canned{status: 500, body: "internal error for token " + tok},
		canned{status: 429, header: map[string]string{"Retry-After": "1"}, body: `{"message":"slow down ` + tok + `"}`},
		canned{status: 200, body: `{"zone":"` + tok + `","carbonIntensity":1,"datetime":"2025-01-15T10:00:00Z"}`},
		canned{status: 200, body: `{"zone":"DE","carbonIntensity":1,"datetime":"` + tok + `"}`},
		canned{status: 403, body: tok},
	)
	for i := range 3 {
		_, err := good.Latest(ctx, "DE")
		collect(err)
		if i < 2 && !errors.Is(err, ErrBadResponse) {
			t.Errorf("call %d: scrubbed parse error lost ErrBadResponse: %v", i, err)
		}
	}
	texts = append(texts, fmt.Sprintf("%+v %#v", good, good))

	// WattTime.
	wt := newWTServer(t, clk.Now)
	wt.echo = true
	wrong := newWTClient(t, wt.srv.URL, "wrong-pass-"+marker, testOptions(clk, &sleeper{}, &logs))
	_, err = wrong.Forecast(ctx, "IE") // login 401 echoing header and password
	collect(err)
	if !errors.Is(err, ErrAuth) {
		t.Errorf("bad login: %v", err)
	}
	right := newWTClient(t, wt.srv.URL, wtTestPass, testOptions(clk, &sleeper{}, &logs))
	if _, err := right.Forecast(ctx, "IE"); err != nil {
		t.Fatal(err)
	}
	wt.revoke()
	wt.push("/v3/forecast", canned{status: 401, body: "token wt-session-1-SECRET expired"})
	_, err = right.Forecast(ctx, "IE") // 401 → re-login → ok
	collect(err)
	wt.push("/v3/forecast", canned{status: 500, body: "upstream wt-session-2-SECRET " + wtTestPass})
	wt.push("/v3/forecast", canned{status: 500, body: "upstream wt-session-2-SECRET"}, canned{status: 500}, canned{status: 500})
	_, err = right.Forecast(ctx, "IE")
	collect(err)
	wt.push("/v3/signal-index", canned{status: 200, body: `{"data":[{"point_time":"2025-01-15T10:00:00Z","value":1}],"meta":{"region":"wt-session-2-SECRET","units":"percentile"}}`})
	_, err = right.SignalIndex(ctx, "IE")
	collect(err)
	texts = append(texts, fmt.Sprintf("%+v %#v %+v", right, right, right.d))

	texts = append(texts, logs.String())
	all := strings.Join(texts, "\n")
	if strings.Contains(all, marker) {
		for _, l := range strings.Split(all, "\n") {
			if strings.Contains(l, marker) {
				t.Errorf("secret leaked: %s", l)
			}
		}
	}
	// The test must have seen the failures it is about.
	for _, want := range []string{"401 Unauthorized", "500 Internal Server Error", "429 Too Many Requests", "403 Forbidden", "[redacted]", "carbon API retry", "carbon fetch failed"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the collected output: the test misses a path", want)
		}
	}
}
