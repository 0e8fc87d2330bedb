package egress_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/internal/dnstest"
	"github.com/agentwarden/warden/netguard"
)

// waitFor bounds every wait in these tests.
const waitFor = 2 * time.Second

var (
	loopback  = netip.MustParseAddr("127.0.0.1")
	loopback2 = netip.MustParseAddr("127.0.0.2")
)

// fakeGate is a Checker that runs a real netguard.Stage (or fn, when set,
// or fails with err) and keeps a copy of every request it was asked about.
type fakeGate struct {
	stage     netguard.Stage
	err       error
	fn        func(*warden.Request) warden.Decision
	approvals *fakeApprovals

	mu   sync.Mutex
	seen []warden.Request
}

func (f *fakeGate) CheckWith(ctx context.Context, req *warden.Request, opt gate.CheckOptions) (warden.Decision, error) {
	d, err := f.check(ctx, req)
	if err != nil || d.Verdict != warden.Ask || f.approvals == nil {
		return d, err
	}
	if ok, _ := f.Covered(ctx, req); ok {
		return warden.Allowf("grant.session", "approved by the test"), nil
	}
	if opt.Approval != "" {
		d.ApprovalID = f.approvals.open(req)
	}
	return d, nil
}

// WaitAnswer waits for the next answer a test sends to the fake approvals.
func (f *fakeGate) WaitAnswer(ctx context.Context, _ *warden.Request, _ warden.Decision) (bool, warden.Decision, error) {
	if f.approvals == nil {
		return false, warden.Decision{}, errors.New("no approvals")
	}
	select {
	case ans := <-f.approvals.answers:
		if !ans {
			return false, warden.Denyf("approval.denied", "denied by the test"), nil
		}
		f.approvals.mu.Lock()
		f.approvals.granted = true
		f.approvals.mu.Unlock()
		return true, warden.Decision{}, nil
	case <-ctx.Done():
		f.approvals.gaveUp.Store(true)
		return false, warden.Decision{}, ctx.Err()
	}
}

// Covered reports whether the fake approvals were answered yes.
func (f *fakeGate) Covered(context.Context, *warden.Request) (bool, error) {
	if f.approvals == nil {
		return false, nil
	}
	f.approvals.mu.Lock()
	defer f.approvals.mu.Unlock()
	return f.approvals.granted, nil
}

// fakeApprovals stands in for the approval queue: open counts the
// approvals opened, and each answer sent ends one wait.
type fakeApprovals struct {
	mu      sync.Mutex
	opened  []string
	granted bool // an approval was answered yes: a session grant
	answers chan bool
	gaveUp  atomic.Bool // a wait ended because the request's context did
}

func (a *fakeApprovals) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.opened...)
}

func (a *fakeApprovals) open(req *warden.Request) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.opened = append(a.opened, req.Resource)
	return fmt.Sprintf("appr-%d", len(a.opened))
}

func (f *fakeGate) check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	c := *req
	c.Params = maps.Clone(req.Params)
	f.mu.Lock()
	f.seen = append(f.seen, c)
	f.mu.Unlock()
	switch {
	case f.err != nil:
		return warden.Decision{}, f.err
	case f.fn != nil:
		return f.fn(req), nil
	}
	return f.stage.Check(ctx, req)
}

func (f *fakeGate) requests() []warden.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]warden.Request(nil), f.seen...)
}

// addresses returns params.addresses of a request the gate saw, and whether
// it was present.
func addresses(t *testing.T, req warden.Request) ([]string, bool) {
	t.Helper()
	raw, ok := req.Params[netguard.ParamAddresses]
	if !ok {
		return nil, false
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("params.addresses = %s: %v", raw, err)
	}
	return list, true
}

// event is one security event the proxy emitted.
type event struct {
	typ     string
	sev     warden.Severity
	summary string
	raw     string
	meta    map[string]any
}

// eventLog records what the proxy's EventFunc receives.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

func (l *eventLog) record(_ context.Context, typ string, sev warden.Severity, summary string, meta json.RawMessage) error {
	e := event{typ: typ, sev: sev, summary: summary, raw: string(meta)}
	if err := json.Unmarshal(meta, &e.meta); err != nil {
		e.meta = map[string]any{"unparseable": err.Error()}
	}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	return nil
}

func (l *eventLog) ofType(typ string) []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []event
	for _, e := range l.events {
		if e.typ == typ {
			out = append(out, e)
		}
	}
	return out
}

// wait returns the events of type typ once there are at least n of them
// (the proxy records a request after its answer is written), failing the
// test after waitFor.
func (l *eventLog) wait(t *testing.T, typ string, n int) []event {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		if evs := l.ofType(typ); len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d %s events after %v, want %d", len(l.ofType(typ)), typ, waitFor, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// acceptLog is a listener that remembers the remote address of every
// connection it accepts, so a test can tell whether anything connected.
type acceptLog struct {
	net.Listener
	mu      sync.Mutex
	remotes []string
	probes  map[string]bool
	changed chan struct{}
}

func newAcceptLog(l net.Listener) *acceptLog {
	return &acceptLog{Listener: l, probes: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (a *acceptLog) Accept() (net.Conn, error) {
	c, err := a.Listener.Accept()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.remotes = append(a.remotes, c.RemoteAddr().String())
	a.mu.Unlock()
	select {
	case a.changed <- struct{}{}:
	default:
	}
	return c, nil
}

// connections returns how many connections other than the test's own
// probes were accepted. It first connects a probe and waits until the probe
// is accepted: the kernel's accept queue is first-in first-out, so any
// connection made before the call has been counted by then.
func (a *acceptLog) connections(t *testing.T) int {
	t.Helper()
	probe, err := net.DialTimeout("tcp", a.Addr().String(), waitFor)
	if err != nil {
		t.Fatalf("probe %s: %v", a.Addr(), err)
	}
	defer probe.Close()
	me := probe.LocalAddr().String()
	a.mu.Lock()
	a.probes[me] = true
	a.mu.Unlock()
	deadline := time.After(waitFor)
	for {
		a.mu.Lock()
		n, found := 0, false
		for _, r := range a.remotes {
			if r == me {
				found = true
			} else if !a.probes[r] {
				n++
			}
		}
		a.mu.Unlock()
		if found {
			return n
		}
		select {
		case <-a.changed:
		case <-deadline:
			t.Fatalf("the probe connection to %s was not accepted within %v", a.Addr(), waitFor)
		}
	}
}

// upstream is a local HTTP(S) server that counts connections and requests.
type upstream struct {
	*httptest.Server
	accepts *acceptLog
	port    uint16
	mu      sync.Mutex
	reqs    []*http.Request
}

// startUpstream serves h on addr (e.g. 127.0.0.1:0). tlsCert, when set,
// makes it an HTTPS server with that certificate. It skips the test when addr
// cannot be bound.
func startUpstream(t *testing.T, addr string, h http.HandlerFunc, tlsCert *tls.Certificate) *upstream {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s for an upstream server: %v", addr, err)
	}
	u := &upstream{accepts: newAcceptLog(l)}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.reqs = append(u.reqs, r.Clone(context.Background()))
		u.mu.Unlock()
		h(w, r)
	}))
	u.Server.Listener.Close()
	u.Server.Listener = u.accepts
	if tlsCert != nil {
		u.Server.TLS = &tls.Config{Certificates: []tls.Certificate{*tlsCert}}
		u.Server.StartTLS()
	} else {
		u.Server.Start()
	}
	t.Cleanup(u.Server.Close)
	u.port = netip.MustParseAddrPort(l.Addr().String()).Port()
	return u
}

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.reqs...)
}

// harness is a running proxy with its fake gate, DNS server and event log.
type harness struct {
	t      *testing.T
	dns    *dnstest.Server
	gate   *fakeGate
	events *eventLog
	proxy  *egress.Proxy
	addr   string // the proxy's listener
	served chan error
}

// options tunes a harness.
type options struct {
	secrets *egress.Secrets
	roots   *x509.CertPool
	// listener, when set, is the proxy's listener (so a policy can name it).
	listener net.Listener
	gateErr  error
	gateFn   func(*warden.Request) warden.Decision
	// approvals, when set, lets asks open approvals on channel "proxy".
	approvals *fakeApprovals
	noWait    bool
	// queue, when set, is the proxy's Queue.
	queue egress.QueueFunc
}

// newHarness starts a proxy judging with policy; dns may be nil.
func newHarness(t *testing.T, dns *dnstest.Server, policy netguard.Policy, o options) *harness {
	t.Helper()
	g, err := netguard.New(policy)
	if err != nil {
		t.Fatalf("netguard.New: %v", err)
	}
	if dns == nil {
		dns = dnstest.Start(t)
	}
	h := &harness{
		t:      t,
		dns:    dns,
		gate:   &fakeGate{stage: netguard.Stage{Guard: g}, err: o.gateErr, fn: o.gateFn, approvals: o.approvals},
		events: &eventLog{},
		served: make(chan error, 1),
	}
	h.proxy = &egress.Proxy{
		Gate:          h.gate,
		Guard:         g,
		Resolver:      dns.Resolver(),
		Events:        h.events.record,
		Identity:      egress.Identity{Agent: "test"},
		Secrets:       o.secrets,
		UpstreamRoots: o.roots,
		DialTimeout:   waitFor,
		NoWait:        o.noWait,
		Queue:         o.queue,
	}
	if o.approvals != nil {
		h.proxy.Approvals = "proxy"
	}
	l := o.listener
	if l == nil {
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatalf("listen: %v", err)
		}
	}
	h.addr = l.Addr().String()
	go func() { h.served <- h.proxy.Serve(l) }()
	t.Cleanup(func() { h.proxy.Close() })
	return h
}

// client is an HTTP client that uses the proxy and never follows redirects.
func (h *harness) client(tlsConf *tls.Config) *http.Client {
	tr := &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: h.addr}),
		TLSClientConfig: tlsConf,
	}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       waitFor,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// get sends one request through the proxy and returns its answer and body.
func (h *harness) get(c *http.Client, rawURL string, header http.Header) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		h.t.Fatalf("NewRequest(%q): %v", rawURL, err)
	}
	maps.Copy(req.Header, header)
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("GET %s through the proxy: %v", rawURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("GET %s: read body: %v", rawURL, err)
	}
	return resp, string(body)
}

// dial connects to the proxy with a deadline.
func (h *harness) dial() net.Conn {
	h.t.Helper()
	c, err := net.DialTimeout("tcp", h.addr, waitFor)
	if err != nil {
		h.t.Fatalf("dial the proxy: %v", err)
	}
	h.t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(waitFor))
	return c
}

// raw writes a request as is and reads the answer.
func (h *harness) raw(request string) (*http.Response, string) {
	h.t.Helper()
	c := h.dial()
	if _, err := io.WriteString(c, request); err != nil {
		h.t.Fatalf("write %q: %v", request, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		h.t.Fatalf("read the answer to %q: %v", request, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// connect sends CONNECT authority and returns the connection, a reader
// positioned after the answer's header, and the answer.
func (h *harness) connect(authority, extra string) (net.Conn, *bufio.Reader, *http.Response) {
	h.t.Helper()
	c := h.dial()
	req := "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n" + extra
	if _, err := io.WriteString(c, req); err != nil {
		h.t.Fatalf("write CONNECT %s: %v", authority, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		h.t.Fatalf("read the answer to CONNECT %s: %v", authority, err)
	}
	return c, br, resp
}

// serveReturned reports whether Serve returned within waitFor, and its error.
func (h *harness) serveReturned() (bool, error) {
	select {
	case err := <-h.served:
		return true, err
	case <-time.After(waitFor):
		return false, nil
	}
}

// echoServer is a TCP server that echoes what it reads and closes when the
// client half-closes.
type echoServer struct {
	l       net.Listener
	accepts *acceptLog
	port    uint16
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	e := &echoServer{l: l, accepts: newAcceptLog(l), port: netip.MustParseAddrPort(l.Addr().String()).Port()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := e.accepts.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return e
}

// newCA makes a certificate authority and a server certificate it signed
// for hosts.
func newCA(t *testing.T, hosts ...string) (*x509.CertPool, *tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "egress test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		DNSNames:     hosts,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool, &tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// hostPort is "host:port".
func hostPort(host string, port uint16) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// privatePolicy allows the given rules and the loopback address 127.0.0.1.
func privatePolicy(allowed ...string) netguard.Policy {
	return netguard.Policy{Allowed: allowed, AllowPrivate: []string{"127.0.0.1"}}
}

// wantRefusal checks a refusal's status and X-Warden-Rule.
func wantRefusal(t *testing.T, what string, resp *http.Response, body string, status int, rule string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d (body %q)", what, resp.StatusCode, status, body)
	}
	if got := resp.Header.Get("X-Warden-Rule"); got != rule {
		t.Errorf("%s: X-Warden-Rule %q, want %q (body %q)", what, got, rule, body)
	}
}

// readEnds reads from r (which reads c) until a read fails, and reports
// whether it failed within d for a reason other than the read deadline: the
// other side closed the connection.
func readEnds(c net.Conn, r io.Reader, d time.Duration) (bool, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 512)
	for {
		if _, err := r.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return false, err
			}
			return true, err
		}
	}
}

// mustContainNone fails if s contains any of the secrets.
func mustContainNone(t *testing.T, what, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			t.Errorf("%s contains %q: %s", what, sec, s)
		}
	}
}
