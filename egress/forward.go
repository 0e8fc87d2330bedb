package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden/netguard"
)

type entryKey struct{}

// forward serves an absolute-form request (GET http://host/path): judge it,
// then hand it to the reverse proxy, which connects only to the pinned
// address and streams the answer back. A redirect goes back to the client
// like any other answer; the client's next request is judged again.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	e := &entry{start: time.Now(), method: r.Method, raw: r.URL.Host}
	defer p.record(r.Context(), e)
	t, err := netguard.ParseURL(r.RequestURI)
	e.target = t
	e.v = p.decide(r.Context(), netguard.ActionFetch, t.Origin(), t, r.Method, err)
	if !e.v.allowed() {
		p.refuseRecorded(r.Context(), w, e, e.v.status, e.v.Rule, e.v.Reason)
		return
	}
	p.forwardChecked(w, r, e, t, false)
}

// forwardChecked forwards an allowed request unless it carries a secret
// placeholder where it may not go; that is refused and alerted on.
func (p *Proxy) forwardChecked(w http.ResponseWriter, r *http.Request, e *entry, t netguard.Target, overTLS bool) {
	if rule, why := p.Secrets.checkRequest(r, t, overTLS); rule != "" {
		e.note = why
		p.secretRefused(r.Context(), t, why)
		p.refuseRecorded(r.Context(), w, e, http.StatusForbidden, rule, why)
		return
	}
	p.serveForward(w, r, e, t)
}

// serveForward hands an allowed request to the reverse proxy.
func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request, e *entry, t netguard.Target) {
	ctx := withPin(r.Context(), e.v.pinned)
	ctx = contextWithEntry(ctx, e, t)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &countingBody{ReadCloser: r.Body, n: &e.up}
	}
	cw := &countingWriter{ResponseWriter: w, n: &e.down, p: p}
	p.forwarder.ServeHTTP(cw, r.WithContext(ctx))
	if e.status == 0 {
		e.status = cw.status
	}
	// The answer goes out before the request log is written.
	_ = http.NewResponseController(w).Flush()
	e.answered = true
}

// rewrite builds the outgoing request: the canonical target, nothing that
// points back at the proxy, and declared secrets in place of placeholders.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	fe := entryFrom(pr.In.Context())
	t := fe.target
	scheme := map[string]string{"ws": "http", "wss": "https"}[t.Scheme]
	if scheme == "" {
		scheme = t.Scheme
	}
	host := t.Host
	if t.IsAddr() && t.Addr.Is6() {
		host = "[" + host + "]"
	}
	if def := map[string]uint16{"http": 80, "https": 443}[scheme]; t.Port != def {
		host = t.Authority()
	}
	pr.Out.URL = &url.URL{Scheme: scheme, Host: host, Path: pr.In.URL.Path, RawPath: pr.In.URL.RawPath, RawQuery: pr.In.URL.RawQuery}
	pr.Out.Host = host
	pr.Out.Header.Del("Proxy-Authorization")
	pr.Out.Header.Del("Proxy-Connection")
	p.Secrets.substitute(pr.Out, t)
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	fe := entryFrom(resp.Request.Context())
	fe.entry.status = resp.StatusCode
	return p.Secrets.scrubResponse(resp, fe.target)
}

func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	fe := entryFrom(r.Context())
	fe.entry.status, fe.entry.note = http.StatusBadGateway, err.Error()
	refuse(w, http.StatusBadGateway, "network.upstream_failed", fmt.Sprintf("%s (%s): %v", fe.target.Authority(), fe.entry.v.pinned, err))
}

// forwardEntry is what rewrite and the response hooks need of a request.
type forwardEntry struct {
	entry  *entry
	target netguard.Target
}

func contextWithEntry(ctx context.Context, e *entry, t netguard.Target) context.Context {
	return context.WithValue(ctx, entryKey{}, &forwardEntry{entry: e, target: t})
}

func entryFrom(ctx context.Context) *forwardEntry {
	if fe, ok := ctx.Value(entryKey{}).(*forwardEntry); ok {
		return fe
	}
	return &forwardEntry{entry: &entry{}}
}

// countingWriter counts the bytes of the answer and remembers its status.
type countingWriter struct {
	http.ResponseWriter
	n      *atomic.Int64
	status int
	p      *Proxy
}

// Hijack hands an upgraded connection (a WebSocket) to the reverse proxy,
// tracked so Close ends it too.
func (c *countingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(c.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if !c.p.track(conn) {
		conn.Close()
		return nil, nil, http.ErrServerClosed
	}
	return &trackedConn{Conn: conn, p: c.p}, rw, nil
}

// trackedConn forgets itself when closed.
type trackedConn struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() { t.p.untrack(t.Conn) })
	return t.Conn.Close()
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// countingBody counts the bytes of a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.n.Add(int64(n))
	return n, err
}
