package warden

import (
	"context"
	"time"
)

// Decision is the gate's answer to a Request. The zero value denies with no reason,
// so a decision that was never filled in refuses.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	// Reason is one sentence a user and an LLM can act on.
	Reason string `json:"reason"`
	// Rule is the stable id of the rule that decided, e.g. "safety.kill_switch".
	Rule string `json:"rule"`
	Tier Tier   `json:"tier"`
	// ManualOnly marks a decision that only a fresh human confirmation can satisfy:
	// no remembered grant may answer it.
	ManualOnly bool `json:"manual_only,omitempty"`
	// Stages holds what every stage said, in the order they ran.
	Stages []StageAnswer `json:"stages"`
	// Sandbox names the isolation profile to run under when Verdict is
	// Sandbox. On an allowed shell command, SandboxHost says the user's own
	// rule (shell.host) runs it on the host instead of the workspace
	// sandbox; empty means the workspace sandbox.
	Sandbox string `json:"sandbox,omitempty"`
	// Snapshot lists the git work trees (absolute directories) whose
	// uncommitted work a shell command discards and that must be saved,
	// where `warden undo` brings it back, before the command runs; set only
	// for a request with Snapshots. A caller that cannot save them must not
	// run the command. Empty: nothing to save.
	Snapshot []string `json:"snapshot,omitempty"`
	// GitConfig says a shell command is git commands only that may write
	// the repository's own configuration: warden exec runs it in a
	// sandbox of its own where the project's .git/config is writable, and
	// takes back any key that would run a program after it.
	GitConfig bool `json:"git_config,omitempty"`
	// GitWorktrees says a shell command removes a linked worktree of the
	// repository (git worktree remove): warden exec runs it in a sandbox
	// of its own where the linked worktrees' git directories are not kept
	// read-only, so that the worktree's can go; what would run a program
	// from one is swept after it, as from any git directory host git
	// enters.
	GitWorktrees bool `json:"git_worktrees,omitempty"`
	// Worktrees are the directories a shell command's git worktree add
	// makes (absolute): warden exec runs it in a sandbox of its own where
	// each that lies beside the project, and may be made, is writable.
	Worktrees []string `json:"worktrees,omitempty"`
	// RemovedWorktrees are the directories a shell command's git worktree
	// remove names (absolute; none for a path only known at run time): a
	// linked worktree among them kept inside the project has its protected
	// paths writable in that run, so that git can remove it.
	RemovedWorktrees []string `json:"removed_worktrees,omitempty"`
	// EnvUnset are the variables whose absence from the command's
	// environment (Request.Unset) the decision relied on: a run whose
	// environment sets one of them is decided again. In process only.
	EnvUnset []string `json:"-"`
	// Rewrite is a replacement input (e.g. a command wrapped in warden exec).
	Rewrite string `json:"rewrite,omitempty"`
	// Span locates the part of the resource that decided (e.g. the command
	// inside a longer shell line), as byte offsets; nil when not applicable.
	Span *Span `json:"span,omitempty"`
	// Suggestion is a safer alternative that would itself be allowed, when
	// the deciding stage knows one.
	Suggestion string `json:"suggestion,omitempty"`
	ApprovalID string `json:"approval_id,omitempty"`
	TraceID    string `json:"trace_id"`
}

// Span is a byte range [Start, End) of a request's resource.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Blocked reports whether the decision refuses the request outright.
func (d *Decision) Blocked() bool { return d.Verdict == Deny }

// StageAnswer records what one stage said about a request.
type StageAnswer struct {
	Stage   string  `json:"stage"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason"`
	Rule    string  `json:"rule,omitempty"`
	// Error is set when the stage could not decide (it errored, panicked or ran
	// past its deadline); Verdict is then Deny.
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// A Stage is one independent safety check. Check returns the stage's own verdict
// with a reason and a rule id. An error means the stage could not decide, and the
// pipeline then denies; so does a panic or a Check that outlives ctx.
type Stage interface {
	Name() string
	Check(ctx context.Context, req *Request) (Decision, error)
}

// Allowf, Askf and Denyf build a stage's decision.
func Allowf(rule, reason string) Decision {
	return Decision{Verdict: Allow, Rule: rule, Reason: reason}
}

// Askf builds an ask decision.
func Askf(rule, reason string) Decision { return Decision{Verdict: Ask, Rule: rule, Reason: reason} }

// Denyf builds a deny decision.
func Denyf(rule, reason string) Decision { return Decision{Verdict: Deny, Rule: rule, Reason: reason} }

// SandboxHost in Decision.Sandbox of an allowed shell command means a rule
// the user wrote (shell.host) runs it on the host, outside any sandbox.
const SandboxHost = "host"
