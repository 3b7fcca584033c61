package k8s

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/p4ctl/p4ctl/pkg/config"
)

func load(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, m)
	}
	return out
}

// get walks a decoded manifest: get(m, "spec", "template", 0, …).
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %q", path, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

// The manifests are consistent with each other and with p4ctl: the
// ConfigMap's configuration passes p4ctl's validation, the replicas get
// distinct election ids from their ordinals, the probes hit /livez
// (liveness) and /healthz (readiness) on the metrics port, the Secret and
// ConfigMap the pods use exist, and the services select the pods.
func TestManifests(t *testing.T) {
	cm := load(t, "configmap.yaml")[0]
	cfgText, _ := get(t, cm, "data", "config.yaml").(string)
	cfg, err := config.Parse([]byte(cfgText), "deploy/k8s/configmap.yaml#config.yaml")
	if err != nil {
		t.Fatalf("the ConfigMap's configuration is invalid: %v", err)
	}
	if len(cfg.Targets) == 0 {
		t.Fatal("no targets in the ConfigMap's configuration")
	}

	sts := load(t, "statefulset.yaml")[0]
	if r, _ := get(t, sts, "spec", "replicas").(float64); r < 2 {
		t.Fatalf("replicas %v: HA needs ≥ 2", r)
	}
	pod := get(t, sts, "spec", "template")
	labels := get(t, pod, "metadata", "labels").(map[string]any)
	c := get(t, pod, "spec", "containers", 0)
	args := strings.Join(toStrings(get(t, c, "args")), " ")
	for _, want := range []string{"run", "--config=/etc/p4ctl/config.yaml", "--replica-from-hostname", "--metrics-addr=0.0.0.0:9464"} {
		if !strings.Contains(args, want) {
			t.Errorf("container args %q lack %s", args, want)
		}
	}
	if p := get(t, c, "livenessProbe", "httpGet", "path"); p != "/livez" {
		t.Errorf("liveness probe path %v, want /livez (the control loop runs)", p)
	}
	if p := get(t, c, "readinessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("readiness probe path %v, want /healthz (the switches converge)", p)
	}
	if p := get(t, c, "ports", 0, "name"); p != get(t, c, "livenessProbe", "httpGet", "port") {
		t.Errorf("probe port %v is not the container port %v", get(t, c, "livenessProbe", "httpGet", "port"), p)
	}
	if get(t, c, "volumeMounts", 0, "mountPath") != "/etc/p4ctl" ||
		get(t, pod, "spec", "volumes", 0, "configMap", "name") != get(t, cm, "metadata", "name") {
		t.Error("the config volume does not mount the ConfigMap at /etc/p4ctl")
	}
	sec := load(t, "secret.yaml")[0]
	if get(t, c, "envFrom", 0, "secretRef", "name") != get(t, sec, "metadata", "name") {
		t.Error("the pods do not take their environment from the tokens Secret")
	}
	if cfg.Carbon.TokenEnv != "" {
		if _, ok := get(t, sec, "stringData").(map[string]any)[cfg.Carbon.TokenEnv]; !ok {
			t.Errorf("carbon.token_env %s is not a key of the Secret", cfg.Carbon.TokenEnv)
		}
	}
	for _, svc := range load(t, "service.yaml") {
		for k, v := range get(t, svc, "spec", "selector").(map[string]any) {
			if labels[k] != v {
				t.Errorf("service %v selects %s=%v, pods have %v", get(t, svc, "metadata", "name"), k, v, labels[k])
			}
		}
	}
	if get(t, load(t, "service.yaml")[0], "metadata", "name") != get(t, sts, "spec", "serviceName") {
		t.Error("the StatefulSet's serviceName is not the headless service")
	}
	k := load(t, "kustomization.yaml")[0]
	for _, f := range toStrings(get(t, k, "resources")) {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("kustomization lists %s: %v", f, err)
		}
	}
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}
