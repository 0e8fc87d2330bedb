package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/inject"
	"github.com/agentwarden/warden/mcp"
	"github.com/agentwarden/warden/sandbox"
)

// MCPOptions configure `warden mcp`.
type MCPOptions struct {
	// Name is the server's name in tool names (mcp__NAME__TOOL); required.
	Name string
	// Command starts a stdio server; Upstream names a Streamable HTTP one.
	// Exactly one is set.
	Command  []string
	Upstream string
	// Listen, with Upstream, serves clients over Streamable HTTP on this
	// address instead of over stdin and stdout.
	Listen string
	// Headers are sent with every request to Upstream (credentials: their
	// values are never logged or audited).
	Headers http.Header
	// NoSandbox runs Command on the host; by default it runs under `warden
	// exec --profile workspace`, and where no sandbox can run it is refused
	// unless the policy's sandbox.unsafe_host_when_unavailable allows the
	// host.
	NoSandbox  bool
	Autonomous bool
	Session    string
	NoWrap     bool
	BlockScore float64
	Wait       time.Duration
	// Ready, when set, is told the address Listen bound.
	Ready func(addr string)
	// IdleSession ends an HTTP client session with no request in flight
	// for this long (a client that went away without ending it); 0 is
	// 30 minutes.
	IdleSession time.Duration
}

// CheckMCPName refuses a server name that would make tool names ambiguous
// (mcp__NAME__TOOL) or a file name unsafe.
func CheckMCPName(name string) error {
	if !mcp.ValidName(name) {
		return warden.Errorf(warden.EInvalid, "MCP server name %q is not usable", name).
			WithHint("use letters, digits, - and single _ (at most 64), e.g. --name github; tools are then named mcp__github__TOOL")
	}
	return nil
}

// MCPProxy is the proxy for one server over this app's gate.
func (a *App) MCPProxy(o MCPOptions) *mcp.Proxy {
	if o.BlockScore == 0 {
		o.BlockScore = a.Policy.Inject.BlockScore // the hooks' setting too; 0 (none) is the proxy's default
	}
	return &mcp.Proxy{
		Server: o.Name, Gate: mcpGate{a: a, channel: "mcp:" + o.Name},
		BlockScore: o.BlockScore, NoWrap: o.NoWrap, Wait: o.Wait,
		Pins: filePins{dir: filepath.Join(a.Home.Abs(), "mcp")}, Autonomous: o.Autonomous, Session: o.Session, Log: a.Log,
		Cwd: cwd(),
	}
}

// scanRules is the policy's inject.rulesFile, "~" expanded ("" for none).
func (a *App) scanRules() string {
	if a.Policy.Inject.RulesFile == "" {
		return ""
	}
	return expandHome(a.Policy.Inject.RulesFile)
}

// RunMCP proxies one MCP server for the client on stdin and stdout (or, with
// o.Listen, over HTTP) until the client or the server ends.
func (a *App) RunMCP(ctx context.Context, o MCPOptions, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := CheckMCPName(o.Name); err != nil {
		return err
	}
	if o.Session == "" && (o.Listen == "" || o.Upstream == "") {
		// One session per run of the proxy (one host session, as hosts
		// start their servers): "approve for this session" then lasts
		// while the host keeps the server. With --listen, one per HTTP
		// client session instead (open).
		o.Session = mcpSessionID(o.Name)
	}
	p := a.MCPProxy(o)
	s, err := inject.ScannerFor(a.scanRules())
	if err != nil {
		return warden.Errorf(warden.EInvalid, "the policy's inject.rulesFile cannot be used: %v", err).
			WithHint("fix the file (`warden scan --rules FILE` checks it) or remove inject.rulesFile")
	}
	p.Scanner = s
	if o.Upstream != "" {
		if o.Listen != "" {
			return a.serveMCPHTTP(ctx, p, o)
		}
		up, err := upstream(o).Connect(ctx)
		if err != nil {
			return warden.Errorf(warden.EUnavailable, "connect to the MCP server at %s", o.Upstream).Wrap(err)
		}
		return serveResult(p.Serve(ctx, mcp.NewStreamConn(stdin, nopCloser{stdout}), up), o)
	}
	argv := o.Command
	sandboxed, err := a.mcpSandboxed(o, stderr)
	if err != nil {
		return err
	}
	if sandboxed {
		exe, err := os.Executable()
		if err != nil {
			return warden.Errorf(warden.EUnavailable, "find the warden binary to sandbox the server with").Wrap(err)
		}
		argv = append([]string{exe, "--home", a.Home.Abs(), "exec", "--profile", "workspace", "--"}, argv...)
	}
	srv, err := startServer(argv, stderr)
	if err != nil {
		return err
	}
	return serveResult(p.Serve(ctx, mcp.NewStreamConn(stdin, nopCloser{stdout}), srv), o)
}

// mcpSessionID is a new warden session for the proxy of server name.
func mcpSessionID(name string) string { return "mcp-" + name + "-" + NewID() }

// cwd is this process's working directory ("" when unknown).
func cwd() string {
	d, _ := os.Getwd()
	return d
}

// mcpSandboxed says whether the server command runs in the workspace
// sandbox: always, unless --no-sandbox; where none can run, the policy's
// sandbox.unsafe_host_when_unavailable runs it on the host, else it is
// refused.
func (a *App) mcpSandboxed(o MCPOptions, stderr io.Writer) (bool, error) {
	if o.NoSandbox {
		return false, nil
	}
	why := ""
	switch {
	case !a.Policy.Sandbox.Available():
		why = "sandbox.mode is off"
	case sandbox.Supported() != nil:
		why = sandbox.Supported().Error()
	}
	if why == "" {
		return true, nil
	}
	if a.Policy.Sandbox.UnsafeHostWhenUnavailable {
		fmt.Fprintf(stderr, "warden mcp: no sandbox can run here (%s); sandbox.unsafe_host_when_unavailable runs the server on the host\n", why)
		return false, nil
	}
	return false, warden.Errorf(warden.EUnavailable, "no sandbox can run the MCP server here: %s", why).
		WithHint("pass --no-sandbox to run the server on the host, or set sandbox.unsafe_host_when_unavailable in the policy file")
}

// upstream is the client transport to o.Upstream, sending o.Headers.
func upstream(o MCPOptions) *sdk.StreamableClientTransport {
	t := &sdk.StreamableClientTransport{Endpoint: o.Upstream, MaxRetries: -1}
	if len(o.Headers) > 0 {
		t.HTTPClient = &http.Client{Transport: withHeaders{base: http.DefaultTransport, h: o.Headers}}
	}
	return t
}

// withHeaders adds headers to every request.
type withHeaders struct {
	base http.RoundTripper
	h    http.Header
}

func (w withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range w.h {
		r.Header[k] = vs
	}
	return w.base.RoundTrip(r)
}

func serveResult(err error, o MCPOptions) error {
	if errors.Is(err, mcp.ErrServerGone) {
		return warden.Errorf(warden.EUnavailable, "the MCP server %s ended", o.Name).Wrap(err).
			WithHint("run its command by itself to see why it stops")
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// serverProc is a stdio MCP server process and its stream.
type serverProc struct {
	sdk.Connection
	cmd  *exec.Cmd
	once sync.Once
	err  error
}

// startServer starts argv with its stdin and stdout as the MCP stream and
// its stderr passed through.
func startServer(argv []string, stderr io.Writer) (*serverProc, error) {
	if len(argv) == 0 {
		return nil, warden.Errorf(warden.EInvalid, "no MCP server command").WithHint("warden mcp --name NAME -- COMMAND [ARGS…]")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, warden.Errorf(warden.EInvalid, "start the MCP server %s", argv[0]).Wrap(err).WithHint("check the command after --")
	}
	return &serverProc{Connection: mcp.NewStreamConn(out, in), cmd: cmd}, nil
}

// Close ends the server the way the MCP spec asks of a client: its stdin
// closed, then SIGTERM, then SIGKILL.
func (s *serverProc) Close() error {
	s.once.Do(func() {
		s.Connection.Close()
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case s.err = <-done:
			return
		case <-time.After(5 * time.Second):
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case s.err = <-done:
			return
		case <-time.After(5 * time.Second):
		}
		_ = s.cmd.Process.Kill()
		s.err = <-done
	})
	return nil
}

// serveMCPHTTP serves MCP clients over Streamable HTTP on o.Listen, each
// session proxied to its own session with the upstream server.
func (a *App) serveMCPHTTP(ctx context.Context, p *mcp.Proxy, o MCPOptions) error {
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "listen on %s", o.Listen).Wrap(err).WithHint("pick a free address with --listen, e.g. 127.0.0.1:0")
	}
	if o.Ready != nil {
		o.Ready(l.Addr().String())
	}
	h := &mcpHTTP{ctx: ctx, proxy: p, opts: o, sessions: map[string]*mcpSession{}, log: a, events: sdk.NewMemoryEventStore(nil)}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	idle := o.IdleSession
	if idle == 0 {
		idle = 30 * time.Minute
	}
	go h.reap(ctx, idle)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	h.wg.Wait()
	return nil
}

// mcpHTTP routes each client session (Mcp-Session-Id) to its transport.
type mcpHTTP struct {
	ctx   context.Context
	proxy *mcp.Proxy
	opts  MCPOptions
	log   *App
	// events keeps what the proxy sent each client's streams, so that a
	// message the proxy writes when no stream of the client's can take it
	// is not lost: the proxy relates no message of the server's to the
	// client request it arose from (the SDK's connection has no way to say
	// so), and such a message goes to the client's GET stream, which it
	// may not have opened yet. The stream replays it when it connects, and
	// a client that reconnects with Last-Event-ID resumes where it was.
	// Bounded by the SDK's default (10 MiB for all sessions); a session's
	// events go when it ends.
	events   *sdk.MemoryEventStore
	mu       sync.Mutex
	sessions map[string]*mcpSession
	wg       sync.WaitGroup
}

// mcpSession is one HTTP client session: its transport and the proxy's
// end of it.
type mcpSession struct {
	t      *sdk.StreamableServerTransport
	down   sdk.Connection
	active atomic.Int32 // requests in flight (a GET stream stays in flight)
	last   atomic.Int64 // when the last request ended, Unix nanoseconds
}

// reap ends the sessions idle for longer than idle, checking every tenth
// of it.
func (h *mcpHTTP) reap(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(max(idle/10, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			for id, sess := range h.sessions {
				if sess.active.Load() == 0 && now.Sub(time.Unix(0, sess.last.Load())) > idle {
					delete(h.sessions, id)
					sess.down.Close() // ends its proxy and the upstream session
				}
			}
			h.mu.Unlock()
		}
	}
}

// serve is one request of the session.
func (sess *mcpSession) serve(w http.ResponseWriter, r *http.Request) {
	sess.active.Add(1)
	defer func() {
		sess.last.Store(time.Now().UnixNano())
		sess.active.Add(-1)
	}()
	sess.t.ServeHTTP(w, r)
}

const sessionHeader = "Mcp-Session-Id"

func (h *mcpHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A web page the user visits must not reach the tools (DNS rebinding):
	// the spec asks a local server to check Origin; only a loopback origin,
	// or none (a non-browser client), is served.
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		http.Error(w, "warden mcp: requests from web origins are refused", http.StatusForbidden)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "warden mcp: a new session starts with a POST of initialize", http.StatusBadRequest)
			return
		}
		sess, err := h.open()
		if err != nil {
			http.Error(w, "warden mcp: could not reach the MCP server", http.StatusBadGateway)
			return
		}
		w.Header().Set(sessionHeader, sess.t.SessionID)
		sess.serve(w, r)
		return
	}
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess == nil {
		http.Error(w, "warden mcp: no such session", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodDelete {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
		sess.down.Close() // ends its proxy, which closes the upstream session too
		w.WriteHeader(http.StatusNoContent)
		return
	}
	sess.serve(w, r)
}

// loopbackOrigin reports whether an Origin header names a loopback host.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// open starts a session: a server transport for the client, a connection
// to the upstream server, and the proxy between them.
func (h *mcpHTTP) open() (*mcpSession, error) {
	t := &sdk.StreamableServerTransport{SessionID: rand.Text(), EventStore: h.events}
	down, err := t.Connect(h.ctx)
	if err != nil {
		return nil, err
	}
	up, err := upstream(h.opts).Connect(h.ctx)
	if err != nil {
		down.Close()
		return nil, err
	}
	sess := &mcpSession{t: t, down: down}
	sess.last.Store(time.Now().UnixNano())
	h.mu.Lock()
	h.sessions[t.SessionID] = sess
	h.mu.Unlock()
	p := *h.proxy
	if p.Session == "" {
		p.Session = mcpSessionID(h.opts.Name) // each client's approvals for its session are its own
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		if err := p.Serve(h.ctx, down, up); err != nil {
			h.log.Log.Warn("mcp: a session ended", "error", err)
		}
		h.mu.Lock()
		delete(h.sessions, t.SessionID)
		h.mu.Unlock()
	}()
	return sess, nil
}

// mcpGate is the gate as the MCP proxy uses it.
type mcpGate struct {
	a       *App
	channel string
}

var _ mcp.Gate = mcpGate{}

func (g mcpGate) Check(ctx context.Context, req *warden.Request, distrust *mcp.Distrust) (warden.Decision, error) {
	gt := g.a.Gate
	if distrust != nil {
		c := *gt
		c.Decider = distrustDecider{inner: gt.Decider, d: *distrust}
		gt = &c
	}
	return gt.CheckWith(ctx, req, gate.CheckOptions{Approval: g.channel, JoinPending: true})
}

func (g mcpGate) Preview(ctx context.Context, req *warden.Request) warden.Decision {
	r := *req
	return g.a.Gate.Decider.Decide(ctx, &r)
}

func (g mcpGate) Await(ctx context.Context, req *warden.Request, d warden.Decision) (warden.Decision, error) {
	return g.a.Gate.Await(ctx, req, d)
}

func (g mcpGate) Answer(ctx context.Context, id string, approve bool, by string) error {
	ans := warden.AnswerDeny
	if approve {
		ans = warden.AnswerOnce
	}
	_, err := g.a.Queue.Answer(ctx, id, ans, approval.Who{Name: by, Channel: "mcp-elicitation"})
	return err
}

func (g mcpGate) Record(ctx context.Context, ev mcp.Event) error {
	meta, _ := json.Marshal(ev.Meta)
	return appendEvent(ctx, g.a.Store, &warden.SecurityEvent{ID: NewID(), TraceID: ev.TraceID, CreatedAt: g.a.Now(), Type: ev.Type, Severity: ev.Severity}, ev.Summary, meta)
}

// distrustDecider adds what the proxy holds against a tool to the
// pipeline's decision: an ask makes an allow or sandbox an ask, a deny
// denies.
type distrustDecider struct {
	inner gate.Decider
	d     mcp.Distrust
}

func (x distrustDecider) Decide(ctx context.Context, req *warden.Request) warden.Decision {
	d := x.inner.Decide(ctx, req)
	d.Stages = append(d.Stages, warden.StageAnswer{Stage: "mcp", Verdict: x.d.Verdict, Rule: x.d.Rule, Reason: x.d.Reason})
	if warden.Strongest(d.Verdict, x.d.Verdict) == x.d.Verdict && d.Verdict != x.d.Verdict {
		d.Verdict, d.Rule, d.Reason = x.d.Verdict, x.d.Rule, x.d.Reason
		d.Sandbox, d.Rewrite = "", ""
	}
	return d
}

// filePins keeps each server's tool definitions in DIR/NAME.tools.json.
type filePins struct{ dir string }

func (f filePins) path(server string) string { return filepath.Join(f.dir, server+".tools.json") }

func (f filePins) Load(server string) (map[string]string, error) {
	b, err := os.ReadFile(f.path(server))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object of tool hashes: %w", f.path(server), err)
	}
	return m, nil
}

func (f filePins) Save(server string, pins map[string]string) error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(pins, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteAtomic(f.path(server), append(b, '\n'), 0o600)
}

// mcpConfigFiles are, per host and scope, the file holding its MCP servers
// and its key for a Streamable HTTP server's address.
var mcpConfigFiles = map[string]struct{ project, user, urlKey string }{
	"claude": {project: ".mcp.json", user: ".claude.json", urlKey: "url"},
	"cursor": {project: ".cursor/mcp.json", user: ".cursor/mcp.json", urlKey: "url"},
	"gemini": {project: ".gemini/settings.json", user: ".gemini/settings.json", urlKey: "httpUrl"},
}

// WrapMCPServers routes the MCP servers configured for host (in the
// project's or the user's file) through `warden mcp`, run as wardenCmd with
// home, or with undo puts them back. Codex's servers are in
// .codex/config.toml, in the project or the home directory as for its
// hooks; the other hosts' in their JSON files.
func WrapMCPServers(host string, scope HookScope, projectDir, homeDir, wardenCmd string, home Home, undo bool) (mcp.WrapResult, error) {
	f, ok := mcpConfigFiles[host]
	if !ok && host != "codex" {
		return mcp.WrapResult{}, warden.Errorf(warden.EInvalid, "warden cannot route %s's MCP servers itself", host).
			WithHint("wrap its servers by hand: docs/mcp.md shows how")
	}
	prefix := []string{wardenCmd}
	if named := HookHomeArg(home, homeDir); named != "" {
		prefix = append(prefix, "--home", named)
	}
	dir := projectDir
	if scope == HookUser {
		dir = homeDir
	}
	var path string
	var res mcp.WrapResult
	var err error
	if host == "codex" {
		path = filepath.Join(dir, ".codex", "config.toml")
		res, err = mcp.WrapCodexConfig(path, prefix, undo)
	} else {
		path = filepath.Join(dir, f.project)
		if scope == HookUser {
			path = filepath.Join(dir, f.user)
		}
		res, err = mcp.WrapHostConfig(path, prefix, f.urlKey, undo)
	}
	if err != nil {
		return res, warden.Errorf(warden.EInvalid, "route the MCP servers in %s through warden", path).Wrap(err).
			WithHint("fix the file, or move it aside; warden wrote nothing")
	}
	return res, nil
}
