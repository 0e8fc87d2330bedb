package sandbox

import (
	"path/filepath"
	"slices"

	"github.com/agentwarden/warden/nestedgit"
)

// withNestedGit is s.Protected with s.NestedGit's paths in the git
// directory of each repository nested in the project (nestedgit.Nested),
// when the project is writable.
func withNestedGit(s *Spec) []string {
	if !s.ProjectWritable || s.Project == "" || len(s.NestedGit) == 0 {
		return s.Protected
	}
	out := slices.Clone(s.Protected)
	for _, repo := range nestedgit.Nested(s.Project, false) {
		for _, name := range s.NestedGit {
			p := filepath.Join(repo, ".git", name)
			if !slices.ContainsFunc(out, func(q string) bool { return filepath.Clean(q) == p }) {
				out = append(out, p)
			}
		}
	}
	return out
}
