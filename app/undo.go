package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/redact"
	"github.com/agentwarden/warden/sandbox"
	"github.com/agentwarden/warden/undo"
)

// sandboxGit runs the git commands of a snapshot inside the sandbox the
// command they save work for runs in (run), never on the host: git in a
// repository an agent controls can run code (core.fsmonitor, hooks,
// filters), and inside the sandbox that code is contained like the agent's
// own. env is the command's environment; the sandbox scrubs it as it
// scrubs the command's.
type sandboxGit struct {
	run func(context.Context, sandbox.Command) (sandbox.Result, error)
	env []string
}

var _ undo.Runner = sandboxGit{}

// maxGitOutput bounds what one git command of a snapshot may print.
const maxGitOutput = 1 << 20

func (g sandboxGit) Git(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	out := &capped{buf: &stdout, n: maxGitOutput}
	res, err := g.run(ctx, sandbox.Command{
		Args: append([]string{"git"}, args...), Dir: dir, Env: append(undo.CleanEnv(g.env), env...),
		Stdout: out, Stderr: &capped{buf: &stderr, n: 64 << 10},
	})
	var execErr *sandbox.ExecError
	switch {
	case errors.As(err, &execErr) && execErr.Err == syscall.ENOENT:
		return nil, fmt.Errorf("git is not installed in the sandbox")
	case err != nil:
		return nil, err
	case res.Limit != sandbox.LimitNone:
		return nil, fmt.Errorf("git %s was %s", args[len(args)-1], res.Limit.Describe(sandbox.Limits{}))
	case out.over:
		return nil, fmt.Errorf("git printed more than %d bytes", maxGitOutput)
	case res.ExitCode != 0:
		return stdout.Bytes(), &undo.GitError{Args: args, Exit: res.ExitCode, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

func (g sandboxGit) Remove(ctx context.Context, path string) error {
	res, err := g.run(ctx, sandbox.Command{Args: []string{"rm", "-f", "--", path}, Env: g.env})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("rm %s: exit status %d", path, res.ExitCode)
	}
	return err
}

func (g sandboxGit) Exists(ctx context.Context, path string) (bool, error) {
	res, err := g.run(ctx, sandbox.Command{Args: []string{"sh", "-c", `test -e "$1" || test -L "$1"`, "sh", path}, Env: g.env})
	if err != nil {
		return false, err
	}
	return res.ExitCode == 0, nil
}

// capped keeps the first n bytes written to it and notes that more came.
type capped struct {
	buf  *bytes.Buffer
	n    int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.n - c.buf.Len(); n > room {
		c.over = true
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return n, nil
}

// saveWork saves, before req's command runs, the uncommitted work of each
// git work tree its decision says the command discards (d.Snapshot), with
// git run by g inside the command's sandbox, and records each snapshot in
// the audit log under the command's trace id. Any failure is an error
// that keeps the command from running: work warden said it would save is
// never discarded unsaved.
func (a *App) saveWork(ctx context.Context, req *warden.Request, d warden.Decision, g sandboxGit) error {
	refuse := func(why string, err error) error {
		return warden.Errorf(warden.EUnavailable, "warden could not save the uncommitted work this command discards (%s), so it did not run", why).Wrap(err).
			WithHint("commit or stash the work first (`git stash -u`), or run the discard as a command of its own in the project")
	}
	if v := undo.PlaceVar(g.env); v != "" {
		return refuse("its environment sets "+v+", so the repository git acts on is not the one the guard saw", nil)
	}
	command := redact.String(req.Resource)
	saved := map[string]bool{}
	for _, dir := range d.Snapshot {
		repo, err := undo.Open(ctx, g, dir)
		if err != nil {
			return refuse(warden.UserMessage(err), err)
		}
		if saved[repo.Top] {
			continue
		}
		if rec, err := undo.RecursesSubmodules(ctx, g, repo); err != nil || rec {
			if err == nil {
				err = warden.Errorf(warden.EConflict, "%s has submodules and git recurses into them (submodule.recurse): their work is not in a snapshot", repo.Top)
			}
			return refuse(warden.UserMessage(err), err)
		}
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		now := a.Now()
		s, _, err := undo.Take(ctx, g, repo, undo.NewID(now, rnd), now, undo.Meta{Command: command, Session: req.Session, Trace: req.TraceID}, false)
		if err != nil {
			return refuse(warden.UserMessage(err), err)
		}
		saved[repo.Top] = true
		b, _ := json.Marshal(map[string]any{"repository": repo.Top, "snapshot": s.ID, "ref": s.Ref(), "commit": s.Commit, "command": command, "session": req.Session, "stashes": len(s.Stashes)})
		ev := &warden.SecurityEvent{ID: NewID(), TraceID: req.TraceID, CreatedAt: now, Type: warden.EventWorkSaved, Severity: warden.SevInfo}
		what := "the uncommitted work"
		if len(s.Stashes) > 0 {
			what += fmt.Sprintf(" and the %d stash entries", len(s.Stashes))
		}
		summary := fmt.Sprintf("saved %s of %s as snapshot %s before `%s` (warden undo %s brings it back)", what, repo.Top, s.ID, command, s.ID)
		if err := appendEvent(ctx, a.Store, ev, summary, b); err != nil {
			return refuse("the snapshot could not be recorded in the audit log", err)
		}
	}
	return nil
}

// mayWrite reports whether a command run under spec may write in tree
// (or in a directory of it): then the work a discard there throws away is
// saved before it runs. Where it may not (a read-only project), the
// discard cannot change the tree, and git could not save it there either.
// Every path spec makes writable counts, the profile's read_write and the
// tool caches too, and the host's /tmp under read_all (a sandbox that
// cannot have its mount namespace runs with it writable): when in doubt
// the work is saved, since a save that fails only refuses the command.
func mayWrite(spec sandbox.Spec, tree string) bool {
	if spec.Mode == sandbox.ModeOff {
		return true
	}
	writable := append([]string{spec.Workspace, spec.Tmp}, spec.ReadWrite...)
	if spec.ProjectWritable {
		writable = append(writable, spec.Project)
	}
	if spec.ReadAll {
		writable = append(writable, "/tmp")
	}
	for _, w := range writable {
		if w != "" && (within(tree, w) || within(w, tree)) {
			return true
		}
	}
	return false
}

// saveWorkOneShot saves the work a command discards that a human let run
// on the host ("run on host"): git runs in a workspace sandbox of its own,
// since warden runs no git on the host in a repository an agent controls.
func (a *App) saveWorkOneShot(ctx context.Context, r ExecRequest, req *warden.Request, d warden.Decision, dir string) error {
	if len(d.Snapshot) == 0 {
		return nil
	}
	spec, err := a.sandboxSpec(config.ProfileWorkspace, dir, ExecOverride{}, req, nil)
	if c, ok := spec.Egress.(io.Closer); ok {
		defer c.Close()
	}
	if err != nil {
		return err
	}
	eng, err := a.Engine()
	if err != nil {
		return err
	}
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	run := func(ctx context.Context, c sandbox.Command) (sandbox.Result, error) { return eng.Run(ctx, spec, c) }
	return a.saveWork(ctx, req, d, sandboxGit{run: run, env: env})
}
