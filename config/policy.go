package config

import (
	"time"

	"github.com/agentwarden/warden"
)

// Policy is the runtime form of warden.yaml: validated, normalised values that
// the gate reads. Build one with Load, Parse or Default; the zero value has no
// tiers and zero caps (nothing may be spent) and is not meant to be used.
type Policy struct {
	Safety     Safety
	Tools      Tools
	Shell      Shell
	Filesystem Filesystem
	Sandbox    Sandbox
	Network    Network
	Approvals  Approvals
	Sizing     Sizing
	Exposure   Exposure
	Slippage   Slippage
	StopLoss   StopLoss
	Trade      Trade
	Signing    Signing
	Inject     Inject
	Store      Store
}

// Safety holds the global money and emergency-stop limits (the safety section).
// The zero value spends nothing, with the kill switch and autopilot off.
type Safety struct {
	// MaxTransaction is the most one transaction may move; 0 means nothing may be spent.
	MaxTransaction warden.USD
	// DailySpendCap is the most that may be spent in warden.SpendWindow; 0 means nothing.
	DailySpendCap warden.USD
	// KillSwitch is the emergency stop: while on, every tool above tier 1 is blocked.
	KillSwitch bool
	// AllowedTokens lists the token symbols that may be traded, upper case; empty
	// means any token that is not blocked.
	AllowedTokens []string
	// BlockedTokens lists token symbols that may never be traded, upper case.
	BlockedTokens []string
	// Autopilot lets autonomous turns use tier 3 tools; tier 4 always needs a human.
	Autopilot bool
}

// Tools holds per-tool permission tiers (the tools section). A tool missing
// from Tiers, and not matched by an override, is warden.DefaultTier; so in the
// zero value every tool is.
type Tools struct {
	// Tiers maps a tool name to its tier; every value is a valid tier and
	// "unkill" is always warden.TierManualOnly.
	Tiers map[string]warden.Tier
	// Overrides are checked in order before Tiers; the first whose conditions
	// all hold for a request decides that request's tier.
	Overrides []TierOverride
	// Denied are tool names or path.Match patterns whose calls are always
	// denied, whatever their tier; nil denies none.
	Denied []string
}

// TierOverride gives Tool a different tier when every condition that is set
// holds. The zero value names no tool and matches nothing.
type TierOverride struct {
	// Tool is the tool name the override applies to; never empty.
	Tool string
	// MaxAmount, when set, limits the override to requests moving at most this
	// amount. It is meant to match only requests that carry an amount.
	MaxAmount *warden.USD
	// Recipients, when non-nil, limits the override to requests paying one of
	// these recipients. It is never an empty non-nil list: the file refuses
	// "recipients: []", so an empty list can never mean "any recipient".
	Recipients []string
	// Tier is the tier the override gives; always valid, and 4 for "unkill".
	Tier warden.Tier
}

// Default returns the policy warden uses when warden.yaml does not set a value:
// the same policy as DefaultFile. Each call returns a fresh copy.
func Default() *Policy {
	p := &Policy{}
	for _, s := range sections {
		s.apply(s.defaults(), p)
	}
	return p
}

// Sandbox says how commands that need isolation run (the sandbox section).
// With Mode "off" there is no isolation, so a sandbox verdict becomes ask.
type Sandbox struct {
	Mode   string // off, light, standard or max
	Engine string // auto, native or docker
	// Strict refuses to run a command with less isolation than its mode
	// asks for, where the kernel lacks a feature.
	Strict bool
	// UnsafeAllowOff lets a profile or `warden exec --mode off` run a
	// command with no isolation at all (still audited).
	UnsafeAllowOff bool
	// UnsafeHostWhenUnavailable runs allowed and sandboxed commands on the
	// host, audited, where no sandbox can run; false asks a human instead.
	UnsafeHostWhenUnavailable bool
	// KeepOneShot keeps a long-lived sandbox for the one-shot runs of each
	// directory and profile, which run in it alone, each finding it as new
	// (app/oneshot.go); false builds a sandbox for every one-shot run.
	KeepOneShot bool
	// SecretPaths are masked in every sandbox (credential stores), as
	// written: "~" is not yet expanded.
	SecretPaths []string
	// CachePaths are the tool caches a profile with ReadAll may write.
	CachePaths []string
	// ProtectedPaths, relative to the project, stay read-only where the
	// project is writable.
	ProtectedPaths []string
	// Profiles are the named isolation settings, always including
	// "workspace" (what allowed commands run under, and warden exec's
	// default), "guard" (what sandbox verdicts run under) and "default".
	Profiles map[string]SandboxProfile
}

// SandboxProfile is one named set of isolation settings. Sizes are bytes;
// zero limits mean none, except Timeout, which is always set.
type SandboxProfile struct {
	Mode                string // the profile's mode, or the section's
	Project             string // read, write or none
	ReadOnly, ReadWrite []string
	Network             string // none or proxy
	AllowDomains        []string
	Memory              int64
	// MemoryShare, when set, caps memory at this percentage of the
	// machine's memory instead of Memory.
	MemoryShare  int
	CPU, Timeout time.Duration
	Pids         int
	NoSpawn      bool
	OutputLimit  int64
	FileSize     int64    // the largest file the command may write
	Env          []string // variables kept despite credential scrubbing
	// ReadAll makes the whole filesystem readable but the masked paths
	// (denied paths, secret paths, warden's home, system secrets), and the
	// cache paths writable.
	ReadAll bool
	// UnixSockets lets the command make AF_UNIX sockets of its own.
	UnixSockets bool
	// SessionTmp gives the commands of one session one /tmp that lasts
	// across them; false gives each command a fresh one.
	SessionTmp bool
	// TmpSize caps what the command's /tmp holds (a private one's tmpfs;
	// a session's, on disk, by killing what grows it past the cap);
	// TmpShare, when set, caps a session's /tmp at this percentage of the
	// free space on its disk instead, taken as its sandbox starts.
	TmpSize  int64
	TmpShare int
}

func (s Sandbox) Available() bool { return s.Mode != "" && s.Mode != "off" }

// Shell is the shell guard's part of the policy (the shell section). Patterns
// are command prefixes matched against a command's words after unwrapping.
type Shell struct {
	// AllowTaskRunners allows project task runners (make, npm run, go test…);
	// when false they run in the sandbox.
	AllowTaskRunners bool
	// Safe allows an otherwise unknown command; it never overrides an effect
	// rule. Suspicious sends a command to the sandbox; Destructive denies it.
	Safe, Suspicious, Destructive []string
	// Replacements rewrite a command by prefix after it is classified; the
	// rewritten command is classified again and the stricter verdict wins.
	Replacements []Replacement
	// Host are command prefixes the user lets run on the host, outside the
	// sandbox, once the guard allows them (git push over SSH, docker).
	Host []string
}

// Replacement rewrites a command line that starts with From to start with To.
type Replacement struct{ From, To string }

// Filesystem is the filesystem guard's part of the policy (the filesystem
// section). Paths and patterns are as written: "~" is not yet expanded.
type Filesystem struct {
	// Workspace is the directory agents have full access to; "" means the
	// default, $WARDEN_HOME/sandbox/files.
	Workspace string
	// Allowed rules are tried in order after the workspace.
	Allowed []AllowedPath
	// Denied patterns always win, over the workspace too.
	Denied []string
}

// AllowedPath is one filesystem.allowed_paths rule.
type AllowedPath struct {
	Pattern string
	Actions []string // read, write, list, delete
	Auto    bool     // allow; false asks
}
