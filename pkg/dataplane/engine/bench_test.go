package engine

import (
	"context"
	"github.com/p4ctl/p4ctl/internal/testing/cputime"
	"math/rand/v2"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/dataplane/p4info"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// programEngine returns an engine running the p4ctl program's P4Info.
func programEngine(b *testing.B) (*Engine, *Pipeline) {
	b.Helper()
	e := New(Options{})
	if err := e.SetPipelineInfo(p4info.FromSchema(pipeline.Schema())); err != nil {
		b.Fatal(err)
	}
	p := e.Acquire()
	e.Release()
	return e, p
}

// entryUpdate builds an INSERT for the named table from raw values.
func entryUpdate(p *Pipeline, table string, prio int32, match []*p4v1.FieldMatch, action string, params ...uint64) *p4v1.Update {
	t := p.tablesByName[table]
	a := p.actionsByName[action]
	act := &p4v1.Action{ActionId: a.id}
	for i, v := range params {
		act.Params = append(act.Params, &p4v1.Action_Param{ParamId: a.params[i].id, Value: EncodeBits(v)})
	}
	return upd(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: t.ID, Priority: prio, Match: match,
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: act}}})
}

func mustBatch(b *testing.B, e *Engine, ups []*p4v1.Update) {
	b.Helper()
	for i, err := range e.Write(context.Background(), ups, p4v1.WriteRequest_CONTINUE_ON_ERROR) {
		if err != nil {
			b.Fatalf("update %d: %v", i, err)
		}
	}
}

// BenchmarkLookup measures one lookup per match kind on the program's tables,
// populated to realistic sizes, against a Go map[uint64] lookup of the same
// keys measured in the same run (x-go-map = our time / map time).
func BenchmarkLookup(b *testing.B) {
	e, p := programEngine(b)
	rng := rand.New(rand.NewPCG(1, 2))
	var ups []*p4v1.Update
	// exact: server_endpoint, 1024 servers.
	for s := uint64(0); s < 1024; s++ {
		ups = append(ups, entryUpdate(p, pipeline.TableServerEndpoint, 0, []*p4v1.FieldMatch{exact(1, EncodeBits(s)...)},
			pipeline.ActionSetServerEndpoint, s%500, 0x020000000000|s, 0x0a010000|s))
	}
	// lpm: l3_forward, 16000 routes of /16../32.
	seen := map[[2]uint64]bool{}
	for len(seen) < 16000 {
		plen := 16 + rng.IntN(17)
		v := uint64(rng.Uint32()) & prefixMask(32, plen)
		if seen[[2]uint64{v, uint64(plen)}] {
			continue
		}
		seen[[2]uint64{v, uint64(plen)}] = true
		ups = append(ups, entryUpdate(p, pipeline.TableL3Forward, 0, []*p4v1.FieldMatch{lpm(1, int32(plen), EncodeBits(v)...)},
			pipeline.ActionForward, uint64(plen)))
	}
	// ternary: carbon_rank, 2 epochs x 32 regions, plus per-site overrides for 32 sites.
	for ep := uint64(0); ep < 2; ep++ {
		for r := uint64(0); r < 32; r++ {
			bit := EncodeBits(1 << r)
			ups = append(ups, entryUpdate(p, pipeline.TableCarbonRank, int32(32-r), []*p4v1.FieldMatch{exact(1, EncodeBits(ep)...), tern(3, bit, bit)},
				pipeline.ActionRouteToRegion, r))
		}
		for s := uint64(1); s <= 32; s++ {
			bit := EncodeBits(1 << (s % 32))
			ups = append(ups, entryUpdate(p, pipeline.TableCarbonRank, 64, []*p4v1.FieldMatch{exact(1, EncodeBits(ep)...),
				tern(2, EncodeBits(s), []byte{0xff, 0xff}), tern(3, bit, bit)}, pipeline.ActionRouteToRegion, s%32))
		}
	}
	// range: sla_feasibility, 1000 sites x 4 ranges.
	for s := uint64(1); s <= 1000; s++ {
		for i, r := range [][2]uint64{{0, 299}, {300, 799}, {800, 2999}, {3000, 65535}} {
			ups = append(ups, entryUpdate(p, pipeline.TableSLAFeasibility, 1, []*p4v1.FieldMatch{exact(1, EncodeBits(s)...),
				rng2(2, EncodeBits(r[0]), EncodeBits(r[1]))}, pipeline.ActionSetFeasible, uint64(1)<<i, 0))
		}
	}
	mustBatch(b, e, ups)

	const nkeys = 4096
	keys := make([][3]uint64, nkeys)
	for i := range keys {
		keys[i] = [3]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64()}
	}
	baseline := map[uint64]*Entry{}
	for i := uint64(0); i < 16000; i++ {
		baseline[i*2654435761] = &Entry{}
	}
	for _, c := range []struct {
		name  string
		table string
		key   func(k [3]uint64, dst []uint64)
	}{
		{"exact", pipeline.TableServerEndpoint, func(k [3]uint64, d []uint64) { d[0] = k[0] % 1024 }},
		{"lpm", pipeline.TableL3Forward, func(k [3]uint64, d []uint64) { d[0] = k[0] & 0xFFFFFFFF }},
		{"ternary", pipeline.TableCarbonRank, func(k [3]uint64, d []uint64) {
			d[0], d[1], d[2] = k[0]%2, k[1]%64, k[2]&0xFFFFFFFF
		}},
		{"range", pipeline.TableSLAFeasibility, func(k [3]uint64, d []uint64) { d[0], d[1] = 1+k[0]%1000, k[1]%5000 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := p.tablesByName[c.table]
			keyBuf := make([][]uint64, nkeys)
			for i := range keyBuf {
				keyBuf[i] = make([]uint64, len(t.fields))
				c.key(keys[i], keyBuf[i])
			}
			hits := 0
			e.Acquire()
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0 := time.Now(), cputime.ProcessTime()
			for i := 0; i < b.N; i++ {
				if hit, _ := t.Apply(keyBuf[i%nkeys], 64); hit {
					hits++
				}
			}
			ours, cpu := time.Since(start), cputime.ProcessTime()-cpu0
			b.StopTimer()
			e.Release()
			t0 := time.Now()
			found := 0
			for i := 0; i < b.N; i++ {
				if baseline[keys[i%nkeys][0]%16000*2654435761] != nil {
					found++
				}
			}
			base := time.Since(t0)
			if b.N > 1000 && (hits == 0 || found != b.N) {
				b.Fatalf("%d hits, %d baseline hits of %d", hits, found, b.N)
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hit-ratio")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(ours)/float64(base), "x-go-map")
		})
	}
}

// BenchmarkWriteBatch measures batched INSERTs (l3_forward, batches of
// 1000) into the engine, in entries per second, against proto
// marshalling+unmarshalling the same WriteRequest in the same run (what any
// gRPC transport spends on it anyway).
func BenchmarkWriteBatch(b *testing.B) {
	const batch, batches = 1000, 16
	_, p := programEngine(b)
	var reqs [batches]*p4v1.WriteRequest
	for k := range reqs {
		reqs[k] = &p4v1.WriteRequest{DeviceId: 1}
		for i := 0; i < batch; i++ {
			n := uint64(k*batch + i)
			reqs[k].Updates = append(reqs[k].Updates, entryUpdate(p, pipeline.TableL3Forward, 0,
				[]*p4v1.FieldMatch{lpm(1, 32, EncodeBits(0x0a000000|n)...)}, pipeline.ActionForward, 1))
		}
	}
	var e *Engine
	var spent, spentCPU time.Duration
	written := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % batches
		if k == 0 {
			b.StopTimer()
			e, _ = programEngine(b)
			b.StartTimer()
		}
		t0, c0 := time.Now(), cputime.ProcessTime()
		for _, err := range e.Write(context.Background(), reqs[k].Updates, p4v1.WriteRequest_ROLLBACK_ON_ERROR) {
			if err != nil {
				b.Fatal(err)
			}
		}
		spent += time.Since(t0)
		spentCPU += cputime.ProcessTime() - c0
		written += batch
	}
	b.StopTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		buf, _ := proto.Marshal(reqs[i%batches])
		var r p4v1.WriteRequest
		_ = proto.Unmarshal(buf, &r)
	}
	base := time.Since(t0)
	b.ReportMetric(float64(written)/spent.Seconds(), "entries/s")
	b.ReportMetric(float64(written)/spentCPU.Seconds(), "entries/cpu-s")
	b.ReportMetric(float64(spent)/float64(base), "x-proto-roundtrip")
}

func rng2(id uint32, lo, hi []byte) *p4v1.FieldMatch { return rng(id, lo, hi) }
