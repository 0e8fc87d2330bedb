package shellguard

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/nestedgit"
)

// workTreeRoot is the git work tree dir is in: dir, or the nearest
// directory above it, that holds .git (a directory, or a worktree's file),
// never the home or above it (nestedgit.WorkTreeOf); "" when there is none.
func workTreeRoot(dir, home string) string { return nestedgit.WorkTreeOf(dir, home) }

// ActionExec is the one action of the shell capability.
const ActionExec = "exec"

// SandboxProfile is the sandbox profile a sandbox verdict names.
const SandboxProfile = "guard"

// Stage is the pipeline stage for the shell capability: it classifies the
// command in req.Resource. The zero value uses the strict zero Policy.
type Stage struct {
	Policy Policy
	// Project, when set, returns the project layer for a working directory,
	// or nil when the project has none. It is applied with Tighten, so it can
	// only make the policy stricter (an agent can edit it). An error means the
	// project's policy could not be read; the command is then asked about
	// (denied on an autonomous turn), never judged more loosely.
	Project func(cwd string) (*Policy, error)
}

var _ warden.Stage = Stage{}

// Name implements warden.Stage.
func (Stage) Name() string { return "shell-guard" }

// Check implements warden.Stage. It never returns an error: a command it
// cannot judge is asked about (denied on an autonomous turn).
func (s Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapShell {
		return warden.Denyf("shell.wrong_capability", fmt.Sprintf("the shell guard only judges the %q capability, not %q", warden.CapShell, req.Capability)), nil
	}
	if req.Action != ActionExec {
		return warden.Denyf("shell.unknown_action", fmt.Sprintf("the shell capability has one action, %q; got %q", ActionExec, req.Action)), nil
	}
	p := s.Policy
	if s.Project != nil && req.Cwd != "" {
		layer, err := s.Project(req.Cwd)
		if err != nil {
			r := failure(Env{Autonomous: req.Autonomous}, "shell.project_policy_invalid",
				"the project's warden policy could not be read ("+err.Error()+"); fix it before running commands here")
			return warden.Decision{Verdict: r.Verdict, Rule: r.Rule, Reason: r.Reason}, nil
		}
		if layer != nil {
			p = p.Tighten(*layer)
		}
	}
	// A hook's command that will not run in warden exec (a host that cannot
	// rewrite it, such as Cursor, runs it itself) gets no sandbox: what the
	// guard allows only because a sandbox holds it (an unknown program,
	// pkill, a write only known at run time) asks, as without a sandbox.
	if req.Host != "" && !req.Snapshots {
		p.SandboxAvailable = false
	}
	// A command the user's shell.host rule runs on the host is not run by
	// warden exec, which saves discarded work: its discards ask.
	snapshots := req.Snapshots && !p.runsOnHost(req.Resource)
	root := workTreeRoot(req.Cwd, p.Home)
	env := Env{Cwd: req.Cwd, Root: root, Autonomous: req.Autonomous, Snapshots: snapshots, GitWorkTree: snapshots && root != ""}
	if root != "" {
		env.Worktrees = nestedgit.Beside(root)
	}
	// The environment the command runs with is known only where it runs
	// in warden exec, which decides it again under its own: a command the
	// host or a shell.host rule runs as it is gets no such reading.
	var unset []string
	if req.Unset != nil && snapshots && p.SandboxAvailable {
		env.Unset = func(name string) bool {
			if !req.Unset(name) {
				return false
			}
			if !slices.Contains(unset, name) {
				unset = append(unset, name)
			}
			return true
		}
	}
	r := Classify(req.Resource, env, p)
	d := warden.Decision{Verdict: r.Verdict, Rule: r.Rule, Reason: r.Reason, Rewrite: r.Rewrite, Snapshot: r.Snapshot, GitConfig: r.GitConfig, GitWorktrees: r.GitWorktrees, Worktrees: r.Worktrees, RemovedWorktrees: r.RemovedWorktrees, EnvUnset: unset}
	if r.Suggestion != "" {
		d.Reason += "; instead: " + r.Suggestion
		d.Suggestion = r.Suggestion
	}
	if r.Verdict != warden.Allow && r.Span.End > r.Span.Start {
		d.Span = &warden.Span{Start: r.Span.Start, End: r.Span.End}
	}
	if d.Verdict == warden.Sandbox {
		d.Sandbox = SandboxProfile
	}
	if d.Verdict == warden.Allow && p.runsOnHost(req.Resource) {
		d.Sandbox = warden.SandboxHost
		d.Reason += "; shell.host runs it on the host"
	}
	return d, nil
}
