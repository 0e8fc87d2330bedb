package egress_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/internal/dnstest"
	"github.com/agentwarden/warden/netguard"
)

func TestConnectRefusesBlockedTargets(t *testing.T) {
	// Rules name every target, so what refuses them is the address itself.
	h := newHarness(t, nil, netguard.Policy{Allowed: []string{"127.0.0.1:22", "169.254.169.254:80", "127.0.0.1:443"}}, options{})
	for _, tc := range []struct{ target, rule string }{
		{"127.0.0.1:22", "network.private_address"},
		{"169.254.169.254:80", "network.blocked_address"},
		{"0x7f000001:443", "network.private_address"},
	} {
		_, br, resp := h.connect(tc.target, "")
		body, _ := io.ReadAll(io.LimitReader(br, 4096))
		wantRefusal(t, "CONNECT "+tc.target, resp, string(body), http.StatusForbidden, tc.rule)
	}
}

func TestConnectToOwnListenerIsRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := netip.MustParseAddrPort(l.Addr().String()).Port()
	self := hostPort("127.0.0.1", port)
	h := newHarness(t, nil, privatePolicy(self, hostPort("localhost", port)), options{listener: l})
	for _, target := range []string{self, hostPort("0x7f000001", port), hostPort("localhost", port)} {
		_, br, resp := h.connect(target, "")
		body, _ := io.ReadAll(io.LimitReader(br, 4096))
		wantRefusal(t, "CONNECT "+target, resp, string(body), http.StatusForbidden, "network.self_connection")
	}
	resp, body := h.get(h.client(nil), "http://"+self+"/", nil)
	wantRefusal(t, "GET http://"+self+"/", resp, body, http.StatusForbidden, "network.self_connection")
}

func TestConnectDNSRebindingNeverReachesRefusedAddress(t *testing.T) {
	a := startUpstream(t, "127.0.0.1:0", func(http.ResponseWriter, *http.Request) {}, nil)
	b := startUpstream(t, hostPort("127.0.0.2", a.port), func(http.ResponseWriter, *http.Request) {}, nil)
	dns := dnstest.Start(t)
	dns.Set("rebind.test", []netip.Addr{loopback}, []netip.Addr{loopback2})
	target := hostPort("rebind.test", a.port)
	h := newHarness(t, dns, privatePolicy(target), options{})
	var allowed, refused int
	for i := range 6 {
		c, br, resp := h.connect(target, "")
		switch resp.StatusCode {
		case http.StatusOK:
			allowed++
		case http.StatusForbidden:
			refused++
			body, _ := io.ReadAll(io.LimitReader(br, 4096))
			wantRefusal(t, "refused CONNECT", resp, string(body), http.StatusForbidden, "network.private_address")
		default:
			t.Errorf("CONNECT %d: status %d, want 200 or 403", i, resp.StatusCode)
		}
		c.Close()
	}
	if allowed == 0 || refused == 0 {
		t.Errorf("%d allowed and %d refused; the name did not alternate, so rebinding was not exercised", allowed, refused)
	}
	if n := a.accepts.connections(t); n == 0 {
		t.Errorf("127.0.0.1 accepted no connection: the connection count does not work")
	}
	if n := b.accepts.connections(t); n != 0 {
		t.Errorf("127.0.0.2 accepted %d connections, want 0", n)
	}
}

// openEchoTunnel starts an echo server reachable as echo.test and opens a
// CONNECT tunnel to it through h's proxy.
func openEchoTunnel(t *testing.T) (*harness, net.Conn, *bufio.Reader) {
	t.Helper()
	echo := startEcho(t)
	dns := dnstest.Start(t)
	dns.Set("echo.test", []netip.Addr{loopback})
	target := hostPort("echo.test", echo.port)
	h := newHarness(t, dns, privatePolicy(target), options{})
	c, br, resp := h.connect(target, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s = %d, want 200", target, resp.StatusCode)
	}
	return h, c, br
}

func TestConnectTunnelCarriesBytesBothWays(t *testing.T) {
	h, c, br := openEchoTunnel(t)
	const msg = "hello through the tunnel\n"
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
		t.Fatalf("read %q (%v), want the echo %q", got, err, msg)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the half-close read %q (%v), want EOF", rest, err)
	}
	evs := h.events.wait(t, warden.EventEgressRequest, 1)
	want := map[string]any{
		"method":     http.MethodConnect,
		"host":       "echo.test",
		"status":     float64(200),
		"bytes_up":   float64(len(msg)),
		"bytes_down": float64(len(msg)),
		"verdict":    warden.Allow.String(),
	}
	for k, v := range want {
		if evs[0].meta[k] != v {
			t.Errorf("event meta[%s] = %v, want %v (meta %s)", k, evs[0].meta[k], v, evs[0].raw)
		}
	}
}

func TestConnectCarriesBytesSentWithTheRequest(t *testing.T) {
	echo := startEcho(t)
	target := hostPort("127.0.0.1", echo.port)
	h := newHarness(t, nil, privatePolicy(target), options{})
	const early = "sent before the answer"
	c, br, resp := h.connect(target, early)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s = %d, want 200", target, resp.StatusCode)
	}
	got := make([]byte, len(early))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != early {
		t.Fatalf("read %q (%v), want the echo %q", got, err, early)
	}
	// The relay after the early bytes carries the rest, and the request
	// log counts both.
	const later = "and sent after it"
	if _, err := io.WriteString(c, later); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, len(later))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != later {
		t.Fatalf("read %q (%v), want the echo %q", got, err, later)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the half-close read %q (%v), want EOF", rest, err)
	}
	evs := h.events.wait(t, warden.EventEgressRequest, 1)
	n := float64(len(early) + len(later))
	if evs[0].meta["bytes_up"] != n || evs[0].meta["bytes_down"] != n {
		t.Errorf("event counts %v bytes up and %v down, want %v each (meta %s)", evs[0].meta["bytes_up"], evs[0].meta["bytes_down"], n, evs[0].raw)
	}
}

func TestCloseEndsOpenTunnel(t *testing.T) {
	h, c, br := openEchoTunnel(t)
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	if b, err := br.ReadByte(); err != nil || b != 'x' {
		t.Fatalf("read %q (%v), want the echo x", b, err)
	}
	if err := h.proxy.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if ended, err := readEnds(c, br, waitFor); !ended {
		t.Errorf("the tunnel is still open %v after Close (%v)", waitFor, err)
	}
	if returned, err := h.serveReturned(); !returned || err != nil {
		t.Errorf("Serve returned %v with %v after Close, want true with nil", returned, err)
	}
}

// TestCloseEndsTunnelToSilentUpstream: an upstream that neither writes nor
// closes (a long poll, an idle SSH session) must not keep a tunnel alive
// after Close. The tunnel's egress_request event is written when the tunnel
// ends, so it is the witness.
func TestCloseEndsTunnelToSilentUpstream(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		conns  []net.Conn
		closed = make(chan struct{}, 1) // the proxy closed (or half-closed) its side
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				_, _ = io.Copy(io.Discard, c)
				closed <- struct{}{}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	port := netip.MustParseAddrPort(l.Addr().String()).Port()
	target := hostPort("127.0.0.1", port)
	h := newHarness(t, nil, privatePolicy(target), options{})
	c, br, resp := h.connect(target, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s = %d, want 200", target, resp.StatusCode)
	}
	if err := h.proxy.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if ended, err := readEnds(c, br, waitFor); !ended {
		t.Errorf("the client side is still open %v after Close (%v)", waitFor, err)
	}
	select {
	case <-closed:
	case <-time.After(waitFor / 2):
		t.Errorf("the proxy did not even half-close the upstream connection within %v of Close", waitFor/2)
	}
	deadline := time.Now().Add(waitFor / 2)
	for len(h.events.ofType(warden.EventEgressRequest)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the tunnel has not ended %v after Close: its egress_request event was never written (the proxy still reads the upstream connection)", waitFor/2)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeAfterCloseClosesListener: Serve on a closed proxy returns at
// once, and, as http.Server.Serve does, closes the listener it was given, so
// clients are refused rather than left waiting in the accept queue.
func TestServeAfterCloseClosesListener(t *testing.T) {
	g, err := netguard.New(netguard.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	p := &egress.Proxy{Gate: &fakeGate{stage: netguard.Stage{Guard: g}}, Guard: g}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := p.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve after Close = %v, want %v", err, http.ErrServerClosed)
	}
	_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on the listener after Serve returned: %v, want %v", err, net.ErrClosed)
	}
}

// TestCloseRacesServe closes proxies whose Serve has just started. It can
// only fail under -race; the race detector reports a given race once per
// process, so with -count=N only the first run fails.
func TestCloseRacesServe(t *testing.T) {
	g, err := netguard.New(netguard.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		p := &egress.Proxy{Gate: &fakeGate{stage: netguard.Stage{Guard: g}}, Guard: g}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- p.Serve(l) }()
		if err := p.Close(); err != nil {
			t.Errorf("round %d: Close: %v", i, err)
		}
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("round %d: Serve = %v", i, err)
			}
		case <-time.After(waitFor):
			t.Fatalf("round %d: Serve did not return within %v of Close", i, waitFor)
		}
		l.Close()
	}
}

// TestConnectAskWaitsForApproval: a tunnel to a host the policy asks about
// opens once a human approves, and not before.
func TestConnectAskWaitsForApproval(t *testing.T) {
	h, ap, target := askHarness(t, false)
	authority := strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/")
	go func() { ap.answers <- true }()
	c, br, resp := h.connect(authority, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s after approval: %d", authority, resp.StatusCode)
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: ask.test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	if string(body) != "reached" {
		t.Errorf("through the tunnel: %q, want reached", body)
	}
	if n := len(ap.list()); n != 1 {
		t.Errorf("%d approvals opened, want 1", n)
	}
}

// TestAskWaitEndsWhenTheClientLeaves: a client that hangs up while its
// request waits for an answer ends the wait; nothing is dialled.
func TestAskWaitEndsWhenTheClientLeaves(t *testing.T) {
	h, ap, target := askHarness(t, false)
	authority := strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/")
	c := h.dial()
	if _, err := io.WriteString(c, "CONNECT "+authority+" HTTP/1.1\r\nHost: "+authority+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for len(ap.list()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c.Close()
	for !ap.gaveUp.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !ap.gaveUp.Load() {
		t.Fatal("the request still waits for an answer after its client left")
	}
	if n := h.dns.Queries("ask.test"); n != 0 {
		t.Errorf("ask.test was looked up %d times, want 0", n)
	}
}
