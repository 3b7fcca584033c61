package controller_test

import (
	"fmt"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// Every target has exactly one owner, the split is roughly even, and a
// new target moves no other.
func TestShards(t *testing.T) {
	var ts []controller.Target
	for i := range 200 {
		ts = append(ts, controller.Target{Name: fmt.Sprintf("edge-%03d", i)})
	}
	const shards = 4
	owner := map[string]int{}
	for s := range shards {
		mine := controller.ShardTargets(ts, s, shards)
		if len(mine) < 200/shards/2 || len(mine) > 2*200/shards {
			t.Errorf("shard %d owns %d of 200", s, len(mine))
		}
		for _, x := range mine {
			if o, dup := owner[x.Name]; dup {
				t.Fatalf("%s owned by shards %d and %d", x.Name, o, s)
			}
			owner[x.Name] = s
		}
	}
	if len(owner) != len(ts) {
		t.Fatalf("%d of %d targets owned", len(owner), len(ts))
	}
	more := append(ts, controller.Target{Name: "edge-new"})
	for s := range shards {
		for _, x := range controller.ShardTargets(more, s, shards) {
			if o, ok := owner[x.Name]; ok && o != s {
				t.Errorf("adding a target moved %s from shard %d to %d", x.Name, o, s)
			}
		}
	}
	if got := controller.ShardTargets(ts, 0, 1); len(got) != len(ts) {
		t.Errorf("one shard owns %d of %d", len(got), len(ts))
	}
}

// Pods are dealt round the shards: every (shard, replica) pair of S × M
// pods occurs once, and the replicas of one target get distinct election
// ids, carrying into the high word at the top of the low one.
func TestShardReplica(t *testing.T) {
	const shards, perShard = 3, 4
	seen := map[[2]int]bool{}
	for pod := range shards * perShard {
		s, r := controller.ShardReplica(pod, shards)
		if s < 0 || s >= shards || r < 0 || r >= perShard || seen[[2]int{s, r}] {
			t.Fatalf("pod %d → shard %d replica %d (seen before: %v)", pod, s, r, seen[[2]int{s, r}])
		}
		seen[[2]int{s, r}] = true
	}
	if s, r := controller.ShardReplica(5, 1); s != 0 || r != 5 {
		t.Errorf("one shard: pod 5 → %d, %d", s, r)
	}
	cases := []struct {
		id      p4rt.ElectionID
		replica int
		want    p4rt.ElectionID
	}{
		{p4rt.Election(10), 0, p4rt.Election(10)},
		{p4rt.Election(10), 2, p4rt.Election(12)},
		{p4rt.ElectionID{}, 1, p4rt.Election(2)},
		{p4rt.ElectionID{High: 0, Low: ^uint64(0)}, 1, p4rt.ElectionID{High: 1, Low: 0}},
	}
	for _, c := range cases {
		if got := controller.ReplicaElection(c.id, c.replica); got != c.want {
			t.Errorf("ReplicaElection(%v, %d) = %v, want %v", c.id, c.replica, got, c.want)
		}
	}
}
