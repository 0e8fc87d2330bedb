package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// A session's sandboxed commands share a /tmp of their own, which lies in
// warden's home on the host. The host's own file tools (Claude Code's
// Read, Write, Edit, Glob, Grep…) run on the host, where /tmp is the
// host's: a log a command wrote to /tmp would be missing for the Read
// that follows, and a script the Write tool put in /tmp missing for the
// command that runs it. So the hook leads such a tool to the session's
// /tmp: each path in /tmp (or /var/tmp, which is the same directory for
// the commands) becomes the same path in the session's directory, the
// request the gate judges names it, and the host gets the tool's input
// with the path rewritten (updatedInput). The filesystem guard lets the
// session's file tools read and write there as its commands do
// (fsguard.Guard.DecideIn), and judges a symlink there where it leads.

// TmpMapper gives the host's directory that is a session's /tmp for its
// sandboxed commands ("" where they get none). The app implements it; a
// Decider without it (the daemon's client) leaves paths as they are.
type TmpMapper interface {
	SessionTmp(ctx context.Context, session string) (string, error)
}

// tmpPathFields are the fields of each host file tool's input that name a
// path (Glob's pattern may be one).
var tmpPathFields = map[string][]string{
	"Read": {"file_path"}, "Write": {"file_path"}, "Edit": {"file_path"}, "MultiEdit": {"file_path"},
	"NotebookEdit": {"notebook_path", "file_path"},
	"Glob":         {"path", "pattern"}, "Grep": {"path"}, "LS": {"path"},
}

// tmpRoots are the directories that are the session's /tmp for its
// commands.
var tmpRoots = []string{"/tmp", "/var/tmp"}

// inTmp returns the part of p (absolute) below one of tmpRoots, with its
// leading slash ("" for the root itself), and whether it lies there.
func inTmp(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	clean := filepath.Clean(p)
	for _, r := range tmpRoots {
		if clean == r {
			return "", true
		}
		if rest, ok := strings.CutPrefix(clean, r+"/"); ok {
			return "/" + rest, true
		}
	}
	return "", false
}

// mapSessionTmp rewrites p's tool input so that each path it names in /tmp
// names the same path in the session's /tmp, and returns the rewritten
// input (nil when nothing was rewritten). Nothing is rewritten where the
// working directory or the home lies in /tmp: the project or home is then
// there, and the sandbox carries it into the commands' /tmp as it is.
func mapSessionTmp(ctx context.Context, d Decider, p *basePayload) (json.RawMessage, error) {
	fields, ok := tmpPathFields[p.ToolName]
	m, can := d.(TmpMapper)
	if !ok || !can || p.SessionID == "" {
		return nil, nil
	}
	if _, ok := inTmp(p.Cwd); ok {
		return nil, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		if _, ok := inTmp(home); ok {
			return nil, nil
		}
	}
	in, err := toolInput(p.ToolInput)
	if err != nil {
		return nil, nil // claudeCall reports it
	}
	var tmp string
	changed := false
	for _, f := range fields {
		s, present, err := in.str(f)
		if err != nil || !present {
			continue
		}
		rest, ok := inTmp(s)
		if !ok {
			continue
		}
		if tmp == "" {
			if tmp, err = m.SessionTmp(ctx, p.SessionID); err != nil {
				return nil, err
			}
			if tmp == "" {
				return nil, nil
			}
		}
		b, err := json.Marshal(tmp + rest)
		if err != nil {
			return nil, err
		}
		in[f], changed = b, true
	}
	if !changed {
		return nil, nil
	}
	out, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	p.ToolInput = out
	return out, nil
}
