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
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "fs-guard" }

// Check implements warden.Stage. It never returns an error: every path it
// cannot judge is denied with the reason.
func (s Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
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
	return s.Guard.DecideIn(Action(req.Action), req.Resource, req.Cwd, tmp), nil
}
