package fsguard

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
)

// Stage is the pipeline stage for the filesystem capability: it judges
// req.Action on the path in req.Resource, relative to req.Cwd. A Stage with
// no Guard denies everything, naming Err when set.
type Stage struct {
	Guard *Guard
	// Err says why there is no Guard (an unusable filesystem section).
	Err error
	// SessionTmp, when set, gives the host's directory that is a
	// session's /tmp for its sandboxed commands: the session's file tools
	// may read and write there as those commands do (DecideIn).
	SessionTmp func(session string) string
	// GitNamed, when set, reports whether one of paths (absolute: the
	// request's path as named, clean, and where it really leads) is one
	// that the git configuration of a work tree holding cwd or the path
	// names (the core.hooksPath directory, an included config file): git
	// on the host runs or obeys it, so a write or delete there that a rule
	// allows asks (fs.workspace_protected).
	GitNamed func(ctx context.Context, cwd string, paths []string) bool
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "fs-guard" }

// Check implements warden.Stage. It never returns an error: every path it
// cannot judge is denied with the reason.
func (s Stage) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapFilesystem {
		return warden.Denyf("fs.wrong_capability", fmt.Sprintf("the filesystem guard only judges the %q capability, not %q", warden.CapFilesystem, req.Capability)), nil
	}
	if s.Guard == nil {
		why := "the filesystem policy is not available"
		if s.Err != nil {
			why += ": " + s.Err.Error()
		}
		return warden.Denyf("fs.no_policy", why+"; fix the filesystem section of the policy file"), nil
	}
	tmp := ""
	if s.SessionTmp != nil && req.Session != "" {
		tmp = s.SessionTmp(req.Session)
	}
	d := s.Guard.DecideIn(Action(req.Action), req.Resource, req.Cwd, tmp)
	if a := Action(req.Action); d.Verdict == warden.Allow && (a == Write || a == Delete) && s.GitNamed != nil {
		// The path as the guard judged it: ~ expanded, and resolved as the
		// host's tool will open it (a symlink at its end, dangling or not,
		// ".." after a symlink).
		t, td, ok := s.Guard.target(Action(req.Action), req.Resource, req.Cwd, true)
		if !ok {
			return td, nil
		}
		paths := []string{t.lexical, t.real}
		if cleaned, ok := s.Guard.cleanedName(req.Resource, req.Cwd); ok {
			// Where the host's tool opens it (DecideIn).
			c, cd, ok := s.Guard.target(Action(req.Action), cleaned, req.Cwd, true)
			if !ok {
				return cd, nil
			}
			paths = append(paths, c.real)
		}
		if s.GitNamed(ctx, req.Cwd, paths) {
			where := t.lexical
			if t.real != t.lexical {
				where += " (really " + t.real + ")"
			}
			return warden.Askf("fs.workspace_protected", fmt.Sprintf("%s is named by the project's git configuration (its hooks directory, core.hooksPath, or a file it includes): git on your machine runs or obeys it, so writing it asks", where)), nil
		}
	}
	return d, nil
}
