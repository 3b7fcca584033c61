// Package program is the Go model of the p4ctl P4 program (p4src/v1model),
// step for step as docs/PIPELINE.md describes it: it parses Ethernet/IPv4/
// UDP/p4ctl frames, applies the program's tables held by a generic
// match-action engine (pkg/dataplane/engine), updates its registers and
// counters, and rewrites the frame in place.
//
// Table handles, action ids and parameter positions are resolved by name
// once per installed pipeline (Bind), so processing a packet does not
// allocate.
package program

import (
	"fmt"
	"sync"

	"github.com/p4ctl/p4ctl/pkg/dataplane/engine"
	"github.com/p4ctl/p4ctl/pkg/pipeline"
)

// Clock returns the current time in microseconds (BMv2: µs since the switch
// started). Only the low 48 bits are used.
type Clock func() uint64

// Model runs packets through the program. It is safe for concurrent use:
// passes are serialised (as BMv2's single ingress thread does), so every
// register access of a pass is atomic, as Tofino's stateful ALUs are; between
// the passes of a recirculated request, other packets may run.
type Model struct {
	eng    *engine.Engine
	clock  Clock
	digest DigestSink

	mu sync.Mutex // serialises passes
	h  *handles   // written under the engine's write lock (Bind)
}

// DigestSink receives the program's latency_sample digests, with the
// pipeline they were generated on (its digest configuration says whether a
// controller enabled them). It is called during a pass, under the engine's
// read lock and the model's pass lock: it must not block or call back into
// the model or the engine's write path.
type DigestSink func(p *engine.Pipeline, s pipeline.LatencySample)

// New returns a model running on eng's tables. Call Bind with every pipeline
// eng installs (engine.Options.OnCommit). digest, if not nil, receives the
// program's latency_sample digests.
func New(eng *engine.Engine, clock Clock, digest DigestSink) *Model {
	return &Model{eng: eng, clock: clock, digest: digest}
}

// handles are a pipeline's tables, actions, parameter positions, registers
// and counters, resolved by name.
type handles struct {
	p      *engine.Pipeline
	digest DigestSink

	clientSite, slaFeasibility, activeEpoch, carbonRank, regionNextHop,
	serverPool, execClassCost, serverEndpoint, replySource, l3Forward, l2Forward *engine.Table

	aSetClientSite, aSetFeasible, aSetActiveEpoch, aRouteToRegion, aDispatchLocal,
	aForwardRemote, aSetPool, aSetExecCost, aSetServerEndpoint, aSetReplySource, aForward, aDrop uint32

	pSite, pFeasible, pNearest, pEpoch, pRegion, pLocalCapacity,
	pRemotePort, pRemoteDmac, pRemoteAddr,
	pBase, pSizeMask, pPolicy, pBound, pMaxHolds, pOnFull, pTick, pLongReserve, pLongMaxHolds,
	pCost, pIsLong, pEPPort, pEPDmac, pEPAddr, pReplyAddr, pFwdPort int

	rCredit                           [pipeline.Candidates]*engine.Register
	rWork, rRegionOutstanding, rProbe *engine.Register
	cRouted, cFallback, cBound        *engine.Counter
	cEvents                           [len(lanes)]*engine.Counter
}

// lanes are the dispatch_events counters in pipeline.Lane order.
var lanes = [...]pipeline.Lane{pipeline.LaneOutcome, pipeline.LaneSpill, pipeline.LaneFallback, pipeline.LaneCause}

// Bind resolves the program's names in p. It must be called with the
// engine's write lock held (engine.Options.OnCommit does). If p lacks a name
// the model needs, packets are dropped (NoPipeline) and the error is returned.
func (m *Model) Bind(p *engine.Pipeline) error {
	m.h = nil
	h, err := resolve(p)
	if err != nil {
		return err
	}
	h.digest = m.digest
	m.h = h
	return nil
}

func resolve(p *engine.Pipeline) (*handles, error) {
	h := &handles{p: p}
	var errs []error
	tab := func(dst **engine.Table, name string) {
		t, err := p.Table(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = t
	}
	act := func(dst *uint32, name string) {
		id, err := p.ActionID(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = id
	}
	prm := func(dst *int, action, param string) {
		i, err := p.ParamIndex(action, param)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = i
	}
	reg := func(dst **engine.Register, name string) {
		r, err := p.Register(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = r
	}
	ctr := func(dst **engine.Counter, name string) {
		c, err := p.Counter(name)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = c
	}
	tab(&h.clientSite, pipeline.TableClientSite)
	tab(&h.slaFeasibility, pipeline.TableSLAFeasibility)
	tab(&h.activeEpoch, pipeline.TableActiveEpoch)
	tab(&h.carbonRank, pipeline.TableCarbonRank)
	tab(&h.regionNextHop, pipeline.TableRegionNextHop)
	tab(&h.serverPool, pipeline.TableServerPool)
	tab(&h.execClassCost, pipeline.TableExecClassCost)
	tab(&h.serverEndpoint, pipeline.TableServerEndpoint)
	tab(&h.replySource, pipeline.TableReplySource)
	tab(&h.l3Forward, pipeline.TableL3Forward)
	tab(&h.l2Forward, pipeline.TableL2Forward)
	act(&h.aSetClientSite, pipeline.ActionSetClientSite)
	act(&h.aSetFeasible, pipeline.ActionSetFeasible)
	act(&h.aSetActiveEpoch, pipeline.ActionSetActiveEpoch)
	act(&h.aRouteToRegion, pipeline.ActionRouteToRegion)
	act(&h.aDispatchLocal, pipeline.ActionDispatchLocal)
	act(&h.aForwardRemote, pipeline.ActionForwardRemote)
	act(&h.aSetPool, pipeline.ActionSetPool)
	act(&h.aSetExecCost, pipeline.ActionSetExecCost)
	act(&h.aSetServerEndpoint, pipeline.ActionSetServerEndpoint)
	act(&h.aSetReplySource, pipeline.ActionSetReplySource)
	act(&h.aForward, pipeline.ActionForward)
	act(&h.aDrop, pipeline.ActionDrop)
	prm(&h.pSite, pipeline.ActionSetClientSite, pipeline.ParamSite)
	prm(&h.pFeasible, pipeline.ActionSetFeasible, pipeline.ParamFeasible)
	prm(&h.pNearest, pipeline.ActionSetFeasible, pipeline.ParamNearest)
	prm(&h.pEpoch, pipeline.ActionSetActiveEpoch, pipeline.ParamEpoch)
	prm(&h.pRegion, pipeline.ActionRouteToRegion, pipeline.ParamRegion)
	prm(&h.pLocalCapacity, pipeline.ActionDispatchLocal, pipeline.ParamCapacity)
	prm(&h.pRemotePort, pipeline.ActionForwardRemote, pipeline.ParamPort)
	prm(&h.pRemoteDmac, pipeline.ActionForwardRemote, pipeline.ParamDMAC)
	prm(&h.pRemoteAddr, pipeline.ActionForwardRemote, pipeline.ParamAddr)
	prm(&h.pBase, pipeline.ActionSetPool, pipeline.ParamBase)
	prm(&h.pSizeMask, pipeline.ActionSetPool, pipeline.ParamSizeMask)
	prm(&h.pPolicy, pipeline.ActionSetPool, pipeline.ParamPolicy)
	prm(&h.pBound, pipeline.ActionSetPool, pipeline.ParamBound)
	prm(&h.pMaxHolds, pipeline.ActionSetPool, pipeline.ParamMaxHolds)
	prm(&h.pOnFull, pipeline.ActionSetPool, pipeline.ParamOnFull)
	prm(&h.pTick, pipeline.ActionSetPool, pipeline.ParamCreditTick)
	prm(&h.pLongReserve, pipeline.ActionSetPool, pipeline.ParamLongReserve)
	prm(&h.pLongMaxHolds, pipeline.ActionSetPool, pipeline.ParamLongMaxHolds)
	prm(&h.pCost, pipeline.ActionSetExecCost, pipeline.ParamCostMicros)
	prm(&h.pIsLong, pipeline.ActionSetExecCost, pipeline.ParamIsLong)
	prm(&h.pEPPort, pipeline.ActionSetServerEndpoint, pipeline.ParamPort)
	prm(&h.pEPDmac, pipeline.ActionSetServerEndpoint, pipeline.ParamDMAC)
	prm(&h.pEPAddr, pipeline.ActionSetServerEndpoint, pipeline.ParamAddr)
	prm(&h.pReplyAddr, pipeline.ActionSetReplySource, pipeline.ParamAddr)
	prm(&h.pFwdPort, pipeline.ActionForward, pipeline.ParamPort)
	for slot := range h.rCredit {
		reg(&h.rCredit[slot], pipeline.RegisterServerCredit(slot))
	}
	reg(&h.rWork, pipeline.RegisterServerWork)
	reg(&h.rRegionOutstanding, pipeline.RegisterRegionOutstanding)
	reg(&h.rProbe, pipeline.RegisterLatencyProbe)
	ctr(&h.cRouted, pipeline.CounterRegionRouted)
	ctr(&h.cFallback, pipeline.CounterRegionFallback)
	ctr(&h.cBound, pipeline.CounterServerBound)
	for i, l := range lanes {
		ctr(&h.cEvents[i], l.Counter())
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("bind the p4ctl program model: %v", errs)
	}
	return h, nil
}
