package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/sandbox"
)

// SessionsDir is the directory in warden's home that holds each session's
// /tmp. It is masked in every sandbox like the rest of the home; a
// session's own directory reaches its commands only as their /tmp.
const SessionsDir = "sessions"

// sessionIdle is how long a session's /tmp is kept after its last command
// when the host never says the session ended.
const sessionIdle = 24 * time.Hour

// sessionTmp returns the directory that is session's /tmp, creating it,
// and removes the /tmp of sessions idle for longer than sessionIdle.
func sessionTmp(home Home, session string, now time.Time) (string, error) {
	root := filepath.Join(home.Abs(), SessionsDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp := sessionTmpPath(home, session)
	dir := filepath.Dir(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o1777|os.ModeSticky); err != nil {
		return "", err
	}
	_ = os.Chtimes(dir, now, now)
	pruneSessions(root, dir, now)
	return tmp, nil
}

// sessionTmpPath is where session's /tmp is on the host (sessionTmp makes
// it).
func sessionTmpPath(home Home, session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(home.Abs(), SessionsDir, hex.EncodeToString(sum[:12]), "tmp")
}

// sessionTmps gives the filesystem guard each session's /tmp, where the
// session's allowed commands get one: the workspace profile keeps one per
// session and a sandbox can run here. nil otherwise (commands then use the
// host's /tmp).
func sessionTmps(home Home, p *config.Policy) func(string) string {
	prof, ok := p.Sandbox.Profiles[config.ProfileWorkspace]
	if !ok || !prof.SessionTmp || !p.Sandbox.Available() {
		return nil
	}
	return func(session string) string { return sessionTmpPath(home, session) }
}

// SessionTmp is the host's directory that is session's /tmp for its
// sandboxed commands, made if missing; "" where its commands get none
// (sessionTmps). The hooks lead the host's own file tools there for a path
// in /tmp, so that what a command wrote to /tmp is what a Read then sees.
func (a *App) SessionTmp(_ context.Context, session string) (string, error) {
	if session == "" || sessionTmps(a.Home, a.Policy) == nil {
		return "", nil
	}
	tmp, err := sessionTmp(a.Home, session, a.Now())
	if err != nil {
		return "", warden.Errorf(warden.EUnavailable, "prepare the session's /tmp").Wrap(err)
	}
	return tmp, nil
}

// pruneSessions removes the session directories under root, but keep, that
// have been idle for longer than sessionIdle.
func pruneSessions(root, keep string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if p == keep || !e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > sessionIdle {
			_ = os.RemoveAll(p)
		}
	}
}

// EndSession lets a session go when its host says it ended: its sandbox
// worlds stop (what they ran in the background with them) and its /tmp is
// removed.
func (a *App) EndSession(ctx context.Context, session string) error {
	if session == "" {
		return nil
	}
	mgr := a.Sandboxes()
	worlds, _ := mgr.List("session-")
	for _, w := range worlds {
		if w.Spec.Session == session {
			if err := mgr.Remove(ctx, w.Name); err != nil {
				return warden.Errorf(warden.EUnavailable, "stop the session's sandbox %s", w.Name).Wrap(err)
			}
		}
	}
	_ = os.RemoveAll(a.sessionRuns(session))
	sum := sha256.Sum256([]byte(session))
	return os.RemoveAll(filepath.Join(a.Home.Abs(), SessionsDir, hex.EncodeToString(sum[:12])))
}

// HoldSession holds the session's running sandbox worlds under lease for
// ttl (sandbox.Manager.HoldLease), and its one-shot runs under way
// (sandbox.HoldRuns, a command run in the background): their processes
// are stopped when it returns. What cannot be held fails the hold, and
// what was held for it is released. A mark in the home says that leases
// of the kind (the name up to its ":") were taken in the session, so that
// a release where none was asks nothing of the worlds.
func (a *App) HoldSession(ctx context.Context, session, lease string, ttl time.Duration) error {
	mgr := a.Sandboxes()
	worlds, err := a.sessionWorlds(session)
	if err != nil {
		return err
	}
	runs := a.sessionRuns(session)
	mark := a.holdMark(session, lease)
	_ = os.MkdirAll(filepath.Dir(mark), 0o700)
	_ = os.WriteFile(mark, nil, 0o600)
	undo := func(held []string) {
		for _, w := range held {
			_ = mgr.ReleaseLeases(context.WithoutCancel(ctx), w, false, lease)
		}
	}
	for i, w := range worlds {
		if err := mgr.HoldLease(ctx, w, lease, ttl); err != nil {
			undo(worlds[:i])
			return fmt.Errorf("hold the session's sandbox %s: %w", w, err)
		}
	}
	if err := sandbox.HoldRuns(runs, lease, ttl); err != nil {
		undo(worlds)
		return err
	}
	return nil
}

// ReleaseSession ends the leases named (with prefix, every lease whose
// name starts with one of them) in the session's running worlds and
// one-shot runs, where a lease of their kind was taken; a release by
// prefix that reached every world clears the mark.
func (a *App) ReleaseSession(ctx context.Context, session string, prefix bool, leases ...string) error {
	var marks []string
	for _, l := range leases {
		if mark := a.holdMark(session, l); !slices.Contains(marks, mark) {
			if _, err := os.Stat(mark); err == nil {
				marks = append(marks, mark)
			}
		}
	}
	if len(marks) == 0 {
		return nil
	}
	mgr := a.Sandboxes()
	first := sandbox.ReleaseRuns(a.sessionRuns(session), prefix, leases...)
	worlds, err := a.sessionWorlds(session)
	if first == nil {
		first = err
	}
	for _, w := range worlds {
		if err := mgr.ReleaseLeases(ctx, w, prefix, leases...); err != nil && first == nil {
			first = fmt.Errorf("release the session's sandbox %s: %w", w, err)
		}
	}
	if prefix && first == nil {
		for _, m := range marks {
			_ = os.Remove(m)
		}
	}
	return first
}

// sessionRuns is the directory where the session's one-shot runs register
// while they run (sandbox.Spec.Runs).
func (a *App) sessionRuns(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(a.Home.Abs(), RunDir, "runs-"+hex.EncodeToString(sum[:12]))
}

// sessionWorlds are the names of the session's running worlds; an error
// when they cannot be listed (a hold must not pass over one it missed).
func (a *App) sessionWorlds(session string) ([]string, error) {
	if session == "" {
		return nil, nil
	}
	worlds, err := a.Sandboxes().List("session-")
	if err != nil {
		return nil, fmt.Errorf("list the session's sandboxes: %w", err)
	}
	var out []string
	for _, w := range worlds {
		if w.Spec.Session == session && (w.State == sandbox.StateReady || w.State == sandbox.StateDegraded) {
			out = append(out, w.Name)
		}
	}
	return out, nil
}

// holdMark is the file whose presence says a lease of lease's kind (its
// name up to the first ":") was taken in session.
func (a *App) holdMark(session, lease string) string {
	kind, _, _ := strings.Cut(lease, ":")
	sum := sha256.Sum256([]byte(session + "\x00" + kind))
	return filepath.Join(a.Home.Abs(), RunDir, "held-"+hex.EncodeToString(sum[:12]))
}

// sessionIdleStop is how long a session's sandbox waits for its next
// command before it stops.
const sessionIdleStop = 15 * time.Minute

// sessionWorld returns the name of the long-lived sandbox that is the
// session's world, when this run belongs in one: a profile with read_all
// and session_tmp, a session, the native engine with namespaces, and nothing
// a long-lived sandbox cannot hold (a signer, network secrets with their
// per-run certificate authority). There a session's commands share their
// processes and loopback, as well as their /tmp: a dev server one command
// starts in the background answers the next.
func (a *App) sessionWorld(profile, dir string, spec sandbox.Spec, req *warden.Request, o ExecOverride) (string, bool) {
	if !a.Policy.Sandbox.Profiles[profile].SessionTmp || req.Session == "" || !a.worldCanHold(profile, spec, o) {
		return "", false
	}
	if spec.Project != "" {
		dir = spec.Project // the work tree: its subdirectories share one world
	}
	sum := sha256.Sum256([]byte(req.Session + "\x00" + dir + "\x00" + profile))
	world := "session-" + hex.EncodeToString(sum[:10])
	return world, !a.worldUnavailable(world)
}

// worldCanHold reports whether a long-lived sandbox can run what spec
// describes: a profile with read_all, the native engine with namespaces,
// and nothing a long-lived sandbox cannot hold (a signer, network secrets
// with their per-run certificate authority).
func (a *App) worldCanHold(profile string, spec sandbox.Spec, o ExecOverride) bool {
	if !a.Policy.Sandbox.Profiles[profile].ReadAll || o.Signer || spec.Signer != nil ||
		len(a.Policy.Network.Secrets) > 0 || !spec.Mode.Namespaces() {
		return false
	}
	e := a.Policy.Sandbox.Engine
	return e == "" || e == "auto" || e == "native"
}

// runInWorld runs cmd in the session's sandbox world (or the sandbox kept
// for one-shot runs), spec as worldSpec gives it, fingerprinted by key,
// starting it (or starting it anew, when the policy that shaped it
// changed) first.
func (a *App) runInWorld(ctx context.Context, world string, spec sandbox.Spec, key string, cmd sandbox.Command) (sandbox.Result, error) {
	mgr := a.Sandboxes()
	info, started, err := mgr.Ensure(ctx, world, key, spec)
	if err != nil && !errors.Is(err, sandbox.ErrSelfRestart) && ctx.Err() == nil {
		// Only a world whose supervisor gave up (it is stopped: inside
		// another sandbox that refuses namespaces or Unix sockets) makes
		// the session's next commands run one-shot without trying again;
		// one that was slow to come up on a loaded machine is tried again
		// by the next command, which finds it running.
		if info.State == sandbox.StateStopped {
			a.noWorldHere(world)
		}
		return sandbox.Result{}, fmt.Errorf("start the session's sandbox: %w (%w)", err, errNoWorld)
	}
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("start the session's sandbox: %w", err)
	}
	res, err := mgr.RunIn(ctx, info, cmd, sandbox.Limits{Wall: spec.Limits.Wall, Output: spec.Limits.Output})
	if !started && !cmd.Alone {
		// The world's standing warnings were said (and audited) with the
		// command that started it; every later command would repeat them
		// into the agent's output. What this command caused stays.
		res.Warnings = slices.DeleteFunc(res.Warnings, func(w string) bool { return slices.Contains(info.Warnings, w) })
	}
	return res, err
}

// worldSpec is spec as a world runs it (alone: a one-shot runs' world,
// oneShotWorld), and the key that tells whether a running world was started
// under it.
func (a *App) worldSpec(profile string, spec sandbox.Spec, alone bool) (sandbox.Spec, string, error) {
	spec.Egress = nil
	spec.Background, spec.Idle = true, sessionIdleStop
	if alone {
		spec.Background, spec.Idle = false, oneShotIdleStop
	}
	// The world's /tmp is the session's directory in warden's home
	// (spec.Tmp), the same as the session's one-shot runs get: a git line
	// run one-shot (it may write .git/config), a worktree it added there,
	// and a world started anew (a policy change, a new linked worktree)
	// all see what the session's commands wrote. It is on disk, like the
	// project; /dev/shm stays a tmpfs capped by the memory limit.
	// The world is the same while the policy that shaped it is: the files
	// in warden's home come and go (the database's journal) without that
	// mattering, since a new one there is never granted to the world.
	inHome := func(h string) bool { return filepath.Dir(h) == a.Home.Abs() }
	keyed := spec
	keyed.Hidden = slices.DeleteFunc(slices.Clone(spec.Hidden), inHome)
	keyed.LinkRoots = slices.DeleteFunc(slices.Clone(spec.LinkRoots), inHome)
	// A repository made inside the project (a test fixture's git init)
	// brings protected paths of its own, which the session's next
	// one-shot runs and next world keep: it does not start the world
	// anew, whose stop would sweep what git may run in it at once.
	keyed.Protected = slices.DeleteFunc(slices.Clone(spec.Protected), func(p string) bool { return inNestedRepository(spec.Project, p) })
	b, err := json.Marshal(keyed)
	if err != nil {
		return spec, "", err
	}
	sum := sha256.Sum256(b)
	return spec, profile + "@" + hex.EncodeToString(sum[:6]), nil
}

// errNoWorld says a session's world could not start; the command then runs
// in a one-shot sandbox.
var errNoWorld = errors.New("no session sandbox can start here")

// noWorldFor is how long, after a session's world could not start, its
// commands run one-shot without trying again.
const noWorldFor = 10 * time.Minute

// noWorldHere remembers that world could not start (a marker beside its run
// directory), so that the session's next commands do not try again.
func (a *App) noWorldHere(world string) {
	_ = os.WriteFile(filepath.Join(a.Home.Abs(), RunDir, world+".unavailable"), nil, 0o600)
}

// worldUnavailable reports whether world could not start within noWorldFor.
func (a *App) worldUnavailable(world string) bool {
	st, err := os.Stat(filepath.Join(a.Home.Abs(), RunDir, world+".unavailable"))
	return err == nil && a.Now().Sub(st.ModTime()) < noWorldFor
}

// worldEgress is the egress proxy of a session's sandbox world (or of a
// sandbox kept for one-shot runs), built in its supervisor: it decides for
// the session under the policy file as it is at each connection
// (livePolicy), and an ask waits for a human's answer as a one-shot run's
// would.
func (a *App) worldEgress(info sandbox.Info) (sandbox.Egress, error) {
	who := &warden.Request{Session: info.Spec.Session, RequestedBy: "agent"}
	if IsOneShotWorld(info.Name) {
		who.RequestedBy = "" // one-shot runs of nobody named (oneShotWorld)
	}
	p, err := a.Egress(who, info.Spec.AllowDomains, &AskWait{Channel: "exec"})
	if err != nil {
		return nil, err
	}
	g, _ := p.Gate.(*gate.Gate)
	guard, _ := p.Guard.(*netguard.Guard)
	if g == nil || guard == nil {
		return nil, errors.New("the egress proxy has no gate or guard of its own")
	}
	live := newLivePolicy(a, info.Spec.AllowDomains, g, guard)
	p.Gate, p.Guard = live, live
	return &sandboxEgress{Proxy: p}, nil
}

// PolicyStamp identifies the home's policy file as it is now (its
// modification time, size and inode): a different stamp means it changed.
// A process that keeps an opened home reopens it when the stamp moves.
func (h Home) PolicyStamp() (string, error) {
	st, err := stampOf(h.PolicyPath())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%d/%d", st.mod.UnixNano(), st.size, st.ino), nil
}

// inNestedRepository reports whether path lies in a repository nested in
// project: a directory below project, and above path, holds a .git.
func inNestedRepository(project, path string) bool {
	if project == "" {
		return false
	}
	for d := filepath.Dir(filepath.Clean(path)); d != project && strings.HasPrefix(d, project+"/"); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
	}
	return false
}
