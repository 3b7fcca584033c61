package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/p4ctl/p4ctl/pkg/compiler"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// ErrNotPrimary is returned by Sync on a replica that is not the switch's
// primary controller: backups never attempt a write.
var ErrNotPrimary = errors.New("not the primary controller of the switch")

// NotPrimaryAdvice says why a client in state st is not primary and how to
// recover, with the election ids in HIGH,LOW form: a live primary with a
// higher id; or none, but the switch keeps the highest id it has seen
// (p4runtime-shell's default 1,0 is above every id below 2^64) until it
// restarts. fix is how to set the id, a format with one %s for it
// ("--election-id %s", or a configuration's "election_id: %s").
func NotPrimaryAdvice(st p4rt.ArbitrationState, fix string) string {
	next := fmt.Sprintf(fix, st.PrimaryElectionID.Next().Pair())
	if st.HasPrimary {
		return fmt.Sprintf("another controller is primary with election id %s (HIGH,LOW); stop it, or take over with %s or higher",
			st.PrimaryElectionID.Pair(), next)
	}
	return fmt.Sprintf("no controller is primary now, but the switch has seen election id %s (HIGH,LOW; p4runtime-shell's default is 1,0) and keeps it until it restarts: use %s (or higher) to become primary",
		st.PrimaryElectionID.Pair(), next)
}

// Target is one switch a controller drives.
type Target struct {
	// Name labels logs and metrics.
	Name string
	// Addr is the P4Runtime server's host:port (ignored when Client is set).
	Addr string
	// Client, when set, is used instead of dialling Addr (e.g. a client of
	// an in-process switch); the caller closes it.
	Client *p4rt.Client
	// DeviceID and ElectionID are used for arbitration. Replicas of one
	// controller use distinct election ids.
	DeviceID   uint64
	ElectionID p4rt.ElectionID
	// ClientOptions are extra p4rt options (TLS, a bufconn dialer, …).
	ClientOptions []p4rt.Option
	// Pipeline, when set, is pushed (VERIFY_AND_COMMIT) whenever the switch
	// runs no pipeline (simple_switch_grpc --no-p4, a restart) or another
	// one: checked at every connection and every read-back of the switch.
	// Without a cookie it is pushed with PipelineCookie's.
	Pipeline *p4v1.ForwardingPipelineConfig
	// Sites, when set, are the sites this switch serves (config
	// targets[].sites): its state is the plan compiled for them alone
	// (Plan.CompileFor). Empty: every site.
	Sites []string
}

// DriverOptions configure a Driver.
type DriverOptions struct {
	// Grace is how long the old generation stays after the flip
	// (default compiler.DefaultGrace).
	Grace time.Duration
	// Backoff paces connection and sync retries (default p4rt.DefaultBackoff).
	Backoff p4rt.Backoff
	// PollInterval is how often region_routed counters are read back for
	// the metrics (0: only after each push).
	PollInterval time.Duration
	// EnergyPerRequestWh is the assumed energy of one request for the gCO2
	// estimate (default DefaultEnergyPerRequestWh).
	EnergyPerRequestWh float64
	// VerifyInterval is how often Run checks, between pushes, that the
	// switch still holds the versioned part of the state it last wrote —
	// active_epoch and every carbon_rank entry, one Read — and repairs any
	// drift at once (0: never).
	VerifyInterval time.Duration
	// FullVerifyInterval is how often Run reads the whole state back and
	// compares it with what it last wrote, repairing any drift (0: never).
	FullVerifyInterval time.Duration
	// NoTakeover disables taking over as primary when the switch reports
	// that no controller is primary.
	NoTakeover bool
	// Digests, when set, enables the latency_sample digest with this
	// batching on every connection as primary, and OnLatency receives
	// every sample (with the architecture of the switch's P4Info, the unit
	// of its rtt); each list is acknowledged.
	Digests   *p4rt.DigestConfig
	OnLatency func(arch pipeline.Arch, s pipeline.LatencySample)
	// WrapWriter wraps the writer (tests inject faults with it).
	WrapWriter func(Writer) Writer
	// OnSync, when set, is called as each push starts (before anything is
	// written) and when it ends: observers that judge the switch's traffic
	// by the plans it may hold (the soak's misroute checker) follow the
	// pushes with it. It runs in the pushing goroutine and must not block.
	OnSync  func(SyncEvent)
	Log     *slog.Logger
	Metrics *Metrics
}

// SyncEvent is one push starting or ending (DriverOptions.OnSync).
type SyncEvent struct {
	// Target is the switch's name.
	Target string
	// Plan is the plan pushed.
	Plan *Plan
	// Done is false when the push starts: from then on the switch may
	// route as Plan. It is true when the push has ended, with Err nil when
	// the switch now holds exactly Plan.
	Done bool
	Err  error
}

// Report describes one push.
type Report struct {
	Target    string         `json:"target"`
	Hour      time.Time      `json:"hour"`
	Policy    string         `json:"policy"`
	Stale     bool           `json:"stale,omitempty"`
	From      uint8          `json:"from_epoch"`
	To        uint8          `json:"to_epoch"`
	Unchanged bool           `json:"unchanged,omitempty"`
	Hitless   bool           `json:"hitless"`
	Writes    int            `json:"writes"`
	ByPhase   map[string]int `json:"by_phase,omitempty"`
	ByOp      map[string]int `json:"by_op,omitempty"`
	Duration  time.Duration  `json:"duration_ns"`
}

// Driver keeps one switch in the state of the latest plan: it connects,
// arbitrates (taking over when the primary goes), reconnects with backoff,
// resyncs after every (re)connection or change of primary, and applies each
// plan as a hitless update (planned by compiler.PlanUpdate, executed here).
// Exactly one goroutine writes at a time (Sync is serialised).
type Driver struct {
	target Target
	opts   DriverOptions
	log    *slog.Logger

	connMu sync.RWMutex // guards client, owned, tr, writer
	client *p4rt.Client
	owned  bool // client dialled by the driver
	tr     *Translator
	writer Writer

	syncMu    sync.Mutex
	installed *compiler.State // what the switch holds, when known (nil: read it)

	mu         sync.Mutex
	pending    *Plan
	pendingSeq uint64
	doneSeq    uint64
	applied    *Plan // plan of the last successful push
	epoch      uint8
	lastSync   time.Time
	lastErr    error
	resync     bool
	pushedAs   *p4v1.ForwardingPipelineConfig // Target.Pipeline as the switch reports it, when it differs
	repair     string                         // kind of drift the pending resync repairs ("" none)
	kick       chan struct{}
	counters   map[regions.Index]uint64
	countPlan  *Plan
	digestsOn  bool // the latency digest is enabled on this connection
	// For Summary: hours whose plan a push brought to the switch, failed
	// pushes and connection attempts, and whether it ever answered.
	pushedHours  int
	pushFails    int
	connectFails int
	lastConnErr  error
	reached      bool
	interrupt    *InterruptedError // the last push ended by its context, until the next push succeeds

	// unreachable is set while connection attempts fail (cleared when one
	// succeeds): a replay does not wait for such a switch (WaitApplied).
	unreachable atomic.Bool
}

// NewDriver returns a driver for target. It does not connect.
func NewDriver(target Target, opts DriverOptions) *Driver {
	if opts.Grace == 0 {
		opts.Grace = compiler.DefaultGrace
	}
	if opts.Grace < 0 {
		opts.Grace = 0
	}
	if opts.Backoff.Initial == 0 {
		opts.Backoff = p4rt.DefaultBackoff
	}
	if opts.EnergyPerRequestWh == 0 {
		opts.EnergyPerRequestWh = DefaultEnergyPerRequestWh
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	target.Pipeline = withCookie(target.Pipeline)
	return &Driver{target: target, opts: opts, log: log.With("target", target.Name), kick: make(chan struct{}, 1), client: target.Client}
}

// NewDriverWithClient returns a driver using an existing client (already
// arbitrated or not); the caller keeps ownership of the client.
func NewDriverWithClient(target Target, c *p4rt.Client, opts DriverOptions) *Driver {
	target.Client = c
	return NewDriver(target, opts)
}

// Name returns the target name.
func (d *Driver) Name() string { return d.target.Name }

// Client returns the P4Runtime client (nil before Connect).
func (d *Driver) Client() *p4rt.Client {
	d.connMu.RLock()
	defer d.connMu.RUnlock()
	return d.client
}

// Translator returns the entry translator (nil before Connect).
func (d *Driver) Translator() *Translator {
	d.connMu.RLock()
	defer d.connMu.RUnlock()
	return d.tr
}

func (d *Driver) conn() (*p4rt.Client, *Translator, Writer) {
	d.connMu.RLock()
	defer d.connMu.RUnlock()
	return d.client, d.tr, d.writer
}

// Connect dials the switch (unless a client was given), opens the stream and
// arbitrates, retrying with backoff until the switch answers or ctx is done.
// It then resolves the P4Info (pushing Target.Pipeline when the switch runs
// none or another one and this replica is primary).
func (d *Driver) Connect(ctx context.Context) error {
	if d.Client() == nil {
		opts := append([]p4rt.Option{p4rt.WithDeviceID(d.target.DeviceID), p4rt.WithElectionID(d.target.ElectionID),
			p4rt.WithBackoff(d.opts.Backoff)}, d.target.ClientOptions...)
		c, err := p4rt.Dial(d.target.Addr, opts...)
		if err != nil {
			return fmt.Errorf("target %s: %w", d.target.Name, err)
		}
		d.connMu.Lock()
		d.client, d.owned = c, true
		d.connMu.Unlock()
	}
	client := d.Client()
	st, err := arbitrate(ctx, client, d.opts.Backoff, d.log, func(err error) {
		d.mu.Lock()
		d.connectFails++
		d.lastConnErr = err
		d.mu.Unlock()
		d.unreachable.Store(true)
		d.opts.Metrics.observeArbitration(d.target.Name, false, false) // known to the lag metric
	})
	if err != nil {
		return fmt.Errorf("target %s: %w", d.target.Name, err)
	}
	d.unreachable.Store(false)
	d.mu.Lock()
	d.reached = true
	d.mu.Unlock()
	d.log.Info("arbitrated", "primary", st.Primary, "election_id", st.ElectionID.String(), "switch_highest", st.PrimaryElectionID.String())
	d.opts.Metrics.observeArbitration(d.target.Name, st.Connected, st.Primary)
	if d.target.Pipeline != nil {
		if _, err := d.checkPipeline(ctx, client, true); err != nil {
			return err
		}
	}
	return d.resolvePipeline(ctx, client)
}

// Arbitrate opens c's stream and arbitrates, retrying with backoff while
// the switch is unreachable, until it answers or ctx is done. A refusal is
// final — except a duplicate election id, retried for DuplicatePatience:
// it may be this controller's own previous session that the switch has not
// yet seen end (a restart, or one CLI call after another).
func Arbitrate(ctx context.Context, c *p4rt.Client, b p4rt.Backoff, log *slog.Logger) (p4rt.ArbitrationState, error) {
	return arbitrate(ctx, c, b, log, nil)
}

// arbitrate is Arbitrate calling unreachable (when set) on every failed
// connection attempt.
func arbitrate(ctx context.Context, c *p4rt.Client, b p4rt.Backoff, log *slog.Logger, unreachable func(error)) (p4rt.ArbitrationState, error) {
	if b.Initial == 0 {
		b = p4rt.DefaultBackoff
	}
	var delay time.Duration
	var refusedSince time.Time
	for {
		st, err := c.Arbitrate(ctx)
		if err == nil {
			return st, nil
		}
		var ae *p4rt.ArbitrationError
		if errors.As(err, &ae) {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			if ae.Status == nil || ae.Status.Code() != codes.InvalidArgument || time.Since(refusedSince) > DuplicatePatience {
				return st, err
			}
			if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
				return st, fmt.Errorf("arbitrate: %w", err)
			}
			continue
		}
		delay = nextDelay(b, delay)
		if unreachable != nil {
			unreachable(err)
		}
		if log != nil {
			log.Warn("connect failed; retrying", "err", err, "in", delay)
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return st, fmt.Errorf("connect: %w (last error: %v)", ctx.Err(), err)
		}
	}
}

// DuplicatePatience is how long Connect retries when the switch refuses
// the election id as already in use: long enough for the switch to notice
// that a previous session with the same id ended.
const DuplicatePatience = 3 * time.Second

// ConnectReadOnly resolves the switch's P4Info without opening the stream
// or arbitrating: enough to read the switch and plan (dry runs, diff).
func (d *Driver) ConnectReadOnly(ctx context.Context) error {
	c := d.Client()
	if c == nil {
		return fmt.Errorf("target %s: ConnectReadOnly needs a client", d.target.Name)
	}
	return d.resolvePipeline(ctx, c)
}

func nextDelay(b p4rt.Backoff, prev time.Duration) time.Duration {
	if prev <= 0 {
		return b.Initial
	}
	n := time.Duration(float64(prev) * b.Multiplier)
	if n > b.Max {
		n = b.Max
	}
	return n
}

// resolvePipeline builds the translator from the switch's P4Info, unless
// the driver has one already.
func (d *Driver) resolvePipeline(ctx context.Context, client *p4rt.Client) error {
	if d.Translator() != nil {
		return nil
	}
	idx, err := client.Index(ctx)
	if err != nil {
		return fmt.Errorf("target %s: P4Info: %w", d.target.Name, err)
	}
	return d.setTranslator(idx)
}

// Close closes a client the driver dialled.
func (d *Driver) Close() error {
	d.connMu.RLock()
	c, owned := d.client, d.owned
	d.connMu.RUnlock()
	if owned && c != nil {
		return c.Close()
	}
	return nil
}

// Invalidate forgets the cached switch state: the next Sync reads it back.
func (d *Driver) Invalidate() {
	d.syncMu.Lock()
	d.installed = nil
	d.syncMu.Unlock()
}

// ReadState reads back the switch's state.
func (d *Driver) ReadState(ctx context.Context) (*compiler.State, error) {
	c, tr, _ := d.conn()
	if tr == nil {
		return nil, fmt.Errorf("target %s: not connected", d.target.Name)
	}
	return ReadState(ctx, c, tr)
}

// Plan returns the update Sync would write for p, without writing.
func (d *Driver) Plan(ctx context.Context, p *Plan) (*compiler.UpdatePlan, *compiler.State, error) {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	installed := d.installed
	if installed == nil {
		var err error
		if installed, err = d.ReadState(ctx); err != nil {
			return nil, nil, err
		}
	}
	next, err := d.compile(p, compiler.NextEpoch(installed.ActiveEpoch()))
	if err != nil {
		return nil, nil, err
	}
	if _, tr, _ := d.conn(); tr != nil {
		if err := d.fits(tr, next); err != nil {
			return nil, nil, err
		}
	}
	u, err := compiler.PlanUpdate(installed, next)
	if err != nil {
		return nil, nil, fmt.Errorf("target %s: %w", d.target.Name, err)
	}
	return u, next, nil
}

// fits refuses a state the switch's P4Info cannot hold (its table sizes).
// compile is p compiled for this switch at epoch: its sites
// (Target.Sites), fitted to its own P4Info's table sizes when it has one.
func (d *Driver) compile(p *Plan, epoch uint8) (*compiler.State, error) {
	var capa *compiler.Capacity
	if tr := d.Translator(); tr != nil {
		c := tr.Capacity("the switch's P4Info")
		capa = &c
	}
	st, err := p.CompileFor(d.target.Sites, capa, epoch)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", d.target.Name, err)
	}
	return st, nil
}

func (d *Driver) fits(tr *Translator, st *compiler.State) error {
	if err := tr.Capacity("switch " + d.target.Name + "'s P4Info").Check(st); err != nil {
		return fmt.Errorf("target %s: %w", d.target.Name, err)
	}
	return nil
}

// Sync makes the switch hold plan p now, hitlessly: it reads the switch
// (unless the state is cached from the previous push), compiles p for the
// next epoch, and writes the phases of compiler.PlanUpdate, waiting the
// grace period before deleting the old generation. A replica that is not
// primary returns ErrNotPrimary without writing. On any error the cache is
// dropped, so the next Sync starts from what the switch really holds.
func (d *Driver) Sync(ctx context.Context, p *Plan) (Report, error) {
	if d.opts.OnSync != nil {
		d.opts.OnSync(SyncEvent{Target: d.target.Name, Plan: p})
	}
	rep, err := d.sync(ctx, p)
	if d.opts.OnSync != nil {
		d.opts.OnSync(SyncEvent{Target: d.target.Name, Plan: p, Done: true, Err: err})
	}
	d.opts.Metrics.observePush(d.target.Name, rep, err)
	d.mu.Lock()
	d.lastErr = err
	if err == nil {
		if d.applied == nil || !d.applied.Hour.Equal(p.Hour) {
			d.pushedHours++
		}
		d.applied, d.epoch, d.lastSync = p, rep.To, time.Now()
		d.interrupt = nil
	} else if ctx.Err() == nil {
		d.pushFails++
	}
	d.mu.Unlock()
	if err == nil && rep.Writes > 0 {
		d.log.Info("pushed", "hour", p.Hour.Format(time.RFC3339), "policy", rep.Policy, "epoch", fmt.Sprintf("%d→%d", rep.From, rep.To),
			"writes", rep.Writes, "duration", rep.Duration, "stale", rep.Stale)
	}
	if err == nil {
		d.PollCounters(ctx)
		if client, _, _ := d.conn(); client != nil {
			d.enableDigests(ctx, client)
		}
	}
	return rep, err
}

func (d *Driver) sync(ctx context.Context, p *Plan) (Report, error) {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	rep := Report{Target: d.target.Name, Hour: p.Hour, Policy: p.Effective.String(), Stale: p.Stale,
		ByPhase: map[string]int{}, ByOp: map[string]int{}}
	client, tr, writer := d.conn()
	if tr == nil {
		return rep, fmt.Errorf("target %s: not connected", d.target.Name)
	}
	if st := client.State(); !st.Primary {
		return rep, fmt.Errorf("target %s: %w (%s)", d.target.Name, ErrNotPrimary, st)
	}
	start := time.Now()
	installed := d.installed
	d.installed = nil // until the push completes
	if installed == nil {
		// Reading back: the switch may have restarted empty or with
		// another program since it was last seen.
		if _, err := d.checkPipeline(ctx, client, false); err != nil {
			return rep, err
		}
		client, tr, writer = d.conn()
		var err error
		if installed, err = ReadState(ctx, client, tr); err != nil {
			return rep, fmt.Errorf("target %s: %w", d.target.Name, err)
		}
	}
	next, err := d.compile(p, compiler.NextEpoch(installed.ActiveEpoch()))
	if err != nil {
		return rep, err
	}
	// The switch's own table sizes, before any write: a state it cannot
	// hold would fail halfway through with RESOURCE_EXHAUSTED.
	if err := d.fits(tr, next); err != nil {
		return rep, err
	}
	u, err := compiler.PlanUpdate(installed, next)
	if err != nil {
		return rep, fmt.Errorf("target %s: %w", d.target.Name, err)
	}
	rep.From, rep.To, rep.Unchanged, rep.Hitless = u.From, u.To, u.Unchanged, u.Hitless
	if !u.Hitless {
		d.log.Warn("non-versioned changes cannot be ordered hitlessly around the flip; applying them before it",
			"updates", len(u.Before))
	}
	flipped := false
	for _, ph := range u.Phases() {
		if ph.Name == compiler.PhaseCleanup && len(ph.Updates) > 0 {
			rep.Duration = time.Since(start)
			if err := sleepCtx(ctx, d.opts.Grace); err != nil {
				return rep, d.interrupted(p, u, ph.Name, flipped, rep.ByPhase, fmt.Errorf("target %s: grace period: %w", d.target.Name, err))
			}
		}
		for _, run := range OpRuns(ph.Updates) {
			n, err := writePipelined(ctx, tr, writer, run, client.BatchSize())
			rep.Writes += n
			rep.ByPhase[ph.Name] += n
			rep.ByOp[string(run[0].Op)] += n
			if err != nil {
				return rep, d.interrupted(p, u, ph.Name, flipped, rep.ByPhase, fmt.Errorf("target %s: %s phase: %w", d.target.Name, ph.Name, err))
			}
		}
		if ph.Name == compiler.PhaseFlip && len(ph.Updates) > 0 {
			flipped = true
		}
	}
	if rep.Duration == 0 {
		rep.Duration = time.Since(start)
	}
	// The switch now holds next: its entries, and the initial default of
	// every table next does not mention (compiler.PlanUpdate resets the
	// others) — or, when the ranking was unchanged, next under the kept
	// epoch.
	if u.Unchanged && u.To != next.ActiveEpoch() {
		if next, err = d.compile(p, u.To); err != nil {
			return rep, nil // the cache stays empty: read back next time
		}
	}
	d.installed = next
	return rep, nil
}

// InterruptedError is Sync's error when its context ended (Ctrl-C, a
// deadline) part-way through a push: it says what the switch was left
// holding. Both states route every request as one whole plan does (the
// update is hitless), but entries of a second generation stay installed
// until the next push deletes them.
type InterruptedError struct {
	Target string
	// Hour is the hour of the plan being pushed.
	Hour time.Time
	// Phase is the phase that was interrupted (compiler.Phase*).
	Phase string
	// Flipped is true when active_epoch was already switched to the new
	// generation: the switch routes by the new plan.
	Flipped bool
	// ActiveEpoch is the epoch the switch routes by; Leftover is the other
	// generation whose entries are still installed (the old one after the
	// flip, the partly staged new one before it), LeftoverEntries how many
	// of them were written or remain (0 when none).
	ActiveEpoch, Leftover uint8
	LeftoverEntries       int
	Err                   error
}

// Error says what the switch holds.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("%v: %s", e.Err, e.State())
}

// Unwrap returns the context's error.
func (e *InterruptedError) Unwrap() error { return e.Err }

// State describes the switch as the interrupted push left it.
func (e *InterruptedError) State() string {
	if e.Flipped {
		s := fmt.Sprintf("the flip to epoch %d (hour %s) happened: the switch routes by the new plan", e.ActiveEpoch, e.Hour.Format(time.RFC3339))
		if e.LeftoverEntries > 0 {
			s += fmt.Sprintf("; the old generation (epoch %d, %d entries) is still installed", e.Leftover, e.LeftoverEntries)
		}
		return s
	}
	s := fmt.Sprintf("interrupted before the flip: the switch still routes by epoch %d (the previous plan)", e.ActiveEpoch)
	if e.LeftoverEntries > 0 {
		s += fmt.Sprintf("; %d entries of the new generation (epoch %d, hour %s) are staged, unused", e.LeftoverEntries, e.Leftover, e.Hour.Format(time.RFC3339))
	}
	return s
}

// interrupted returns err as an *InterruptedError when ctx ended it (the
// push's own failures are returned as they are) and records it for
// Summary.
func (d *Driver) interrupted(p *Plan, u *compiler.UpdatePlan, phase string, flipped bool, byPhase map[string]int, err error) error {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	ie := &InterruptedError{Target: d.target.Name, Hour: p.Hour, Phase: phase, Flipped: flipped, Err: err}
	if flipped {
		ie.ActiveEpoch, ie.Leftover = u.To, u.From
		ie.LeftoverEntries = len(u.Cleanup) - byPhase[compiler.PhaseCleanup]
	} else {
		ie.ActiveEpoch, ie.Leftover = u.From, u.To
		ie.LeftoverEntries = byPhase[compiler.PhaseStage]
	}
	d.mu.Lock()
	d.interrupt = ie
	d.mu.Unlock()
	return ie
}

// writePipelined translates run in groups of at least pipelineGroup
// updates in a goroutine while the previous group is being written, so
// that translating a large reconcile overlaps the switch's work; each group
// is written chunk updates per WriteRequest, in order, each Write after the
// previous one succeeded. Groups keep the hand-off between the goroutines
// rare when chunks are small (batch 1: one hand-off per pipelineGroup
// updates, not per update). It returns how many updates were written.
func writePipelined(ctx context.Context, tr *Translator, w Writer, run []compiler.Update, chunk int) (int, error) {
	if chunk <= 0 {
		chunk = p4rt.DefaultBatchSize
	}
	group := max(chunk, pipelineGroup)
	writeGroup := func(ups []*p4v1.Update) (int, error) {
		n := 0
		for i := 0; i < len(ups); i += chunk {
			part := ups[i:min(i+chunk, len(ups))]
			if err := w.Write(ctx, part); err != nil {
				return n, err
			}
			n += len(part)
		}
		return n, nil
	}
	if len(run) <= group {
		ups, err := tr.Updates(run)
		if err != nil {
			return 0, err
		}
		return writeGroup(ups)
	}
	type batch struct {
		ups []*p4v1.Update
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan batch, 2)
	go func() {
		defer close(ch)
		for i := 0; i < len(run); i += group {
			ups, err := tr.Updates(run[i:min(i+group, len(run))])
			select {
			case ch <- batch{ups, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	n := 0
	for b := range ch {
		if b.err != nil {
			return n, b.err
		}
		k, err := writeGroup(b.ups)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, ctx.Err()
}

// pipelineGroup is the fewest updates writePipelined translates at a time.
const pipelineGroup = 500

// Drift compares the switch with plan p compiled for the switch's active
// epoch: the writes (compiler.Diff) that would make it hold exactly that
// state. Empty means no drift.
func (d *Driver) Drift(ctx context.Context, p *Plan) (compiler.Changes, *compiler.State, error) {
	cur, err := d.ReadState(ctx)
	if err != nil {
		return compiler.Changes{}, nil, err
	}
	want, err := d.compile(p, cur.ActiveEpoch())
	if err != nil {
		return compiler.Changes{}, nil, err
	}
	return compiler.Diff(cur, want), want, nil
}

// Submit hands the driver's Run loop a new plan (the latest wins) and
// returns its sequence number.
func (d *Driver) Submit(p *Plan) uint64 {
	d.mu.Lock()
	d.pending = p
	d.pendingSeq++
	seq := d.pendingSeq
	d.mu.Unlock()
	d.poke()
	return seq
}

func (d *Driver) poke() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// WaitApplied blocks until the plan with sequence seq (or a later one) is on
// the switch, this replica is a backup of a live primary, the switch is
// unreachable (Unreachable: it gets the latest plan when it comes back, and
// p4ctl_target_lag_hours says how far behind it is), or ctx is done.
func (d *Driver) WaitApplied(ctx context.Context, seq uint64) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		d.mu.Lock()
		done := d.doneSeq >= seq
		d.mu.Unlock()
		if done || d.isBackup() || d.Unreachable() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Unreachable reports whether the switch cannot be reached: connection
// attempts are failing, or the stream broke with an error and is not back.
func (d *Driver) Unreachable() bool {
	if d.unreachable.Load() {
		return true
	}
	c := d.Client()
	if c == nil {
		return false
	}
	st := c.State()
	return !st.Connected && st.Err != nil
}

func (d *Driver) isBackup() bool {
	c, tr, _ := d.conn()
	if c == nil || tr == nil {
		return false
	}
	st := c.State()
	return st.Connected && !st.Primary && st.HasPrimary
}

// TargetSummary is what a run did to one target (Driver.Summary): printed
// at the end of `p4ctl run`, one line per target.
type TargetSummary struct {
	Name string `json:"target"`
	// PushedHours counts the hours whose plan a push brought to the switch.
	PushedHours int `json:"pushed_hours"`
	// Failures counts failed pushes and failed connection attempts.
	Failures int `json:"failures"`
	// Reached is true once the switch answered arbitration.
	Reached bool `json:"reached"`
	// Backup is true when another controller is the switch's primary: a
	// backup pushes nothing by design.
	Backup bool `json:"backup,omitempty"`
	// Hour is the hour of the plan the switch last took (zero: none) and
	// Epoch its active epoch then.
	Hour  time.Time `json:"hour,omitzero"`
	Epoch uint8     `json:"epoch"`
	// LastError is the last push or connection error ("" none).
	LastError string `json:"last_error,omitempty"`
	// Interrupted, when set, is the push its context ended: what it left.
	Interrupted *InterruptedError `json:"-"`
}

// Summary returns what the driver did to its switch so far. A switch never
// reached is told apart (p4rt.ExplainUnreachable, one TCP dial under ctx):
// nothing listening, or connected but no P4Runtime answer.
func (d *Driver) Summary(ctx context.Context) TargetSummary {
	s := d.summary()
	if !s.Reached && s.LastError != "" {
		d.mu.Lock()
		err := d.lastConnErr
		d.mu.Unlock()
		if err != nil {
			s.LastError = p4rt.ExplainUnreachable(ctx, d.target.Addr, err).Error()
		}
	}
	return s
}

func (d *Driver) summary() TargetSummary {
	backup := d.isBackup()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := TargetSummary{Name: d.target.Name, PushedHours: d.pushedHours, Failures: d.pushFails + d.connectFails,
		Reached: d.reached, Backup: backup, Epoch: d.epoch, Interrupted: d.interrupt}
	if d.applied != nil {
		s.Hour = d.applied.Hour
	}
	switch {
	case d.lastErr != nil:
		s.LastError = d.lastErr.Error()
	case d.lastConnErr != nil && !d.reached:
		s.LastError = d.lastConnErr.Error()
	}
	return s
}

// Health returns the driver's state for /healthz: OK unless the switch is
// disconnected, this replica is its primary and its last push failed, or
// no controller is primary for it.
func (d *Driver) Health() TargetHealth {
	h := TargetHealth{Name: d.target.Name}
	var st p4rt.ArbitrationState
	if c := d.Client(); c != nil {
		st = c.State()
		h.Connected, h.Primary = st.Connected, st.Primary
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h.Epoch = d.epoch
	if !d.lastSync.IsZero() {
		h.LastSync = d.lastSync.UTC().Format(time.RFC3339)
	}
	if d.lastErr != nil {
		h.LastError = d.lastErr.Error()
	}
	switch {
	case !st.Connected:
		h.Reason = "not connected"
		if st.Err != nil {
			h.Reason += ": " + st.Err.Error()
		}
	case st.Primary && d.lastErr != nil:
		h.Reason = "cannot bring the switch to the desired state: " + d.lastErr.Error()
	case !st.Primary && !st.HasPrimary:
		h.Reason = "no controller is primary"
	default:
		h.OK = true
	}
	return h
}

// Run connects and keeps the switch in the state of the latest submitted
// plan until ctx is done: it resyncs after reconnections and changes of
// primary, retries failed pushes with backoff, takes over as primary when
// the switch has none (election id raised above the highest the switch has
// seen: high word + 1, own low word), verifies the switch's state between
// pushes (VerifyInterval, FullVerifyInterval) and repairs drift at once,
// and polls counters.
func (d *Driver) Run(ctx context.Context) error {
	defer d.Close() // also when Connect gives up: it may have dialled a client
	if err := d.Connect(ctx); err != nil {
		return err
	}
	var poll, verify, verifyFull <-chan time.Time
	for _, tk := range []struct {
		every time.Duration
		ch    *<-chan time.Time
	}{{d.opts.PollInterval, &poll}, {d.opts.VerifyInterval, &verify}, {d.opts.FullVerifyInterval, &verifyFull}} {
		if tk.every > 0 {
			t := time.NewTicker(tk.every)
			defer t.Stop()
			*tk.ch = t.C
		}
	}
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var delay time.Duration
	var blockedUntil time.Time
	d.mu.Lock()
	d.resync = true
	d.mu.Unlock()
	client := d.Client()
	// The arbitration of Connect queued its state changes; the state read
	// below and the resync above already cover them. Handled again after
	// the first push, they would resync a second time, and a drift a
	// verification should find and count would be repaired unnoticed.
	for drained := false; !drained; {
		select {
		case <-client.StateChanges():
		default:
			drained = true
		}
	}
	d.onState(ctx, client.State())
	for {
		if client.State().Primary && d.needsSync() && !time.Now().Before(blockedUntil) {
			p, seq := d.latest()
			if p != nil {
				_, err := d.Sync(ctx, p)
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					delay = nextDelay(d.opts.Backoff, delay)
					d.log.Warn("push failed; retrying", "err", err, "in", delay)
					blockedUntil = time.Now().Add(delay)
					retry.Reset(delay)
				} else {
					delay = 0
					d.mu.Lock()
					d.resync = false
					if seq > d.doneSeq {
						d.doneSeq = seq
					}
					repaired := d.repair
					d.repair = ""
					d.mu.Unlock()
					if repaired != "" {
						d.opts.Metrics.observeRepair(d.target.Name, repaired)
						d.log.Info("drift repaired", "kind", repaired)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case st := <-client.StateChanges():
			d.onState(ctx, st)
		case <-d.kick:
		case <-retry.C:
		case <-poll:
			d.PollCounters(ctx)
		case <-verify:
			d.verify(ctx, false)
		case <-verifyFull:
			d.verify(ctx, true)
		}
	}
}

// ConsumeDigests hands every latency digest list the switch sends to
// DriverOptions.OnLatency and acknowledges it, until ctx is done. The
// controller runs it beside Run (or beside Step, in the demo).
func (d *Driver) ConsumeDigests(ctx context.Context) {
	client := d.Client()
	if client == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case l := <-client.Digests():
			d.onDigests(ctx, client, l)
		}
	}
}

// enableDigests writes the latency digest's DigestEntry once per
// connection as primary (the switch forgets it when it restarts). A
// program without the digest is logged once and left alone.
func (d *Driver) enableDigests(ctx context.Context, client *p4rt.Client) {
	d.mu.Lock()
	on := d.digestsOn
	d.mu.Unlock()
	if d.opts.Digests == nil || on || !client.State().Primary {
		return
	}
	err := client.ConfigureDigest(ctx, pipeline.DigestLatencySample, *d.opts.Digests)
	switch {
	case err == nil:
		d.log.Info("latency digest enabled", "max_timeout", time.Duration(d.opts.Digests.MaxTimeoutNs), "max_list_size", d.opts.Digests.MaxListSize)
	case errors.Is(err, p4rt.ErrUnknownName):
		d.log.Warn("the switch's program has no latency digest: latency is not measured on this target", "err", err)
	default:
		d.log.Warn("enable the latency digest (retried after the next push)", "err", err)
		return
	}
	d.mu.Lock()
	d.digestsOn = true
	d.mu.Unlock()
}

// onDigests hands a DigestList's latency samples to OnLatency and
// acknowledges it.
func (d *Driver) onDigests(ctx context.Context, client *p4rt.Client, l *p4v1.DigestList) {
	_, tr, _ := d.conn()
	idx, err := client.Index(ctx)
	if err != nil || tr == nil {
		return
	}
	samples, err := digestSamples(idx, l)
	if err != nil {
		d.log.Warn("undecodable latency digest", "err", err)
	}
	if d.opts.OnLatency != nil {
		for _, s := range samples {
			d.opts.OnLatency(tr.Arch(), s)
		}
	}
	if err := client.AckDigest(ctx, l); err != nil {
		d.log.Debug("ack digest list", "list", l.GetListId(), "err", err)
	}
}

func (d *Driver) latest() (*Plan, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending != nil {
		return d.pending, d.pendingSeq
	}
	return d.applied, d.doneSeq
}

func (d *Driver) needsSync() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.resync || d.pendingSeq > d.doneSeq
}

func (d *Driver) onState(ctx context.Context, st p4rt.ArbitrationState) {
	d.opts.Metrics.observeArbitration(d.target.Name, st.Connected, st.Primary)
	switch st.Event {
	case p4rt.EventReconnected, p4rt.EventLostPrimary, p4rt.EventDisconnected, p4rt.EventPrimary:
		// Someone else may have written, or the switch restarted: read
		// it back before the next push (and enable the digest again).
		d.Invalidate()
		d.mu.Lock()
		d.resync = true
		d.digestsOn = false
		d.mu.Unlock()
	}
	if st.Event != p4rt.EventNone {
		d.log.Info("arbitration", "event", st.Event.String(), "state", st.String())
	}
	if st.Connected && !st.Primary && !st.HasPrimary && !d.opts.NoTakeover {
		client := d.Client()
		own := client.ElectionID()
		id := p4rt.ElectionID{High: max(st.PrimaryElectionID.High, own.High) + 1, Low: own.Low}
		d.log.Info("no primary controller: taking over", "election_id", id.String())
		nst, err := client.SetElectionID(ctx, id)
		if err != nil {
			d.log.Warn("take-over failed", "err", err)
			return
		}
		d.opts.Metrics.observeArbitration(d.target.Name, nst.Connected, nst.Primary)
		if nst.Primary {
			d.Invalidate()
			d.mu.Lock()
			d.resync = true
			d.mu.Unlock()
		}
	}
}

// PollCounters reads region_routed back from the switch and updates the
// routed-request and carbon metrics (deltas are attributed to the plan on
// the switch when they were counted).
func (d *Driver) PollCounters(ctx context.Context) {
	client, tr, _ := d.conn()
	if d.opts.Metrics == nil || client == nil || tr == nil {
		return
	}
	cells, err := client.ReadCounter(ctx, pipeline.CounterRegionRouted, -1)
	if err != nil {
		d.log.Debug("read region_routed", "err", err)
		return
	}
	values := map[regions.Index]uint64{}
	for _, c := range cells {
		if c.Packets > 0 {
			values[regions.Index(c.Index)] = uint64(c.Packets)
		}
	}
	d.mu.Lock()
	deltas := map[regions.Index]uint64{}
	for r, v := range values {
		prev := d.counters[r]
		if v >= prev {
			deltas[r] = v - prev
		} else { // the switch restarted
			deltas[r] = v
		}
	}
	d.counters = values
	p := d.countPlan
	d.countPlan = d.applied
	d.mu.Unlock()
	if p == nil {
		p = d.countPlan
	}
	d.opts.Metrics.observeRouted(d.target.Name, d.target.Sites, values, deltas, p, d.opts.EnergyPerRequestWh/1000)
}
