package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/sandbox"
)

// gitGuard is the sandbox's GitGuard: a nestedgit.Guard over the project
// (over each repository of a folder of projects), its baseline taken
// before the command runs, whose sweep takes what would run on the host
// out of every repository the command made or changed where git on the
// host enters, into warden's quarantine. Each repository it changed, or
// could not make safe, is a git_quarantined security event, and a warning
// of the run.
func (a *App) gitGuard(s *sandbox.Spec, nested bool) func() []string {
	if s.Quarantine == "" || s.Project == "" {
		return nil
	}
	roots := []string{s.Project}
	if _, err := os.Lstat(filepath.Join(s.Project, ".git")); err != nil {
		repos, _ := reposBelow(s.Project)
		roots = roots[:0]
		for _, r := range repos {
			roots = append(roots, filepath.Join(s.Project, r))
		}
	}
	if len(roots) == 0 && !nested {
		return nil
	}
	// In a folder of projects the command may write the whole folder, not
	// only the repository watched: a git directory it made beside one
	// (folder/build/gd, named by a .git file in the repository) is its
	// doing too.
	// Everything it may write counts: the workspace too (a git directory
	// made in ~/.warden/sandbox/files, named by a .git file in the
	// project, is its doing).
	writable := append(slices.Clone(s.ReadWrite), s.Project, s.Workspace)
	guards := make([]*nestedgit.Guard, 0, len(roots))
	newGuard := nestedgit.New
	if nested {
		newGuard = nestedgit.NewWithNested
	}
	for _, r := range roots {
		guards = append(guards, newGuard(r, writable, s.Quarantine))
	}
	if nested && (len(roots) != 1 || roots[0] != s.Project) {
		// A folder of projects: the repositories deeper than its
		// search of them (reposBelow) are nested in it too.
		guards = append(guards, nestedgit.NewWithNested(s.Project, writable, s.Quarantine))
	}
	return func() []string {
		var out []string
		for _, g := range guards {
			for _, f := range g.Sweep(a.Now()) {
				msg := f.String()
				out = append(out, msg)
				a.auditGitQuarantine(f, msg)
			}
		}
		return out
	}
}

// auditGitQuarantine records one finding as a git_quarantined event.
func (a *App) auditGitQuarantine(f nestedgit.Finding, msg string) {
	if a.Store == nil {
		return
	}
	sev := warden.SevWarn
	errText := ""
	if f.Err != nil {
		sev, errText = warden.SevError, f.Err.Error()
	}
	meta, _ := json.Marshal(map[string]any{"git_dir": f.GitDir, "via": f.Via, "keys": f.Keys, "hooks": f.Hooks, "whole": f.Whole, "moved_to": f.Moved, "error": errText})
	e := &warden.SecurityEvent{ID: NewID(), CreatedAt: a.Now(), Type: warden.EventGitQuarantined, Severity: sev}
	if err := appendEvent(context.Background(), a.Store, e, msg, meta); err != nil && a.Log != nil {
		a.Log.Warn("could not audit a git quarantine", "git_dir", f.GitDir, "err", warden.UserMessage(err))
	}
}
