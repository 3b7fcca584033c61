// Package examples embeds the example controller configurations, so that
// `p4ctl demo` runs from any directory on a fresh clone.
package examples

import (
	_ "embed"
	"slices"
)

//go:embed mumbai.yaml
var mumbai []byte

// MumbaiName is the path of the Mumbai example in the repository.
const MumbaiName = "examples/mumbai.yaml"

// Mumbai returns examples/mumbai.yaml: the paper's 12 regions and Mumbai
// client, policy C on the offline carbon model, a 24 h replay schedule.
func Mumbai() []byte { return slices.Clone(mumbai) }
