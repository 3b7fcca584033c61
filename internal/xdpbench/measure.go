package xdpbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/p4ctl/p4ctl/internal/testing/bmv2harness"
	pc "github.com/p4ctl/p4ctl/internal/testing/packetcases"
	"github.com/p4ctl/p4ctl/pkg/dataplane"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Target names.
const (
	Bare    = "bare XDP redirect"
	XDP     = "p4ctl XDP"
	GoModel = "p4ctl embedded (Go)"
	BMv2    = "BMv2"
)

// Options configure Measure.
type Options struct {
	// P4ctl is a p4ctl binary (for the XDP and Go targets).
	P4ctl string
	// Targets to measure, by name (default all; BMv2 is skipped, with the
	// reason, when simple_switch_grpc or p4c's outputs are missing).
	Targets []string
	// Duration of each throughput run (default 2 s).
	Duration time.Duration
	// Cores: the generator runs on CPUs 0..c-1 for each c (default 1, 2).
	Cores []int
	// Closed: the servers answer and replies release (jbsq pools);
	// otherwise requests only (random pools).
	Closed bool
	// LatencyFrames sent one at a time for the latency quantiles, each
	// once the previous one arrived (or was given up on), with a gap
	// between (default 2 000).
	LatencyFrames int
	// BMv2Config is p4c's output for BMv2 (P4Info and JSON); nil skips BMv2.
	BMv2Config *p4v1.ForwardingPipelineConfig
	// Progress, when set, receives a line per step.
	Progress func(string)
}

// Run is one target's figures.
type Run struct {
	Target string `json:"target"`
	// Rate is delivered requests per second, by generator cores.
	Rate map[int]float64 `json:"requests_per_s"`
	// XBare is Rate[1] over the bare redirect's Rate[1], same run.
	XBare float64 `json:"x_bare"`
	// CPUPerRequest: for XDP targets the busy time of every CPU (the
	// generator's and the sink's included) over the requests delivered; for
	// a switch process its own CPU time over them.
	CPUPerRequest time.Duration `json:"cpu_per_request_ns"`
	CPUMeasure    string        `json:"cpu_measure"`
	// ProgramNs is the XDP program's own run time per run (the kernel's
	// BPF statistics, in a run of its own: they slow every run), 0 for the
	// others.
	ProgramNs float64 `json:"program_ns_per_run,omitempty"`
	// PassesPerRequest is the XDP program's runs per delivered request.
	PassesPerRequest float64 `json:"program_runs_per_request,omitempty"`
	// P50, P99 of the generator-to-sink latency at low load.
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	// AddedP99 is P99 over the bare redirect's.
	AddedP99 time.Duration `json:"added_p99_ns"`
	Note     string        `json:"note,omitempty"`

	latencyOK bool // every latency frame arrived
}

// Result is one Measure.
type Result struct {
	Closed bool   `json:"closed_loop"`
	CPUs   int    `json:"cpus"`
	Kernel string `json:"kernel"`
	Runs   []Run  `json:"runs"`
}

// AllTargets lists the targets in the order they are measured.
func AllTargets() []string { return []string{Bare, XDP, GoModel, BMv2} }

func (o *Options) defaults() {
	if len(o.Targets) == 0 {
		o.Targets = AllTargets()
	}
	if o.Duration == 0 {
		o.Duration = 2 * time.Second
	}
	if len(o.Cores) == 0 {
		o.Cores = []int{1, 2}
	}
	if o.LatencyFrames == 0 {
		o.LatencyFrames = 2000
	}
}

// Measure runs every target in turn on fresh veths.
func Measure(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	frame, traffic, err := Template()
	if err != nil {
		return nil, err
	}
	var uts [65]byte
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		copy(uts[:], strings.TrimSpace(string(b)))
	}
	ncpu, _ := ebpf.PossibleCPU()
	res := &Result{Closed: o.Closed, CPUs: ncpu, Kernel: strings.TrimRight(string(uts[:]), "\x00")}
	for _, name := range o.Targets {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		run, err := measureTarget(ctx, o, name, frame, traffic)
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		res.Runs = append(res.Runs, run)
	}
	var bare *Run
	for i := range res.Runs {
		if res.Runs[i].Target == Bare {
			bare = &res.Runs[i]
		}
	}
	for i := range res.Runs {
		r := &res.Runs[i]
		if bare != nil && bare.Rate[1] > 0 && r.Rate[1] > 0 {
			r.XBare = r.Rate[1] / bare.Rate[1]
		}
		if bare != nil && bare.latencyOK && r.latencyOK {
			r.AddedP99 = r.P99 - bare.P99
		}
	}
	return res, nil
}

// bpfStats turns the kernel's BPF run-time statistics on (for the program
// cost) and returns what restores the previous setting.
func bpfStats() (func(), error) {
	const f = "/proc/sys/kernel/bpf_stats_enabled"
	old, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f, err)
	}
	if err := os.WriteFile(f, []byte("1"), 0o644); err != nil {
		return nil, fmt.Errorf("enable BPF statistics: %w", err)
	}
	return func() { os.WriteFile(f, old, 0o644) }, nil
}

// programCost measures the XDP program's time per run and its runs per
// delivered request over half a second of one generator core, with the
// kernel's BPF statistics on.
func programCost(rig *Rig, frame []byte, run *Run) error {
	restore, err := bpfStats()
	if err != nil {
		return err
	}
	defer restore()
	c0, err := rig.Counts()
	if err != nil {
		return err
	}
	runs0, rt0, err := programStats("p4ctl_port")
	if err != nil {
		return err
	}
	if _, err := rig.Generate(frame, 0, 500*time.Millisecond, 1<<16); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond) // what is in flight arrives
	runs1, rt1, err := programStats("p4ctl_port")
	if err != nil {
		return err
	}
	c1, err := rig.Counts()
	if err != nil {
		return err
	}
	if got := c1.Sub(c0).Frames; runs1 > runs0 && got > 0 {
		run.ProgramNs = float64(rt1-rt0) / float64(runs1-runs0)
		run.PassesPerRequest = float64(runs1-runs0) / float64(got)
	}
	return nil
}

// programStats returns the run count and run time of the loaded programs
// named name (the XDP switch's, in another process).
func programStats(name string) (runs uint64, total time.Duration, err error) {
	var id ebpf.ProgramID
	for {
		id, err = ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return runs, total, nil
		}
		if err != nil {
			return 0, 0, err
		}
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue
		}
		info, err := p.Info()
		if err != nil || info.Name != name {
			p.Close()
			continue
		}
		st, err := p.Stats()
		p.Close()
		if err == nil {
			runs += st.RunCount
			total += st.Runtime
		}
	}
}

// processCPU is a process's user + system time (/proc/PID/stat).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100, nil
}

// childrenPids are pid and its descendants (the switch runs under ip netns
// exec).
func childrenPids(pid int) []int {
	out := []int{pid}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return out
	}
	for _, f := range strings.Fields(string(b)) {
		if c, err := strconv.Atoi(f); err == nil {
			out = append(out, childrenPids(c)...)
		}
	}
	return out
}

func treeCPU(pid int) time.Duration {
	var sum time.Duration
	for _, p := range childrenPids(pid) {
		if d, err := processCPU(p); err == nil {
			sum += d
		}
	}
	return sum
}

// measureTarget starts one target on fresh veths, loads the plan, and
// measures it.
func measureTarget(ctx context.Context, o Options, name string, frame []byte, traffic Traffic) (Run, error) {
	run := Run{Target: name, Rate: map[int]float64{}}
	say := func(format string, a ...any) {
		if o.Progress != nil {
			o.Progress(name + ": " + fmt.Sprintf(format, a...))
		}
	}
	hc := bmv2harness.Config{PortIDs: []int{ClientPort, ServerPort}, Queues: 2}
	switch name {
	case Bare:
		hc.NoSwitch = true
	case XDP:
		hc.P4ctl, hc.Extra = o.P4ctl, []string{"--datapath", "xdp"}
	case GoModel:
		hc.P4ctl, hc.SwitchGRO = o.P4ctl, true
	case BMv2:
		if o.BMv2Config == nil {
			run.Note = "skipped: no p4c outputs for BMv2 (make p4)"
			return run, nil
		}
		if _, err := bmv2harness.Find(); err != nil {
			run.Note = "skipped: " + err.Error()
			return run, nil
		}
		hc.SwitchGRO, hc.NoLog = true, true
	default:
		return run, fmt.Errorf("unknown target %q (want one of %s)", name, strings.Join(AllTargets(), ", "))
	}
	say("starting")
	sw, err := bmv2harness.Start(ctx, hc)
	if err != nil {
		return run, err
	}
	defer sw.Stop()
	if name != Bare {
		if err := program(ctx, sw, name, o); err != nil {
			return run, err
		}
	}
	rig, err := NewRig(sw.NetNS, o.Closed)
	if err != nil {
		return run, err
	}
	defer rig.Close()
	if name == Bare {
		if err := rig.AttachBare(); err != nil {
			return run, err
		}
	}
	if o.Closed && (name == GoModel || name == BMv2) {
		if err := rig.AttachPass("sw2"); err != nil {
			return run, err
		}
	}
	if err := rig.SetTraffic(traffic); err != nil {
		return run, err
	}
	// Warm up: tables, caches, the switch's threads.
	if _, err := rig.Generate(frame, 0, 300*time.Millisecond, 1<<14); err != nil {
		return run, err
	}
	time.Sleep(200 * time.Millisecond)
	for _, cores := range o.Cores {
		c0, err := rig.Counts()
		if err != nil {
			return run, err
		}
		cpu0, _ := cpuTime()
		pcpu0 := treeCPU(sw.Pid())
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, cores)
		for c := range cores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[c] = rig.Generate(frame, c, o.Duration, 1<<16)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return run, err
		}
		time.Sleep(100 * time.Millisecond) // what is in flight arrives
		elapsed := time.Since(start) - 100*time.Millisecond
		c1, err := rig.Counts()
		if err != nil {
			return run, err
		}
		cpu1, _ := cpuTime()
		pcpu1 := treeCPU(sw.Pid())
		d := c1.Sub(c0)
		got := d.Frames
		if o.Closed {
			// Only an answered request counts; NACKs and requests that
			// were not answered are noted when they pass 0.1 %.
			got = d.Replies
			if other := d.Frames - d.Replies; other*1000 > d.Replies {
				run.Note = joinNote(run.Note, fmt.Sprintf("%d core(s): %.0f other frames/s (not replies) also reached the clients", cores, float64(other)/elapsed.Seconds()))
			}
		}
		run.Rate[cores] = float64(got) / elapsed.Seconds()
		say("%d core(s): %.0f requests/s", cores, run.Rate[cores])
		if cores == 1 && got > 0 {
			switch name {
			case Bare, XDP:
				run.CPUPerRequest = (cpu1 - cpu0) / time.Duration(got)
				run.CPUMeasure = "all CPUs' busy time (generator and sink included) / requests"
			default:
				run.CPUPerRequest = (pcpu1 - pcpu0) / time.Duration(got)
				run.CPUMeasure = "the switch process's CPU time / requests"
			}
		}
	}
	if name == XDP {
		// The program's own cost, in a run of its own: the kernel's BPF
		// statistics add two clock reads to every run, so the throughput
		// runs above go without them.
		if err := programCost(rig, frame, &run); err != nil {
			return run, err
		}
	}
	// Latency at low load: one frame in flight at a time, once what the
	// throughput runs queued has drained (a software switch's backlog
	// would otherwise be what is measured).
	if err := drain(ctx, rig); err != nil {
		return run, err
	}
	c0, err := rig.Counts()
	if err != nil {
		return run, err
	}
	lost := 0
	for i := 0; i < o.LatencyFrames && lost < maxLost; i++ {
		arrived, err := pingOne(ctx, rig, frame)
		if err != nil {
			return run, err
		}
		if !arrived {
			lost++
		}
		time.Sleep(latencyGap)
	}
	c1, err := rig.Counts()
	if err != nil {
		return run, err
	}
	lat := c1.Sub(c0)
	run.P50, run.P99 = lat.Quantile(0.5), lat.Quantile(0.99)
	if lost > 0 {
		run.Note = joinNote(run.Note, fmt.Sprintf("latency: %d frame(s) did not arrive within %v", lost, frameTimeout))
	}
	run.latencyOK = lost == 0 && lat.Frames >= uint64(o.LatencyFrames)
	if lat.Frames < uint64(o.LatencyFrames)*9/10 {
		run.Note = joinNote(run.Note, fmt.Sprintf("latency: %d of %d frames arrived", lat.Frames, o.LatencyFrames))
	}
	say("latency p50 %v p99 %v", run.P50, run.P99)
	return run, nil
}

// joinNote appends note to notes, "; " between.
func joinNote(notes, note string) string {
	if notes == "" {
		return note
	}
	return notes + "; " + note
}

// The latency run's pacing: the gap after each frame, how long a frame
// may take before it counts as lost, and how many lost frames end the run.
const (
	latencyGap   = 200 * time.Microsecond
	frameTimeout = 100 * time.Millisecond
	maxLost      = 20
)

// pingOne sends one frame and waits until the sink has counted it (true) or
// frameTimeout has passed (false).
func pingOne(ctx context.Context, rig *Rig, frame []byte) (bool, error) {
	f0, err := rig.Frames()
	if err != nil {
		return false, err
	}
	if _, err := rig.Generate(frame, 0, 0, 1); err != nil {
		return false, err
	}
	deadline := time.Now().Add(frameTimeout)
	for time.Now().Before(deadline) {
		if f, err := rig.Frames(); err != nil || f > f0 {
			return err == nil, err
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		time.Sleep(20 * time.Microsecond)
	}
	return false, nil
}

// drain waits until the sink's count has stood still for 300 ms (at most
// 60 s): the frames a throughput run left queued have arrived or died.
func drain(ctx context.Context, rig *Rig) error {
	last, err := rig.Frames()
	if err != nil {
		return err
	}
	still := 0
	for end := time.Now().Add(time.Minute); still < 3 && time.Now().Before(end); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		f, err := rig.Frames()
		if err != nil {
			return err
		}
		if f == last {
			still++
		} else {
			still, last = 0, f
		}
	}
	return nil
}

// program pushes the pipeline and the plan to a target over P4Runtime.
func program(ctx context.Context, sw *bmv2harness.Switch, name string, o Options) error {
	c, err := sw.Client(p4rt.WithElectionID(p4rt.Election(1)))
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Arbitrate(ctx); err != nil {
		return fmt.Errorf("arbitrate: %w", err)
	}
	cfg := &p4v1.ForwardingPipelineConfig{P4Info: dataplane.DefaultP4Info()}
	if name == BMv2 {
		cfg = o.BMv2Config
	}
	if err := c.SetPipeline(ctx, p4rt.VerifyAndCommit, cfg); err != nil {
		return fmt.Errorf("set the pipeline: %w", err)
	}
	ups, err := pc.Updates(cfg.GetP4Info(), Plan(o.Closed))
	if err != nil {
		return err
	}
	if err := c.Write(ctx, ups); err != nil {
		return fmt.Errorf("load the plan (%d entries): %w", len(ups), err)
	}
	return nil
}
