package k8s

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/config"
	"github.com/p4ctl/p4ctl/pkg/controller"
	"github.com/p4ctl/p4ctl/pkg/p4rt"
)

// merge applies a strategic-merge patch the way kustomize does for the
// fields our patches touch: maps merge key by key, lists of named maps
// (containers) merge item by name, any other list is replaced.
func merge(base, patch any) any {
	switch p := patch.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return p
		}
		out := map[string]any{}
		for k, v := range b {
			out[k] = v
		}
		for k, v := range p {
			out[k] = merge(b[k], v)
		}
		return out
	case []any:
		b, ok := base.([]any)
		if !ok || len(p) == 0 {
			return p
		}
		if first, isMap := p[0].(map[string]any); !isMap || first["name"] == nil {
			return p
		}
		out := append([]any(nil), b...)
		for _, pv := range p {
			name := pv.(map[string]any)["name"]
			found := false
			for i, bv := range out {
				if m, ok := bv.(map[string]any); ok && m["name"] == name {
					out[i], found = merge(bv, pv), true
				}
			}
			if !found {
				out = append(out, pv)
			}
		}
		return out
	}
	return patch
}

// render is `kubectl kustomize sharded` for the resources the overlay
// patches: the base manifest with the overlay's patch of the same name.
func render(t *testing.T, base, patch string) map[string]any {
	t.Helper()
	b, p := load(t, base)[0], load(t, patch)[0]
	if get(t, b, "kind") != get(t, p, "kind") || get(t, b, "metadata", "name") != get(t, p, "metadata", "name") {
		t.Fatalf("%s patches %v/%v, not %s's %v/%v", patch, get(t, p, "kind"), get(t, p, "metadata", "name"), base, get(t, b, "kind"), get(t, b, "metadata", "name"))
	}
	return merge(b, p).(map[string]any)
}

// The sharded form, rendered: its configuration is valid; pod N of the
// StatefulSet is replica N / S of shard N mod S; every shard has at least
// two replicas and owns at least one switch; every switch is owned by
// exactly one shard, whose replicas use distinct election ids on it; the
// overlay lists only files that exist and keeps the base's probes.
func TestShardedManifests(t *testing.T) {
	k := load(t, "sharded/kustomization.yaml")[0]
	var bases, patches []string
	bases = toStrings(get(t, k, "resources"))
	for _, p := range get(t, k, "patches").([]any) {
		patches = append(patches, p.(map[string]any)["path"].(string))
	}
	if strings.Join(bases, ",") != "../" || len(patches) != 2 {
		t.Fatalf("overlay resources %v patches %v", bases, patches)
	}
	sts := render(t, "statefulset.yaml", "sharded/statefulset-patch.yaml")
	cm := render(t, "configmap.yaml", "sharded/configmap-patch.yaml")
	cfg, err := config.Parse([]byte(get(t, cm, "data", "config.yaml").(string)), "deploy/k8s/sharded/configmap-patch.yaml#config.yaml")
	if err != nil {
		t.Fatalf("the sharded configuration is invalid: %v", err)
	}
	c := get(t, sts, "spec", "template", "spec", "containers", 0)
	args := toStrings(get(t, c, "args"))
	joined := strings.Join(args, " ")
	m := regexp.MustCompile(`--shards=(\d+)`).FindStringSubmatch(joined)
	if m == nil || !strings.Contains(joined, "--replica-from-hostname") || !strings.Contains(joined, "--config=/etc/p4ctl/config.yaml") {
		t.Fatalf("args %q: want --shards=S with --replica-from-hostname and the config", joined)
	}
	shards, _ := strconv.Atoi(m[1])
	replicas := int(get(t, sts, "spec", "replicas").(float64))
	if shards < 2 || replicas%shards != 0 || replicas/shards < 2 {
		t.Fatalf("%d pods for %d shards: want a multiple, ≥ 2 replicas per shard (HA)", replicas, shards)
	}
	if get(t, c, "livenessProbe", "httpGet", "path") != "/livez" || get(t, c, "readinessProbe", "httpGet", "path") != "/healthz" {
		t.Error("the overlay lost the base's probes")
	}
	var targets []controller.Target
	for _, tg := range cfg.Targets {
		targets = append(targets, controller.Target{Name: tg.Name, ElectionID: p4rt.ElectionID{High: tg.ElectionID.High, Low: tg.ElectionID.Low}})
	}
	owners := map[string][]int{}
	elections := map[string]map[p4rt.ElectionID]bool{}
	for pod := range replicas {
		shard, replica := controller.ShardReplica(pod, shards) // what p4ctl run --replica-from-hostname --shards computes
		mine := controller.ShardTargets(targets, shard, shards)
		if len(mine) == 0 {
			t.Errorf("pod p4ctl-%d (shard %d) owns no switch", pod, shard)
		}
		for _, tg := range mine {
			if replica == 0 {
				owners[tg.Name] = append(owners[tg.Name], shard)
			}
			if elections[tg.Name] == nil {
				elections[tg.Name] = map[p4rt.ElectionID]bool{}
			}
			id := controller.ReplicaElection(tg.ElectionID, replica) // each target's own configured id
			if elections[tg.Name][id] {
				t.Errorf("%s: two pods with election id %v", tg.Name, id)
			}
			elections[tg.Name][id] = true
		}
	}
	for _, tg := range cfg.Targets {
		if len(owners[tg.Name]) != 1 || len(elections[tg.Name]) != replicas/shards {
			t.Errorf("%s: owned by shards %v with %d candidate controllers", tg.Name, owners[tg.Name], len(elections[tg.Name]))
		}
	}
	t.Logf("%d switches over %d shards × %d replicas", len(cfg.Targets), shards, replicas/shards)
}
