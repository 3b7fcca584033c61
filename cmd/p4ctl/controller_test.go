package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/demo"
	"github.com/p4ctl/p4ctl/research/tuning"
)

const mumbai = "../../examples/mumbai.yaml"

// embeddedSwitch serves the embedded switch on a free loopback port.
func embeddedSwitch(t *testing.T) *dataplane.Embedded {
	t.Helper()
	e, err := dataplane.Start(dataplane.Options{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

func expect(t *testing.T, what string, code, want int, stdout, stderr string, contains ...string) {
	t.Helper()
	if code != want {
		t.Fatalf("%s: exit %d, want %d\nstdout: %.2000s\nstderr: %.2000s", what, code, want, stdout, stderr)
	}
	for _, c := range contains {
		if !strings.Contains(stdout+stderr, c) {
			t.Fatalf("%s: output lacks %q\nstdout: %.3000s\nstderr: %.2000s", what, c, stdout, stderr)
		}
	}
}

// diff → apply (dry run, then for real) → diff → get, against the embedded
// switch over loopback P4Runtime, with the exit codes of each step.
func TestApplyDiffGet(t *testing.T) {
	sw := embeddedSwitch(t)
	addr := sw.Addr()
	conn := []string{"--grpc-addr", addr}

	code, out, errs := p4ctl(t, append([]string{"diff", "-c", mumbai}, conn...)...)
	expect(t, "diff of an empty switch", code, exitError, out, errs, "drift:", "+ carbon_rank epoch=0")

	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--dry-run"}, conn...)...)
	expect(t, "apply --dry-run", code, exitOK, out, errs, "# target "+addr, "## stage", "WriteRequests", "device_id:", "election_id", "INSERT")
	if code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai}, conn...)...); code != exitError {
		t.Fatalf("the dry run wrote to the switch: diff exit %d\n%s%s", code, out, errs)
	}

	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--grace", "0"}, conn...)...)
	expect(t, "apply", code, exitOK, out, errs, "epoch 0 → 1", "stage 12")
	code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai, "-o", "json"}, conn...)...)
	expect(t, "diff after apply", code, exitOK, out, errs, `"drift": false`)
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai}, conn...)...)
	expect(t, "apply again", code, exitOK, out, errs, "0 writes (nothing to do)")
	// The next hour: a hitless change of generation.
	code, out, errs = p4ctl(t, append([]string{"apply", "-c", mumbai, "--hour", "1", "--grace", "1ms", "-o", "json"}, conn...)...)
	expect(t, "apply next hour", code, exitOK, out, errs, `"from_epoch": 1`, `"to_epoch": 2`, `"flip": 1`)
	code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai}, conn...)...)
	expect(t, "diff against the previous hour", code, exitError, out, errs, "carbon_rank epoch=2", "drift:")
	code, out, errs = p4ctl(t, append([]string{"diff", "-c", mumbai, "--hour", "1"}, conn...)...)
	expect(t, "diff against the applied hour", code, exitOK, out, errs, "no drift")

	// Traffic, then read it back.
	tr, err := demo.NewTraffic(mustConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Serve(sw.Switch)()
	for i := range 20 {
		if _, err := demo.Send(sw.Switch, tr.Request(0, uint32(i), 3000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = p4ctl(t, append([]string{"get", "entries", "--table", "carbon_rank"}, conn...)...)
	expect(t, "get entries", code, exitOK, out, errs, "TABLE", "carbon_rank", "route_to_region(region=")
	code, out, errs = p4ctl(t, append([]string{"get", "regions"}, conn...)...)
	expect(t, "get regions", code, exitOK, out, errs, "eu-north-1", "Stockholm", "remote via port 23", "ROUTED")
	code, out, errs = p4ctl(t, append([]string{"get", "counters", "--name", "region_routed", "-o", "json"}, conn...)...)
	expect(t, "get counters", code, exitOK, out, errs, `"packets": 20`)
	code, out, errs = p4ctl(t, append([]string{"get", "registers", "--name", "server_credit_0", "--all"}, conn...)...)
	expect(t, "get registers", code, exitOK, out, errs, "server_credit_0", "server 0")
	code, out, errs = p4ctl(t, append([]string{"get", "registers", "--name", "region_outstanding", "-o", "json"}, conn...)...)
	expect(t, "get registers, all zero", code, exitOK, out, errs, "[]")
	code, out, errs = p4ctl(t, append([]string{"get", "counters", "--name", "nope"}, conn...)...)
	expect(t, "get unknown counter", code, exitUsage, out, errs, "no counter \"nope\"")
}

func mustConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := loadControllerConfig(context.Background(), mumbai, func(tuning.Pool) {})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Invalid input is rejected with a precise message and exit 2 before any
// switch is contacted (here: the address is not even listening).
func TestControllerCommandsRejectBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("regions:\n  - id: ap-south-1\n    next_hop: {local: {policy: jbsq, servers: [{id: 0, port: 1, mac: \"02:00:00:00:00:01\", ip: 10.0.0.1}, {id: 1, port: 2, mac: \"02:00:00:00:00:02\", ip: 10.0.0.2}, {id: 2, port: 3, mac: \"02:00:00:00:00:03\", ip: 10.0.0.3}]}}\nsites: [{name: s, id: 1, prefixes: [10.1.0.0/16], profile: mumbai}]\npolicy: {name: C}\ncarbon: {source: offline}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile(mumbai)
	if err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(t.TempDir(), "live.yaml")
	liveCfg := strings.Replace(string(ex), "  source: offline             # built-in synthetic model (no files, no API key)\n  seed: 1\n",
		"  source: electricitymaps-api\n  token_env: P4CTL_NO_SUCH_TOKEN\n", 1)
	if liveCfg == string(ex) {
		t.Fatal("could not turn the example into a live-source configuration")
	}
	if err := os.WriteFile(live, []byte(liveCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := "127.0.0.1:1"
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"apply", "-c", bad, "--grpc-addr", dead}, exitUsage, bad + ":3: regions[0].next_hop.local.servers: pool of 3 servers"},
		{[]string{"diff", "-c", bad, "--grpc-addr", dead}, exitUsage, "pool of 3 servers"},
		{[]string{"run", "-c", bad, "--grpc-addr", dead}, exitUsage, "pool of 3 servers"},
		{[]string{"demo", "-c", bad}, exitUsage, "pool of 3 servers"},
		{[]string{"apply"}, exitUsage, "--config is required"},
		{[]string{"run", "-c", live, "--grpc-addr", dead}, exitUsage, "carbon.source electricitymaps-api is live (real time only)"},
		{[]string{"demo", "-c", live}, exitUsage, "is live"},
		{[]string{"apply", "-c", mumbai, "--grpc-addr", "nohost"}, exitUsage, "want host:port"},
		{[]string{"apply", "-c", mumbai, "--grpc-addr", dead, "--at", "2022-01-01T00", "--hour", "2"}, exitUsage, "not both"},
		{[]string{"apply", "-c", mumbai, "--grpc-addr", dead, "--election-id", "0"}, exitUsage, "--election-id must be ≥ 1"},
		{[]string{"run", "-c", mumbai, "--speed", "fast"}, exitUsage, "--speed"},
		{[]string{"run", "-c", mumbai, "--carbon-refresh-timeout", "0"}, exitUsage, "--carbon-refresh-timeout > 0"},
		{[]string{"run", "-c", mumbai, "--verify-every", "-1s"}, exitUsage, "--verify-every and --verify-full-every must be ≥ 0"},
		{[]string{"get"}, exitUsage, "get what?"},
		{[]string{"get", "entries", "--grpc-addr", "x"}, exitUsage, "want host:port"},
		{[]string{"push", "pipeline"}, exitUsage, "--p4info"},
		{[]string{"push", "pipeline", "--config", "a,b,c"}, exitUsage, "want p4info[,device-config]"},
		{[]string{"demo", "--hours", "0"}, exitUsage, "--hours"},
		{[]string{"demo", "--grpc-addr", "10.0.0.1:9559"}, exitUsage, "loopback only"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errs := p4ctl(t, c.args...)
			expect(t, strings.Join(c.args, " "), code, c.code, out, errs, c.want)
		})
	}
}

func TestRunReplicaFromHostname(t *testing.T) {
	o := &runOptions{hostname: func() (string, error) { return "p4ctl-2", nil }, ReplicaHost: true, Hours: -1}
	if err := o.flagsFor(t, mumbai); err != nil {
		t.Fatal(err)
	}
	if got := o.targets[0].ElectionID.Low; got != 3 {
		t.Fatalf("election id %d, want the configured 1 + ordinal 2", got)
	}
	o = &runOptions{hostname: func() (string, error) { return "controller", nil }, ReplicaHost: true, Hours: -1}
	if err := o.flagsFor(t, mumbai); err == nil || !strings.Contains(err.Error(), "does not end in -N") {
		t.Fatalf("host name without ordinal: %v", err)
	}
}

// With --shards S, pod N of the StatefulSet is replica N / S of shard
// N mod S: it drives its shard's targets only, with the replica's
// election id.
func TestRunShardFromHostname(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "fleet.yaml")
	if code, _, errOut := p4ctl(t, "gen", "config", "--sites", "2", "--regions", "5", "--switches", "12", "--file", cfg); code != 0 {
		t.Fatal(errOut)
	}
	all := &runOptions{Hours: -1}
	if err := all.flagsFor(t, cfg); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for pod := range 6 { // 3 shards × 2 replicas
		o := &runOptions{hostname: func() (string, error) { return fmt.Sprintf("p4ctl-%d", pod), nil }, ReplicaHost: true, Shards: 3, Hours: -1}
		if err := o.flagsFor(t, cfg); err != nil {
			t.Fatal(err)
		}
		if o.Shard != pod%3 || o.Replica != pod/3 {
			t.Fatalf("pod %d: shard %d replica %d", pod, o.Shard, o.Replica)
		}
		want := controller.ShardTargets(all.targets, o.Shard, 3)
		if len(o.targets) != len(want) || len(want) == 0 {
			t.Fatalf("pod %d drives %d targets, its shard owns %d", pod, len(o.targets), len(want))
		}
		for _, tg := range o.targets {
			if tg.ElectionID.Low != uint64(1+o.Replica) {
				t.Errorf("pod %d %s: election id %d", pod, tg.Name, tg.ElectionID.Low)
			}
			seen[tg.Name]++
		}
	}
	for _, tg := range all.targets {
		if seen[tg.Name] != 2 {
			t.Errorf("%s driven by %d pods, want its shard's 2 replicas", tg.Name, seen[tg.Name])
		}
	}
}

func (o *runOptions) flagsFor(t *testing.T, cfg string) error {
	o.ConfigPath = cfg
	o.conn.Timeout, o.EnergyWh, o.RefreshLimit = time.Second, 1, time.Second
	if err := o.Complete(nil, nil); err != nil {
		return err
	}
	return o.Validate()
}

// `p4ctl run` in a replay against the embedded switch: it serves metrics
// and health while it runs, drives the switch through every hour, and exits
// 0 when the replay ends; the switch then holds the last hour's state.
func TestRunReplay(t *testing.T) {
	sw := embeddedSwitch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	s := &streams{Out: &out, Err: &errb}
	var metrics net.Addr
	got := make(chan string, 1)
	o := &runOptions{hostname: os.Hostname}
	cmd := newRunCmdFor(s, o)
	o.ready = func(a net.Addr) {
		metrics = a
		go func() { got <- httpGet("http://" + a.String() + "/healthz") }()
	}
	cmd.SetArgs([]string{"-c", mumbai, "--grpc-addr", sw.Addr(), "--replay", "2022-01-10T00", "--speed", "36000x", "--hours", "5",
		"--metrics-addr", "127.0.0.1:0", "--grace", "1ms", "--log-format", "json"})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if metrics == nil {
		t.Fatal("metrics server never started")
	}
	if h := <-got; !strings.Contains(h, `"targets"`) {
		t.Errorf("/healthz: %q", h)
	}
	logs := errb.String()
	if strings.Contains(logs, "0 = without end") || !strings.Contains(logs, "for 5 hours") {
		t.Errorf("the run log line quotes help text or lacks the hours:\n%s", logs)
	}
	for _, want := range []string{`"msg":"plan"`, `"hour":"2022-01-10T04:00:00Z"`, `"msg":"pushed"`, `"msg":"replay finished"`,
		`"msg":"pushed","target":"` + sw.Addr() + `","hour":"2022-01-10T02:00:00Z"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s\n%s", want, logs)
		}
	}
	code, stdout, stderr := p4ctl(t, "diff", "-c", mumbai, "--grpc-addr", sw.Addr(), "--hour", "4")
	expect(t, "diff after run", code, exitOK, stdout, stderr, "no drift")
}

func httpGet(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The demo in its quick mode through the CLI: exit 0, every hour checked,
// -o json summary, plots written.
func TestDemoQuickCLI(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := p4ctl(t, "demo", "--quick", "--out-dir", dir, "-o", "json")
	expect(t, "demo --quick", code, exitOK, out, errs)
	var res demo.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("demo -o json: %v\n%.500s", err, out)
	}
	if len(res.Hours) != 6 || !res.Totals.CountersMatch || res.Totals.SLAViolations != 0 || len(res.Plots) != 4 {
		t.Fatalf("summary: hours %d, totals %+v, plots %v", len(res.Hours), res.Totals, res.Plots)
	}
	if !strings.Contains(res.CarbonSource, "synthetic model") {
		t.Errorf("carbon source %q", res.CarbonSource)
	}
	// Explicit flags win over --quick's.
	code, out, errs = p4ctl(t, "demo", "--quick", "--hours", "2", "--out-dir", "")
	expect(t, "demo --quick table", code, exitOK, out, errs, "carbon ranking", "totals over 2 hours", "the switch's counters equal the policy's prediction")
}

// push pipeline installs a P4Info on a switch started without one (as
// simple_switch_grpc --no-p4), spelled either way.
func TestPushPipeline(t *testing.T) {
	e, err := dataplane.Start(dataplane.Options{NoPipeline: true}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	info := filepath.Join(t.TempDir(), "p4ctl.p4info.txtpb")
	b, err := prototext.Marshal(dataplane.DefaultP4Info())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := p4ctl(t, "get", "entries", "--grpc-addr", e.Addr())
	expect(t, "get before push", code, exitError, out, errs, "pipeline")
	code, out, errs = p4ctl(t, "push", "pipeline", "--p4info", info, "--grpc-addr", e.Addr())
	expect(t, "push", code, exitOK, out, errs, "pushed to device 1")
	code, out, errs = p4ctl(t, "push", "pipeline", "--config", info, "--grpc-addr", e.Addr(), "--action", "verify")
	expect(t, "push --config (verify)", code, exitOK, out, errs, "VERIFY")
	code, out, errs = p4ctl(t, "apply", "-c", mumbai, "--grpc-addr", e.Addr(), "--grace", "0")
	expect(t, "apply after push", code, exitOK, out, errs, "epoch 0 → 1")
}
