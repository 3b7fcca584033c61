package controller

import "hash/fnv"

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
