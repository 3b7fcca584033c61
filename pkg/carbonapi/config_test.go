package carbonapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p4ctl/p4ctl/pkg/config"
)

// writeConfig writes a controller configuration with two regions (Mumbai,
// Ireland) and the given carbon section, and loads it.
func writeConfig(t *testing.T, carbon string, files map[string]string) (*config.Config, error) {
	t.Helper()
	return writeConfigPolicy(t, "", carbon, files)
}

// writeConfigPolicy is writeConfig with more lines in the policy block.
func writeConfigPolicy(t *testing.T, policy, carbon string, files map[string]string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	doc := `regions:
  - id: ap-south-1
    next_hop:
      remote: {port: 1, mac: "02:00:00:00:00:01", ip: 10.0.0.1}
  - id: eu-west-1
    next_hop:
      remote: {port: 2, mac: "02:00:00:00:00:02", ip: 10.0.0.2}
sites:
  - name: mumbai
    id: 1
    prefixes: [10.1.0.0/16]
    profile: mumbai
policy:
  name: C
` + policy + `carbon:
` + carbon
	path := filepath.Join(dir, "p4ctl.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(path)
}

func TestFromConfigElectricityMaps(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	t.Setenv("P4CTL_TEST_EM_TOKEN", emTestToken)
	for _, c := range []struct {
		name   string
		carbon string
		files  map[string]string
	}{
		{"env", "  source: electricitymaps-api\n  url: " + srv.srv.URL + "\n  token_env: P4CTL_TEST_EM_TOKEN\n  signal: direct\n  staleness_bound: 2h\n", nil},
		{"file", "  source: electricitymaps-api\n  url: " + srv.srv.URL + "\n  token_file: em.token\n  signal: direct\n  staleness_bound: 2h\n", map[string]string{"em.token": emTestToken + "\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := writeConfig(t, c.carbon, c.files)
			if err != nil {
				t.Fatal(err)
			}
			src, err := FromConfig(cfg, testOptions(clk, &sleeper{}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(src.Zones(), " "); got != "IE IN-WE" {
				t.Errorf("zones %q", got)
			}
			if src.StalenessBound() != 2*time.Hour {
				t.Errorf("bound %v", src.StalenessBound())
			}
			if err := src.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			if v, err := src.Intensity("IN-WE", clk.Now()); err != nil || v != emValue("IN-WE", tRef().Truncate(time.Hour)) {
				t.Errorf("IN-WE: %v %v", v, err)
			}
			if !strings.Contains(src.Describe(), "direct emissions") {
				t.Errorf("describe %q", src.Describe())
			}
		})
	}
}

// TestFromConfigForecast: Electricity Maps forecasts are fetched only when
// a hysteresis horizon beyond the current hour ranks by them.
func TestFromConfigForecast(t *testing.T) {
	clk := newClock(tRef())
	srv := newEMServer(t, clk.Now)
	t.Setenv("P4CTL_TEST_EM_TOKEN", emTestToken)
	carbon := "  source: electricitymaps-api\n  url: " + srv.srv.URL + "\n  token_env: P4CTL_TEST_EM_TOKEN\n"
	for _, c := range []struct {
		policy string
		want   bool
	}{
		{"", false},
		{"  hysteresis: {}\n", false},
		{"  hysteresis: {horizon: 6h}\n", true},
	} {
		cfg, err := writeConfigPolicy(t, c.policy, carbon, nil)
		if err != nil {
			t.Fatal(err)
		}
		src, err := FromConfig(cfg, testOptions(clk, &sleeper{}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := len(src.Forecast("IN-WE")) > 0; got != c.want {
			t.Errorf("policy %q: forecast fetched %v, want %v", c.policy, got, c.want)
		}
	}
}

func TestFromConfigWattTime(t *testing.T) {
	clk := newClock(tRef())
	srv := newWTServer(t, clk.Now)
	t.Setenv("P4CTL_TEST_WT_PASSWORD", wtTestPass)
	cfg, err := writeConfig(t, "  source: watttime-api\n  url: "+srv.srv.URL+"\n  token_env: P4CTL_TEST_WT_PASSWORD\n  username: "+wtTestUser+"\n  watttime_regions:\n    IN-WE: IND_WEST\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := FromConfig(cfg, testOptions(clk, &sleeper{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if src.StalenessBound() != config.DefaultStalenessBound {
		t.Errorf("bound %v", src.StalenessBound())
	}
	if err := src.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := src.Check(); err != nil {
		t.Fatal(err)
	}
	q := strings.Join(srv.queries, " ")
	if !strings.Contains(q, "region=IND_WEST") || !strings.Contains(q, "region=IE") {
		t.Errorf("requests %s", q)
	}
}

func TestFromConfigErrors(t *testing.T) {
	cfg, err := writeConfig(t, "  source: offline\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromConfig(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "not a live API") {
		t.Errorf("offline: %v", err)
	}
	cfg, err = writeConfig(t, "  source: electricitymaps-api\n  token_env: P4CTL_TEST_NOT_SET\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromConfig(cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "environment variable P4CTL_TEST_NOT_SET is not set") {
		t.Errorf("unset env: %v", err)
	}
	// Invalid configurations never reach FromConfig: Load rejects them.
	_, err = writeConfig(t, "  source: watttime-api\n  token_env: X\n", nil)
	var ve *config.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "needs username") {
		t.Errorf("watttime without username: %v", err)
	}
}
