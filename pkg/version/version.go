// Package version reports the p4ctl build: release version, VCS revision and
// Go toolchain, read from the binary's build information.
package version

import (
	"runtime"
	"runtime/debug"
)

// release is the p4ctl release this tree builds. It is overridden at link
// time by `make build` (-ldflags -X) with `git describe`.
var release = "v0.1.0-dev"

// Info is what `p4ctl version` prints.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get returns the build's Info.
func Get() Info {
	in := Info{Version: release, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	return in
}

// TableHeaders implements output.Tabular.
func (i Info) TableHeaders() []string { return []string{"version", "revision", "go", "platform"} }

// TableRows implements output.Tabular.
func (i Info) TableRows() [][]string {
	rev := i.Revision
	if rev == "" {
		rev = "unknown"
	}
	if i.Modified {
		rev += "+dirty"
	}
	return [][]string{{i.Version, rev, i.GoVersion, i.Platform}}
}
