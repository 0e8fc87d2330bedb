package shellguard

import (
	"slices"
	"strings"

	"github.com/agentwarden/warden"
)

// Policy is the runtime configuration of the classifier. The zero value is
// the strict one: no sandbox (a sandbox verdict becomes ask), code the guard
// cannot see (task runners, scripts, unknown programs) goes to the strict
// sandbox rather than being allowed, no network policy (every command that
// names a host or URL is asked about), and the built-in effect×zone table
// applies.
type Policy struct {
	// Protected are paths relative to the workspace root that the agent
	// host, an editor or warden obeys later (sandbox.protected_paths; an
	// entry ending in a slash is a directory): a command writing or
	// deleting one asks (zone workspace_protected). Paths in .git keep
	// their own zone.
	Protected []string
	// Caches are the tool caches the workspace sandbox lets a command write
	// (sandbox.cache_paths: ~/.cache, ~/.npm, ~/go/pkg…; "~/" is the
	// home). With a sandbox available, a path in one is zone temp: writing
	// or clearing a cache is what the kernel lets the command do anyway.
	Caches []string
	// SandboxAvailable says a sandbox executor can run sandbox verdicts; when
	// false every sandbox verdict becomes ask, and so does code the guard
	// cannot see (an unknown program, a script), which it would otherwise
	// allow into the workspace sandbox.
	SandboxAvailable bool
	// AllowTaskRunners allows project task runners (make, npm run/test, go
	// test/build, cargo build/test, pytest, ./scripts/*.sh) and lets code the
	// guard cannot see (unknown programs, scripts) run in the workspace
	// sandbox; when false they all get sandbox (the strict guard profile).
	AllowTaskRunners bool
	// Network judges a destination a command names: target is an absolute
	// URL (http, https, ws, wss) or HOST:PORT (IPv6 in brackets), method the
	// HTTP method of a URL ("" for HOST:PORT). The command's verdict is at
	// least the decision's (deny denies, ask asks; allow changes nothing),
	// and the decision's rule and reason are the command's when it decides.
	// Nil means no network policy: every such command is asked about.
	Network func(target, method string) warden.Decision
	// Safe, Suspicious and Destructive are extra command patterns supplied
	// by the user: a pattern is a sequence of words matched against the
	// start of a command's argv after unwrapping ("kubectl get", "mytool").
	// Safe makes an otherwise unknown command allowed without the
	// unknown-program rule, so also where no sandbox can contain it (it never
	// overrides an effect rule, and the hosts it names still meet Network);
	// Suspicious gives sandbox; Destructive gives deny.
	Safe, Suspicious, Destructive []string
	// Host are command patterns (as Safe) the user lets run on the host,
	// outside the sandbox, once they are allowed: a command line that is one
	// simple command matching one gets Decision.Sandbox warden.SandboxHost.
	// A project layer cannot add any.
	Host []string
	// Replacements rewrite a command line by prefix after classification
	// (e.g. "npm install" → "bun install"); the rewrite is classified too
	// and the stricter verdict wins.
	Replacements []Replacement
	// Home is $HOME; Tmp is $TMPDIR. Empty means unknown (Tmp then means
	// /tmp and /var/tmp only).
	Home, Tmp string
	// Table overrides cells of the built-in effect×zone table; a nil Table
	// uses the built-in one unchanged.
	Table Table
	// Paths, when set, holds the filesystem policy's denied paths: a command
	// that reads, writes or deletes a path it denies is denied, as a file
	// access to that path would be, and one that reads a whole tree holding
	// a denied path asks. A project layer cannot change it.
	Paths PathGuard
}

// PathGuard judges a path operand against the filesystem policy's denied
// paths (package fsguard implements it). cwd is the command's working
// directory, "" when unknown; a path it cannot judge is not denied.
type PathGuard interface {
	Denied(path, cwd string) (warden.Decision, bool)
	// DeniedToRead is Denied for a program that only reads path: a file
	// that no sandbox can hide and every user may read (fsguard: a public
	// file in a system directory, such as /etc/os-release) is not denied.
	DeniedToRead(path, cwd string) (warden.Decision, bool)
	// DeniedWithin reports whether a denied path (or warden's home) lies
	// inside the tree at path, which a program would read whole.
	DeniedWithin(path, cwd string) (warden.Decision, bool)
}

// Replacement rewrites a command line that starts with From (at a word
// boundary) so that it starts with To instead.
type Replacement struct {
	From, To string
}

// Env is what the caller knows about where the command runs. The zero value
// knows nothing: relative paths then have an unknown zone.
type Env struct {
	Cwd string // working directory; the workspace root outside a git work tree
	// Root is the git work tree that holds Cwd ("" outside one): it is
	// the workspace (the project), as the sandbox makes it writable,
	// unless it is a hidden directory of the home; a worktree the line
	// adds beside it (git worktree add ../feature) is the workspace's for
	// the commands after the add.
	Root string
	Home string // $HOME; overrides Policy.Home when set
	Tmp  string // $TMPDIR; overrides Policy.Tmp when set
	// Autonomous is set on a turn with no human to ask: failures deny.
	Autonomous bool
	// Unset, when set, reports a variable the environment the line runs
	// with does not set (walk.Options.Unset).
	Unset func(name string) bool
	// Explain asks for Result.Trace (for --explain); without it the trace is
	// not built, which keeps the common path cheap.
	Explain bool
	// Snapshots says the caller saves the uncommitted work of the git work
	// trees in Result.Snapshot before it runs the command, where `warden
	// undo` brings it back (warden exec does). A git command that discards
	// uncommitted work the caller can save (in a work tree of the project,
	// not ignored files; the stash entries a stash drop or clear deletes,
	// which a snapshot keeps) is then allowed (shell.git.saved)
	// rather than asked about (shell.git.discard).
	Snapshots bool
	// GitWorkTree says the working directory is in a git work tree, whose
	// snapshot can hold the project files a recursive delete removes: only
	// then is such a delete saved and allowed (shell.delete_recursive.saved)
	// under Snapshots. The stage looks for .git upwards.
	GitWorkTree bool
	// Worktrees are the other work trees of the project's repository that
	// lie beside it (nestedgit.Beside): their paths are the workspace's
	// too. The stage finds them.
	Worktrees []string
}

// DefaultPolicy is the "developer" policy: task runners allowed, the
// built-in table, no replacements. SandboxAvailable stays false until the
// caller knows a sandbox executor is configured.
func DefaultPolicy() Policy {
	return Policy{AllowTaskRunners: true}
}

// Tighten returns p with a project layer applied. A project layer may only
// make the policy stricter: its Suspicious and Destructive patterns are
// added and its table cells apply where they are stricter, while its Safe
// patterns, Replacements, Home, Tmp, Paths and Network are ignored and it
// can only switch SandboxAvailable and AllowTaskRunners off.
func (p Policy) Tighten(project Policy) Policy {
	out := p
	out.Suspicious = append(append([]string(nil), p.Suspicious...), project.Suspicious...)
	out.Destructive = append(append([]string(nil), p.Destructive...), project.Destructive...)
	out.SandboxAvailable = p.SandboxAvailable && project.SandboxAvailable
	out.AllowTaskRunners = p.AllowTaskRunners && project.AllowTaskRunners
	if len(project.Table) > 0 {
		out.Table = Table{}
		for e, row := range p.Table {
			out.Table[e] = map[Zone]warden.Verdict{}
			for z, v := range row {
				out.Table[e][z] = v
			}
		}
		for e, row := range project.Table {
			for z, v := range row {
				if v.Stronger(p.lookup(e, z)) {
					if out.Table[e] == nil {
						out.Table[e] = map[Zone]warden.Verdict{}
					}
					out.Table[e][z] = v
				}
			}
		}
	}
	return out
}

// final maps a verdict to what the policy can honour.
func (p *Policy) final(v warden.Verdict) warden.Verdict {
	if v == warden.Sandbox && !p.SandboxAvailable {
		return warden.Ask
	}
	return v
}

// runsOnHost reports whether command is one simple command whose words
// start with one of p.Host: nothing else in the line (no list, pipe,
// substitution or redirection) may ride along to the host with it.
func (p *Policy) runsOnHost(command string) bool {
	if len(p.Host) == 0 || strings.ContainsAny(command, "|;&<>$`()\n\\'\"{}*?[]~#") {
		return false
	}
	words := strings.Fields(command)
	for _, pat := range p.Host {
		pw := strings.Fields(pat)
		if len(pw) > 0 && len(pw) <= len(words) && slices.Equal(words[:len(pw)], pw) {
			return true
		}
	}
	return false
}
