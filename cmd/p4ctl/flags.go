package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"

	"github.com/p4ctl/p4ctl/examples"
	"github.com/p4ctl/p4ctl/pkg/cmdutil"
	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/research/tuning"
)

// Shared flag helpers of the commands that read a controller configuration
// (plan, diff, apply, run, demo) or talk to a switch (diff, apply, get,
// push, run).

// loadControllerConfig loads and validates a controller configuration; an
// invalid one is a usage error (exit 2) reported before any switch is
// touched, every problem as file:line: path: message. Pools with a tune
// block get their JBSQ bound by simulation (tuning.Load) and report is
// called with each (commands print it on stderr, so -o json stays clean);
// a target no bound meets is an error (exit 1; diff, whose 1 means drift,
// exits exitDiffError).
func loadControllerConfig(ctx context.Context, path string, report func(tuning.Pool)) (*config.Config, error) {
	if path == "" {
		return nil, cmdutil.Usagef("--config is required")
	}
	cfg, err := tuning.Load(ctx, path, tuning.Options{}, report)
	var ce *tuning.ConfigError
	if errors.As(err, &ce) {
		return nil, cmdutil.InputError(err) // missing, unreadable or invalid: exit 2
	}
	return cfg, err
}

// printTuned returns a report for loadControllerConfig that prints each
// resolved pool as one line on w.
func printTuned(w io.Writer) func(tuning.Pool) {
	return func(p tuning.Pool) { fmt.Fprintln(w, p) }
}

// configFlag is --config/-c, the controller configuration that plan, diff,
// apply and run require, and the configuration once loaded.
type configFlag struct {
	ConfigPath string
	cfg        *config.Config
	// tuned are the pools whose bound came from a tune block; logTuned
	// leaves them to the command's logger instead of a line on stderr
	// each (the daemon, whose stderr is structured logs).
	tuned    []tuning.Pool
	logTuned bool
}

func (c *configFlag) add(fs *pflag.FlagSet) {
	fs.StringVarP(&c.ConfigPath, "config", "c", "", "controller configuration file (YAML, docs/CONFIG.md; required)")
}

// load reads and validates the configuration and resolves its tune blocks
// (see loadControllerConfig), in cmd's context, noting each on cmd's stderr
// (the process's without cmd) unless logTuned.
func (c *configFlag) load(cmd *cobra.Command) error {
	var stderr io.Writer = os.Stderr
	if cmd != nil {
		stderr = cmd.ErrOrStderr()
	}
	show := printTuned(stderr)
	cfg, err := loadControllerConfig(cmdContext(cmd), c.ConfigPath, func(p tuning.Pool) {
		c.tuned = append(c.tuned, p)
		if !c.logTuned {
			show(p)
		}
	})
	if err != nil {
		return err
	}
	c.cfg = cfg
	return nil
}

// cmdContext is cmd's context (Background when there is none).
func cmdContext(cmd *cobra.Command) context.Context {
	if cmd != nil && cmd.Context() != nil {
		return cmd.Context()
	}
	return context.Background()
}

// hourFlags bind --at and --hour to the controller.HourOptions that
// select the hour a command compiles for.
type hourFlags struct{ controller.HourOptions }

func (h *hourFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&h.At, "at", "", "compile for the hour containing this time (RFC 3339 or 2022-01-10T12)")
	fs.Var(newOptionalInt(&h.Hour), "hour", "compile for hour N ≥ 0 after the replay start (or the carbon data's first hour), below the hours the carbon data covers (8760 for the offline model); default: the replay start in replay mode, else now")
}

// optionalInt is a flag holding an integer ≥ 0, or -1 while not given; its
// help shows no default (the usage text says what "not given" means).
type optionalInt struct{ p *int }

func newOptionalInt(p *int) *optionalInt {
	*p = -1
	return &optionalInt{p}
}

func (o *optionalInt) String() string {
	if o.p == nil || *o.p < 0 {
		return ""
	}
	return strconv.Itoa(*o.p)
}

func (o *optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return fmt.Errorf("want an integer ≥ 0")
	}
	*o.p = v
	return nil
}

func (o *optionalInt) Type() string { return "int" }

// connFlags are the P4Runtime connection flags, named as p4runtime-shell
// names them (--grpc-addr, --device-id, --election-id; --config
// p4info[,device-config] where a command takes a pipeline), plus TLS.
type connFlags struct {
	GRPCAddr   string
	DeviceID   uint64
	ElectionID p4rt.ElectionID
	CA         string
	Cert       string
	Key        string
	ServerName string
	Insecure   bool
	Timeout    time.Duration
}

// deviceIDHelp is the help of every --device-id that dials a switch.
const deviceIDHelp = "P4Runtime device id (0 is valid: simple_switch_grpc starts as device 0 unless given --device-id)"

// add registers the flags; addrDefault "" makes --grpc-addr optional (the
// configuration's targets apply). electionHelp says what --election-id
// means for the command.
func (c *connFlags) add(fs *pflag.FlagSet, addrDefault string, electionDefault uint64, electionHelp string) {
	addrHelp := "P4Runtime server address host:port"
	if addrDefault == "" {
		addrHelp += " (default: every target of the configuration)"
	}
	fs.StringVar(&c.GRPCAddr, "grpc-addr", addrDefault, addrHelp)
	devHelp := deviceIDHelp
	if addrDefault == "" {
		devHelp += "; with --grpc-addr only (the configuration's targets carry their own device_id)"
	}
	fs.Uint64Var(&c.DeviceID, "device-id", p4rt.DefaultDeviceID, devHelp)
	c.ElectionID = p4rt.Election(electionDefault)
	fs.Var(&electionFlag{&c.ElectionID}, "election-id", electionHelp+"; HIGH,LOW as in p4runtime-shell (whose default 1,0 is high word 1), or one number (the low word)")
	fs.StringVar(&c.CA, "tls-ca", "", "CA bundle (PEM) verifying the switch: enables TLS")
	fs.StringVar(&c.Cert, "tls-cert", "", "client certificate (PEM) for mTLS")
	fs.StringVar(&c.Key, "tls-key", "", "client key (PEM) for mTLS")
	fs.StringVar(&c.ServerName, "tls-server-name", "", "name to verify in the switch's certificate")
	fs.BoolVar(&c.Insecure, "insecure", false, "allow plaintext P4Runtime to a non-loopback address")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "deadline of each P4Runtime call")
}

// electionFlag is --election-id: p4runtime-shell's HIGH,LOW, or one number
// (a 128-bit id; below 2^64 it is the low word).
type electionFlag struct{ id *p4rt.ElectionID }

func (e *electionFlag) String() string {
	switch {
	case e.id == nil || e.id.IsZero():
		return "0"
	case e.id.High == 0:
		return strconv.FormatUint(e.id.Low, 10)
	}
	return fmt.Sprintf("%d,%d", e.id.High, e.id.Low)
}

func (e *electionFlag) Set(s string) error {
	v, err := p4rt.ParseElectionID(s)
	if err != nil {
		return errors.New("want HIGH,LOW (p4runtime-shell's form, e.g. 1,0) or one number")
	}
	if !strings.ContainsAny(s, ",:") && v.High != 0 {
		// One number is the low word (the help says so); 2^64 and above
		// would silently become a high word.
		return fmt.Errorf("one number is the low word, at most %d; for a high word write HIGH,LOW (this number is %d,%d)", uint64(math.MaxUint64), v.High, v.Low)
	}
	*e.id = v
	return nil
}

func (e *electionFlag) Type() string { return "HIGH,LOW" }

func (c *connFlags) validate(required bool) error {
	if c.GRPCAddr == "" {
		if required {
			return cmdutil.Usagef("--grpc-addr is required")
		}
		return nil
	}
	if err := cmdutil.CheckHostPort("--grpc-addr", c.GRPCAddr, false); err != nil {
		return err
	}
	if (c.Cert == "") != (c.Key == "") {
		return cmdutil.Usagef("--tls-cert and --tls-key go together")
	}
	if c.Timeout <= 0 {
		return cmdutil.Usagef("--timeout must be > 0")
	}
	if ep := c.endpoint(p4rt.ElectionID{}); ep.TLS != nil {
		if _, err := ep.TLS.Config(); err != nil { // unusable files are input errors (exit 2)
			return cmdutil.Usagef("--tls-ca, --tls-cert, --tls-key: %w", err)
		}
	}
	if !c.tls() && !c.Insecure && !cmdutil.IsLoopbackAddr(c.GRPCAddr) {
		return cmdutil.Usagef("--grpc-addr %s is not a loopback address: plaintext P4Runtime is refused there; give --tls-ca FILE (TLS; with --tls-cert/--tls-key for mTLS) or --insecure to allow plaintext", c.GRPCAddr)
	}
	return nil
}

// connFlagNames are the flags connFlags.add registers that take a string:
// given empty, each is refused (refuseEmpty), never taken for its default.
var connFlagNames = []string{"grpc-addr", "tls-ca", "tls-cert", "tls-key", "tls-server-name"}

func (c *connFlags) tls() bool { return c.CA != "" || c.Cert != "" || c.ServerName != "" }

// endpoint returns the flags as a p4rt.Endpoint with the given election id
// (zero: none; reads need none). The device id is sent as given, 0 too.
func (c *connFlags) endpoint(election p4rt.ElectionID) p4rt.Endpoint {
	ep := p4rt.Endpoint{Address: c.GRPCAddr, DeviceID: c.DeviceID, ElectionID: election, Insecure: c.Insecure, Timeout: c.Timeout}
	if c.tls() {
		ep.TLS = &p4rt.TLSOptions{CAFile: c.CA, CertFile: c.Cert, KeyFile: c.Key, ServerName: c.ServerName}
	}
	return ep
}

// transport returns the call timeout, TLS and plaintext options (no device
// or election id: the controller sets those per target).
func (c *connFlags) transport() []p4rt.Option {
	opts := []p4rt.Option{p4rt.WithCallTimeout(c.Timeout)}
	if c.tls() {
		opts = append(opts, p4rt.WithTLS(p4rt.TLSOptions{CAFile: c.CA, CertFile: c.Cert, KeyFile: c.Key, ServerName: c.ServerName}))
	}
	if c.Insecure {
		opts = append(opts, p4rt.WithInsecure())
	}
	return opts
}

// dial connects to --grpc-addr (no arbitration; a zero election id =
// read-only).
func (c *connFlags) dial(election p4rt.ElectionID, extra ...p4rt.Option) (*p4rt.Client, error) {
	cl, err := c.endpoint(election).Dial(extra...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", c.GRPCAddr, err)
	}
	return cl, nil
}

// targets returns the switches a controller command drives: the one named
// by --grpc-addr, or the configuration's targets. electionOverride, when
// not zero, replaces every target's election id. A configured target that
// would be reached in plaintext beyond loopback is a usage error naming
// its tls: block and --insecure.
func (c *connFlags) targets(cfg *config.Config, electionOverride p4rt.ElectionID) ([]controller.Target, error) {
	if c.GRPCAddr != "" {
		id := c.ElectionID
		if !electionOverride.IsZero() {
			id = electionOverride
		}
		return []controller.Target{{Name: c.GRPCAddr, Addr: c.GRPCAddr, DeviceID: c.DeviceID, ElectionID: id,
			ClientOptions: c.transport()}}, nil
	}
	if len(cfg.Targets) == 0 {
		return nil, cmdutil.Usagef("the configuration has no targets: add `targets:` or give --grpc-addr")
	}
	var out []controller.Target
	for _, t := range cfg.Targets {
		id := p4rt.ElectionID{High: t.ElectionID.High, Low: t.ElectionID.Low}
		if !electionOverride.IsZero() {
			id = electionOverride
		}
		if t.TLS == nil && !c.Insecure && !cmdutil.IsLoopbackAddr(t.GRPCAddr) {
			return nil, cmdutil.Usagef("target %s: grpc_addr %s is not a loopback address and the target has no tls: block; add one (docs/CONFIG.md) or pass --insecure to allow plaintext", t.Name, t.GRPCAddr)
		}
		opts := []p4rt.Option{p4rt.WithCallTimeout(c.Timeout)}
		if t.TLS != nil {
			to := p4rt.TLSOptions{CAFile: cfg.Path(t.TLS.CA), CertFile: cfg.Path(t.TLS.Cert), KeyFile: cfg.Path(t.TLS.Key), ServerName: t.TLS.ServerName}
			if _, err := to.Config(); err != nil {
				return nil, cmdutil.Usagef("target %s: tls: %w", t.Name, err)
			}
			opts = append(opts, p4rt.WithTLS(to))
		}
		if c.Insecure {
			opts = append(opts, p4rt.WithInsecure())
		}
		out = append(out, controller.Target{Name: t.Name, Addr: t.GRPCAddr, DeviceID: t.DeviceID, ElectionID: id, ClientOptions: opts, Sites: t.Sites})
	}
	return out, nil
}

// refuseDeviceID refuses --device-id given without --grpc-addr: the
// configuration's targets carry their own device_id, and the flag used to
// be ignored without a word (issue 27 item 5).
func (c *connFlags) refuseDeviceID(g cmdutil.Flags, configPath string) error {
	if c.GRPCAddr == "" && g.Given("device-id") {
		return cmdutil.Usagef("--device-id applies to --grpc-addr only: the targets of %s carry their own device_id (set it there, or give --grpc-addr HOST:PORT --device-id N for one switch)", configPath)
	}
	return nil
}

// dialTarget connects to one target without arbitrating; withElection
// gives the client the target's election id (for a later Arbitrate).
func dialTarget(t controller.Target, withElection bool) (*p4rt.Client, error) {
	opts := []p4rt.Option{p4rt.WithDeviceID(t.DeviceID)}
	if withElection {
		opts = append(opts, p4rt.WithElectionID(t.ElectionID))
	}
	c, err := p4rt.Dial(t.Addr, append(opts, t.ClientOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", targetName(t), err)
	}
	return c, nil
}

// targetName names a target in errors: "target NAME (ADDR)", or the
// address alone when the name is the address (--grpc-addr).
func targetName(t controller.Target) string {
	if t.Name == t.Addr || t.Name == "" {
		return "switch " + t.Addr
	}
	return fmt.Sprintf("target %s (%s)", t.Name, t.Addr)
}

// probe fails fast when nothing answers at the client's address: one
// Capabilities call, which returns at once on a refused connection, where
// arbitration (which the daemon retries with backoff) would wait for the
// whole --timeout. Any answer, an error status included, means the switch
// is there; later calls report what it says.
func probe(ctx context.Context, c *p4rt.Client, what string) error {
	_, err := c.Capabilities(ctx)
	if err == nil {
		return nil
	}
	switch p4rt.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		if errors.Is(ctx.Err(), context.Canceled) { // Ctrl-C: the switch may be fine
			return fmt.Errorf("%s: stopped while connecting, nothing read or written: %w", what, ctx.Err())
		}
		if ctx.Err() == nil || p4rt.Code(err) != codes.Canceled {
			if ex := p4rt.ExplainUnreachable(ctx, c.Target(), err); ex != err {
				return fmt.Errorf("%s: %w", what, ex)
			}
		}
		return fmt.Errorf("%s: not reachable: %w", what, err)
	}
	return nil
}

// deviceHint adds a line to err when the switch does not know the device
// id asked for: BMv2 answers UNKNOWN "Error when trying to assign device"
// to a pipeline push for another id than the one it was started with.
func deviceHint(err error, device uint64) error {
	if err == nil {
		return nil
	}
	m := err.Error()
	if strings.Contains(m, "assign device") || strings.Contains(m, "unknown device id") ||
		(p4rt.Code(err) == codes.NotFound && strings.Contains(strings.ToLower(m), "device")) {
		return fmt.Errorf("%w\nhint: the switch does not serve device id %d: simple_switch_grpc serves only the id it was started with (--device-id, default 0): give that id with --device-id, or start it with --device-id %d", err, device, device)
	}
	return err
}

// notControllerYAML returns a usage error when the file given as flag
// (p4runtime-shell's --config P4INFO[,DEVICE_CONFIG] of get and push
// pipeline, or --p4info) is a controller configuration, saying what the
// flag wants and what to give instead (issue 15: `get regions --config
// examples/mumbai.yaml` used to fail with "unknown field: targets").
func notControllerYAML(ctx context.Context, cmd, flag, path string) error {
	b, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil // reported where the file is loaded
	}
	ok, addrs := config.LooksLikeConfig(b)
	if !ok {
		return nil
	}
	instead := "give --grpc-addr HOST:PORT of the switch"
	if len(addrs) > 0 {
		instead = fmt.Sprintf("give --grpc-addr %s (the configuration's target)", addrs[0])
		if len(addrs) > 1 {
			instead = fmt.Sprintf("give --grpc-addr with one of the configuration's targets (%s)", strings.Join(addrs, ", "))
		}
	}
	what := "the P4Info file to decode names with (default: the switch's own)"
	if cmd == "push pipeline" {
		what = "the P4Info and device config to install"
		instead += ", and the program as --p4info FILE --device-config FILE; `p4ctl apply -c " + path + "` pushes the configuration's entries"
	}
	return cmdutil.Usagef("%s %s is a controller configuration (YAML), not a P4Info: on %s, --config/-c is p4runtime-shell's P4INFO[,DEVICE_CONFIG], %s; %s",
		flag, path, cmd, what, instead)
}

// flagsOf is c's flags for an Options' cmdutil.Flags (none when c is nil:
// a command built without cobra, in tests).
func flagsOf(c *cobra.Command) cmdutil.Flags {
	if c == nil {
		return cmdutil.Flags{}
	}
	return cmdutil.Flags{Set: c.Flags()}
}

// configOrBuiltin loads the configuration at path (loadControllerConfig,
// its tuned pools noted on c's stderr), or parses the built-in
// examples/mumbai.yaml when path is "", and returns it with the name a
// result gives it.
func configOrBuiltin(c *cobra.Command, path string) (*config.Config, string, error) {
	if path == "" {
		cfg, err := config.Parse(examples.Mumbai(), examples.MumbaiName)
		if err != nil {
			return nil, "", fmt.Errorf("built-in configuration: %w", err)
		}
		return cfg, examples.MumbaiName + " (built in)", nil
	}
	cfg, err := loadControllerConfig(cmdContext(c), path, printTuned(c.ErrOrStderr()))
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}
