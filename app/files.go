package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/fsguard"
	"github.com/agentwarden/warden/fstools"
)

// FileTools are warden's own file tools for agents (`warden fs`). Every call
// is decided by the gate, and audited, before it touches anything, and then
// runs through package fstools, so it cannot leave its root even if a path
// is swapped for a symlink between the decision and the open. The outcome
// (bytes, or the error) is recorded as an action_result event with the
// decision's trace id; file contents never are.
type FileTools struct {
	a     *App
	root  *fstools.Root
	guard *fsguard.Guard
	base  warden.Request
	// Wait, when set, makes an ask wait for a human's answer instead of
	// refusing the call at once.
	Wait *AskWait
}

// Refused is the error for a call the gate did not allow.
type Refused struct{ Decision warden.Decision }

func (r *Refused) Error() string {
	verb := "denied"
	if r.Decision.Verdict == warden.Ask {
		verb = "wants a human to approve"
	}
	return fmt.Sprintf("warden %s this: %s (rule %s)", verb, r.Decision.Reason, r.Decision.Rule)
}

// File tool names: their tiers come from the tools section of the policy.
const (
	toolReadFile   = "read_file"
	toolWriteFile  = "write_file"
	toolPatch      = "patch"
	toolDeleteFile = "delete_file"
)

// FileTools opens the file tools rooted at dir ("" for the workspace). base
// says who asks (session, requested_by, autonomous, context); its other
// fields are filled per call. Close the result.
func (a *App) FileTools(dir string, base warden.Request) (*FileTools, error) {
	guard, err := FilesystemGuard(a.Home, a.Policy)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the filesystem policy cannot be used: %v", err).
			WithHint("run `warden config validate` and fix the filesystem section")
	}
	if dir == "" {
		dir = Workspace(a.Home, a.Policy)
	}
	root, err := fstools.Open(dir, fstools.Limits{})
	if err != nil {
		return nil, err
	}
	base.Capability = warden.CapFilesystem
	if base.RequestedBy == "" {
		base.RequestedBy = "agent"
	}
	return &FileTools{a: a, root: root, guard: guard, base: base}, nil
}

// Close releases the root.
func (t *FileTools) Close() error { return t.root.Close() }

// Dir is the root directory.
func (t *FileTools) Dir() string { return t.root.Dir() }

// Limits are the size caps of the tools.
func (t *FileTools) Limits() fstools.Limits { return t.root.Limits() }

// Read returns a file's contents.
func (t *FileTools) Read(ctx context.Context, name string) ([]byte, error) {
	var data []byte
	err := t.do(ctx, toolReadFile, fsguard.Read, name, -1, "bytes", func() (int64, error) {
		var err error
		data, err = t.root.Read(name)
		return int64(len(data)), err
	})
	return data, err
}

// Write replaces a file's contents atomically.
func (t *FileTools) Write(ctx context.Context, name string, data []byte) error {
	return t.do(ctx, toolWriteFile, fsguard.Write, name, int64(len(data)), "bytes", func() (int64, error) {
		return int64(len(data)), t.root.Write(name, data, 0)
	})
}

// Append adds data at the end of a file, creating it if needed.
func (t *FileTools) Append(ctx context.Context, name string, data []byte) error {
	return t.do(ctx, toolWriteFile, fsguard.Write, name, int64(len(data)), "bytes", func() (int64, error) {
		return int64(len(data)), t.root.Append(name, data)
	})
}

// List returns one directory level.
func (t *FileTools) List(ctx context.Context, name string) ([]fstools.Entry, error) {
	var out []fstools.Entry
	err := t.do(ctx, toolReadFile, fsguard.List, name, -1, "entries", func() (int64, error) {
		var err error
		out, err = t.root.List(name)
		return int64(len(out)), err
	})
	return out, err
}

// Stat describes one entry without following a final symlink.
func (t *FileTools) Stat(ctx context.Context, name string) (fstools.Entry, error) {
	var out fstools.Entry
	err := t.do(ctx, toolReadFile, fsguard.List, name, -1, "", func() (int64, error) {
		var err error
		out, err = t.root.Stat(name)
		return 0, err
	})
	return out, err
}

// Delete removes a file, a symlink or an empty directory.
func (t *FileTools) Delete(ctx context.Context, name string) error {
	return t.do(ctx, toolDeleteFile, fsguard.Delete, name, -1, "", func() (int64, error) {
		return 0, t.root.Delete(name)
	})
}

// Mkdir creates a directory and its parents.
func (t *FileTools) Mkdir(ctx context.Context, name string) error {
	return t.do(ctx, toolWriteFile, fsguard.Write, name, -1, "", func() (int64, error) {
		return 0, t.root.Mkdir(name)
	})
}

// Patch applies a unified diff to one file, atomically.
func (t *FileTools) Patch(ctx context.Context, name string, diff []byte) (fstools.PatchResult, error) {
	var res fstools.PatchResult
	err := t.do(ctx, toolPatch, fsguard.Write, name, int64(len(diff)), "bytes", func() (int64, error) {
		var err error
		res, err = t.root.Patch(name, diff)
		return res.Size, err
	})
	return res, err
}

// Search greps below dir. The directory is decided as a read; every file and
// directory the walk reaches is judged again and left out unless the policy
// allows reading it, so a denied path inside dir is never searched.
func (t *FileTools) Search(ctx context.Context, dir string, re *regexp.Regexp) ([]fstools.Match, bool, error) {
	var (
		out       []fstools.Match
		truncated bool
	)
	skip := func(rel string, isDir bool) bool {
		action := fsguard.Read
		if isDir {
			action = fsguard.List
		}
		return t.guard.Decide(action, filepath.Join(t.root.Dir(), rel), "").Verdict != warden.Allow
	}
	err := t.do(ctx, toolReadFile, fsguard.Read, dir, -1, "matches", func() (int64, error) {
		var err error
		out, truncated, err = t.root.Search(dir, re, skip)
		return int64(len(out)), err
	})
	return out, truncated, err
}

// do decides one call through the gate and, when it is allowed, runs it and
// records its outcome. size is the bytes the call carries in (-1: none);
// run returns how many units (bytes, entries, matches; "" for none) it did.
func (t *FileTools) do(ctx context.Context, tool string, action fsguard.Action, name string, size int64, unit string, run func() (int64, error)) error {
	req := t.base
	req.Action = string(action)
	req.Tool = tool
	req.Resource = name
	if !filepath.IsAbs(name) && name != "" {
		// The path the tool will open, so the guard judges exactly that
		// ("~/x" too: the tools take it below the root, never as the home);
		// a name fstools would refuse is still decided and audited.
		req.Resource = t.root.Dir() + "/" + name
	}
	req.Cwd = t.root.Dir()
	if size >= 0 {
		req.Params = map[string]json.RawMessage{"bytes": json.RawMessage(strconv.FormatInt(size, 10))}
	}
	d, err := t.a.decide(ctx, &req, t.Wait)
	if err != nil {
		return err
	}
	if d.Verdict != warden.Allow {
		return &Refused{Decision: d}
	}
	n, runErr := run()
	if err := t.outcome(ctx, &req, tool, n, unit, runErr); err != nil && runErr == nil {
		return err
	}
	return runErr
}

// outcome records what an allowed call did: never the contents.
func (t *FileTools) outcome(ctx context.Context, req *warden.Request, tool string, n int64, unit string, runErr error) error {
	meta := map[string]any{"tool": tool, "action": req.Action, "path": req.Resource, "outcome": "ok"}
	summary := fmt.Sprintf("%s %s: ok", tool, req.Resource)
	sev := warden.SevInfo
	if unit != "" {
		meta[unit] = n
		summary = fmt.Sprintf("%s %s: %d %s", tool, req.Resource, n, unit)
	}
	if runErr != nil {
		sev = warden.SevWarn
		meta["outcome"] = "error"
		meta["error"] = warden.UserMessage(runErr)
		summary = fmt.Sprintf("%s %s failed: %s", tool, req.Resource, warden.UserMessage(runErr))
	}
	b, _ := json.Marshal(meta)
	ev := &warden.SecurityEvent{ID: NewID(), TraceID: req.TraceID, CreatedAt: t.a.Now(), Type: warden.EventActionResult, Severity: sev}
	return appendEvent(ctx, t.a.Store, ev, summary, b)
}
