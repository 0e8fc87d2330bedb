package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by the Makefile (-ldflags -X) from git, for builds where the go
// command stamps no VCS information (-buildvcs=false); the build info's
// own values win when there are any.
var (
	version string
	commit  string
)

// buildInfo is what `warden version` says about this binary.
type buildInfo struct {
	Version  string `json:"version"` // the module's version, "(devel)" when unknown
	Commit   string `json:"commit"`  // the VCS revision, "unknown" when not stamped
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuildInfo reads the binary's build information, as `go build`
// stamped it (module version and, built inside a repository, the commit).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", Commit: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		b.Commit = commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" && (v != "(devel)" || version == "") {
		b.Version = v
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the text `warden version` and `warden --version` print.
func (b buildInfo) String() string {
	commit := b.Commit
	if b.Time != "" {
		commit += " (" + b.Time + ")"
	}
	if b.Modified {
		commit += ", with uncommitted changes"
	}
	return fmt.Sprintf("warden %s\ncommit %s\ngo     %s %s\n", b.Version, commit, b.Go, b.Platform)
}

func versionCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print warden's version, commit and Go version (also `warden --version`)",
		Args:  rangeArgs(0, 0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			b := readBuildInfo()
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(b)
			}
			_, err := fmt.Fprint(e.stdout, b)
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print it as JSON")
	return c
}

// setVersion makes `warden --version` print what `warden version` does.
func setVersion(root *cobra.Command) {
	root.Version = readBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}")
}
