package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/hook"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/sandbox"
)

// HookTimeout bounds one hook invocation, well under the hosts' own timeouts
// (Gemini CLI's is 60 s, the entry warden install writes; Claude Code's 600 s).
const HookTimeout = 45 * time.Second

// RunHook answers one agent-host hook payload from in, in the host's own
// protocol, and returns the exit status. It never fails open: when the home
// cannot be opened it still answers, blocking, in the host's protocol.
func RunHook(ctx context.Context, home Home, opt Options, host string, in io.Reader, out, errw io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, HookTimeout)
	defer cancel()
	return hook.Bounded(ctx, host, out, errw, func(out, errw io.Writer) int {
		a, err := Open(ctx, home, opt)
		if err != nil {
			return hook.Run(ctx, host, in, out, errw, failDecider{err}, nil)
		}
		defer a.Close()
		return runHookWith(ctx, a, host, in, out, errw)
	})
}

// RunHookWith is RunHook with a home already open (a session's supervisor
// answering warden-exec); it does not close it.
func RunHookWith(ctx context.Context, a *App, host string, in io.Reader, out, errw io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, HookTimeout)
	defer cancel()
	return hook.Bounded(ctx, host, out, errw, func(out, errw io.Writer) int {
		return runHookWith(ctx, a, host, in, out, errw)
	})
}

func runHookWith(ctx context.Context, a *App, host string, in io.Reader, out, errw io.Writer) int {
	return hook.Run(ctx, host, in, out, errw, hookGate{a.Gate, a}, func() hook.Runner { return sandboxRunner(a.Home, a.Policy) })
}

// hookGate is the gate as a hook's decider: hosts that cannot ask open (or
// join) an approval for an ask and retry once it is answered.
type hookGate struct {
	*gate.Gate
	app *App
}

// What the hooks ask of the app beyond a decision.
var (
	_ hook.Holder    = hookGate{}
	_ hook.TmpMapper = hookGate{}
	_ hook.Ender     = hookGate{}
)

func (g hookGate) CheckOpen(ctx context.Context, req *warden.Request, channel string) (warden.Decision, error) {
	d, err := g.CheckWith(ctx, req, gate.CheckOptions{Approval: channel, JoinPending: true})
	if err == nil {
		g.app.noteDecided(req, d)
	}
	return d, err
}

func (g hookGate) Ran(ctx context.Context, c hook.RanCall) error { return recordRan(ctx, g.Store, c) }

// Injection records a prompt injection the hook found in a tool's output.
func (g hookGate) Injection(ctx context.Context, f hook.InjectionFinding) error {
	b, _ := json.Marshal(map[string]any{"host": f.Host, "session": f.Session, "tool": f.Tool, "tool_use_id": f.ToolUseID,
		"score": f.Score, "categories": f.Categories, "excerpt": f.Excerpt, "withheld": f.Withheld})
	ev := &warden.SecurityEvent{ID: NewID(), TraceID: f.TraceID, CreatedAt: g.app.Now(), Type: warden.EventInjectionFound, Severity: warden.SevWarn}
	return appendEvent(ctx, g.Store, ev, fmt.Sprintf("a prompt injection in the output of %s (score %.2f)", f.Tool, f.Score), b)
}

// BlockScore is the policy's inject.blockScore: the injection score at
// which a tool's output is withheld where the host allows it.
func (g hookGate) BlockScore() float64 { return g.app.Policy.Inject.BlockScore }

// ScanRules is the policy's inject.rulesFile, "~" expanded.
func (g hookGate) ScanRules() string { return g.app.scanRules() }

func (g hookGate) EndSession(ctx context.Context, session string) error {
	return g.app.EndSession(ctx, session)
}

func (g hookGate) HoldSession(ctx context.Context, session, lease string, ttl time.Duration) error {
	return g.app.HoldSession(ctx, session, lease, ttl)
}

func (g hookGate) SessionTmp(ctx context.Context, session string) (string, error) {
	return g.app.SessionTmp(ctx, session)
}

func (g hookGate) ReleaseSession(ctx context.Context, session string, prefix bool, leases ...string) error {
	return g.app.ReleaseSession(ctx, session, prefix, leases...)
}

// recordRan records what a host's report that a call ran says about its
// decision: an ask the host put to its user was approved (info); a deny, or
// an ask the hook refused (hosts that cannot ask, a headless Claude Code),
// was run anyway (critical: the hook was bypassed or failed open); no
// decision at all (warn). A call warden allowed or sandboxed needs no
// record. The decision is the strongest verdict of the call's last
// c.Requests rows under its trace id (a trace a host's identical calls
// share holds every one of their decisions).
func recordRan(ctx context.Context, s warden.AuditStore, c hook.RanCall) error {
	es, err := s.Entries(ctx, warden.AuditFilter{TraceID: c.TraceID}) // in log order
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "could not read the decision of the call the host ran").Wrap(err)
	}
	n := max(c.Requests, 1)
	if len(es) > n {
		es = es[len(es)-n:]
	}
	ev := &warden.SecurityEvent{TraceID: c.TraceID}
	var verdict warden.Verdict
	for i, e := range es {
		if i == 0 || e.Verdict.Stronger(verdict) {
			verdict = e.Verdict
		}
	}
	switch {
	case len(es) == 0:
		ev.Type, ev.Severity = warden.EventHostRanUndecided, warden.SevWarn
		ev.Summary = fmt.Sprintf("%s ran %s without a warden decision", c.Host, c.Tool)
	case verdict == warden.Ask && c.Asked:
		ev.Type, ev.Severity = warden.EventHostApproved, warden.SevInfo
		ev.Summary = fmt.Sprintf("the user approved %s at %s's prompt, and it ran", c.Tool, c.Host)
	case verdict == warden.Ask:
		ev.Type, ev.Severity = warden.EventHostRanDenied, warden.SevCritical
		ev.Summary = fmt.Sprintf("%s ran %s although warden refused it until a human answers in warden", c.Host, c.Tool)
	case verdict == warden.Deny:
		ev.Type, ev.Severity = warden.EventHostRanDenied, warden.SevCritical
		ev.Summary = fmt.Sprintf("%s ran %s although warden denied it", c.Host, c.Tool)
	default:
		return nil
	}
	ev.Metadata, err = json.Marshal(map[string]string{"host": c.Host, "session": c.Session, "tool": c.Tool, "tool_use_id": c.ToolUseID})
	if err != nil {
		return err
	}
	if err := s.AppendEvent(ctx, ev); err != nil {
		return warden.Errorf(warden.EUnavailable, "could not record the call the host ran").Wrap(err)
	}
	return nil
}

// remoteHook decides through the daemon serving home. A request no daemon
// answered never left this process, so it is decided here instead, as
// RunHook would, which is as safe as the daemon would have been. The host's
// reports after a call ran are recorded in this process, in the same
// database (the store alone: no policy or pipeline is needed for that).
type remoteHook struct {
	*httpapi.Client
	home  Home
	local *App // opened for the first request no daemon answered
}

func (r *remoteHook) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	d, err := r.Client.Check(ctx, req)
	if !httpapi.Unreachable(err) {
		return d, err
	}
	a, err := r.app(ctx)
	if err != nil {
		return warden.Decision{}, err
	}
	return hookGate{a.Gate, a}.Check(ctx, req)
}

func (r *remoteHook) CheckOpen(ctx context.Context, req *warden.Request, channel string) (warden.Decision, error) {
	d, err := r.Client.CheckOpen(ctx, req, channel)
	if !httpapi.Unreachable(err) {
		return d, err
	}
	a, err := r.app(ctx)
	if err != nil {
		return warden.Decision{}, err
	}
	return hookGate{a.Gate, a}.CheckOpen(ctx, req, channel)
}

func (r *remoteHook) EndSession(ctx context.Context, session string) error {
	a, err := r.app(ctx)
	if err != nil {
		return err
	}
	return a.EndSession(ctx, session)
}

func (r *remoteHook) Ran(ctx context.Context, c hook.RanCall) error {
	if r.local != nil {
		return recordRan(ctx, r.local.Store, c)
	}
	s, err := OpenLogStore(ctx, r.home, "")
	if err != nil {
		return err
	}
	defer s.Close()
	return recordRan(ctx, s, c)
}

// app is this process's gate, opened on first use.
func (r *remoteHook) app(ctx context.Context) (*App, error) {
	if r.local == nil {
		a, err := Open(ctx, r.home, Options{})
		if err != nil {
			return nil, err
		}
		r.local = a
	}
	return r.local, nil
}

// policy is the policy the sandbox runner is chosen by: the local gate's,
// or the file as it is now.
func (r *remoteHook) policy() (*config.Policy, error) {
	if r.local != nil {
		return r.local.Policy, nil
	}
	p, _, err := r.home.LoadPolicy()
	return p, err
}

func (r *remoteHook) close() {
	if r.local != nil {
		r.local.Close()
	}
}

// RunHookRemote answers a hook payload through the daemon serving home, or,
// when no daemon answers on its socket, in this process as RunHook does. The
// daemon opens no approval for the asks of a host that asks itself; for a
// host that cannot, it opens (or joins) one the agent's user can answer.
func RunHookRemote(ctx context.Context, home Home, host string, in io.Reader, out, errw io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, HookTimeout)
	defer cancel()
	return hook.Bounded(ctx, host, out, errw, func(out, errw io.Writer) int {
		c := Dial(home)
		c.NoApproval = true
		r := &remoteHook{Client: c, home: home}
		defer r.close()
		return hook.Run(ctx, host, in, out, errw, r, func() hook.Runner {
			p, err := r.policy()
			if err != nil {
				return nil
			}
			return sandboxRunner(home, p)
		})
	})
}

// sandboxRunner is the `warden exec` command line a hook wraps every
// allowed or sandboxed shell command in: this very binary and home. Where no
// sandbox can run (the policy switches the sandbox off or names an engine
// that does not exist, or this kernel has no Landlock or seccomp to build
// one with) it is nil, so that those commands ask, or empty when the
// policy's sandbox.unsafe_host_when_unavailable runs them on the host.
func sandboxRunner(home Home, p *config.Policy) hook.Runner {
	unavailable := hook.Runner(nil)
	if p.Sandbox.UnsafeHostWhenUnavailable {
		unavailable = hook.Runner{}
	}
	if !p.Sandbox.Available() || sandbox.Supported() != nil {
		return unavailable
	}
	if e := p.Sandbox.Engine; e != "" && e != "auto" && e != "native" {
		return unavailable
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	runner := hook.Runner{exe, "--home", home.Abs(), "exec"}
	// warden-exec beside this binary hands the run to the session's
	// supervisor when one is up, and otherwise execs this binary.
	if fast := filepath.Join(filepath.Dir(exe), ExecClient); isExecutable(fast) {
		runner = append(hook.Runner{fast}, runner...)
	}
	return runner
}

// ExecClient is the name of the small program, installed beside warden,
// that a hook puts in front of `warden exec` (cmd/warden-exec).
const ExecClient = "warden-exec"

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// RunHookError answers a hook payload with a blocking failure, for callers
// that could not even find the home.
func RunHookError(ctx context.Context, host string, err error, in io.Reader, out, errw io.Writer) int {
	return hook.Run(ctx, host, in, out, errw, failDecider{err}, nil)
}

// failDecider denies through an error: the adapters turn it into the host's
// blocking answer.
type failDecider struct{ err error }

func (f failDecider) Check(context.Context, *warden.Request) (warden.Decision, error) {
	return warden.Decision{}, f.err
}

// Hook installation, passed through so the front end never imports the
// adapter itself.
type (
	HookScope         = hook.Scope
	HookInstallResult = hook.InstallResult
)

// Hook scopes.
const (
	HookProject = hook.Project
	HookUser    = hook.User
)

// HookHosts lists the agent hosts warden can hook into.
func HookHosts() []string { return hook.HostNames() }

// InstallHook merges warden's hook into a host's settings file, deciding
// with home: the hook command names it unless it is the default, ~/.warden
// (homeDir/.warden), so that the host's environment cannot point the hook at
// another home. With warden-exec beside wardenPath, the command starts with
// it, so a session's hooks are answered by its supervisor when it runs.
func InstallHook(host string, scope HookScope, projectDir, homeDir, wardenPath string, home Home) (HookInstallResult, error) {
	client := filepath.Join(filepath.Dir(wardenPath), ExecClient)
	if !isExecutable(client) {
		client = ""
	}
	return InstallHookWith(host, scope, projectDir, homeDir, HookBinaries{Warden: wardenPath, Client: client}, home)
}

// InstallHookWith is InstallHook with the programs the hook starts chosen
// by the caller (HookBinariesFor).
func InstallHookWith(host string, scope HookScope, projectDir, homeDir string, bin HookBinaries, home Home) (HookInstallResult, error) {
	return hook.InstallFast(host, scope, projectDir, homeDir, bin.Client, bin.Warden, HookHomeArg(home, homeDir))
}

// HookHomeArg is the home a hook command names with --home: "" for the
// default, ~/.warden (homeDir/.warden), else home as an absolute path.
func HookHomeArg(home Home, homeDir string) string {
	if named := home.Abs(); named != filepath.Join(homeDir, ".warden") {
		return named
	}
	return ""
}

// UninstallHook removes exactly the hook entries InstallHook added.
func UninstallHook(host string, scope HookScope, projectDir, homeDir string) (HookInstallResult, error) {
	return hook.Uninstall(host, scope, projectDir, homeDir)
}

// HostContainment says, for each agent host, whether warden's hook is
// installed for it (in the project's or the user's settings) and whether the
// shell commands it allows run contained in a sandbox.
type HostContainment struct {
	Host      string `json:"host"`
	Installed string `json:"installed,omitempty"` // the settings file, when installed
	Contained bool   `json:"contained"`
	Why       string `json:"why"`
}

// Containment reports HostContainment for every host, under policy p.
func Containment(p *config.Policy, projectDir, homeDir string) []HostContainment {
	sandboxErr := sandbox.Supported()
	var out []HostContainment
	for _, h := range hook.HostNames() {
		c := HostContainment{Host: h}
		for _, scope := range []hook.Scope{hook.Project, hook.User} {
			if ok, path := hook.Installed(h, scope, projectDir, homeDir); ok && c.Installed == "" {
				c.Installed = path
			}
		}
		switch {
		case !hook.Rewrites(h):
			c.Why = h + " cannot rewrite a command, so the commands warden allows run on the host without a sandbox (weaker than the other hosts); sandbox verdicts ask"
		case sandboxErr != nil:
			c.Why = "no sandbox can run here (" + sandboxErr.Error() + "), so allowed commands ask"
			if p.Sandbox.UnsafeHostWhenUnavailable {
				c.Why = "no sandbox can run here (" + sandboxErr.Error() + "), and sandbox.unsafe_host_when_unavailable runs allowed commands on the host"
			}
		case !p.Sandbox.Available():
			c.Why = "sandbox.mode is off, so allowed commands ask"
			if p.Sandbox.UnsafeHostWhenUnavailable {
				c.Why = "sandbox.mode is off, and sandbox.unsafe_host_when_unavailable runs allowed commands on the host"
			}
		default:
			c.Contained = true
			c.Why = "allowed commands run in the workspace sandbox, suspicious ones in guard"
		}
		out = append(out, c)
	}
	return out
}

// HookRewrites reports whether host can run a rewritten command, which is
// how warden contains the commands it allows.
func HookRewrites(host string) bool { return hook.Rewrites(host) }
