package egress_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/dnstest"
	"github.com/agentwarden/warden/netguard"
)

// directListener listens on addr:port, an address a test gives a name (as
// fakedns gives one in a sandbox), at the port of the upstream it stands
// in for; it skips the test when that cannot be bound.
func directListener(t *testing.T, addr string, port uint16) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", hostPort(addr, port))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", hostPort(addr, port), err)
	}
	return l
}

func names(m map[string]string) func(netip.Addr) (string, bool) {
	return func(a netip.Addr) (string, bool) {
		name, ok := m[a.String()]
		return name, ok
	}
}

// TestDirectTunnelIsJudgedByName: a client that ignored the proxy
// variables reached an address standing for a name; the tunnel goes to
// that name only when the policy allows the name, and the gate sees the
// name, never the address the client dialled.
func TestDirectTunnelIsJudgedByName(t *testing.T) {
	echo := startEcho(t)
	dns := dnstest.Start(t)
	dns.Set("echo.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("echo.test", echo.port)), options{})
	l := directListener(t, "127.0.0.3", echo.port)
	served := make(chan error, 1)
	go func() { served <- h.proxy.ServeDirect(l, names(map[string]string{"127.0.0.3": "echo.test"})) }()

	c, err := net.DialTimeout("tcp", l.Addr().String(), waitFor)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(waitFor))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("echo through the direct tunnel = %q, %v; want hello", line, err)
	}
	c.Close()
	var seen []string
	for _, r := range h.gate.requests() {
		seen = append(seen, r.Action+" "+r.Resource)
	}
	if want := netguard.ActionConnect + " " + hostPort("echo.test", echo.port); len(seen) != 1 || seen[0] != want {
		t.Errorf("the gate saw %q, want only %q", seen, want)
	}
	ev := h.events.wait(t, warden.EventEgressRequest, 1)
	if !strings.Contains(ev[0].summary, "echo.test") {
		t.Errorf("the request log says %q, want the name echo.test", ev[0].summary)
	}

	h.proxy.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeDirect after Close = %v, want nil", err)
		}
	case <-time.After(waitFor):
		t.Fatal("ServeDirect did not return after Close")
	}
}

// TestDirectTunnelRefusals: an address that stands for no name, a name the
// policy does not allow and a name that resolves to an address no rule can
// open are each closed with nothing sent upstream.
func TestDirectTunnelRefusals(t *testing.T) {
	echo := startEcho(t)
	dns := dnstest.Start(t)
	dns.Set("echo.test", []netip.Addr{loopback})
	dns.Set("meta.test", []netip.Addr{netip.MustParseAddr("169.254.169.254")})
	// Only other.test is allowed; echo.test is not, and meta.test is named
	// by a rule but resolves where no rule can open.
	policy := privatePolicy(hostPort("other.test", echo.port), hostPort("meta.test", echo.port))
	h := newHarness(t, dns, policy, options{noWait: true})
	l := directListener(t, "127.0.0.5", echo.port)
	go func() {
		_ = h.proxy.ServeDirect(l, names(map[string]string{"127.0.0.5": "echo.test"}))
	}()
	l2 := directListener(t, "127.0.0.6", echo.port)
	go func() {
		_ = h.proxy.ServeDirect(l2, names(map[string]string{"127.0.0.6": "meta.test"}))
	}()
	l3 := directListener(t, "127.0.0.7", echo.port)
	go func() { _ = h.proxy.ServeDirect(l3, names(nil)) }()

	for _, addr := range []string{l.Addr().String(), l2.Addr().String(), l3.Addr().String()} {
		c, err := net.DialTimeout("tcp", addr, waitFor)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("hello\n"))
		ended, err := readEnds(c, c, waitFor)
		if !ended {
			t.Errorf("a refused direct connection to %s was not closed: %v", addr, err)
		}
		c.Close()
	}
	if n := echo.accepts.connections(t); n != 0 {
		t.Errorf("the upstream accepted %d connections, want none", n)
	}
	for _, ev := range h.events.wait(t, warden.EventEgressRequest, 2) {
		if ev.sev == warden.SevInfo {
			t.Errorf("a refused direct connection was logged as allowed: %q", ev.summary)
		}
	}
}

// TestDirectHTTPIsForwardedForTheName: plain HTTP to an address standing
// for a name is forwarded as an absolute-form request for that name, with
// the Host header it names whatever the client sent, and refused with a
// reason when the policy refuses the name.
func TestDirectHTTPIsForwardedForTheName(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "served "+r.Host+" "+r.URL.RequestURI())
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("web.test", []netip.Addr{loopback})
	dns.Set("blocked.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("web.test", up.port)), options{noWait: true})
	l := directListener(t, "127.0.0.8", up.port)
	go func() {
		_ = h.proxy.ServeDirectHTTP(l, names(map[string]string{"127.0.0.8": "web.test"}))
	}()
	l2 := directListener(t, "127.0.0.9", up.port)
	go func() {
		_ = h.proxy.ServeDirectHTTP(l2, names(map[string]string{"127.0.0.9": "blocked.test"}))
	}()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: waitFor}
	t.Cleanup(client.CloseIdleConnections)

	req, _ := http.NewRequest(http.MethodGet, "http://"+l.Addr().String()+"/a?b=c", nil)
	req.Host = "elsewhere.test"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "served " + hostPort("web.test", up.port) + " /a?b=c"; resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("direct GET = %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	var seen []string
	for _, r := range h.gate.requests() {
		seen = append(seen, r.Action+" "+r.Resource)
	}
	if len(seen) != 1 || seen[0] != netguard.ActionFetch+" http://"+hostPort("web.test", up.port) {
		t.Errorf("the gate saw %q, want one fetch of web.test", seen)
	}

	resp, err = client.Get("http://" + l2.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Warden-Rule") == "" {
		t.Errorf("direct GET of a refused name = %d (rule %q) %q, want 403 with the rule", resp.StatusCode, resp.Header.Get("X-Warden-Rule"), body)
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("the upstream saw %d requests, want 1", n)
	}
}

// TestDirectAskWaitEndsWhenTheClientLeaves: a direct connection to a name
// the policy asks about waits for the approval it opened, and stops
// waiting when its client hangs up; the name is never looked up. Once
// approved, the byte the client sent while it waited goes first.
func TestDirectAskWaitEndsWhenTheClientLeaves(t *testing.T) {
	h, ap, target := askHarness(t, false)
	_, portText, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(target, "http://"), "/"))
	port64, _ := strconv.ParseUint(portText, 10, 16)
	port := uint16(port64)
	l := directListener(t, "127.0.0.10", port)
	go func() { _ = h.proxy.ServeDirect(l, names(map[string]string{"127.0.0.10": "ask.test"})) }()

	c, err := net.DialTimeout("tcp", l.Addr().String(), waitFor)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for len(ap.list()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(ap.list()) == 0 {
		t.Fatal("the direct connection opened no approval")
	}
	c.Close()
	for !ap.gaveUp.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !ap.gaveUp.Load() {
		t.Fatal("the direct connection still waits for an answer after its client left")
	}
	if n := h.dns.Queries("ask.test"); n != 0 {
		t.Errorf("ask.test was looked up %d times, want 0", n)
	}

	// A client that sends its request while it waits, then approved.
	c, err = net.DialTimeout("tcp", l.Addr().String(), waitFor)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(waitFor))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: ask.test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case ap.answers <- true:
	case <-time.After(waitFor):
		t.Fatal("the second direct connection never waited for an approval")
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer through the approved direct tunnel: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "reached" {
		t.Errorf("the upstream answered %q, want reached (the request's first byte must go first)", body)
	}
}
