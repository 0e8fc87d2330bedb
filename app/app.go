// Package app wires warden together: it reads the policy file, opens the store,
// builds the pipeline from the policy, and hands out the Gate. It is the only
// package besides cmd/warden that imports concrete adapters (sqlite).
package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/fsguard"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/internal/clip"
	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/pipeline"
	"github.com/agentwarden/warden/redact"
	"github.com/agentwarden/warden/safety"
	"github.com/agentwarden/warden/sandbox"
	"github.com/agentwarden/warden/shellguard"
	"github.com/agentwarden/warden/sqlite"
	"github.com/agentwarden/warden/tools"
)

// File names inside a warden home.
const (
	PolicyFile   = "warden.yaml"
	DatabaseFile = "warden.db"
)

// Home is a warden home directory.
type Home string

// DefaultHome returns $WARDEN_HOME, or ~/.warden.
func DefaultHome() (Home, error) {
	if h := os.Getenv("WARDEN_HOME"); h != "" {
		return Home(h), nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", warden.Errorf(warden.EInvalid, "cannot find your home directory").Wrap(err).WithHint("set WARDEN_HOME or pass --home")
	}
	return Home(filepath.Join(dir, ".warden")), nil
}

// Abs is the home as an absolute path (as given when it cannot be made one).
func (h Home) Abs() string {
	if abs, err := filepath.Abs(string(h)); err == nil {
		return abs
	}
	return string(h)
}

// PolicyPath is the policy file's path.
func (h Home) PolicyPath() string { return filepath.Join(string(h), PolicyFile) }

// DatabasePath is the database's path.
func (h Home) DatabasePath() string { return filepath.Join(string(h), DatabaseFile) }

// PolicyCachePath is where the checked policy is cached (config.LoadCached).
func (h Home) PolicyCachePath() string { return filepath.Join(string(h), "cache", "policy.json") }

// LoadPolicy reads the home's policy file and its problems, through the
// policy cache.
func (h Home) LoadPolicy() (*config.Policy, []config.Problem, error) {
	return config.LoadCached(h.PolicyPath(), h.PolicyCachePath())
}

// App is an opened warden home: policy, store and gate. Close it.
type App struct {
	Home     Home
	Policy   *config.Policy
	Problems []config.Problem
	Store    Store
	Gate     *gate.Gate
	// Queue holds approvals: asks waiting for a human, and remembered answers.
	Queue *approval.Queue
	Log   *slog.Logger
	Now   func() time.Time
	// Supervises names the long-lived sandbox whose supervisor this
	// process is ("" for none): a command it runs for a client never
	// restarts that sandbox (sandbox.ErrSelfRestart).
	Supervises string
	// decided holds a supervisor's hook decisions for the runs they become.
	decided decidedRuns
	// pending is the note of the one-shot run this process has going
	// (pending.go), nil for none.
	pending *pendingRun

	tradeOnce  sync.Once
	backend    finance.Backend
	backendErr error
}

// Options adjust Open; the zero value is the normal setup.
type Options struct {
	Log *slog.Logger     // warnings go here; nil discards them
	Now func() time.Time // nil is time.Now
	// OpenDatabase opens the database at once, for a long-lived process: its
	// decisions then go straight into the chain, concurrent ones sharing a
	// transaction (group commit). Without it, a one-shot process spools.
	OpenDatabase bool
	// Prompt asks the operator for a secret on the daemon's terminal (the
	// signing key's passphrase); nil means there is no terminal.
	Prompt func(msg string) ([]byte, error)
	// Store, when set, is a fleet's postgres:// URL (`--store`), which
	// overrides the policy's store.dsn; "" keeps the policy's choice.
	Store string
}

// Open loads the home's policy and opens its database. Problems in the policy
// file are logged as warnings and audited as config_invalid security events;
// the sections they affect run on their defaults.
func Open(ctx context.Context, home Home, opt Options) (*App, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	policy, problems, err := home.LoadPolicy()
	if err != nil {
		return nil, err
	}
	// SQLite, deferred: a plain decision is spooled durably without opening
	// SQLite; anything that needs the database opens it (and drains the
	// spool) then. Or the fleet's PostgreSQL database the policy names.
	store, err := openHomeStore(ctx, home, policy, opt.Store, opt.OpenDatabase)
	if err != nil {
		return nil, err
	}
	a := &App{Home: home, Policy: policy, Problems: problems, Store: store, Log: opt.Log, Now: opt.Now}
	if err := reportProblems(ctx, a.Log, a.Store, home, a.Now(), a.Problems); err != nil {
		store.Close()
		return nil, err
	}
	a.Gate = a.buildGate()
	// What a killed warden was to do after its command, done now.
	if ws := a.recoverPending(); len(ws) > 0 {
		a.Log.Warn("after a command whose warden was killed", "warnings", ws)
	}
	return a, nil
}

// OpenStore opens the home's database. It never creates one: only
// `warden init` (InitHome) and `warden audit recover` (RecoverAudit) do. A
// database that is missing, or is not what the home's chain anchor
// recorded, is refused with a *warden.Error saying what is missing.
func OpenStore(ctx context.Context, home Home) (*sqlite.Store, error) {
	return openStore(ctx, home, sqlite.Options{})
}

// Close releases the database.
func (a *App) Close() error { return a.Store.Close() }

// NewID returns a fresh trace id (a time-ordered UUID).
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// Pipeline builds the pipeline for a policy: the global stages in their fixed
// order, then each capability's own. Capabilities without stages yet are denied
// by the pipeline ("no policy for capability X").
//
// Each capability's stages are compiled on its first request (a one-shot
// process compiles only what its request needs), and the filesystem guard
// once for both the filesystem stage and the shell guard's path operands.
func Pipeline(home Home, p *config.Policy, problems []config.Problem, store Store, now func() time.Time) *pipeline.Pipeline {
	resolver := tools.NewResolver(p.Tools)
	files := sync.OnceValues(func() (*fsguard.Guard, error) { return FilesystemGuard(home, p) })
	var integrity safety.PolicyIntegrity
	for _, pr := range problems {
		if pr.Section == "safety" {
			integrity.SafetyProblem = redact.String(pr.Error())
			break
		}
	}
	return pipeline.New(pipeline.Config{
		Global: safety.Stages(
			integrity,
			safety.KillSwitch{Active: p.Safety.KillSwitch, Engaged: killEngaged(home, store), Unread: killUnread(home, store), ExitsDeny: p.StopLoss.KillSwitchExits == "deny"},
			safety.SpendCap{Cap: p.Safety.DailySpendCap, Ledger: store, Now: now},
			safety.TxMax{Max: p.Safety.MaxTransaction},
			safety.TierGate{Autopilot: p.Safety.Autopilot},
		),
		Capabilities: map[string][]warden.Stage{
			warden.CapTool: {tools.Stage{Autopilot: p.Safety.Autopilot, Denied: p.Tools.Denied}},
		},
		Lazy: map[string]func() []warden.Stage{
			warden.CapShell: func() []warden.Stage {
				sp := ShellPolicy(p, lazyPaths{files})
				sp.Network = shellNetworkWith(p, func(np netguard.Policy) (*netguard.Guard, error) {
					return netguard.NewCached(np, home.NetguardCachePath(), config.BinaryID())
				})
				return []warden.Stage{shellguard.Stage{Policy: sp, Project: projectLayer}}
			},
			warden.CapFilesystem: func() []warden.Stage {
				g, err := files()
				return []warden.Stage{fsguard.Stage{Guard: g, Err: err, SessionTmp: sessionTmps(home, p), GitNamed: gitNamedPath}}
			},
			warden.CapNetwork: func() []warden.Stage { return []warden.Stage{netStage(home, p, now)} },
			warden.CapTrade: func() []warden.Stage {
				return RiskManager(home, p, backendOrFailed(home, p, store, now)).Stages()
			},
			warden.CapSign: func() []warden.Stage { return signingStages(home, p, store, now) },
		},
		Tier:      resolver.Tier,
		NoSandbox: !p.Sandbox.Available(),
	})
}

// netStage is the network guard for a home's policy, its domain rules
// through the compiled-rules cache in the home (NetguardCachePath). Its rate
// limiter counts the requests of this process: the egress proxy's, or later
// the daemon's.
func netStage(home Home, p *config.Policy, now func() time.Time) netguard.Stage {
	g, err := NetworkGuard(home, p)
	return netguard.Stage{Guard: g, Err: err, Limiter: netguard.NewLimiter(p.Network.Limits()), Now: now}
}

// NetguardCachePath is where the network guard's compiled domain rules are
// cached (netguard.NewCached), beside the policy's cache.
func (h Home) NetguardCachePath() string { return filepath.Join(string(h), "cache", "netguard") }

// NetworkGuard compiles the network guard for a home's policy, through the
// compiled-rules cache in the home.
func NetworkGuard(home Home, p *config.Policy) (*netguard.Guard, error) {
	return netguard.NewCached(p.Network.Guard(), home.NetguardCachePath(), config.BinaryID())
}

// ShellPolicy is the shell guard's policy from the policy file; paths, when
// not nil, gives it the filesystem policy's denied paths.
func ShellPolicy(p *config.Policy, paths shellguard.PathGuard) shellguard.Policy {
	sp := shellguard.DefaultPolicy()
	// What the guard leaves to a sandbox to hold needs one that runs
	// here: without one (no Landlock), a policy that runs commands on the
	// host instead (unsafe_host_when_unavailable) has them judged as host
	// commands.
	sp.SandboxAvailable = p.Sandbox.Available() && sandbox.Supported() == nil
	sp.Protected = p.Sandbox.ProtectedPaths
	sp.Caches = p.Sandbox.CachePaths
	sp.AllowTaskRunners = p.Shell.AllowTaskRunners
	sp.Safe, sp.Suspicious, sp.Destructive, sp.Host = p.Shell.Safe, p.Shell.Suspicious, p.Shell.Destructive, p.Shell.Host
	for _, r := range p.Shell.Replacements {
		sp.Replacements = append(sp.Replacements, shellguard.Replacement{From: r.From, To: r.To})
	}
	sp.Home, _ = os.UserHomeDir()
	sp.Tmp = os.TempDir()
	sp.Paths = paths
	sp.Network = shellNetwork(p)
	return sp
}

// shellNetwork is the shell guard's way to the network policy: a URL or
// HOST:PORT a command names gets the decision `warden check network fetch`
// (or connect) gives it, from the same guard the egress proxy uses. The
// guard is compiled on first use, so a command naming no host never pays
// for it; rate limits are the proxy's, which counts real connections.
func shellNetwork(p *config.Policy) func(target, method string) warden.Decision {
	return shellNetworkWith(p, netguard.New)
}

// shellNetworkWith is shellNetwork with the network guard compiled by
// compile (netguard.New, or NewCached through a home's cache).
func shellNetworkWith(p *config.Policy, compile func(netguard.Policy) (*netguard.Guard, error)) func(target, method string) warden.Decision {
	np := p.Network.Guard() // the section as it is now, whatever later happens to p
	contained := p.Sandbox.Available() && sandbox.Supported() == nil
	stage := sync.OnceValue(func() netguard.Stage {
		g, err := compile(np)
		return netguard.Stage{Guard: g, Err: err}
	})
	// The sandbox's own loopback, judged by the deny rules alone: compiled
	// only for a loopback target, not beside every guard read from the
	// cache (it compiles the deny rules again).
	loopback := sync.OnceValue(func() netguard.Stage {
		g, err := netguard.New(netguard.Policy{Denied: np.Denied, AllowPrivate: []string{"127.0.0.0/8"}, AskUnknown: true})
		return netguard.Stage{Guard: g, Err: err}
	})
	return func(target, method string) warden.Decision {
		req := &warden.Request{Capability: warden.CapNetwork, Action: netguard.ActionConnect, Resource: target}
		if method != "" {
			req.Action = netguard.ActionFetch
			m, _ := json.Marshal(method)
			req.Params = map[string]json.RawMessage{netguard.ParamMethod: m}
		}
		d, err := stage().Check(context.Background(), req)
		if err != nil {
			return warden.Denyf("network.internal", "the network guard could not judge "+target+": "+err.Error())
		}
		if (d.Rule == "network.private_address" || d.Rule == "network.unknown_domain") && contained && sandboxLoopback(target) {
			// What the command reaches there is what the agent started in
			// its own sandbox; the host's loopback is only behind the egress
			// proxy, which judges it again. Only the policy's private-address
			// and unknown-host answers give way: a deny rule the user wrote,
			// or a network policy that could not be built, stands.
			ld, err := loopback().Check(context.Background(), req)
			switch {
			case err != nil:
				return d
			case ld.Verdict == warden.Deny && ld.Rule != "network.unknown_domain":
				return ld // the user's deny rule
			}
			return warden.Allowf("shell.network.sandbox_loopback", target+" is the sandbox's own loopback: the command runs in a network namespace of its own")
		}
		return d
	}
}

// sandboxLoopback reports whether target (a URL or HOST:PORT) is a loopback
// address or name: inside a sandbox that is the sandbox's own loopback,
// never the host's.
func sandboxLoopback(target string) bool {
	t, err := netguard.ParseURL(target)
	if err != nil {
		if t, err = netguard.ParseAuthority(target); err != nil {
			return false
		}
	}
	if t.IsAddr() {
		return netguard.NormalizeIP(t.Addr).IsLoopback()
	}
	return netguard.IsLoopbackHost(t.Host)
}

// shellPaths is what the shell guard judges path operands with: the
// filesystem guard, or, when it could not be built, a stand-in that denies
// every path, so that the shell guard never runs without the denied paths.
func shellPaths(files *fsguard.Guard, err error) shellguard.PathGuard {
	if files != nil {
		return files
	}
	return unjudgeablePaths{err}
}

// lazyPaths is the shell guard's path judge, compiling the filesystem guard
// on the first path operand it is asked about: a command that names no path
// never pays for the filesystem policy.
type lazyPaths struct {
	files func() (*fsguard.Guard, error)
}

func (l lazyPaths) guard() shellguard.PathGuard { return shellPaths(l.files()) }

func (l lazyPaths) Denied(p, cwd string) (warden.Decision, bool) { return l.guard().Denied(p, cwd) }

func (l lazyPaths) DeniedToRead(p, cwd string) (warden.Decision, bool) {
	return l.guard().DeniedToRead(p, cwd)
}

func (l lazyPaths) DeniedWithin(p, cwd string) (warden.Decision, bool) {
	return l.guard().DeniedWithin(p, cwd)
}

type unjudgeablePaths struct{ err error }

func (u unjudgeablePaths) Denied(string, string) (warden.Decision, bool) {
	return warden.Denyf("fs.no_policy", fmt.Sprintf("the filesystem policy is not available (%v), so no path can be judged; fix the filesystem section of the policy file", u.err)), true
}

func (u unjudgeablePaths) DeniedToRead(p, cwd string) (warden.Decision, bool) {
	return u.Denied(p, cwd)
}

func (u unjudgeablePaths) DeniedWithin(p, cwd string) (warden.Decision, bool) {
	return u.Denied(p, cwd)
}

// Workspace is the directory the policy gives agents full access to: the
// filesystem section's workspace, or the home's sandbox/files.
func Workspace(home Home, p *config.Policy) string {
	if w := p.Filesystem.Workspace; w != "" {
		if w == "~" || strings.HasPrefix(w, "~/") {
			if u, err := os.UserHomeDir(); err == nil {
				return filepath.Join(u, w[1:])
			}
		}
		return w
	}
	return filepath.Join(home.Abs(), fsguard.SandboxDir, "files")
}

// FsguardCachePath is where the filesystem guard's compiled rules are cached
// (fsguard.NewCached), beside the policy's cache.
func (h Home) FsguardCachePath() string { return filepath.Join(string(h), "cache", "fsguard") }

// FilesystemGuard compiles the filesystem guard for a home's policy, through
// the compiled-rules cache in the home.
func FilesystemGuard(home Home, p *config.Policy) (*fsguard.Guard, error) {
	userHome, _ := os.UserHomeDir()
	fp := fsguard.Policy{
		Workspace:  Workspace(home, p),
		Denied:     append(slices.Clone(p.Filesystem.Denied), secretPatterns(p.Sandbox.SecretPaths)...),
		WardenHome: home.Abs(),
		UserHome:   userHome,
		Protected:  p.Sandbox.ProtectedPaths,
	}
	if prof, ok := p.Sandbox.Profiles[config.ProfileWorkspace]; ok && prof.ReadAll && p.Sandbox.Available() {
		// What the agent's commands read there, its file tools read
		// too: a module's sources after go get, ~/.gitconfig.
		fp.Caches = p.Sandbox.CachePaths
		fp.ReadHome = true
	}
	// One backing array for every rule's actions (a policy may have
	// thousands of rules); each rule's slice is capped.
	n := 0
	for _, a := range p.Filesystem.Allowed {
		n += len(a.Actions)
	}
	acts := make([]fsguard.Action, 0, n)
	fp.Allowed = make([]fsguard.Rule, 0, len(p.Filesystem.Allowed))
	for _, a := range p.Filesystem.Allowed {
		r := fsguard.Rule{Pattern: a.Pattern, Level: fsguard.Ask}
		if a.Auto {
			r.Level = fsguard.Auto
		}
		start := len(acts)
		for _, act := range a.Actions {
			acts = append(acts, fsguard.Action(act))
		}
		r.Actions = acts[start:len(acts):len(acts)]
		fp.Allowed = append(fp.Allowed, r)
	}
	return fsguard.NewCached(fp, home.FsguardCachePath(), config.BinaryID())
}

// secretPatterns are the denied-path patterns of sandbox.secret_paths: each
// path (a glob, as a denied path is) and everything below it. What every
// sandbox masks (the credential stores) is denied to the tools an agent
// host runs itself too (Claude Code's Read, Grep and Edit run on the host,
// where no mask hides anything) and to the shell guard's reading of paths:
// one list, one gate.
func secretPatterns(paths []string) []string {
	out := make([]string, 0, 2*len(paths))
	for _, p := range paths {
		p = strings.TrimRight(strings.TrimSuffix(p, "/**"), "/")
		if p == "" || p == "~" || fsguard.CheckPattern(p, false) != nil {
			continue // the policy's loader names a bad entry
		}
		out = append(out, p, p+"/**")
	}
	return out
}

func (a *App) buildGate() *gate.Gate {
	g := a.gateFor(a.Policy, a.Problems, a.Store)
	a.Queue = a.newQueue(a.Store, func() approval.Decider { return g.Decider })
	g.Approvals = a.Queue
	return g
}

// gateFor builds the gate for policy p, recording into store.
func (a *App) gateFor(p *config.Policy, problems []config.Problem, store warden.AuditStore) *gate.Gate {
	spend := safety.SpendCap{Cap: p.Safety.DailySpendCap}
	sign := SigningSettings(p)
	always := p.Approvals.Always
	return &gate.Gate{
		Decider: Pipeline(a.Home, p, problems, a.Store, a.Now),
		Store:   store,
		Debit:   sign.Debit(spend.Debit),
		Now:     a.Now,
		NewID:   NewID,
		Always: func(hash string) (string, bool) {
			rule, ok := always[hash]
			return rule, ok
		},
		// Answers to network asks cover the destination, not one URL.
		InputHash: netguard.InputHash,
	}
}

// newQueue is the approval queue over the home's database; its events go
// to store, and decider gives the current policy's pipeline for re-checks.
func (a *App) newQueue(store warden.AuditStore, decider func() approval.Decider) *approval.Queue {
	q := &approval.Queue{
		Store:   a.Store,
		Decider: decider,
		Always:  alwaysWriter{a.Home},
		Now:     a.Now,
		NewID:   NewID,
		Events: func(ctx context.Context, typ string, sev warden.Severity, traceID, summary string, meta map[string]any) error {
			m, _ := json.Marshal(meta)
			return appendEvent(ctx, store, &warden.SecurityEvent{ID: NewID(), TraceID: traceID, CreatedAt: a.Now(), Type: typ, Severity: sev}, summary, m)
		},
		Log: func(msg string, args ...any) { a.Log.Warn(msg, args...) },
	}
	q.SetTimeout(a.Policy.Approvals.Timeout)
	return q
}

// alwaysWriter writes "always" answers into the home's policy file.
type alwaysWriter struct{ home Home }

func (w alwaysWriter) AddAlways(_ context.Context, a warden.Approval, by string) (string, error) {
	res := a.Request.Resource
	if dest := netguard.Destination(&a.Request); dest != "" {
		res = dest // what the network's input hash covers
	}
	res = clip.String(res, 200)
	r := config.AlwaysRule{InputHash: a.InputHash, Capability: a.Request.Capability, Action: a.Request.Action, Resource: res,
		ApprovedBy: by, Approval: a.ID, Added: time.Now()}
	rule := fmt.Sprintf("approvals.always: %s %s %s (%s)", r.Capability, r.Action, res, a.InputHash)
	return rule, config.AddAlways(w.home.PolicyPath(), r)
}

// reportProblems logs and audits, in store, each problem found in the
// home's policy file.
func reportProblems(ctx context.Context, log *slog.Logger, store warden.AuditStore, home Home, at time.Time, problems []config.Problem) error {
	for _, p := range problems {
		log.Warn("policy file problem; the section runs on its defaults", "problem", p.Error())
		meta, _ := json.Marshal(map[string]any{"section": p.Section, "key": p.Key, "line": p.Line, "file": home.PolicyPath()})
		if err := AppendEvent(ctx, store, at, warden.EventConfigInvalid, warden.SevError, redact.String(p.Error()), meta); err != nil {
			return err
		}
	}
	return nil
}

// Event appends a security event.
func (a *App) Event(ctx context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) error {
	return AppendEvent(ctx, a.Store, a.Now(), typ, sev, summary, meta)
}

// AppendEvent appends a redacted security event to store.
func AppendEvent(ctx context.Context, store warden.AuditStore, at time.Time, typ string, sev warden.Severity, summary string, meta json.RawMessage) error {
	return appendEvent(ctx, store, &warden.SecurityEvent{ID: NewID(), CreatedAt: at, Type: typ, Severity: sev}, summary, meta)
}

// appendEvent redacts summary and meta into ev and appends it.
func appendEvent(ctx context.Context, store warden.AuditStore, ev *warden.SecurityEvent, summary string, meta json.RawMessage) error {
	redactEvent(ev, summary, meta)
	if err := store.AppendEvent(ctx, ev); err != nil {
		return eventNotRecorded(ev, err)
	}
	return nil
}

// redactEvent fills ev's summary and metadata, redacted: every event warden
// stores, appended or queued, goes through it.
func redactEvent(ev *warden.SecurityEvent, summary string, meta json.RawMessage) {
	ev.Summary = redact.String(summary)
	if len(meta) > 0 {
		ev.Metadata = redact.JSON(meta)
	}
}

// eventNotRecorded is the error for an event the store could not record.
func eventNotRecorded(ev *warden.SecurityEvent, err error) error {
	return warden.Errorf(warden.EUnavailable, "could not record the %s security event", ev.Type).Wrap(err)
}

// Init creates home with a commented default policy file and an empty
// database. An existing policy file is kept unless force is set.
func Init(ctx context.Context, home Home, force bool) (created bool, err error) {
	res, err := InitHome(ctx, home, force)
	return res.Wrote, err
}

// InitResult says what InitHome did to the policy file.
type InitResult struct {
	Wrote bool // the default policy file was written
	// Backup is where the replaced policy file was kept ("" when nothing
	// was replaced, or it was the default already).
	Backup string
}

// InitHome is Init, saying where a replaced policy file went. Replacing one
// (force) keeps a backup of it beside it, keeps the emergency stop on if
// the replaced file had it on, and is audited as config_changed.
func InitHome(ctx context.Context, home Home, force bool) (res InitResult, err error) {
	if err := os.MkdirAll(string(home), 0o700); err != nil {
		return res, warden.Errorf(warden.EInvalid, "create warden home %s", home).Wrap(err)
	}
	// A policy file that is there but cannot be read (not a regular file,
	// unreadable, a symlink leading nowhere) is neither replaced nor kept
	// in a backup: init stops and says what is wrong with it.
	old, readErr := config.ReadFile(home.PolicyPath())
	var rerr *warden.Error
	missing := errors.As(readErr, &rerr) && rerr.Code == warden.ENotFound
	if readErr != nil && !missing {
		return res, readErr
	}
	if missing || force {
		if !missing && !bytes.Equal(old, config.DefaultFile()) {
			res.Backup = home.PolicyPath() + ".bak-" + time.Now().UTC().Format("20060102T150405Z")
			if err := config.WriteAtomic(res.Backup, old, 0o600); err != nil {
				return res, warden.Errorf(warden.EInvalid, "keep a backup of %s before replacing it", home.PolicyPath()).Wrap(err)
			}
			if config.KillSwitchIn(old) {
				if err := SetKill(home, true, "init --force", "the replaced policy file had the emergency stop on", time.Now()); err != nil {
					return res, err
				}
			}
		}
		if err := config.WriteAtomic(home.PolicyPath(), config.DefaultFile(), 0o600); err != nil {
			return res, warden.Errorf(warden.EInvalid, "write %s", home.PolicyPath()).Wrap(err)
		}
		res.Wrote = true
	}
	created := res.Wrote
	_ = created
	loaded, err := config.Load(home.PolicyPath())
	if err != nil {
		return res, err
	}
	ws := Workspace(home, loaded.Policy)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return res, warden.Errorf(warden.EInvalid, "create the workspace %s", ws).Wrap(err).
			WithHint("set filesystem.workspace in the policy file to a directory warden can create")
	}
	st, err := openStore(ctx, home, sqlite.Options{Create: true})
	if err != nil {
		return res, err
	}
	if res.Backup != "" {
		meta, _ := json.Marshal(map[string]string{"key": "*", "backup": res.Backup, "by": "init --force"})
		if err := AppendEvent(ctx, st, time.Now(), warden.EventConfigChanged, warden.SevWarn,
			"warden init --force replaced the policy file with the defaults; the old one is at "+res.Backup, meta); err != nil {
			st.Close()
			return res, err
		}
	}
	return res, st.Close()
}
