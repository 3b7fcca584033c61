package pipeline

import (
	"fmt"
	"strconv"
	"sync"
)

// Fully-qualified P4Info names. Every table, action, register and counter is
// declared directly in the ingress control P4ctlIngress (same control name in
// v1model and TNA, as fabric-tna does), so the names are identical on BMv2 and
// Tofino. Match-field names come from @name annotations on the keys.
const (
	Control = "P4ctlIngress"

	TableClientSite     = Control + ".client_site"
	TableSLAFeasibility = Control + ".sla_feasibility"
	TableActiveEpoch    = Control + ".active_epoch"
	TableCarbonRank     = Control + ".carbon_rank"
	TableRegionNextHop  = Control + ".region_next_hop"
	TableServerPool     = Control + ".server_pool"
	TableExecClassCost  = Control + ".exec_class_cost"
	TableServerEndpoint = Control + ".server_endpoint"
	TableReplySource    = Control + ".reply_source"
	TableL3Forward      = Control + ".l3_forward"
	TableL2Forward      = Control + ".l2_forward"

	ActionNoAction          = "NoAction"
	ActionSetClientSite     = Control + ".set_client_site"
	ActionSetFeasible       = Control + ".set_feasible"
	ActionSetActiveEpoch    = Control + ".set_active_epoch"
	ActionRouteToRegion     = Control + ".route_to_region"
	ActionDispatchLocal     = Control + ".dispatch_local"
	ActionForwardRemote     = Control + ".forward_remote"
	ActionSetPool           = Control + ".set_pool"
	ActionSetExecCost       = Control + ".set_exec_cost"
	ActionSetServerEndpoint = Control + ".set_server_endpoint"
	ActionSetReplySource    = Control + ".set_reply_source"
	ActionForward           = Control + ".forward"
	ActionDrop              = Control + ".drop"

	// RegisterServerCreditPrefix + slot (0..3) names the credit arrays:
	// server s's {outstanding, last_tick} is cell s/4 of
	// server_credit_<s mod 4> (Slot).
	RegisterServerCreditPrefix = Control + ".server_credit_"
	RegisterServerWork         = Control + ".server_work_us" // v1model only: p2c-work's expected remaining work
	RegisterRegionOutstanding  = Control + ".region_outstanding"

	CounterRegionRouted   = Control + ".region_routed"
	CounterRegionFallback = Control + ".region_fallback"
	CounterServerBound    = Control + ".server_bound"
	// The dispatch_events lanes (Lane): an event's count is its lane's
	// counter at the event's index.
	CounterDispatchEvents         = Control + ".dispatch_events"
	CounterDispatchEventsSpill    = Control + ".dispatch_events_spill"
	CounterDispatchEventsFallback = Control + ".dispatch_events_fallback"
	CounterDispatchEventsCause    = Control + ".dispatch_events_cause"
)

// RegisterServerCredit returns the name of slot's credit array.
func RegisterServerCredit(slot int) string {
	return RegisterServerCreditPrefix + strconv.Itoa(slot)
}

// TNA-only tables and actions: constant tables (const entries, never written
// by the controller) that stand in for what Tofino cannot compute — a
// variable shift or a slice at a variable offset.
const (
	// TableRegionBit maps a region to 1 << region (region_bit(region) →
	// set_region_bit(bit_r)).
	TableRegionBit     = Control + ".region_bit"
	ActionSetRegionBit = Control + ".set_region_bit"
	// TableCreditClock maps a pool's credit_tick to its credit clock, a
	// 32-bit slice of global_tstamp (NowTick).
	TableCreditClock = Control + ".credit_clock"
	// TableDispatchSlots maps (policy, base mod 4, size_mask mod 4, the
	// random candidate mod 4) to the slots a pass tries (CandidateServers).
	TableDispatchSlots     = Control + ".dispatch_slots"
	ActionSetDispatchSlots = Control + ".set_dispatch_slots"
)

// Action parameter names (declaration order is Schema's).
const (
	ParamSite         = "site"
	ParamFeasible     = "feasible"
	ParamNearest      = "nearest"
	ParamEpoch        = "epoch"
	ParamRegion       = "region"
	ParamCapacity     = "capacity"
	ParamPort         = "port"
	ParamDMAC         = "dmac"
	ParamAddr         = "addr"
	ParamBase         = "base"
	ParamSizeMask     = "size_mask"
	ParamPolicy       = "policy"
	ParamBound        = "bound"
	ParamMaxHolds     = "max_holds"
	ParamOnFull       = "on_full"
	ParamCreditTick   = "credit_tick"
	ParamLongReserve  = "long_reserve"
	ParamLongMaxHolds = "long_max_holds"
	ParamCostMicros   = "cost_us"
	ParamIsLong       = "is_long"
)

// Table sizes (entries).
const (
	SizeClientSite     = MaxSites
	SizeSLAFeasibility = 4096
	SizeActiveEpoch    = 1
	SizeCarbonRank     = 4096
	SizeRegionNextHop  = MaxRegions
	SizeServerPool     = MaxRegions
	SizeExecClassCost  = 256
	SizeServerEndpoint = MaxServers
	SizeReplySource    = MaxServers
	SizeL3Forward      = 16384
	SizeL2Forward      = 1024
)

// Match-field names (the @name of each key).
const (
	FieldSrcAddr   = "src_addr"
	FieldDstAddr   = "dst_addr"
	FieldDstMAC    = "dst_mac"
	FieldSite      = "site"
	FieldSLA       = "sla_ms"
	FieldEpoch     = "epoch"
	FieldFeasible  = "feasible"
	FieldRegion    = "region"
	FieldExecClass = "exec_class"
	FieldServer    = "server"
)

// MatchKind is a P4Runtime match kind.
type MatchKind string

// Match kinds used by the program.
const (
	Exact    MatchKind = "exact"
	LPM      MatchKind = "lpm"
	Ternary  MatchKind = "ternary"
	Range    MatchKind = "range"
	Optional MatchKind = "optional"
)

// Field is a table key field.
type Field struct {
	Name  string
	Kind  MatchKind
	Width int
}

// Param is an action parameter.
type Param struct {
	Name  string
	Width int
}

// Action is an action and its parameters, in declaration order.
type Action struct {
	Name   string
	Params []Param
}

// Table describes one match-action table.
type Table struct {
	Name    string
	Keys    []Field  // in declaration order
	Actions []string // action names; NoAction included where it is the default
	// DefaultAction is the initial default action; DefaultParams its
	// arguments (nil when it has none). The controller may modify it unless
	// ConstDefault.
	DefaultAction string
	DefaultParams []uint64
	ConstDefault  bool
	Size          int
}

// Register describes a register array. All registers are written by the data
// plane; the controller only reads them (and resets them on the embedded
// target, where P4Runtime register writes are supported).
type Register struct {
	Name  string
	Width int
	Size  int
}

// CounterUnit is what a counter counts.
type CounterUnit string

// Counter units.
const (
	Packets CounterUnit = "packets"
	Bytes   CounterUnit = "bytes"
	Both    CounterUnit = "both"
)

// Counter describes an indirect counter array.
type Counter struct {
	Name string
	Size int
	Unit CounterUnit
}

// Digest describes a digest (P4Runtime DigestList data): its P4Info name
// and the members of its struct, in order.
type Digest struct {
	Name    string
	Members []Param
}

// Program is the whole contract: what p4c's P4Info for p4src/ must contain.
type Program struct {
	Tables    []Table
	Actions   []Action
	Registers []Register
	Counters  []Counter
	Digests   []Digest
}

// Arch is a P4 architecture the program is written for.
type Arch string

// Architectures.
const (
	V1Model Arch = "v1model" // BMv2 simple_switch_grpc and the embedded Go model
	TNA     Arch = "tna"     // Tofino (bf-p4c --arch tna)
)

// ParseArch maps a name ("" = v1model) to an Arch.
func ParseArch(s string) (Arch, error) {
	switch Arch(s) {
	case "", V1Model:
		return V1Model, nil
	case TNA:
		return TNA, nil
	}
	return "", fmt.Errorf("unknown architecture %q (want %s or %s)", s, V1Model, TNA)
}

// Supports reports whether the architecture's program runs policy p
// faithfully in one pass, with a reason when it does not. Power-of-two
// choices compare two servers' loads and then update the chosen one: on
// Tofino that is a read in one pass and a write in a later one, the lost
// update the one-pass design removes (docs/PIPELINE.md "Policies on TNA").
func (a Arch) Supports(p Policy) error {
	if a == TNA && (p == PolicyP2C || p == PolicyP2CWork) {
		return fmt.Errorf("policy %s is not available on Tofino (tna): comparing two servers' loads and then updating the chosen one takes two passes there; use jbsq, jiq or random, or a v1model target", p)
	}
	return nil
}

// Schema returns the v1model program's contract (BMv2 and the embedded
// target). Each call returns a fresh value.
func Schema() Program { return SchemaFor(V1Model) }

// v1Index is the v1model contract's tables and actions by name, built once
// and never written again: the lookups of hot paths (normalising every
// entry read back from a switch) need not rebuild the schema.
var v1Index = sync.OnceValues(func() (map[string]Table, map[string]Action) {
	p := Schema()
	tables := make(map[string]Table, len(p.Tables))
	for _, t := range p.Tables {
		tables[t.Name] = t
	}
	actions := make(map[string]Action, len(p.Actions))
	for _, a := range p.Actions {
		actions[a.Name] = a
	}
	return tables, actions
})

// LookupTable returns the v1model contract's table named name (what
// Schema().Table returns, without building the schema). The value shares
// its slices with every other caller's: read it, do not modify it.
func LookupTable(name string) (Table, bool) {
	tables, _ := v1Index()
	t, ok := tables[name]
	return t, ok
}

// LookupAction returns the v1model contract's action named name; as
// LookupTable, read-only.
func LookupAction(name string) (Action, bool) {
	_, actions := v1Index()
	a, ok := actions[name]
	return a, ok
}

// SchemaFor returns the contract of arch's program: the same tables,
// actions and parameters on every architecture (plus TNA's constant
// tables), the same credit and region registers and counters; only v1model
// keeps server_work_us, which p2c-work needs. Each call returns a fresh value.
func SchemaFor(arch Arch) Program {
	p := Program{
		Actions: []Action{
			{Name: ActionNoAction},
			{Name: ActionSetClientSite, Params: []Param{{ParamSite, WidthSite}}},
			{Name: ActionSetFeasible, Params: []Param{{ParamFeasible, WidthBitmap}, {ParamNearest, WidthRegion}}},
			{Name: ActionSetActiveEpoch, Params: []Param{{ParamEpoch, WidthEpoch}}},
			{Name: ActionRouteToRegion, Params: []Param{{ParamRegion, WidthRegion}}},
			{Name: ActionDispatchLocal, Params: []Param{{ParamCapacity, WidthCapacity}}},
			{Name: ActionForwardRemote, Params: []Param{{ParamPort, WidthPort}, {ParamDMAC, WidthMAC}, {ParamAddr, WidthIPv4}, {ParamCapacity, WidthCapacity}}},
			{Name: ActionSetPool, Params: []Param{
				{ParamBase, WidthServer}, {ParamSizeMask, WidthServer}, {ParamPolicy, WidthPolicy}, {ParamBound, WidthBound},
				{ParamMaxHolds, WidthHolds}, {ParamOnFull, WidthOnFull}, {ParamCreditTick, WidthTick},
				{ParamLongReserve, WidthBound}, {ParamLongMaxHolds, WidthHolds},
			}},
			{Name: ActionSetExecCost, Params: []Param{{ParamCostMicros, WidthMicros}, {ParamIsLong, WidthFlag}}},
			{Name: ActionSetServerEndpoint, Params: []Param{{ParamPort, WidthPort}, {ParamDMAC, WidthMAC}, {ParamAddr, WidthIPv4}}},
			{Name: ActionSetReplySource, Params: []Param{{ParamAddr, WidthIPv4}}},
			{Name: ActionForward, Params: []Param{{ParamPort, WidthPort}}},
			{Name: ActionDrop},
		},
		Tables: []Table{
			{Name: TableClientSite, Keys: []Field{{FieldSrcAddr, LPM, WidthIPv4}},
				Actions: []string{ActionSetClientSite, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeClientSite},
			{Name: TableSLAFeasibility, Keys: []Field{{FieldSite, Exact, WidthSite}, {FieldSLA, Range, WidthSLA}},
				Actions: []string{ActionSetFeasible, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeSLAFeasibility},
			{Name: TableActiveEpoch,
				Actions: []string{ActionSetActiveEpoch}, DefaultAction: ActionSetActiveEpoch, DefaultParams: []uint64{0}, Size: SizeActiveEpoch},
			{Name: TableCarbonRank, Keys: []Field{{FieldEpoch, Exact, WidthEpoch}, {FieldSite, Ternary, WidthSite}, {FieldFeasible, Ternary, WidthBitmap}},
				Actions: []string{ActionRouteToRegion, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeCarbonRank},
			{Name: TableRegionNextHop, Keys: []Field{{FieldRegion, Exact, WidthRegion}},
				Actions: []string{ActionDispatchLocal, ActionForwardRemote, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeRegionNextHop},
			{Name: TableServerPool, Keys: []Field{{FieldRegion, Exact, WidthRegion}},
				Actions: []string{ActionSetPool, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeServerPool},
			{Name: TableExecClassCost, Keys: []Field{{FieldExecClass, Exact, WidthExecClass}},
				Actions: []string{ActionSetExecCost, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeExecClassCost},
			{Name: TableServerEndpoint, Keys: []Field{{FieldServer, Exact, WidthServer}},
				Actions: []string{ActionSetServerEndpoint, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeServerEndpoint},
			{Name: TableReplySource, Keys: []Field{{FieldServer, Exact, WidthServer}},
				Actions: []string{ActionSetReplySource, ActionNoAction}, DefaultAction: ActionNoAction, Size: SizeReplySource},
			{Name: TableL3Forward, Keys: []Field{{FieldDstAddr, LPM, WidthIPv4}},
				Actions: []string{ActionForward, ActionDrop}, DefaultAction: ActionDrop, Size: SizeL3Forward},
			{Name: TableL2Forward, Keys: []Field{{FieldDstMAC, Exact, WidthMAC}},
				Actions: []string{ActionForward, ActionDrop}, DefaultAction: ActionDrop, Size: SizeL2Forward},
		},
		Counters: []Counter{
			{CounterRegionRouted, MaxRegions, Both},
			{CounterRegionFallback, MaxRegions, Both},
			{CounterServerBound, MaxServers, Both},
		},
	}
	for slot := range Candidates {
		p.Registers = append(p.Registers, Register{RegisterServerCredit(slot), WidthCredit, SlotCells})
	}
	if arch != TNA {
		p.Registers = append(p.Registers, Register{RegisterServerWork, WidthWork, MaxServers})
	}
	p.Registers = append(p.Registers, Register{RegisterRegionOutstanding, WidthRegionCnt, MaxRegions},
		Register{RegisterLatencyProbe, WidthProbe, SizeLatencyProbe})
	p.Digests = []Digest{{Name: DigestLatencySample, Members: DigestMembers()}}
	for _, l := range Lanes() {
		p.Counters = append(p.Counters, Counter{l.Counter(), NumEvents, Both})
	}
	return p
}

// TNAOnly are the TNA program's constant tables and their actions, in its
// P4Info but never written by the controller: region_bit, credit_clock
// (one action per tick, credit_clock_1 … credit_clock_<TNAMaxCreditTick>)
// and dispatch_slots.
func TNAOnly() map[string]bool {
	m := map[string]bool{
		TableRegionBit: true, ActionSetRegionBit: true,
		TableCreditClock: true, TableDispatchSlots: true, ActionSetDispatchSlots: true,
	}
	for t := 1; t <= TNAMaxCreditTick; t++ {
		m[ActionCreditClock(t)] = true
	}
	return m
}

// ActionCreditClock names the TNA credit_clock action of tick t.
func ActionCreditClock(t int) string { return TableCreditClock + "_" + strconv.Itoa(t) }

// TNAMaxCreditTick is the largest credit_tick the TNA program's
// credit_clock has an action for (a stage's instruction memory holds 32
// actions; 2^23 units of 1.024 µs × CREDIT_TTL_TICKS ≈ 60 s of TTL). Larger
// ticks miss there and their credits never expire, so the controller
// refuses them for TNA targets (Arch.MaxCreditTick).
const TNAMaxCreditTick = 24

// MaxCreditTick is the largest credit_tick arch's program supports.
func (a Arch) MaxCreditTick() uint8 {
	if a == TNA {
		return TNAMaxCreditTick
	}
	return MaxCreditTick
}

// TableSize returns the size of the named table of the contract (0 if none).
func TableSize(name string) int {
	t, _ := Schema().Table(name)
	return t.Size
}

// Table returns the named table of p and whether it exists.
func (p Program) Table(name string) (Table, bool) {
	for _, t := range p.Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// Action returns the named action of p and whether it exists.
func (p Program) Action(name string) (Action, bool) {
	for _, a := range p.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return Action{}, false
}
