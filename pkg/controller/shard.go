package controller

import (
	"hash/fnv"

	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// ShardOf is the shard, 0..shards−1, that owns the target named name when
// a fleet is split among shards controller groups (docs/SCALING.md): FNV-1a
// of the name modulo shards, so that a target's owner depends on its name
// alone — adding a target moves no other — and every replica of every
// shard computes the same split from the same configuration. shards ≤ 1
// puts every target in shard 0.
func ShardOf(name string, shards int) int {
	if shards <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32() % uint32(shards))
}

// ShardTargets returns the targets shard owns (ShardOf), in order.
func ShardTargets(targets []Target, shard, shards int) []Target {
	var out []Target
	for _, t := range targets {
		if ShardOf(t.Name, shards) == shard {
			out = append(out, t)
		}
	}
	return out
}

// ShardReplica is what StatefulSet pod ordinal runs when the fleet is split
// among shards groups (p4ctl run --shards with --replica-from-hostname):
// pods are dealt round the shards, so pod N is replica N / shards of shard
// N mod shards and every shard's replicas are spread over the ordinals.
// shards ≤ 1: shard 0, replica ordinal.
func ShardReplica(ordinal, shards int) (shard, replica int) {
	if shards <= 1 {
		return 0, ordinal
	}
	return ordinal % shards, ordinal / shards
}

// ReplicaElection is replica's election id on a target configured with
// id: id + replica (a zero id counts as 1, the lowest that can become
// primary), carrying into the high word, so that the replicas of one
// controller never share an election id and arbitration picks one.
func ReplicaElection(id p4rt.ElectionID, replica int) p4rt.ElectionID {
	if id.IsZero() {
		id = p4rt.Election(1)
	}
	lo := id.Low + uint64(replica)
	if lo < id.Low {
		id.High++
	}
	id.Low = lo
	return id
}
