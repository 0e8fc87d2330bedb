package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/audit/feed"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/netguard"
	"github.com/agentwarden/warden/signing/keystore"
	"github.com/agentwarden/warden/signing/service"
	"github.com/agentwarden/warden/telegram"
)

// SocketFile is the daemon's Unix socket inside a home.
const SocketFile = "warden.sock"

// SocketPath is where the daemon listens for a policy: approvals.daemon.socket,
// or warden.sock in the home.
func (h Home) SocketPath(p *config.Policy) string {
	if p != nil && p.Approvals.Socket != "" {
		return p.Approvals.Socket
	}
	return filepath.Join(h.Abs(), SocketFile)
}

// Daemon is `warden serve`: one process holding the gate, the audit store,
// the approval queue and its channels, the live feed and the API. It follows
// the policy file: a change (from `warden config set`, `warden kill`, an
// editor) takes effect on the next request.
type Daemon struct {
	App    *App
	Queue  *approval.Queue
	Feed   *feed.Feed
	Server *httpapi.Server
	Tokens *httpapi.Tokens
	// Operator is the operator token the CLI on this machine uses.
	Operator string
	// ProxyListen is where Serve runs the egress proxy: network.listen from
	// the policy at start; empty runs none.
	ProxyListen string

	// Signing is the remote signing service; nil when the home has no key.
	Signing *service.Service
	// UnlockTime is how long unlocking the signing key took at start.
	UnlockTime time.Duration

	store    feedingStore
	telegram *telegram.Channel
	signer   *keystore.Key

	mu    sync.Mutex                // guards reloads
	stamp atomic.Pointer[fileStamp] // of the installed policy file; written under mu
	snap  atomic.Pointer[snapshot]
}

// snapshot is one version of the policy and the gate built from it.
type snapshot struct {
	policy *config.Policy
	gate   *gate.Gate
	// guard is the network guard the egress proxy judges names and
	// addresses with; nil, with guardErr, when the network policy is broken.
	guard    *netguard.Guard
	guardErr error
}

// fileStamp tells whether the policy file changed.
type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

// NewDaemon opens home for serving.
func NewDaemon(ctx context.Context, home Home, opt Options) (*Daemon, error) {
	opt.OpenDatabase = true
	a, err := Open(ctx, home, opt)
	if err != nil {
		return nil, err
	}
	d := &Daemon{App: a, Feed: feed.New(0)}
	d.store = feedingStore{Store: a.Store, feed: d.Feed}
	d.Queue = a.newQueue(d.store, func() approval.Decider { return d.current().gate.Decider })
	if err := d.channels(); err != nil {
		a.Close()
		return nil, err
	}
	if d.Operator, d.Tokens, err = loadTokens(home); err != nil {
		a.Close()
		return nil, err
	}
	st, _ := stampOf(home.PolicyPath())
	d.stamp.Store(&st)
	d.install(a.Policy, a.Problems)
	d.ProxyListen = a.Policy.Network.Listen
	d.Server = &httpapi.Server{Backend: d, Verifier: &httpapi.Verifier{Tokens: d.Tokens}, Feed: d.Feed, Log: a.Log,
		Metrics: httpapi.NewMetrics(d.pending)}
	// The signing key is unlocked once, here, and never written again. A
	// key that cannot be unlocked keeps signing off, not the daemon down:
	// approvals, the console and the proxy still serve.
	k, took, err := UnlockSigner(home, a.Policy, opt.Prompt)
	if err != nil {
		if err := d.signingUnavailable(ctx, err); err != nil {
			a.Close()
			return nil, err
		}
	}
	if k != nil {
		d.signer, d.UnlockTime = k, took
		d.Signing = d.newSigning(k)
		d.Server.Signing = d.Signing
		a.Log.Info(describeUnlock(k, took))
	}
	return d, nil
}

// install builds the gate for p and makes it current. d.App keeps the
// policy it was opened with; requests read the snapshot.
func (d *Daemon) install(p *config.Policy, problems []config.Problem) {
	g := d.App.gateFor(p, problems, d.store)
	g.Approvals = d.Queue
	d.Queue.SetTimeout(p.Approvals.Timeout)
	guard, err := netguard.New(p.Network.Guard())
	d.snap.Store(&snapshot{policy: p, gate: g, guard: guard, guardErr: err})
}

// current is the snapshot for this request, reloaded first when the policy
// file changed. A file that no longer loads keeps the last good policy, and
// the problem is audited, as are problems inside a file that loads (their
// sections run on their fail-closed defaults).
func (d *Daemon) current() *snapshot {
	st, err := stampOf(d.App.Home.PolicyPath())
	if err == nil && st == *d.stamp.Load() {
		return d.snap.Load()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, err := stampOf(d.App.Home.PolicyPath()); err == nil && st != *d.stamp.Load() {
		loaded, lerr := config.Load(d.App.Home.PolicyPath())
		if lerr != nil {
			d.App.Log.Error("the policy file no longer loads; keeping the last good policy", "error", warden.UserMessage(lerr))
			_ = AppendEvent(context.Background(), d.store, d.App.Now(), warden.EventConfigInvalid, warden.SevError,
				"the policy file no longer loads, so the daemon keeps the last good policy: "+warden.UserMessage(lerr), nil)
		} else {
			_ = reportProblems(context.Background(), d.App.Log, d.store, d.App.Home, d.App.Now(), loaded.Problems)
			d.install(loaded.Policy, loaded.Problems)
		}
		d.stamp.Store(&st)
	}
	return d.snap.Load()
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi)}, nil
}

// Check implements httpapi.Backend. An ask through the API opens an approval
// on opt.Channel (none when empty); with opt.Wait, the answer is awaited,
// and without, the ask joins an approval already pending for its input. A
// dry run (a question) reserves nothing, also when decided again after an
// approval.
func (d *Daemon) Check(ctx context.Context, req *warden.Request, opt httpapi.CheckOptions) (warden.Decision, error) {
	g := d.current().gate
	// A caller that does not wait will retry: its ask joins the approval
	// already pending for the same input rather than opening another.
	dec, err := g.CheckWith(ctx, req, gate.CheckOptions{Approval: opt.Channel, JoinPending: !opt.Wait, DryRun: opt.DryRun})
	if err != nil || !opt.Wait || dec.Verdict != warden.Ask {
		return dec, err
	}
	approved, denied, err := g.WaitAnswer(ctx, req, dec)
	if err != nil || !approved {
		return denied, err
	}
	return g.CheckWith(ctx, req, gate.CheckOptions{DryRun: opt.DryRun})
}

// Approvals implements httpapi.Backend.
func (d *Daemon) Approvals(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error) {
	return d.Queue.List(ctx, f)
}

// Approval implements httpapi.Backend.
func (d *Daemon) Approval(ctx context.Context, id string) (warden.Approval, error) {
	return d.Queue.Get(ctx, id)
}

// Answer implements httpapi.Backend; the current policy re-checks it.
func (d *Daemon) Answer(ctx context.Context, id string, ans warden.Answer, who approval.Who) (warden.Approval, error) {
	d.current()
	return d.Queue.Answer(ctx, id, ans, who)
}

// WaitApproval implements httpapi.Backend.
func (d *Daemon) WaitApproval(ctx context.Context, id string) (warden.Approval, error) {
	return d.Queue.Wait(ctx, id)
}

// Config implements httpapi.Backend.
func (d *Daemon) Config() ([]httpapi.ConfigItem, error) {
	loaded, err := config.Load(d.App.Home.PolicyPath())
	if err != nil {
		return nil, err
	}
	var out []httpapi.ConfigItem
	for _, kv := range loaded.List() {
		out = append(out, httpapi.ConfigItem{Key: kv.Key, Value: config.FormatValue(kv.Value)})
	}
	return out, nil
}

// SetConfig implements httpapi.Backend: the same refusals as `warden config
// set`, audited as config_changed.
func (d *Daemon) SetConfig(ctx context.Context, key, value, by string) error {
	if key == "safety.killSwitchActive" {
		return warden.Errorf(warden.EInvalid, "the kill switch has its own endpoint, POST /v1/kill").WithHint("it is audited as kill_switch_on and kill_switch_off")
	}
	if err := CheckSetting(key, value); err != nil {
		return err
	}
	if err := config.Set(d.App.Home.PolicyPath(), key, value); err != nil {
		return err
	}
	meta, _ := json.Marshal(map[string]string{"key": key, "value": value, "by": by})
	err := AppendEvent(ctx, d.store, d.App.Now(), warden.EventConfigChanged, warden.SevWarn, fmt.Sprintf("%s set %s", by, key), meta)
	d.current()
	return err
}

// KillSwitch implements httpapi.Backend.
func (d *Daemon) KillSwitch() bool {
	return d.current().policy.Safety.KillSwitch || killEngaged(d.App.Home, d.App.Store)()
}

// SetKillSwitch implements httpapi.Backend.
func (d *Daemon) SetKillSwitch(ctx context.Context, on bool, by string) error {
	if err := SetKill(d.App.Home, on, by, "", d.App.Now()); err != nil {
		return err
	}
	typ, summary := warden.EventKillSwitchOff, "emergency stop turned off by "+by
	if on {
		typ, summary = warden.EventKillSwitchOn, "emergency stop turned on by "+by
	}
	meta, _ := json.Marshal(map[string]string{"by": by, "channel": "api"})
	err := AppendEvent(ctx, d.store, d.App.Now(), typ, warden.SevCritical, summary, meta)
	d.current()
	return err
}

// Sandboxes implements httpapi.Backend.
func (d *Daemon) Sandboxes(ctx context.Context) (json.RawMessage, error) {
	list, err := d.App.Sandboxes().List("")
	if err != nil {
		return nil, SandboxError(err)
	}
	if list == nil {
		return json.RawMessage(`{"sandboxes":[]}`), nil
	}
	return json.Marshal(map[string]any{"sandboxes": list})
}

func (d *Daemon) pending() float64 {
	as, err := d.Queue.List(context.Background(), warden.ApprovalFilter{Pending: true})
	if err != nil {
		return -1
	}
	return float64(len(as))
}

// Listening is where a serving daemon can be reached.
type Listening struct {
	Socket string // the Unix socket
	TCP    string // the signed-request TCP address, or ""
	Proxy  string // the egress proxy, or ""
}

// Serve listens on the Unix socket (and TCP when configured), and runs the
// egress proxy on ProxyListen, until ctx ends; then it shuts down
// gracefully: requests in flight finish, and the store is closed, which
// flushes the audit log. ready, when not nil, is called with the addresses
// once all listen.
func (d *Daemon) Serve(ctx context.Context, ready func(Listening)) error {
	p := d.current().policy
	var at Listening
	at.Socket = d.App.Home.SocketPath(p)
	ul, err := listenUnix(at.Socket)
	if err != nil {
		return err
	}
	servers := []*http.Server{{Handler: d.Server.Handler(true), ReadHeaderTimeout: 10 * time.Second}}
	listeners := []net.Listener{ul}
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	if p.Approvals.TCP != "" {
		tl, err := net.Listen("tcp", p.Approvals.TCP)
		if err != nil {
			closeAll()
			return warden.Errorf(warden.EUnavailable, "cannot listen on %s", p.Approvals.TCP).Wrap(err).
				WithHint("set approvals.daemon.tcp to a free HOST:PORT, or to \"\"")
		}
		servers = append(servers, &http.Server{Handler: d.Server.Handler(false), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, tl)
		at.TCP = tl.Addr().String()
	}
	var proxy *egress.Proxy
	var pl net.Listener
	if d.ProxyListen != "" {
		if pl, err = net.Listen("tcp", d.ProxyListen); err != nil {
			closeAll()
			return warden.Errorf(warden.EUnavailable, "cannot listen on %s for the egress proxy", d.ProxyListen).Wrap(err).
				WithHint("set network.listen to a free HOST:PORT, or start warden serve with --no-proxy")
		}
		proxy = d.egress(p)
		at.Proxy = pl.Addr().String()
	}
	errs := make(chan error, len(servers)+1)
	for i := range servers {
		go func() { errs <- servers[i].Serve(listeners[i]) }()
	}
	if proxy != nil {
		go func() {
			if err := proxy.Serve(pl); err != nil {
				errs <- fmt.Errorf("egress proxy: %w", err)
			}
		}()
	}
	var wg sync.WaitGroup
	bg, stop := context.WithCancel(ctx)
	defer stop()
	wg.Go(func() { d.sweep(bg) })
	wg.Go(func() { d.stopLoss(bg) })
	if f, ok := d.App.Store.(fleetStore); ok {
		// An approval answered on another daemon of the fleet releases
		// this one's waiters at once.
		wg.Go(func() { _ = f.Listen(bg, d.Queue.Wake, f.kill.set) })
		wg.Go(func() { f.replayJournal(bg, d.App.Log.Warn) })
	}
	if d.telegram != nil {
		wg.Go(func() {
			if err := d.telegram.Run(bg); err != nil {
				d.App.Log.Error("the Telegram channel stopped", "error", warden.UserMessage(err))
			}
		})
	}
	if ready != nil {
		ready(at)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
	}
	stop()
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if proxy != nil {
		_ = proxy.Close() // ends open tunnels, which Shutdown would wait for
	}
	for _, s := range servers {
		_ = s.Shutdown(shut)
	}
	wg.Wait()
	os.Remove(at.Socket)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return warden.Errorf(warden.EUnavailable, "the daemon stopped serving").Wrap(serveErr)
	}
	return nil
}

// egress is the daemon's egress proxy. It decides through the current
// policy, as the API does, and asks on channel "proxy", waiting for the
// answer; its requests are those of agent "proxy" in a session that lasts
// as long as this daemon runs. Its listener and resolver are the policy's at
// start.
func (d *Daemon) egress(p *config.Policy) *egress.Proxy {
	return &egress.Proxy{
		Gate:      daemonGate{d},
		Guard:     daemonGuard{d},
		Resolver:  Resolver(p.Network.Resolver),
		Identity:  egress.Identity{Agent: "proxy", Session: "proxy-" + NewID()},
		Approvals: "proxy",
		Events: func(ctx context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) error {
			return AppendEvent(ctx, d.store, d.App.Now(), typ, sev, summary, meta)
		},
		Log: d.App.Log,
	}
}

// daemonGate is the current policy's gate, for the egress proxy.
type daemonGate struct{ d *Daemon }

func (g daemonGate) CheckWith(ctx context.Context, req *warden.Request, opt gate.CheckOptions) (warden.Decision, error) {
	return g.d.current().gate.CheckWith(ctx, req, opt)
}

func (g daemonGate) WaitAnswer(ctx context.Context, req *warden.Request, dec warden.Decision) (bool, warden.Decision, error) {
	return g.d.current().gate.WaitAnswer(ctx, req, dec)
}

func (g daemonGate) Covered(ctx context.Context, req *warden.Request) (bool, error) {
	return g.d.current().gate.Covered(ctx, req)
}

// daemonGuard is the current policy's network guard; a network section
// that does not compile refuses every name and address.
type daemonGuard struct{ d *Daemon }

func (g daemonGuard) Decide(q netguard.Query) warden.Decision {
	s := g.d.current()
	if s.guard == nil {
		return warden.Denyf("network.no_policy", fmt.Sprintf("the network policy is not available: %v; fix the network section of the policy file", s.guardErr))
	}
	return s.guard.Decide(q)
}

func (g daemonGuard) AddressAllowed(a netip.Addr) error {
	s := g.d.current()
	if s.guard == nil {
		return fmt.Errorf("the network policy is not available: %v", s.guardErr)
	}
	return s.guard.AddressAllowed(a)
}

// Close releases the store, flushing the audit log, and forgets the
// signing key.
func (d *Daemon) Close() error {
	if d.signer != nil {
		d.signer.Close()
	}
	return d.App.Close()
}

// sweep expires unanswered approvals as their time comes.
func (d *Daemon) sweep(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := d.Queue.ExpireDue(ctx); err != nil && ctx.Err() == nil {
				d.App.Log.Warn("could not expire approvals", "error", warden.UserMessage(err))
			}
			d.settleSigning(ctx)
		}
	}
}

// stopLoss runs the stop-loss monitor while stopLoss.enabled, every
// stopLoss.pollIntervalMs, on the current policy: its closes go through the
// current gate, and one that asks (the kill switch is on) waits for a human
// while the monitor waits with it.
func (d *Daemon) stopLoss(ctx context.Context) {
	var (
		mon  *stoploss.Monitor
		from *snapshot
	)
	for {
		snap := d.current()
		sl := snap.policy.StopLoss
		interval := sl.PollInterval
		if interval <= 0 {
			interval = 10 * time.Second
		}
		if sl.Enabled {
			if snap != from {
				b := backendOrFailed(d.App.Home, snap.policy, d.App.Store, d.App.Now)
				mon, from = d.App.monitorWith(snap.policy, d.App.traderFor(snap.policy, snap.gate, b), true), snap
			}
			if _, err := mon.RunOnce(ctx); err != nil && ctx.Err() == nil {
				d.App.Log.Warn("the stop-loss monitor could not check its rules", "error", warden.UserMessage(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// listenUnix listens on a fresh socket at path, mode 0600. A socket left by
// a daemon that died is replaced; one a live daemon answers on is not.
func listenUnix(path string) (net.Listener, error) {
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, warden.Errorf(warden.EConflict, "a warden daemon is already serving on %s", path).
			WithHint("stop it first, or give this one another home")
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, warden.Errorf(warden.EUnavailable, "cannot remove the stale socket %s", path).Wrap(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, warden.Errorf(warden.EUnavailable, "cannot create %s", filepath.Dir(path)).Wrap(err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, warden.Errorf(warden.EUnavailable, "cannot listen on %s", path).Wrap(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, warden.Errorf(warden.EUnavailable, "cannot make %s private", path).Wrap(err)
	}
	return l, nil
}

// channels builds the approval channels the policy configures.
func (d *Daemon) channels() error {
	p := d.App.Policy.Approvals
	if p.Telegram.ChatID != 0 {
		token := os.Getenv(p.Telegram.TokenEnv)
		if token == "" {
			return warden.Errorf(warden.EInvalid, "approvals.telegram is configured but $%s is empty", p.Telegram.TokenEnv).
				WithHint("export the bot token in " + p.Telegram.TokenEnv + " before `warden serve`, or remove approvals.telegram")
		}
		ch, err := telegram.New(telegram.Config{Token: token, ChatID: p.Telegram.ChatID, AllowedUsers: p.Telegram.AllowedUsers,
			ServerURL: os.Getenv("WARDEN_TELEGRAM_API")}, d.Queue, d.App.Log)
		if err != nil {
			return err
		}
		d.telegram = ch
		d.Queue.Notifiers = append(d.Queue.Notifiers, ch)
	}
	if p.Webhook.URL != "" {
		secret := os.Getenv(p.Webhook.SecretEnv)
		if secret == "" {
			return warden.Errorf(warden.EInvalid, "approvals.webhook is configured but $%s is empty", p.Webhook.SecretEnv).
				WithHint("export the signing secret in " + p.Webhook.SecretEnv + ", or remove approvals.webhook")
		}
		d.Queue.Notifiers = append(d.Queue.Notifiers, &approval.Webhook{URL: p.Webhook.URL, Secret: []byte(secret)})
	}
	return nil
}

// Token files inside a home: the operator token the local CLI uses, and
// every further token the daemon accepts, one per line.
const (
	OperatorTokenFile = "api/operator.token"
	TokensFile        = "api/tokens"
)

// loadTokens reads the daemon's tokens, creating the operator token on the
// first start.
func loadTokens(home Home) (string, *httpapi.Tokens, error) {
	opPath := filepath.Join(home.Abs(), OperatorTokenFile)
	op, err := os.ReadFile(opPath)
	if errors.Is(err, os.ErrNotExist) {
		tok, terr := httpapi.NewToken(httpapi.ScopeOperator)
		if terr != nil {
			return "", nil, terr
		}
		if err := os.MkdirAll(filepath.Dir(opPath), 0o700); err != nil {
			return "", nil, warden.Errorf(warden.EUnavailable, "cannot create %s", filepath.Dir(opPath)).Wrap(err)
		}
		if err := config.WriteAtomic(opPath, []byte(tok+"\n"), 0o600); err != nil {
			return "", nil, warden.Errorf(warden.EUnavailable, "cannot write %s", opPath).Wrap(err)
		}
		op = []byte(tok)
	} else if err != nil {
		return "", nil, warden.Errorf(warden.EUnavailable, "cannot read %s", opPath).Wrap(err)
	}
	all := []string{strings.TrimSpace(string(op))}
	if extra, err := os.ReadFile(filepath.Join(home.Abs(), TokensFile)); err == nil {
		for _, l := range strings.Split(string(extra), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				all = append(all, l)
			}
		}
	}
	toks, err := httpapi.NewTokens(all...)
	if err != nil {
		return "", nil, warden.Errorf(warden.EInvalid, "a token in %s is malformed", filepath.Join(home.Abs(), "api")).Wrap(err).
			WithHint("each line must be a token made by `warden token new`")
	}
	return all[0], toks, nil
}

// NewAPIToken makes a token of scope, adds it to the tokens the daemon
// accepts (from its next start) and returns it.
func NewAPIToken(home Home, scope string) (string, error) {
	s := httpapi.Scope(scope)
	if s != httpapi.ScopeAgent && s != httpapi.ScopeOperator {
		return "", warden.Errorf(warden.EInvalid, "scope %q is not agent or operator", scope)
	}
	tok, err := httpapi.NewToken(s)
	if err != nil {
		return "", err
	}
	path := filepath.Join(home.Abs(), TokensFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", warden.Errorf(warden.EUnavailable, "cannot create %s", filepath.Dir(path)).Wrap(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", warden.Errorf(warden.EUnavailable, "cannot open %s", path).Wrap(err)
	}
	defer f.Close()
	if _, err := f.WriteString(tok + "\n"); err != nil {
		return "", warden.Errorf(warden.EUnavailable, "cannot write %s", path).Wrap(err)
	}
	return tok, f.Sync()
}

// feedingStore records through the SQLite store and, once a row is stored,
// puts it on the live feed.
type feedingStore struct {
	Store
	feed *feed.Feed
}

func (s feedingStore) Record(ctx context.Context, e *warden.AuditEntry, debit *warden.Debit) error {
	if err := s.Store.Record(ctx, e, debit); err != nil {
		return err
	}
	s.feed.Add(feed.FromEntry(e))
	return nil
}

func (s feedingStore) RecordBatch(ctx context.Context, es []*warden.AuditEntry) error {
	if err := s.Store.RecordBatch(ctx, es); err != nil {
		return err
	}
	for _, e := range es {
		s.feed.Add(feed.FromEntry(e))
	}
	return nil
}

func (s feedingStore) AppendEvent(ctx context.Context, ev *warden.SecurityEvent) error {
	if err := s.Store.AppendEvent(ctx, ev); err != nil {
		return err
	}
	s.feed.Add(feed.FromEvent(ev))
	return nil
}

// Dial returns an agent-scoped client of the daemon serving home. It neither
// reads the policy file nor probes the daemon (see dialDaemon): a request
// that finds no daemon fails with an error httpapi.Unreachable recognises,
// and was then never sent.
func Dial(home Home) *httpapi.Client {
	return httpapi.DialClient(dialDaemon(home), "")
}

// CheckRemote decides req through the daemon serving home; with wait, an ask
// opens an approval and the decision is the one it ends in. No daemon is an
// EUnavailable error saying so.
func CheckRemote(ctx context.Context, home Home, req *warden.Request, wait bool) (warden.Decision, error) {
	c := Dial(home)
	c.DryRun = true // a check is a question: it reserves nothing
	var d warden.Decision
	var err error
	if wait {
		d, err = c.CheckWait(ctx, req)
	} else {
		d, err = c.Check(ctx, req)
	}
	if httpapi.Unreachable(err) {
		return d, warden.Errorf(warden.EUnavailable, "no warden daemon serves %s", home.Abs()).
			WithHint("start it with `warden serve`, or drop --remote").Wrap(err)
	}
	return d, err
}

// dialDaemon connects to the daemon serving home: at the home's own socket,
// which needs no policy file (a hook through the daemon then reads nothing
// but its payload), and only when nothing answers there at the socket the
// policy names in approvals.socket (for a home whose path is too long for a
// socket address). Whoever may create a socket in the home may also rewrite
// its policy file, so the home's own socket is trusted as much.
func dialDaemon(home Home) func(context.Context) (net.Conn, error) {
	own := filepath.Join(home.Abs(), SocketFile)
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", own)
		if err == nil {
			return conn, nil
		}
		p, _, lerr := home.LoadPolicy()
		if lerr != nil {
			return nil, err
		}
		if sock := home.SocketPath(p); sock != own {
			return d.DialContext(ctx, "unix", sock)
		}
		return nil, err
	}
}

// operatorClient is an operator-scoped client of the daemon serving home
// (with the token it left in the home), when one answers on its socket; ok
// is false when none does.
func operatorClient(ctx context.Context, home Home, p *config.Policy) (c *httpapi.Client, ok bool) {
	b, err := os.ReadFile(filepath.Join(home.Abs(), OperatorTokenFile))
	if err != nil {
		return nil, false
	}
	c = httpapi.UnixClient(home.SocketPath(p), strings.TrimSpace(string(b)))
	if _, err := os.Stat(home.SocketPath(p)); err != nil {
		return nil, false
	}
	hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if c.Health(hctx) != nil {
		return nil, false
	}
	return c, true
}

var _ httpapi.Backend = (*Daemon)(nil)

// Approver answers approvals: through the daemon when one serves this home
// (so its waiters wake at once and its feed shows the answer), else directly
// on the home's database.
type Approver interface {
	Approvals(ctx context.Context, pending bool) ([]warden.Approval, error)
	Approval(ctx context.Context, id string) (warden.Approval, error)
	Answer(ctx context.Context, id string, ans warden.Answer, channel, by string) (warden.Approval, error)
}

// Approver returns the daemon's client when one answers on the home's
// socket, and otherwise this process's queue.
func (a *App) Approver(ctx context.Context) Approver {
	if c, ok := operatorClient(ctx, a.Home, a.Policy); ok {
		return c
	}
	return localApprover{a}
}

type localApprover struct{ a *App }

func (l localApprover) Approvals(ctx context.Context, pending bool) ([]warden.Approval, error) {
	return l.a.Queue.List(ctx, warden.ApprovalFilter{Pending: pending, Limit: 200})
}

func (l localApprover) Approval(ctx context.Context, id string) (warden.Approval, error) {
	return l.a.Queue.Get(ctx, id)
}

func (l localApprover) Answer(ctx context.Context, id string, ans warden.Answer, channel, by string) (warden.Approval, error) {
	return l.a.Queue.Answer(ctx, id, ans, approval.Who{Name: by, Channel: channel})
}
