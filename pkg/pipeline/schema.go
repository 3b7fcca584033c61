package pipeline

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
	ActionForward           = Control + ".forward"
	ActionDrop              = Control + ".drop"

	RegisterServerOutstanding = Control + ".server_outstanding"
	RegisterServerWork        = Control + ".server_work_us"
	RegisterServerLastSeen    = Control + ".server_last_seen"
	RegisterRegionOutstanding = Control + ".region_outstanding"
	RegisterRegionFull        = Control + ".region_full"

	CounterRegionRouted   = Control + ".region_routed"
	CounterRegionFallback = Control + ".region_fallback"
	CounterServerBound    = Control + ".server_bound"
	CounterDispatchEvents = Control + ".dispatch_events"
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

// Program is the whole contract: what p4c's P4Info for p4src/ must contain.
type Program struct {
	Tables    []Table
	Actions   []Action
	Registers []Register
	Counters  []Counter
}

// Schema returns the program's contract. Each call returns a fresh value.
func Schema() Program {
	return Program{
		Actions: []Action{
			{Name: ActionNoAction},
			{Name: ActionSetClientSite, Params: []Param{{"site", WidthSite}}},
			{Name: ActionSetFeasible, Params: []Param{{"feasible", WidthBitmap}, {"nearest", WidthRegion}}},
			{Name: ActionSetActiveEpoch, Params: []Param{{"epoch", WidthEpoch}}},
			{Name: ActionRouteToRegion, Params: []Param{{"region", WidthRegion}}},
			{Name: ActionDispatchLocal, Params: []Param{{"capacity", WidthCapacity}}},
			{Name: ActionForwardRemote, Params: []Param{{"port", WidthPort}, {"dmac", WidthMAC}, {"addr", WidthIPv4}, {"capacity", WidthCapacity}}},
			{Name: ActionSetPool, Params: []Param{
				{"base", WidthServer}, {"size_mask", WidthServer}, {"policy", WidthPolicy}, {"bound", WidthBound},
				{"max_holds", WidthHolds}, {"on_full", WidthOnFull}, {"credit_ttl_us", WidthMicros},
				{"long_reserve", WidthBound}, {"long_max_holds", WidthHolds},
			}},
			{Name: ActionSetExecCost, Params: []Param{{"cost_us", WidthMicros}, {"is_long", WidthFlag}}},
			{Name: ActionSetServerEndpoint, Params: []Param{{"port", WidthPort}, {"dmac", WidthMAC}, {"addr", WidthIPv4}}},
			{Name: ActionForward, Params: []Param{{"port", WidthPort}}},
			{Name: ActionDrop},
		},
		Tables: []Table{
			{Name: TableClientSite, Keys: []Field{{FieldSrcAddr, LPM, WidthIPv4}},
				Actions: []string{ActionSetClientSite, ActionNoAction}, DefaultAction: ActionNoAction, Size: MaxSites},
			{Name: TableSLAFeasibility, Keys: []Field{{FieldSite, Exact, WidthSite}, {FieldSLA, Range, WidthSLA}},
				Actions: []string{ActionSetFeasible, ActionNoAction}, DefaultAction: ActionNoAction, Size: 4096},
			{Name: TableActiveEpoch,
				Actions: []string{ActionSetActiveEpoch}, DefaultAction: ActionSetActiveEpoch, DefaultParams: []uint64{0}, Size: 1},
			{Name: TableCarbonRank, Keys: []Field{{FieldEpoch, Exact, WidthEpoch}, {FieldSite, Ternary, WidthSite}, {FieldFeasible, Ternary, WidthBitmap}},
				Actions: []string{ActionRouteToRegion, ActionNoAction}, DefaultAction: ActionNoAction, Size: 4096},
			{Name: TableRegionNextHop, Keys: []Field{{FieldRegion, Exact, WidthRegion}},
				Actions: []string{ActionDispatchLocal, ActionForwardRemote, ActionNoAction}, DefaultAction: ActionNoAction, Size: MaxRegions},
			{Name: TableServerPool, Keys: []Field{{FieldRegion, Exact, WidthRegion}},
				Actions: []string{ActionSetPool, ActionNoAction}, DefaultAction: ActionNoAction, Size: MaxRegions},
			{Name: TableExecClassCost, Keys: []Field{{FieldExecClass, Exact, WidthExecClass}},
				Actions: []string{ActionSetExecCost, ActionNoAction}, DefaultAction: ActionNoAction, Size: 256},
			{Name: TableServerEndpoint, Keys: []Field{{FieldServer, Exact, WidthServer}},
				Actions: []string{ActionSetServerEndpoint, ActionNoAction}, DefaultAction: ActionNoAction, Size: MaxServers},
			{Name: TableL3Forward, Keys: []Field{{FieldDstAddr, LPM, WidthIPv4}},
				Actions: []string{ActionForward, ActionDrop}, DefaultAction: ActionDrop, Size: 16384},
			{Name: TableL2Forward, Keys: []Field{{FieldDstMAC, Exact, WidthMAC}},
				Actions: []string{ActionForward, ActionDrop}, DefaultAction: ActionDrop, Size: 1024},
		},
		Registers: []Register{
			{RegisterServerOutstanding, WidthCount, MaxServers},
			{RegisterServerWork, WidthWork, MaxServers},
			{RegisterServerLastSeen, WidthTimestamp, MaxServers},
			{RegisterRegionOutstanding, WidthRegionCnt, MaxRegions},
			{RegisterRegionFull, WidthBitmap, 1},
		},
		Counters: []Counter{
			{CounterRegionRouted, MaxRegions, Both},
			{CounterRegionFallback, MaxRegions, Both},
			{CounterServerBound, MaxServers, Both},
			{CounterDispatchEvents, NumEvents, Both},
		},
	}
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
