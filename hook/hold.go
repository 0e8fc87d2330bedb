package hook

import (
	"context"
	"time"

	"github.com/agentwarden/warden"
)

// An agent host runs its own file tools (Claude Code's Read, Write, Edit,
// Glob, Grep…, Codex's apply_patch, Gemini CLI's read_file…) on the host,
// at the path the gate judged, a moment after the gate judged it. A
// process the session's earlier commands left running in its sandbox
// world could swap a directory on that path for a symlink in between (a
// rename exchange, over and over), and the tool would follow the symlink
// out of what was judged: to a key in the home, or to warden's policy. So
// the hook holds the session's sandboxes (their processes stopped) from
// before the gate judges such a call until the host reports that the tool
// ran (PostToolUse, PostToolUseFailure, AfterTool), or a minute when it
// never does; a host that reports no failed call (Codex, Gemini CLI) ends
// its earlier calls' holds at its next call. A call the gate asks about
// stays held until the user's answer: until the tool ran, or the session's
// next call. (A tool that a file can keep waiting, a named pipe's reader,
// is refused by the gate: fsguard's fs.special_file.)

// Holder is a Decider that can hold a session's sandboxes under a lease
// (HoldSession: the holds taken before returning) and release them
// (ReleaseSession; with prefix, every lease whose name starts with one of
// the names).
type Holder interface {
	Decider
	HoldSession(ctx context.Context, session, lease string, ttl time.Duration) error
	ReleaseSession(ctx context.Context, session string, prefix bool, leases ...string) error
}

// hostToolHold is how long an allowed host tool's lease lasts when the
// host never reports that the tool ran; a tool that works longer (a grep
// of a large tree) works unheld after it.
const hostToolHold = time.Minute

// askedToolHold is how long an asked host tool's lease lasts at most: the
// user's answer can take minutes.
const askedToolHold = 10 * time.Minute

// Lease names: a call's id after one of these.
const (
	toolLease  = "tool:"
	askedLease = "asked:"
)

// hostFileTool reports whether call is a tool the host runs itself on a
// path of the filesystem.
func hostFileTool(call toolCall, reqs []*warden.Request) bool {
	if call.shell {
		return false
	}
	for _, r := range reqs {
		if r.Capability == warden.CapFilesystem {
			return true
		}
	}
	return false
}

// holdHostTool takes the lease of a host file tool's call (id) in session
// before the gate judges it. The leases of calls asked about earlier in
// the session end first: a new call means their answer was given; with
// noFailures (a host that reports only the calls that succeeded), so do
// those of every earlier call. It reports whether it holds; an error
// means the sandboxes could not be held, and the call must not go ahead.
func holdHostTool(ctx context.Context, d Decider, session, id string, fileTool, noFailures bool) (bool, error) {
	h, ok := d.(Holder)
	if !ok || session == "" {
		return false, nil
	}
	earlier := []string{askedLease}
	if noFailures {
		earlier = append(earlier, toolLease)
	}
	if err := h.ReleaseSession(ctx, session, true, earlier...); err != nil {
		return false, err
	}
	if !fileTool {
		return false, nil
	}
	if err := h.HoldSession(ctx, session, toolLease+id, hostToolHold); err != nil {
		return false, warden.Errorf(warden.EUnavailable,
			"warden could not pause the session's sandbox while the host's own tool works on the path it judged; try the call again").Wrap(err)
	}
	return true, nil
}

// settleHostTool turns a held call's lease into what its decision needs:
// an allowed call keeps it until the host reports that the tool ran; a
// call asked about is held until the user's answer; a refused one is
// released now.
func settleHostTool(ctx context.Context, d Decider, session, id string, v warden.Verdict) error {
	h := d.(Holder)
	switch v {
	case warden.Allow:
		return nil
	case warden.Ask:
		if err := h.HoldSession(ctx, session, askedLease+id, askedToolHold); err != nil {
			return err
		}
	}
	return h.ReleaseSession(ctx, session, false, toolLease+id)
}

// releaseHostTool ends the leases of call id, which the host reports ran
// (or failed), when it was held (a host file tool's call).
func releaseHostTool(ctx context.Context, d Decider, session, id string, held bool) error {
	h, ok := d.(Holder)
	if !ok || session == "" || !held {
		return nil
	}
	return h.ReleaseSession(ctx, session, false, toolLease+id, askedLease+id)
}
