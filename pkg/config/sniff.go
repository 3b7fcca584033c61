package config

import (
	"reflect"

	yamlv3 "go.yaml.in/yaml/v3"
)

// LooksLikeConfig reports whether data is a YAML mapping whose top-level
// keys are those of a controller configuration (targets, regions, sites,
// policy, carbon, …), and, if so, the grpc_addr of each of its targets.
// Commands that take p4runtime-shell's --config P4INFO[,DEVICE_CONFIG]
// use it to tell a user who passed a controller configuration instead.
func LooksLikeConfig(data []byte) (ok bool, targets []string) {
	var top map[string]yamlv3.Node
	if err := yamlv3.Unmarshal(data, &top); err != nil || len(top) == 0 {
		return false, nil
	}
	known := jsonFields(reflect.TypeFor[Config]())
	for k := range top {
		if _, found := known[k]; !found {
			return false, nil
		}
	}
	if n, found := top["targets"]; found {
		var ts []struct {
			GRPCAddr string `yaml:"grpc_addr"`
		}
		if n.Decode(&ts) == nil {
			for _, t := range ts {
				if t.GRPCAddr != "" {
					targets = append(targets, t.GRPCAddr)
				}
			}
		}
	}
	return true, targets
}
