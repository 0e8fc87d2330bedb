package main

import (
	"os"
	"path/filepath"
	"strings"
)

// resolve returns the warden binary a hook names: a path as it is, and a
// bare name (a project's shared settings say `warden-exec warden hook …`)
// looked up on $PATH as a shell would, or "" when $PATH has none.
func resolve(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	return ""
}
