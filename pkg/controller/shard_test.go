package controller_test

import (
	"fmt"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/controller"
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
