// Package egress is warden's egress proxy: an HTTP forward proxy and CONNECT
// tunnel that is the only way out of a sandbox with network "proxy", and that
// any agent can be pointed at.
//
// For every request it canonicalises the target, judges the name, resolves it
// once (only when the name may be reached, so a refused name leaks nothing
// through DNS), asks the gate with every answer (the decision is audited), and
// dials the one pinned address through a dialer whose Control hook judges the
// address again. DNS rebinding, mixed answers and resolvers answering 0.0.0.0
// therefore never reach a blocked address. Redirects are passed back to the
// client, whose next request is judged afresh. Each request ends with a line
// of the request log (egress_request events; answered requests' lines in
// groups, see requestlog.go): agent, method, host, port, a hash of the path,
// status, bytes and the decision.
package egress

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/netip"
	"net/textproto"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/netguard"
)

// Checker decides a request and records the decision; *gate.Gate is one.
// With opt.Approval set, an ask opens a pending approval (or joins the one
// already pending for the same destination); WaitAnswer waits for a human's
// answer to it. Covered tells, without using anything up, whether a
// remembered answer already covers a request.
type Checker interface {
	CheckWith(ctx context.Context, req *warden.Request, opt gate.CheckOptions) (warden.Decision, error)
	WaitAnswer(ctx context.Context, req *warden.Request, d warden.Decision) (approved bool, denied warden.Decision, err error)
	Covered(ctx context.Context, req *warden.Request) (bool, error)
}

// Judge is what the proxy judges a name with before resolving it (so a name
// that may not be reached is never looked up) and an address with as it
// connects; *netguard.Guard is one.
type Judge interface {
	Decide(q netguard.Query) warden.Decision
	AddressAllowed(a netip.Addr) error
}

// EventFunc appends a security event (redacting summary and meta).
type EventFunc func(ctx context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) error

// QueueFunc queues a security event (redacting summary and meta) behind
// every record queued before it, so that a decision recorded after it is
// stored after it, and returns what waits for it to be stored; see
// sqlite.Store.QueueEvent.
type QueueFunc func(ctx context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) (wait func() error)

// Identity is who the proxy's requests are made for: they are decided,
// rate-limited and logged under it.
type Identity struct {
	Agent      string // requested_by, e.g. agent or sandbox:NAME
	Session    string
	Host       string // the agent host (claude, codex…), if known
	Autonomous bool
}

// Proxy is one egress proxy. Gate and Guard are required; the zero values of
// the other fields are the defaults. Start it with Serve; Close it.
type Proxy struct {
	Gate  Checker
	Guard Judge
	// Approvals is the approval channel an ask opens a pending approval on
	// (proxy, exec…); empty refuses an ask outright.
	Approvals string
	// NoWait refuses an ask at once, leaving its approval pending: once a
	// human approves it, the client's retry goes through. Otherwise the
	// request waits for the answer (or for the client to give up).
	NoWait bool
	// Asked, when set, is told of each approval a request starts waiting
	// for, to say where to answer it.
	Asked func(approvalID string)
	// Resolver resolves names; nil is the pure-Go resolver on the system's
	// configuration (never libc, whose inet_aton reads 0x7f000001 as an
	// address).
	Resolver *net.Resolver
	Identity Identity
	// Events receives the request log; nil keeps none.
	Events EventFunc
	// Queue, when set with Events, takes the request log of requests
	// whose answer has gone out (a forwarded answer, a tunnel that ended),
	// in groups: a line waits up to 5 ms for others and the lines gathered
	// are queued as one event (requestlog.go); the proxy waits for it off
	// the clients' path, and Close writes what is gathered and waits for
	// all of them. A refusal's event still goes through Events before the
	// refusal is sent.
	Queue QueueFunc
	// Secrets are the placeholders the proxy swaps for real values.
	Secrets *Secrets
	// UpstreamRoots are the authorities trusted for TLS the proxy makes
	// itself (toward hosts a secret is bound to); nil is the system's.
	UpstreamRoots *x509.CertPool
	// ResolveTimeout and DialTimeout bound name resolution and connecting
	// (defaults 5 s and 10 s).
	ResolveTimeout, DialTimeout time.Duration
	Log                         *slog.Logger

	once      sync.Once
	transport *http.Transport
	pathKey   [32]byte // keys the path hashes of this proxy's request log
	forwarder *httputil.ReverseProxy

	mu        sync.Mutex
	closed    bool
	servers   []*http.Server
	listeners []netip.AddrPort
	tunnels   map[net.Conn]struct{}
	directs   []net.Listener // ServeDirect's tunnel listeners
	logging   sync.WaitGroup // queued request-log events not yet stored
	logs      logGroup       // answered requests' lines not yet queued
}

// Serve accepts connections on l until l is closed or the proxy is.
func (p *Proxy) Serve(l net.Listener) error {
	p.init()
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(p.log().Handler(), slog.LevelDebug),
	}
	return p.serveWith(l, srv, true)
}

// serveWith serves l with srv until l is closed or the proxy is; own
// counts l's address among the proxy's own listeners (a connection to one
// is refused as a loop).
func (p *Proxy) serveWith(l net.Listener, srv *http.Server, own bool) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	p.servers = append(p.servers, srv)
	if ap, err := netip.ParseAddrPort(l.Addr().String()); err == nil && own {
		p.listeners = append(p.listeners, ap)
	}
	p.mu.Unlock()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Close stops every listener and ends every open connection and tunnel.
func (p *Proxy) Close() error {
	p.init()
	p.mu.Lock()
	p.closed = true
	servers := p.servers
	tunnels := p.tunnels
	p.tunnels = nil
	directs := p.directs
	p.mu.Unlock()
	var err error
	for _, s := range servers {
		err = errors.Join(err, s.Close())
	}
	for _, l := range directs {
		l.Close()
	}
	for c := range tunnels {
		c.Close()
	}
	if p.transport != nil {
		p.transport.CloseIdleConnections()
	}
	p.closeGroups()
	p.logging.Wait()
	return err
}

// queued queues a request-log event (queue) and waits for it off the
// clients' path, unless the proxy is closed, when it waits here. It counts
// the event in before queueing it, so Close, which waits for every event
// counted in before it, cannot miss one whose queueing is under way.
func (p *Proxy) queued(queue func() (wait func() error)) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.logged(queue()())
		return
	}
	p.logging.Add(1)
	p.mu.Unlock()
	wait := queue()
	go func() {
		defer p.logging.Done()
		p.logged(wait())
	}()
}

func (p *Proxy) logged(err error) {
	if err != nil {
		p.log().Error("could not record the egress request", "error", err)
	}
}

func (p *Proxy) init() {
	p.once.Do(func() {
		_, _ = rand.Read(p.pathKey[:])
		// Enough idle connections per upstream for every client of a busy
		// proxy: with 16, 64 clients of one host reopened a connection for
		// most requests (15% more CPU a request).
		p.transport = &http.Transport{
			Proxy:                 nil, // never the proxy's own HTTP_PROXY
			DialContext:           p.dialPinned,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
			TLSClientConfig:       &tls.Config{RootCAs: p.UpstreamRoots, MinVersion: tls.VersionTLS12},
		}
		p.forwarder = &httputil.ReverseProxy{
			Rewrite:        p.rewrite,
			Transport:      scrubInformational{p},
			ModifyResponse: p.modifyResponse,
			ErrorHandler:   p.forwardError,
			BufferPool:     bufferPool{},
			ErrorLog:       slog.NewLogLogger(p.log().Handler(), slog.LevelDebug),
		}
	})
}

func (p *Proxy) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.DiscardHandler)
}

// ServeHTTP implements http.Handler: CONNECT opens a tunnel, an absolute-form
// request is forwarded, anything else is refused.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.init()
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs():
		p.forward(w, r)
	default:
		refuse(w, http.StatusBadRequest, "network.malformed", "this is warden's egress proxy: send requests in absolute form (GET http://host/path) or use CONNECT; set HTTP_PROXY and HTTPS_PROXY to its address")
	}
}

// refuseRecorded refuses e's request once its request-log event is stored
// (through Events: a refusal is not answered yet). Recording it in the
// handler's deferred record is not enough: net/http sends a body larger
// than its buffers (a refusal quoting a long CONNECT authority) while the
// handler runs.
func (p *Proxy) refuseRecorded(ctx context.Context, w http.ResponseWriter, e *entry, status int, rule, reason string) {
	e.status = status
	p.record(ctx, e)
	refuse(w, status, rule, reason)
}

// refuse answers a request the proxy will not carry, saying why.
func refuse(w http.ResponseWriter, status int, rule, reason string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Warden-Rule", rule)
	h.Set("Connection", "close")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("warden: " + reason + "\n"))
}

// track registers a hijacked connection so Close can end it; untrack
// forgets it.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.tunnels == nil {
		p.tunnels = map[net.Conn]struct{}{}
	}
	p.tunnels[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// isSelf reports whether ap is one of the proxy's own listeners.
func (p *Proxy) isSelf(ap netip.AddrPort) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := ap.Addr().Unmap()
	for _, l := range p.listeners {
		if l.Port() != ap.Port() {
			continue
		}
		la := l.Addr().Unmap()
		if la == a || la.IsUnspecified() || a.IsUnspecified() || (la.IsLoopback() && a.IsLoopback()) {
			return true
		}
	}
	return false
}

// bufferPool lends the reverse proxy 32 KiB copy buffers from a pool
// rather than a new one per answer. They were 256 KiB, for fewer reads and
// writes on fast links; interleaved 100 MiB downloads measured no
// difference (plain HTTP 0.87 of direct with 32 KiB, 0.84 with 256 KiB,
// medians of 8 rounds, 2026-11-28), while 64 clients' buffers held 16 MiB
// of live heap and the proxy's resident memory under them fell from 43 to
// 35 MB with 32 KiB (docs/benchmarks.md).
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *buffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }

// scrubInformational is the forwarder's transport: it scrubs secret values
// from 1xx answers (103 Early Hints), which the reverse proxy passes to the
// client as they arrive, before ModifyResponse could see them.
type scrubInformational struct{ p *Proxy }

func (s scrubInformational) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.p.Secrets != nil {
		trace := &httptrace.ClientTrace{Got1xxResponse: func(_ int, h textproto.MIMEHeader) error {
			s.p.Secrets.scrubHeader(http.Header(h))
			return nil
		}}
		// Hooks added here run before the reverse proxy's own.
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	}
	return s.p.transport.RoundTrip(r)
}
