package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentwarden/warden/internal/proc"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/sandbox"
)

// A one-shot run in the warden process the agent host started judges what
// the command left only after it ends, in that same process: it takes
// back a key a git line added to .git/config that would run a program
// (takeBackGitConfig), and sweeps the repositories the command made or
// changed (gitGuard). The host can kill that process first (its timeout
// kills the whole process group), and then nothing would. So such a run
// leaves a note in the home before its command starts, with what those
// steps need (the config as it was, each guard's baseline); the note goes
// once they ran; and the next warden process of the home that finds a
// note whose process is gone (a hook's, at the latest the session's end)
// does them in its place.

// pendingDir holds the notes, under RunDir.
const pendingDir = "pending"

// pendingRun is one note.
type pendingRun struct {
	PID          int                  `json:"pid"`
	Start        string               `json:"start"` // the process's start time, against a reused pid
	Project      string               `json:"project"`
	Quarantine   string               `json:"quarantine"`
	GitConfig    bool                 `json:"git_config"`
	ConfigBefore []byte               `json:"config_before,omitempty"`
	Guards       []nestedgit.Baseline `json:"guards,omitempty"`
	path         string
}

// beginPending writes the note of the one-shot run about to start with
// spec, unless this process is a session's supervisor (which the host
// does not kill with the command). gitConfig says its .git/config is
// writable, as before was.
func (a *App) beginPending(spec sandbox.Spec, gitConfig bool, before []byte) {
	if a.Supervises != "" || spec.Project == "" || spec.Quarantine == "" {
		return
	}
	start, ok := proc.Start(os.Getpid())
	if !ok {
		return
	}
	dir := filepath.Join(a.Home.Abs(), RunDir, pendingDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	a.pending = &pendingRun{PID: os.Getpid(), Start: start, Project: spec.Project, Quarantine: spec.Quarantine,
		GitConfig: gitConfig, ConfigBefore: before, path: filepath.Join(dir, NewID()+".json")}
	a.writePending()
}

// notePendingGuards adds the baselines of the run's git guards to its note.
func (a *App) notePendingGuards(guards []*nestedgit.Guard) {
	if a.pending == nil {
		return
	}
	for _, g := range guards {
		a.pending.Guards = append(a.pending.Guards, g.Baseline())
	}
	a.writePending()
}

// writePending writes the note whole, as a fresh name renamed over it.
func (a *App) writePending() {
	b, err := json.Marshal(a.pending)
	if err != nil {
		return
	}
	tmp := a.pending.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	_ = os.Rename(tmp, a.pending.path)
}

// endPending removes the note: what it was for has run.
func (a *App) endPending() {
	if a.pending == nil {
		return
	}
	_ = os.Remove(a.pending.path)
	a.pending = nil
}

// recoverPending does, for each note whose process is gone, what that
// process was to do after its command: the git config's take-back and the
// sweeps, each audited as it would have been. It returns their warnings.
func (a *App) recoverPending() []string {
	dir := filepath.Join(a.Home.Abs(), RunDir, pendingDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var r pendingRun
		if err := json.Unmarshal(b, &r); err != nil {
			_ = os.Remove(p) // torn or foreign: nothing can be done with it
			continue
		}
		if start, ok := proc.Start(r.PID); ok && start == r.Start {
			continue // its process is still there, and does it itself
		}
		// Claimed by a rename: one process recovers each note.
		claimed := p + ".recovering-" + strconv.Itoa(os.Getpid())
		if os.Rename(p, claimed) != nil {
			continue
		}
		for _, base := range r.Guards {
			for _, f := range nestedgit.Resume(base).Sweep(a.Now()) {
				msg := f.String() + " (after a command whose warden was killed before it could look)"
				out = append(out, msg)
				a.auditGitQuarantine(f, msg)
			}
		}
		if r.GitConfig {
			out = append(out, a.takeBackGitConfig(sandbox.Spec{Project: r.Project, Quarantine: r.Quarantine}, r.ConfigBefore)...)
		}
		_ = os.Remove(claimed)
	}
	return out
}
