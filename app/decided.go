package app

import (
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// A session's supervisor answers both halves of a contained shell call: the
// hook, which decides the command and rewrites it into `warden exec`, and,
// a moment later, that warden exec. decidedRuns lets the run use the hook's
// decision instead of deciding the very same command a second time: the
// decision is already made and audited, under the same policy (an App is
// one policy: a changed policy file opens a new one, with none of these),
// and its trace id ties the run's outcome to it.
//
// Each is taken once, within decidedRunTTL, and only by a run of the same
// command line in the same directory for the same session and requester.
// Only plain allow and sandbox verdicts are kept: one that a grant made
// (its approval covers the run its own way), that runs on the host or that
// rewrote the command is decided again by the run.
type decidedRuns struct {
	mu   sync.Mutex
	runs []decidedRun
}

type decidedRun struct {
	key decidedKey
	d   warden.Decision
	at  time.Time
}

// decidedKey is what a run must share with the hook's request.
type decidedKey struct {
	command, cwd, session, requestedBy string
	autonomous                         bool
}

const (
	// decidedRunTTL bounds the wait between a hook's answer and the run:
	// an agent host runs an allowed command at once.
	decidedRunTTL = 30 * time.Second
	// maxDecidedRuns bounds the memory: a session's commands run one
	// after another, rarely more than a few at once.
	maxDecidedRuns = 64
)

func decidedKeyOf(req *warden.Request) decidedKey {
	return decidedKey{command: req.Resource, cwd: req.Cwd, session: req.Session, requestedBy: req.RequestedBy, autonomous: req.Autonomous}
}

// noteDecided keeps a hook's decision of a shell command for the run it
// becomes, in a session's supervisor only.
func (a *App) noteDecided(req *warden.Request, d warden.Decision) {
	if a.Supervises == "" || req.Capability != warden.CapShell || req.Action != "exec" || req.Session == "" ||
		(d.Verdict != warden.Allow && d.Verdict != warden.Sandbox) || d.TraceID == "" ||
		d.Rewrite != "" || d.ApprovalID != "" || gate.HostGranted(&d) {
		return
	}
	now := a.Now()
	r := &a.decided
	r.mu.Lock()
	defer r.mu.Unlock()
	keep := r.runs[:0]
	for _, run := range r.runs {
		if now.Sub(run.at) < decidedRunTTL {
			keep = append(keep, run)
		}
	}
	if len(keep) >= maxDecidedRuns {
		keep = append(keep[:0], keep[1:]...)
	}
	r.runs = append(keep, decidedRun{key: decidedKeyOf(req), d: d, at: now})
}

// takeDecided returns, and forgets, the hook's decision of req's command
// when this supervisor made one for it within decidedRunTTL. The kill
// switch is looked at again, as the gate looks at it (a fleet's is its
// database's): it may have been turned on since.
func (a *App) takeDecided(req *warden.Request) (warden.Decision, bool) {
	if a.Supervises == "" || killEngaged(a.Home, a.Store)() {
		return warden.Decision{}, false
	}
	key, now := decidedKeyOf(req), a.Now()
	r := &a.decided
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, run := range r.runs {
		if run.key == key && now.Sub(run.at) < decidedRunTTL && !now.Before(run.at) {
			r.runs = append(r.runs[:i], r.runs[i+1:]...)
			if !stillUnset(run.d.EnvUnset, req.Unset) {
				// The hook read a variable as unset that the run's
				// own environment sets: decided again under it.
				return warden.Decision{}, false
			}
			return run.d, true
		}
	}
	return warden.Decision{}, false
}

// stillUnset reports whether every variable in names is unset by unset
// (the run's environment); none to check is true, and names with no
// environment to check them against are not.
func stillUnset(names []string, unset func(string) bool) bool {
	for _, n := range names {
		if unset == nil || !unset(n) {
			return false
		}
	}
	return true
}
