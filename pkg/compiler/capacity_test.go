package compiler

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
	"github.com/p4ctl/p4ctl/pkg/regions"
)

// overflowOf compiles in and returns the *OverflowError Compile must
// return (failing the test otherwise).
func overflowOf(t *testing.T, in Input) *OverflowError {
	t.Helper()
	st, err := Compile(in)
	var oe *OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("want an *OverflowError, got state %v, err %v", st != nil, err)
	}
	return oe
}

// Every table the controller writes refuses, before anything is built, a
// state needing one entry more than it holds — and accepts one that fills
// it exactly. The needs are those of the state compiled without limits.
func TestOverflowEveryTable(t *testing.T) {
	cfg := loadConfig(t, "../../examples/mumbai.yaml")
	cfg.ExecClasses = append(cfg.ExecClasses, config.ExecClass{ID: 9, CostUS: 10})
	cfg.Routes.L2 = append(cfg.Routes.L2, config.L2Route{MAC: 0x020000000001, Port: 3})
	in := input(t, cfg, regions.PolicyC, snapshot(t, cfg, testHour), 1)
	un := Unbounded()
	in.Capacity = &un
	need := Need(compile(t, in))
	controllerTables := []string{
		pipeline.TableClientSite, pipeline.TableSLAFeasibility, pipeline.TableCarbonRank,
		pipeline.TableRegionNextHop, pipeline.TableServerPool, pipeline.TableExecClassCost,
		pipeline.TableServerEndpoint, pipeline.TableReplySource, pipeline.TableL3Forward, pipeline.TableL2Forward,
	}
	exact := Capacity{Target: "a target of exactly that size", Sizes: maps.Clone(need)}
	in.Capacity = &exact
	if _, err := Compile(in); err != nil {
		t.Fatalf("a state filling every table exactly was refused: %v", err)
	}
	for _, table := range controllerTables {
		t.Run(shortTable(table), func(t *testing.T) {
			n := need[table]
			if n == 0 {
				t.Fatalf("the example needs no %s entries: the case tests nothing", table)
			}
			small := Capacity{Target: "a smaller target", Sizes: maps.Clone(need)}
			small.Sizes[table] = n - 1
			in := in
			in.Capacity = &small
			oe := overflowOf(t, in)
			if len(oe.Overflows) != 1 {
				t.Fatalf("overflows %+v, want %s alone", oe.Overflows, table)
			}
			o := oe.Overflows[0]
			if o.Table != table || o.Need != n || o.Limit != n-1 {
				t.Errorf("overflow %+v, want %s need %d limit %d", o, table, n, n-1)
			}
			msg := oe.Error()
			for _, want := range []string{shortTable(table) + " needs " + fmt.Sprint(n) + " entries", "holds " + fmt.Sprint(n-1), "a smaller target"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
	// carbon_rank counts both generations: the need is twice the entries.
	if got, per := need[pipeline.TableCarbonRank], len(compile(t, Input{Config: in.Config, Sites: in.Sites, Carbon: in.Carbon, Policy: in.Policy, Options: in.Options, Epoch: 1, Capacity: &un}).Table(pipeline.TableCarbonRank)); got != 2*per {
		t.Errorf("carbon_rank need %d, want 2 × %d entries", got, per)
	}
}

// With the program's own sizes (the default capacity), the tables that
// grow with sites, prefixes and routes overflow where docs/SCALING.md says.
func TestOverflowProgramSizes(t *testing.T) {
	route := func(i int) netip.Prefix {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16 + byte(i>>16), byte(i >> 8), byte(i)}), 32)
	}
	cases := []struct {
		name   string
		cfg    func(t *testing.T) *config.Config
		policy regions.Policy
		table  string
		why    string
	}{
		{"client_site: 1025 prefixes", func(t *testing.T) *config.Config { return generated(t, 1, 1025, 1, "A", 1) },
			regions.PolicyA, pipeline.TableClientSite, "1025 prefixes of 1025 sites"},
		{"sla_feasibility: 400 sites × 12 regions under C", func(t *testing.T) *config.Config { return generated(t, 12, 400, 1, "C", 1) },
			regions.PolicyC, pipeline.TableSLAFeasibility, "400 sites × up to 13 SLA intervals each over 12 regions"},
		{"carbon_rank: 200 sites ranked per site under D", func(t *testing.T) *config.Config { return generated(t, 12, 200, 1, "D", 1) },
			regions.PolicyD, pipeline.TableCarbonRank, "2 generations × (12 shared + "},
		{"l3_forward: 16385 routes", func(t *testing.T) *config.Config {
			c := generated(t, 2, 2, 1, "C", 1)
			for i := range pipeline.SizeL3Forward + 1 {
				c.Routes.L3 = append(c.Routes.L3, config.L3Route{Prefix: config.Prefix{Prefix: route(i)}, Port: 1})
			}
			return c
		}, regions.PolicyC, pipeline.TableL3Forward, "16385 routes"},
		{"l2_forward: 1025 routes", func(t *testing.T) *config.Config {
			c := generated(t, 2, 2, 1, "C", 1)
			for i := range pipeline.SizeL2Forward + 1 {
				c.Routes.L2 = append(c.Routes.L2, config.L2Route{MAC: config.MAC(0x020000000000 + i), Port: 1})
			}
			return c
		}, regions.PolicyC, pipeline.TableL2Forward, "1025 routes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg(t)
			in := input(t, cfg, c.policy, snapshot(t, cfg, testHour), 1)
			oe := overflowOf(t, in)
			if oe.Target != ProgramCapacity(pipeline.V1Model).Target {
				t.Errorf("target %q, want the v1model program's", oe.Target)
			}
			var tables []string
			for _, o := range oe.Overflows {
				tables = append(tables, o.Table)
			}
			if !slices.Contains(tables, c.table) {
				t.Fatalf("overflows in %v, want %s", tables, c.table)
			}
			o := oe.Overflows[slices.Index(tables, c.table)]
			if want := pipeline.TableSize(c.table); o.Limit != want {
				t.Errorf("limit %d, want the schema's %d", o.Limit, want)
			}
			un := Unbounded()
			in.Capacity = &un
			if got := Need(compile(t, in))[c.table]; o.Need != got || o.Need <= o.Limit {
				t.Errorf("need %d, the state compiled without limits needs %d (limit %d)", o.Need, got, o.Limit)
			}
			if !strings.Contains(o.Why, c.why) {
				t.Errorf("why %q lacks %q", o.Why, c.why)
			}
		})
	}
}

// Check on a compiled state agrees with Compile's own refusal.
func TestCapacityCheck(t *testing.T) {
	cfg := generated(t, 12, 400, 1, "C", 1)
	in := input(t, cfg, regions.PolicyC, snapshot(t, cfg, testHour), 1)
	un := Unbounded()
	in.Capacity = &un
	st := compile(t, in)
	if err := un.Check(st); err != nil {
		t.Errorf("unbounded refuses: %v", err)
	}
	err := ProgramCapacity(pipeline.V1Model).Check(st)
	var oe *OverflowError
	if !errors.As(err, &oe) || len(oe.Overflows) != 1 || oe.Overflows[0].Table != pipeline.TableSLAFeasibility {
		t.Fatalf("check: %v", err)
	}
	if tna := ProgramCapacity(pipeline.TNA); tna.Sizes[pipeline.TableSLAFeasibility] != pipeline.SizeSLAFeasibility {
		t.Errorf("TNA capacity %v", tna.Sizes)
	}
}
