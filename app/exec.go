package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/fsguard"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/hook"
	"github.com/agentwarden/warden/nestedgit"
	"github.com/agentwarden/warden/redact"
	"github.com/agentwarden/warden/sandbox"
)

// ExecRequest is one `warden exec`: a command, the profile to run it under,
// and the settings that override the profile's.
type ExecRequest struct {
	Args []string
	Dir  string // the project: the working directory ("" = the current one)
	// Profile names the profile; "" picks the decision's profile when the
	// gate sends the command to the sandbox, else "default".
	Profile string
	// Override holds settings given on the command line; nil fields keep
	// the profile's.
	Override ExecOverride
	// Base says who asks (session, requested_by, autonomous, context).
	Base warden.Request
	// Wait, when set, makes an ask wait for a human's answer instead of
	// refusing the command at once.
	Wait *AskWait
	// HostApproved says the agent host's user approved this very command
	// at the host's prompt (a hook put it there with the gate's ask): an
	// ask then runs, in the workspace profile, recorded as host_approved.
	// A deny still refuses.
	HostApproved bool
	// Approval is the approval a hook's decision of this very command was
	// granted by (a once grant it used up): an ask then runs, when that
	// approval is approved and bound to the same input and session, without
	// a second approval. Anything else decides as usual.
	Approval string
	// Env is the command's environment before the sandbox scrubs it; nil
	// is this process's own.
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// ExecOverride are the profile settings a caller may change for one run.
type ExecOverride struct {
	Mode                *string
	ReadWrite, ReadOnly []string
	Network             *string
	AllowDomains        []string
	Memory              *int64
	CPU, Timeout        *time.Duration
	Pids                *int
	NoSpawn             *bool
	OutputLimit         *int64
	FileSize            *int64
	Env                 []string
	Strict              *bool
	// Signer gives the command warden's signing endpoint on its loopback
	// (sandbox.SignerAddr), forwarded to the daemon that holds the key.
	Signer bool
}

// ExecResult is how a `warden exec` ended: the sandbox's result and the
// decision that let it run.
type ExecResult struct {
	sandbox.Result
	Decision warden.Decision
	Profile  string
	Limits   sandbox.Limits // the limits the command ran under
	// NoSpawnFailed says a command that starts others by its nature (a
	// shell, make, xargs) failed where no new process may start (the
	// guard profile): what failed is likely its fork.
	NoSpawnFailed bool
}

// startsOthers are programs whose work is starting other programs.
var startsOthers = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "make": true, "gmake": true, "xargs": true}

// Exec decides a command through the gate (capability shell, action exec)
// and, when the gate allows it or sends it to the sandbox, runs it under its
// profile's isolation. The run's outcome (exit status, the limit that killed
// it, the isolation it really had) is audited with the decision's trace id.
// A command the gate denies or wants a human to approve is a *Refused error.
func (a *App) Exec(ctx context.Context, r ExecRequest) (ExecResult, error) {
	early := a.startEarlySpec(&r)
	defer early.drop()
	req, d, dir, err := a.decideExec(ctx, r)
	if err != nil {
		return ExecResult{Decision: d}, err
	}
	if gate.HostGranted(&d) { // a human answered "run on host"
		if err := a.saveWorkOneShot(ctx, r, &req, d, dir); err != nil {
			_ = a.execOutcome(ctx, &req, warden.SandboxHost, sandbox.Result{}, sandbox.Limits{}, err)
			return ExecResult{Decision: d, Profile: warden.SandboxHost}, err
		}
		return a.execOnHost(ctx, r, &req, d, dir)
	}
	name := r.Profile
	if name == "" {
		name = config.ProfileWorkspace
		if d.Verdict == warden.Sandbox && d.Sandbox != "" {
			name = d.Sandbox
		}
	}
	spec, ok, err := early.take(name)
	if !ok {
		spec, err = a.sandboxSpec(name, dir, r.Override, &req, r.Wait)
	}
	if c, ok := spec.Egress.(io.Closer); ok {
		defer c.Close()
	}
	if err != nil {
		_ = a.execOutcome(ctx, &req, name, sandbox.Result{}, sandbox.Limits{}, err)
		return ExecResult{Decision: d, Profile: name}, err
	}
	eng, err := a.Engine()
	if err != nil {
		return ExecResult{Decision: d, Profile: name}, err
	}
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = pnpmStoreEnv(env, r.Args, spec)
	args := r.Args
	if spec.NoSpawn {
		// A version manager's shim forks, which this profile cannot.
		args = resolveShim(args, dir, env)
	}
	cmd := sandbox.Command{Args: args, Dir: dir, Env: env, Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr}
	world, inWorld := a.sessionWorld(name, dir, spec, &req, r.Override)
	protectedBefore := slices.Clone(spec.Protected)
	gitConfig := d.GitConfig && writableGitConfig(&spec)
	var besideBefore []string // the worktrees beside the project a removal may take
	if d.GitWorktrees {
		besideBefore = slices.DeleteFunc(nestedgit.Beside(spec.Project), func(w string) bool { return !slices.Contains(spec.ReadWrite, w) })
	}
	if d.GitWorktrees && writableWorktrees(&spec, d.GitConfig, d.RemovedWorktrees, a.Policy.Sandbox.ProtectedPaths) {
		// The worktree's git directory is a mount point in the session's
		// world: it can go only in a sandbox of its own.
		inWorld = false
	}
	// A worktree the line adds beside the project is made for it, and
	// writable in this run only: the session's world, started before it
	// existed, takes it in when it next starts (its spec changes).
	made := a.makeWorktrees(&spec, d.Worktrees)
	if len(made) > 0 {
		inWorld = false
	}
	if d.GitWorktrees && spec.ProjectWritable {
		// The line may remove the directory of a worktree beside the
		// project (one there, or one it adds), which git removes last,
		// emptied: empty directories there, and nothing else. Without
		// it git worktree remove fails after deleting the worktree (a
		// line with a test after it: agent-shapes-9).
		if spec.EmptyDirsIn = besideParents(&spec, made); len(spec.EmptyDirsIn) > 0 {
			inWorld = false
		}
	}
	defer func() {
		for _, d := range made {
			_ = os.Remove(d) // only where it is still empty
		}
	}()
	if gitConfig {
		// git commands that write the repository's configuration run in a
		// sandbox of their own, where it is writable; nothing of theirs is
		// left running after, so what they wrote is judged once, at the end.
		inWorld = false
	}
	// A run of no session that nothing above sends to a sandbox of its own
	// goes alone into the sandbox kept for one-shot runs here (oneshot.go).
	// Where none runs yet, this run has a sandbox of its own, and the kept
	// one is started once it is done, for the next, when this is not the
	// first run here lately (a single run starts nothing that outlives it).
	alone := false
	var warm func()
	var ws sandbox.Spec // the spec of the world the command runs in, and its key
	var key string
	if world == "" && !gitConfig && len(made) == 0 && len(spec.EmptyDirsIn) == 0 && !d.GitWorktrees {
		if w, ok := a.oneShotWorld(name, dir, spec, &req, r.Override); ok {
			if claim := a.claimWorld(w); claim != nil {
				defer claim.Close()
				ws, key, err = a.worldSpec(name, spec, true)
				switch {
				case err != nil:
				case a.Sandboxes().Ready(w, key):
					world, inWorld, alone = w, true, true
				case a.Supervises == w:
					// Run by the kept sandbox's own supervisor, which was
					// started under another spec (the policy changed): the
					// client runs it, and starts the sandbox anew.
					return ExecResult{Decision: d, Profile: name}, sandbox.ErrSelfRestart
				case a.Supervises == "" && a.oneShotAgain(w):
					warm = func() { _ = a.Sandboxes().Warm(context.WithoutCancel(ctx), w, key, ws) }
				}
			}
		}
	}
	if inWorld && !alone {
		spec.Session = req.Session
		if ws, key, err = a.worldSpec(name, spec, false); err != nil {
			_ = a.execOutcome(ctx, &req, name, sandbox.Result{}, spec.Limits, err)
			return ExecResult{Decision: d, Profile: name}, err
		}
	}

	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	var configBefore []byte // .git/config before a git line that may write it
	// run runs one command in the session's world, or in a sandbox of its
	// own: the work a command discards is saved by git run there first.
	run := func(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
		if inWorld {
			c.Alone = alone
			if cl, ok := spec.Egress.(io.Closer); ok {
				cl.Close() // the world's supervisor serves its own
			}
			res, err := a.runInWorld(ctx, world, ws, key, c)
			if !errors.Is(err, errNoWorld) {
				return res, err
			}
			// No world can start here (inside another sandbox that refuses
			// namespaces or Unix sockets: Codex's workspace-write): the
			// command runs in a sandbox of its own, as a one-shot run.
			inWorld = false
			if spec, err = a.sandboxSpec(name, dir, r.Override, &req, r.Wait); err != nil {
				return sandbox.Result{}, err
			}
			if c, ok := spec.Egress.(io.Closer); ok {
				closers = append(closers, c)
			}
		}
		// What must follow the command (the sweeps, the config's
		// take-back) is noted first, for when this process is killed with
		// it (pending.go); a snapshot's git runs before configBefore is
		// read, and its note has no take-back.
		a.endPending()
		a.beginPending(spec, gitConfig && configBefore != nil, configBefore)
		if req.Session != "" {
			// A one-shot run of the session can be held beside the
			// host's own file tools, as its world is (HoldSession).
			spec.Runs = a.sessionRuns(req.Session)
		}
		return eng.Run(ctx, spec, c)
	}
	// A git line replaces files the session's world keeps read-only (git
	// renames over .git/config; worktree remove deletes a pinned git
	// directory), which detaches the world's mounts of them: the world is
	// held meanwhile, so that nothing left running in it can open the new
	// file before it is read-only there again (Release).
	//
	// A command that runs in the world itself never holds it: it would
	// wait there for its own Release.
	held := (gitConfig || d.GitWorktrees) && world != "" && !inWorld && !alone
	if held {
		if err := a.Sandboxes().Hold(ctx, world); err != nil {
			_, _ = a.Sandboxes().Stop(context.WithoutCancel(ctx), world)
			held = false
		}
		defer func() {
			if held { // a return before the command ran
				_ = a.Sandboxes().Release(context.WithoutCancel(ctx), world)
			}
		}()
	}
	if slices.ContainsFunc(d.Snapshot, func(tree string) bool { return mayWrite(spec, tree) }) {
		if err := a.saveWork(ctx, &req, d, sandboxGit{run: run, env: env}); err != nil {
			_ = a.execOutcome(ctx, &req, name, sandbox.Result{}, spec.Limits, err)
			return ExecResult{Decision: d, Profile: name}, err
		}
	}
	if gitConfig {
		configBefore, _ = os.ReadFile(filepath.Join(spec.Project, ".git", "config"))
	}
	res, runErr := run(ctx, cmd)
	if warm != nil {
		warm()
	}
	res.Warnings = append(res.Warnings, spec.Notes...)
	res.Warnings = append(res.Warnings, a.finishWorktrees(spec, made)...)
	removedWorktrees(spec.Project, besideBefore)
	if gitConfig {
		res.Warnings = append(res.Warnings, a.takeBackGitConfig(spec, configBefore)...)
	}
	// The other protected paths this run could write (the worktrees'
	// beside the project) are fresh files too.
	res.Warnings = append(res.Warnings, freshenPaths(slices.DeleteFunc(protectedBefore, func(p string) bool {
		return slices.Contains(spec.Protected, p) || gitConfig && p == filepath.Join(spec.Project, ".git", "config")
	}))...)
	a.endPending()
	if held {
		// The world mounts what git replaced again (it also does when it
		// sees the change, and before each command), and goes on, before
		// this command is answered.
		held = false
		if err := a.Sandboxes().Release(context.WithoutCancel(ctx), world); err != nil {
			res.Warnings = append(res.Warnings, "the session's sandbox could not keep .git/config read-only again ("+err.Error()+"); it is stopped")
			_, _ = a.Sandboxes().Stop(context.WithoutCancel(ctx), world)
		}
	}
	out := ExecResult{Result: res, Decision: d, Profile: name, Limits: spec.Limits,
		NoSpawnFailed: spec.NoSpawn && res.ExitCode != 0 && len(args) > 0 && startsOthers[filepath.Base(args[0])]}
	if err := a.execOutcome(ctx, &req, name, res, spec.Limits, runErr); err != nil && runErr == nil {
		return out, err
	}
	var execErr *sandbox.ExecError
	if runErr != nil && !errors.As(runErr, &execErr) {
		runErr = warden.Errorf(warden.EUnavailable, "the sandbox could not run the command: %v", runErr).Wrap(runErr)
	}
	return out, runErr
}

// AskWait says how a one-shot command treats an ask: it opens an approval on
// Channel, tells Notify its id (to say where to answer it) and waits for a
// human's answer, until the approval expires or the context ends.
type AskWait struct {
	Channel string
	Notify  func(approvalID string)
}

// decide decides req through the gate. With w, an ask opens an approval and
// the decision is the one it ends in (the approved request decided again
// under the current policy; denied or expired, a deny); without, an ask is
// returned as it is.
func (a *App) decide(ctx context.Context, req *warden.Request, w *AskWait) (warden.Decision, error) {
	return decideWith(ctx, a.Gate, req, w)
}

// decideWith is decide through gate g.
func decideWith(ctx context.Context, g *gate.Gate, req *warden.Request, w *AskWait) (warden.Decision, error) {
	if w == nil {
		return g.Check(ctx, req)
	}
	d, err := g.CheckWith(ctx, req, gate.CheckOptions{Approval: w.Channel})
	if err != nil || d.Verdict != warden.Ask {
		return d, err
	}
	if w.Notify != nil {
		w.Notify(d.ApprovalID)
	}
	return g.Await(ctx, req, d)
}

// execGate is the gate a warden exec run is decided by: the home's, or,
// when the run's --allow-domain adds network rules, one whose network
// policy has them too, so that the shell guard judges the hosts a command
// names as the run's egress proxy will (one gate).
func (a *App) execGate(extraAllowed []string) *gate.Gate {
	if len(extraAllowed) == 0 {
		return a.Gate
	}
	p := *a.Policy
	p.Network.Allowed = append(slices.Clone(p.Network.Allowed), extraAllowed...)
	g := a.gateFor(&p, a.Problems, a.Store)
	g.Approvals = a.Queue
	return g
}

// decideExec decides a command through the gate as capability shell,
// action exec, in dir (the request's, or the current directory). A verdict
// other than allow or sandbox is a *Refused error.
func (a *App) decideExec(ctx context.Context, r ExecRequest) (warden.Request, warden.Decision, string, error) {
	if len(r.Args) == 0 {
		return warden.Request{}, warden.Decision{}, "", warden.Errorf(warden.EInvalid, "no command to run").WithHint("write it after --, like: warden exec -- make test")
	}
	dir := r.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return warden.Request{}, warden.Decision{}, "", warden.Errorf(warden.EInvalid, "find the current directory").Wrap(err)
		}
	}
	req := r.Base
	req.Capability, req.Action, req.Cwd = warden.CapShell, "exec", dir
	// Exec saves the work a command discards before running it (saveWork).
	req.Snapshots = true
	// The command's own environment, which decides what ${NAME:-word}
	// gives.
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	req.Unset = warden.UnsetIn(env)
	req.Resource = commandLine(r.Args)
	if r.Approval == "" && !r.HostApproved && len(r.Override.AllowDomains) == 0 {
		// The hook's decision of this very command, in the same supervisor.
		if d, ok := a.takeDecided(&req); ok {
			req.TraceID = d.TraceID
			return req, d, dir, nil
		}
	}
	g := a.execGate(r.Override.AllowDomains)
	wait := r.Wait
	if r.Approval != "" {
		wait = nil // no new approval unless the hook's does not cover the run
	}
	d, err := decideWith(ctx, g, &req, wait)
	if err != nil {
		return req, d, dir, err
	}
	if d.Verdict == warden.Ask && r.Approval != "" {
		covered, err := a.approvedRun(ctx, &req, r.Approval)
		if err != nil {
			return req, d, dir, err
		}
		if covered {
			return req, d, dir, nil
		}
		if r.Wait != nil {
			req.TraceID = "" // a decision of its own, which opens an approval
			if d, err = decideWith(ctx, g, &req, r.Wait); err != nil {
				return req, d, dir, err
			}
		}
	}
	if d.Verdict == warden.Ask && r.HostApproved {
		if err := a.hostApproved(ctx, &req); err != nil {
			return req, d, dir, err
		}
		return req, d, dir, nil
	}
	if d.Verdict != warden.Allow && d.Verdict != warden.Sandbox {
		return req, d, dir, &Refused{Decision: d}
	}
	return req, d, dir, nil
}

// approvedRunWindow bounds how long after a human's answer the run a hook
// rewrote the approved command into may rely on it.
const approvedRunWindow = time.Hour

// approvedRun reports whether approval id, which a hook's decision of this
// very command used, covers req's run: approved (not on the host, which
// runs unwrapped), for the same shell command in the same directory and
// session, answered within approvedRunWindow. The command is compared, not
// the whole input hash: a host's tool call carries presentation (Claude
// Code's description and timeout) that the run it became does not. The
// approval's request is stored redacted, and so is the command compared
// with it. It records that the run relies on it.
func (a *App) approvedRun(ctx context.Context, req *warden.Request, id string) (bool, error) {
	ap, err := a.Store.GetApproval(ctx, id)
	if warden.ErrorCodeOf(err) == warden.ENotFound {
		return false, nil
	}
	if err != nil {
		return false, warden.Errorf(warden.EUnavailable, "could not read approval %s, so the command is refused", id).Wrap(err)
	}
	switch {
	case ap.State != warden.ApprovalApproved, ap.Answer == warden.AnswerHost,
		ap.Request.Capability != warden.CapShell, ap.Request.Action != "exec",
		ap.Request.Resource != redact.String(req.Resource), ap.Request.Cwd != req.Cwd,
		ap.Request.Session != req.Session, a.Now().Sub(ap.AnsweredAt) > approvedRunWindow:
		return false, nil
	}
	b, _ := json.Marshal(map[string]string{"approval": id, "session": req.Session, "command": req.Resource})
	ev := &warden.SecurityEvent{
		ID: NewID(), TraceID: req.TraceID, CreatedAt: a.Now(), Type: warden.EventApprovedRun, Severity: warden.SevInfo,
	}
	return true, appendEvent(ctx, a.Store, ev, "approval "+id+", which the hook used for this command, covers its run in the sandbox", b)
}

// hostApproved records that the agent host's user approved req at the
// host's prompt, which is what lets its ask run.
func (a *App) hostApproved(ctx context.Context, req *warden.Request) error {
	b, _ := json.Marshal(map[string]string{"host": req.Host, "session": req.Session, "command": req.Resource})
	ev := &warden.SecurityEvent{
		ID: NewID(), TraceID: req.TraceID, CreatedAt: a.Now(), Type: warden.EventHostApproved, Severity: warden.SevInfo,
	}
	return appendEvent(ctx, a.Store, ev, "the user approved this command at the agent host's prompt; it runs in the workspace sandbox", b)
}

// sandboxSpec builds the isolation for one run from a profile and the
// caller's overrides.
//
// With network proxy the spec carries an egress proxy for the run, deciding
// for who (identity; nil is "sandbox"), whose asks wait as wait says (see
// Egress); the caller closes it.
func (a *App) sandboxSpec(name, dir string, o ExecOverride, who *warden.Request, wait *AskWait) (sandbox.Spec, error) {
	sp := a.Policy.Sandbox
	prof, ok := sp.Profiles[name]
	if !ok {
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range sp.Profiles {
				if !yield(n) {
					return
				}
			}
		})
		return sandbox.Spec{}, warden.Errorf(warden.EInvalid, "there is no sandbox profile %q", name).
			WithHint("use one of " + strings.Join(names, ", ") + ", or add it under sandbox.profiles in " + config.FileName)
	}
	modeName := prof.Mode
	if o.Mode != nil {
		modeName = *o.Mode
	}
	mode, err := sandbox.ParseMode(modeName)
	if err != nil {
		return sandbox.Spec{}, warden.Errorf(warden.EInvalid, "%v", err)
	}
	if mode == sandbox.ModeOff && !sp.UnsafeAllowOff {
		return sandbox.Spec{}, warden.Errorf(warden.EInvalid, "sandbox mode off runs the command with no isolation, and the policy does not allow it").
			WithHint("set sandbox.unsafe_allow_off: true in " + config.FileName + " if you really mean it")
	}
	home, _ := os.UserHomeDir()
	expand := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			if p == "~" || strings.HasPrefix(p, "~/") {
				p = filepath.Join(home, strings.TrimPrefix(p, "~"))
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	workspace := Workspace(a.Home, a.Policy)
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return sandbox.Spec{}, warden.Errorf(warden.EInvalid, "create the workspace %s", workspace).Wrap(err)
	}
	s := sandbox.Spec{
		Mode:         mode,
		Strict:       sp.Strict,
		Workspace:    workspace,
		ReadOnly:     expand(append(slices.Clone(prof.ReadOnly), o.ReadOnly...)),
		ReadWrite:    expand(append(slices.Clone(prof.ReadWrite), o.ReadWrite...)),
		AllowDomains: append(slices.Clone(prof.AllowDomains), o.AllowDomains...),
		NoSpawn:      prof.NoSpawn,
		PassEnv:      append(slices.Clone(prof.Env), o.Env...),
		Limits: sandbox.Limits{
			Memory: prof.Memory, CPU: prof.CPU, Wall: prof.Timeout, Pids: prof.Pids,
			Output: prof.OutputLimit, FileSize: prof.FileSize, Files: 1024,
		},
	}

	switch prof.Project {
	case "read":
		s.Project = dir
	case "write":
		s.Project, s.ProjectWritable = projectRoot(dir, home), true
	}
	if prof.MemoryShare > 0 {
		s.Limits.Memory = sandbox.MemoryShare(prof.MemoryShare)
	}
	if err := a.workspaceSpec(&s, prof, home, who); err != nil {
		return sandbox.Spec{}, err
	}
	s.Limits.Tmp, s.Limits.TmpShare = prof.TmpSize, prof.TmpShare
	network := prof.Network
	if o.Network != nil {
		network = *o.Network
	}
	if network == "proxy" {
		eg, env, readable, err := a.sandboxEgress(who, s.AllowDomains, wait)
		if err != nil {
			return sandbox.Spec{}, err
		}
		s.Net, s.Egress = sandbox.NetProxy, eg
		s.Env = append(s.Env, env...)
		s.ReadOnly = append(s.ReadOnly, readable...)
	} else if network != "none" {
		return sandbox.Spec{}, warden.Errorf(warden.EInvalid, "network %q is not one of none, proxy", network)
	}
	if o.Signer {
		sg, env, err := a.sandboxSigner()
		if err != nil {
			return sandbox.Spec{}, err
		}
		s.Signer = sg
		s.Env = append(s.Env, env...)
	}
	if o.Strict != nil && *o.Strict { // a flag can make a run stricter, never looser than the policy
		s.Strict = true
	}
	setIf(&s.NoSpawn, o.NoSpawn)
	setIf(&s.Limits.Memory, o.Memory)
	setIf(&s.Limits.CPU, o.CPU)
	setIf(&s.Limits.Wall, o.Timeout)
	setIf(&s.Limits.Pids, o.Pids)
	setIf(&s.Limits.Output, o.OutputLimit)
	setIf(&s.Limits.FileSize, o.FileSize)
	if !s.NoSpawn {
		// Where commands may create processes (real work), they keep the
		// caller's own limit on open files, which a tool may raise up to
		// the host's hard limit (ulimit -n 4096, a file watcher, a test
		// runner over a large tree): the memory and process caps bound
		// what they can hold. guard keeps 1024.
		s.Limits.Files = 0
	}
	// warden's own runtime directories exist before the masks are chosen,
	// so that one a later run creates (a session's control socket) is
	// never visible to a sandbox started before it.
	for _, d := range []string{RunDir, SessionsDir, QuarantineDir} {
		_ = os.MkdirAll(filepath.Join(a.Home.Abs(), d), 0o700)
	}
	makeSecretDirs(sp.SecretPaths, home)
	s.Hidden = hiddenPaths(a.Home, append(slices.Clone(a.Policy.Filesystem.Denied), sp.SecretPaths...), home)
	s.Redacted = redactedCopies(s.Hidden, home)
	// What appears in warden's home after this listing (a database file
	// SQLite made anew, a directory a daemon made at its first start)
	// stays unreadable too: the home is left out of the grant as a whole,
	// its sandbox directory (the workspace, the sessions' /tmp) granted by
	// name.
	s.Unreadable = []string{a.Home.Abs()}
	// Hard links to hidden files are searched for in the credential stores
	// of the home and warden's own, not in broad system trees (/var): those
	// cost milliseconds a run, and the system secrets are searched anyway.
	s.LinkRoots = []string{}
	for _, h := range s.Hidden {
		if home != "" && strings.HasPrefix(h, home+"/") || strings.HasPrefix(h, a.Home.Abs()+"/") {
			s.LinkRoots = append(s.LinkRoots, h)
		}
	}
	if err := s.Validate(); err != nil {
		return s, warden.Errorf(warden.EInvalid, "%v", err)
	}
	return s, nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// hiddenPaths are the concrete paths a sandboxed command must not read: the
// filesystem policy's denied paths, and everything in warden's home but
// the sandbox directory (its policy, database and keys).
// makeSecretDirs creates (mode 0700) each secret path written with a
// trailing slash that is missing in the user's home, so that it is masked
// from the start: a host service that later puts a socket or a file there
// (git credential-cache's daemon, started by the user's next push) stays
// out of reach of a sandbox started before it, such as a session's world.
func makeSecretDirs(secrets []string, userHome string) {
	if userHome == "" {
		return
	}
	for _, p := range secrets {
		if !strings.HasPrefix(p, "~/") || !strings.HasSuffix(p, "/") {
			continue
		}
		dir := filepath.Join(userHome, p[2:])
		if dir == userHome || !strings.HasPrefix(dir, userHome+"/") {
			continue
		}
		_ = os.MkdirAll(dir, 0o700)
	}
}

func hiddenPaths(home Home, denied []string, userHome string) []string {
	return hiddenPathsIn(home, denied, userHome, otherHomes(userHome))
}

// otherHomes are the homes of the machine's other users where the caller is
// root: its command runs as root and owns their credential stores, so each
// "~/…" denied or secret path is masked in each of them too (and in root's
// own home when $HOME names another directory): /root, each directory of
// /home, and the other homes /etc/passwd names. Nil for any other caller,
// whom their permissions keep out.
func otherHomes(userHome string) []string {
	if os.Geteuid() != 0 {
		return nil
	}
	mine := map[string]bool{filepath.Clean(userHome): true}
	if real, err := filepath.EvalSymlinks(userHome); err == nil {
		mine[real] = true
	}
	var homes []string
	add := func(h string) {
		if fi, err := os.Lstat(h); err == nil && fi.IsDir() && !mine[h] {
			homes = append(homes, h)
		}
	}
	add("/root")
	entries, _ := os.ReadDir("/home")
	for _, e := range entries {
		add(filepath.Join("/home", e.Name()))
	}
	// The homes /etc/passwd names elsewhere (a service's:
	// /var/lib/postgresql keeps its ~/.pgpass), but the system's own
	// directories.
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, ":")
			if len(f) < 7 || !filepath.IsAbs(f[5]) {
				continue
			}
			h := filepath.Clean(f[5])
			if h == "/" || slices.Contains(homes, h) || slices.ContainsFunc([]string{"/bin", "/sbin", "/usr", "/lib", "/dev", "/proc", "/sys", "/run", "/var/run", "/nonexistent", "/tmp"}, func(d string) bool { return h == d || strings.HasPrefix(h, d+"/") }) {
				continue
			}
			add(h)
		}
	}
	return homes
}

// hiddenPathsIn is hiddenPaths with the other homes given.
func hiddenPathsIn(home Home, denied []string, userHome string, others []string) []string {
	var out []string
	denied = slices.Clone(denied)
	entries, err := os.ReadDir(home.Abs())
	if err != nil {
		// Hide the whole home rather than guess what is in it; a workspace
		// inside it then refuses to run, which says why.
		out = append(out, home.Abs())
	}
	for _, e := range entries {
		if e.Name() != fsguard.SandboxDir {
			out = append(out, filepath.Join(home.Abs(), e.Name()))
		}
	}
	for _, h := range others {
		// One listing of the home says which stores can be there.
		names := map[string]bool{}
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			names[e.Name()] = true
		}
		for _, pat := range denied {
			rel, ok := strings.CutPrefix(pat, "~/")
			first, _, _ := strings.Cut(rel, "/")
			if ok && first != "" && (names[first] || strings.ContainsAny(first, "*?[{")) {
				denied = append(denied, filepath.Join(h, rel))
			}
		}
	}
	for _, pat := range denied {
		if pat == "~" || strings.HasPrefix(pat, "~/") {
			pat = filepath.Join(userHome, strings.TrimPrefix(pat, "~"))
		}
		for strings.HasSuffix(pat, "/**") {
			pat = strings.TrimSuffix(pat, "/**")
		}
		if !filepath.IsAbs(pat) {
			continue // "**/…" patterns match anywhere; the guard judges those per path
		}
		if !strings.ContainsAny(pat, "*?[{") {
			out = append(out, pat)
			continue
		}
		if strings.Contains(pat, "**") {
			continue
		}
		matches, _ := doublestar.FilepathGlob(pat)
		out = append(out, matches...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// commandLine is the shell command line argv runs: for `bash -c CMD` (how a
// hook wraps what an agent host runs) CMD itself, so that the decision, an
// approval's input hash and the audit row are those of the command the host
// asked about; otherwise argv quoted.
func commandLine(args []string) string {
	if len(args) == 3 && (args[0] == "bash" || args[0] == "/bin/bash") && args[1] == "-c" {
		return args[2]
	}
	return hook.CommandLine(args)
}

// execOutcome audits how a run ended: exit status, signal, the limit that
// killed it, the isolation it had and what it lacked. Never its output.
func (a *App) execOutcome(ctx context.Context, req *warden.Request, profile string, res sandbox.Result, lim sandbox.Limits, runErr error) error {
	meta := map[string]any{
		"tool": "exec", "command": req.Resource, "profile": profile, "mode": string(res.Mode),
		"exit_code": res.ExitCode, "wall_ms": res.Wall.Milliseconds(), "cpu_ms": res.CPU.Milliseconds(), "outcome": "ok",
	}
	summary := fmt.Sprintf("exec %s: exit %d", req.Resource, res.ExitCode)
	sev := warden.SevInfo
	if res.Signal != 0 {
		meta["signal"] = res.Signal
	}
	if len(res.Warnings) > 0 {
		meta["warnings"] = res.Warnings
		sev = warden.SevWarn
	}
	if res.Limit != sandbox.LimitNone {
		meta["limit"] = string(res.Limit)
		meta["outcome"] = "killed"
		summary = fmt.Sprintf("exec %s: %s", req.Resource, res.Limit.Describe(lim))
		sev = warden.SevWarn
	}
	if runErr != nil {
		meta["outcome"] = "error"
		meta["error"] = warden.UserMessage(runErr)
		summary = fmt.Sprintf("exec %s failed: %s", req.Resource, warden.UserMessage(runErr))
		sev = warden.SevWarn
	}
	b, _ := json.Marshal(meta)
	ev := &warden.SecurityEvent{ID: NewID(), TraceID: req.TraceID, CreatedAt: a.Now(), Type: warden.EventActionResult, Severity: sev}
	return appendEvent(ctx, a.Store, ev, summary, b)
}
