// Package version reports the build version of Cowboy binaries. Version is
// set at link time (-ldflags "-X .../internal/version.Version=…").
package version

import "runtime/debug"

// Version is the release version; "dev" for local builds.
var Version = "dev"

// String returns the version with the VCS revision when known.
func String() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}
