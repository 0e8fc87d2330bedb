package egress_test

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/dnstest"
	"github.com/agentwarden/warden/netguard"
)

func TestForwardAllowedRequestThroughResolvedName(t *testing.T) {
	const body = "hello from app.test"
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body)
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", up.port)), options{})

	const path = "/secret-path?token=abc"
	origin := "http://" + hostPort("app.test", up.port)
	resp, got := h.get(h.client(nil), origin+path, nil)
	if resp.StatusCode != http.StatusOK || got != body {
		t.Fatalf("GET %s = %d %q, want 200 %q", origin+path, resp.StatusCode, got, body)
	}
	if reqs := up.requests(); len(reqs) != 1 || reqs[0].URL.RequestURI() != path {
		t.Errorf("upstream saw %d requests (first %v), want one for %s", len(reqs), reqs, path)
	}

	seen := h.gate.requests()
	if len(seen) != 1 {
		t.Fatalf("the gate saw %d requests, want 1", len(seen))
	}
	if addrs, _ := addresses(t, seen[0]); !slices.Equal(addrs, []string{"127.0.0.1"}) {
		t.Errorf("params.addresses = %q, want [127.0.0.1]", addrs)
	}
	if seen[0].Action != netguard.ActionFetch || seen[0].Resource != origin {
		t.Errorf("the gate saw %s %q, want %s %q", seen[0].Action, seen[0].Resource, netguard.ActionFetch, origin)
	}

	evs := h.events.wait(t, warden.EventEgressRequest, 1)
	if len(evs) != 1 {
		t.Fatalf("got %d egress_request events, want 1", len(evs))
	}
	e := evs[0]
	want := map[string]any{
		"method":     "GET",
		"host":       "app.test",
		"port":       float64(up.port),
		"status":     float64(200),
		"bytes_down": float64(len(body)),
		"verdict":    warden.Allow.String(),
	}
	for k, v := range want {
		if e.meta[k] != v {
			t.Errorf("event meta[%s] = %v, want %v (meta %s)", k, e.meta[k], v, e.raw)
		}
	}
	hash, _ := e.meta["path_hash"].(string)
	if hash == "" {
		t.Errorf("event meta has no path_hash: %s", e.raw)
	}
	mustContainNone(t, "the event summary", e.summary, "secret-path", "token=abc")
	mustContainNone(t, "the event metadata", e.raw, "secret-path", "token=abc")

	// Another path gets another hash; the same path the same one.
	// Each request's event is recorded after its answer is sent: wait for
	// one before the next request, so the events come in request order.
	h.get(h.client(nil), origin+"/other", nil)
	h.events.wait(t, warden.EventEgressRequest, 2)
	h.get(h.client(nil), origin+path, nil)
	evs = h.events.wait(t, warden.EventEgressRequest, 3)
	if other, again := evs[1].meta["path_hash"], evs[2].meta["path_hash"]; other == hash || again != hash {
		t.Errorf("path_hash: %q for %s, %q for /other, %q for %s again; want the first and last equal and /other different", hash, path, other, again, path)
	}
}

func TestForwardDNSRebindingNeverReachesRefusedAddress(t *testing.T) {
	a := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "A") }, nil)
	b := startUpstream(t, hostPort("127.0.0.2", a.port), func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "B") }, nil)
	dns := dnstest.Start(t)
	dns.Set("rebind.test", []netip.Addr{loopback}, []netip.Addr{loopback2})
	h := newHarness(t, dns, privatePolicy(hostPort("rebind.test", a.port)), options{})

	c := h.client(nil)
	target := "http://" + hostPort("rebind.test", a.port) + "/"
	var allowed, refused int
	for i := range 6 {
		resp, body := h.get(c, target, nil)
		switch resp.StatusCode {
		case http.StatusOK:
			allowed++
			if body != "A" {
				t.Errorf("request %d: body %q, want %q from 127.0.0.1", i, body, "A")
			}
		case http.StatusForbidden:
			refused++
			wantRefusal(t, "refused request", resp, body, http.StatusForbidden, "network.private_address")
		default:
			t.Errorf("request %d: status %d (%q), want 200 from 127.0.0.1 or 403", i, resp.StatusCode, body)
		}
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
	if n := len(b.requests()); n != 0 {
		t.Errorf("127.0.0.2 served %d requests, want 0", n)
	}
}

// TestForwardDialerRechecksAddress checks the second, independent check: a
// gate that allows an address the guard blocks still does not get it dialled.
func TestForwardDialerRechecksAddress(t *testing.T) {
	a := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "A") }, nil)
	b := startUpstream(t, hostPort("127.0.0.2", a.port), func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "B") }, nil)
	dns := dnstest.Start(t)
	dns.Set("b.test", []netip.Addr{loopback2})
	h := newHarness(t, dns, privatePolicy(hostPort("b.test", a.port)), options{
		gateFn: func(*warden.Request) warden.Decision {
			return warden.Allowf("test.allow_all", "this gate allows everything")
		},
	})
	resp, body := h.get(h.client(nil), "http://"+hostPort("b.test", a.port)+"/", nil)
	wantRefusal(t, "GET b.test (127.0.0.2, allowed by the gate only)", resp, body, http.StatusBadGateway, "network.upstream_failed")
	if n := b.accepts.connections(t); n != 0 {
		t.Errorf("127.0.0.2 accepted %d connections, want 0", n)
	}
}

func TestForwardRefusesBadAnswers(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }, nil)
	cases := []struct {
		name    string
		answers [][]netip.Addr // nil: the name does not exist
		rule    string
		addrs   []string
	}{
		{"mixed.test", [][]netip.Addr{{loopback, netip.MustParseAddr("10.0.0.7")}}, "network.private_address", []string{"127.0.0.1", "10.0.0.7"}},
		{"zero.test", [][]netip.Addr{{netip.MustParseAddr("0.0.0.0")}}, "network.blocked_address", []string{"0.0.0.0"}},
		{"nx.test", nil, "network.resolve", []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dns := dnstest.Start(t)
			if tc.answers != nil {
				dns.Set(tc.name, tc.answers...)
			}
			h := newHarness(t, dns, privatePolicy(hostPort(tc.name, up.port)), options{})
			resp, body := h.get(h.client(nil), "http://"+hostPort(tc.name, up.port)+"/", nil)
			wantRefusal(t, "GET "+tc.name, resp, body, http.StatusForbidden, tc.rule)
			seen := h.gate.requests()
			if len(seen) != 1 {
				t.Fatalf("the gate saw %d requests, want 1", len(seen))
			}
			if addrs, ok := addresses(t, seen[0]); !ok || !slices.Equal(addrs, tc.addrs) {
				t.Errorf("params.addresses = %q (present %v), want %q", addrs, ok, tc.addrs)
			}
		})
	}
	if n := up.accepts.connections(t); n != 0 {
		t.Errorf("the server on 127.0.0.1 accepted %d connections, want 0", n)
	}
}

func TestForwardNeverResolvesRefusedNames(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }, nil)
	dns := dnstest.Start(t)
	for _, name := range []string{"app.test", "denied.test", "unknown.test"} {
		dns.Set(name, []netip.Addr{loopback})
	}
	policy := privatePolicy(hostPort("app.test", up.port))
	policy.Denied = []string{"denied.test"}
	h := newHarness(t, dns, policy, options{})
	c := h.client(nil)

	// The control: an allowed name is resolved, and the server counts it.
	if resp, body := h.get(c, "http://"+hostPort("app.test", up.port)+"/", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET app.test = %d %q, want 200", resp.StatusCode, body)
	}
	if dns.Queries("app.test") == 0 {
		t.Fatalf("app.test was allowed but never resolved: the query count does not work")
	}
	for _, tc := range []struct{ name, rule string }{
		{"denied.test", "network.denied_domain"},
		{"unknown.test", "network.unknown_domain"},
	} {
		resp, body := h.get(c, "http://"+hostPort(tc.name, up.port)+"/", nil)
		wantRefusal(t, "GET "+tc.name, resp, body, http.StatusForbidden, tc.rule)
		if n := dns.Queries(tc.name); n != 0 {
			t.Errorf("%s was looked up %d times, want 0", tc.name, n)
		}
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("the server served %d requests, want 1 (app.test only)", n)
	}
}

func TestForwardIgnoresHostHeader(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", up.port)), options{})
	authority := hostPort("app.test", up.port)
	resp, body := h.raw("GET http://" + authority + "/where HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d (%q), want 200", resp.StatusCode, body)
	}
	reqs := up.requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests, want 1", len(reqs))
	}
	if reqs[0].Host != authority {
		t.Errorf("upstream saw Host %q, want %q", reqs[0].Host, authority)
	}
	for name, values := range reqs[0].Header {
		mustContainNone(t, "upstream header "+name, strings.Join(values, ", "), "169.254.169.254")
	}
}

func TestForwardPassesRedirectsBackAndJudgesTheNextRequest(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	dns.Set("evil.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", up.port)), options{})
	c := h.client(nil)
	cases := []struct{ to, rule string }{
		{"http://169.254.169.254/latest/meta-data/", "network.blocked_address"},
		{"http://" + hostPort("evil.test", up.port) + "/", "network.unknown_domain"},
		{"http://" + hostPort("::ffff:127.0.0.1", up.port) + "/", "network.unknown_domain"},
	}
	for _, tc := range cases {
		before := len(up.requests())
		from := "http://" + hostPort("app.test", up.port) + "/r?to=" + url.QueryEscape(tc.to)
		resp, body := h.get(c, from, nil)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != tc.to {
			t.Errorf("GET %s = %d Location %q, want 302 Location %q", from, resp.StatusCode, resp.Header.Get("Location"), tc.to)
			continue
		}
		resp, body = h.get(c, tc.to, nil)
		wantRefusal(t, "following the redirect to "+tc.to, resp, body, http.StatusForbidden, tc.rule)
		if n := len(up.requests()) - before; n != 1 {
			t.Errorf("the server saw %d requests for the redirect to %s and its follow-up, want 1", n, tc.to)
		}
	}
}

func TestForwardRefusesOtherSchemesAndOriginForm(t *testing.T) {
	h := newHarness(t, nil, privatePolicy("x.test"), options{})
	for _, target := range []string{"ftp://x.test/", "gopher://x.test:70/", "file:///etc/passwd"} {
		resp, body := h.raw("GET " + target + " HTTP/1.1\r\nHost: x.test\r\nConnection: close\r\n\r\n")
		wantRefusal(t, "GET "+target, resp, body, http.StatusForbidden, "network.scheme")
	}
	n := len(h.gate.requests())
	resp, body := h.raw("GET / HTTP/1.1\r\nHost: x.test\r\nConnection: close\r\n\r\n")
	wantRefusal(t, "GET / (origin form)", resp, body, http.StatusBadRequest, "network.malformed")
	if got := len(h.gate.requests()); got != n {
		t.Errorf("an origin-form request reached the gate (%d requests, want %d)", got, n)
	}
}

func TestForwardAskWithoutApprovalChannelIsRefused(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }, nil)
	dns := dnstest.Start(t)
	dns.Set("ask.test", []netip.Addr{loopback})
	h := newHarness(t, dns, netguard.Policy{AskUnknown: true, AllowPrivate: []string{"127.0.0.1"}}, options{})
	resp, body := h.get(h.client(nil), "http://"+hostPort("ask.test", up.port)+"/", nil)
	wantRefusal(t, "GET ask.test", resp, body, http.StatusForbidden, "network.unknown_domain")
	if !strings.Contains(body, "no approval channel") {
		t.Errorf("the refusal %q does not say why nobody can be asked", body)
	}
	if n := dns.Queries("ask.test"); n != 0 {
		t.Errorf("ask.test was looked up %d times before anyone approved it, want 0", n)
	}
	if n := up.accepts.connections(t); n != 0 {
		t.Errorf("the server accepted %d connections, want 0", n)
	}
}

// askHarness is a proxy whose asks open fake approvals, in front of an
// upstream that answers "reached" for the name ask.test.
func askHarness(t *testing.T, noWait bool) (*harness, *fakeApprovals, string) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }, nil)
	dns := dnstest.Start(t)
	dns.Set("ask.test", []netip.Addr{loopback})
	ap := &fakeApprovals{answers: make(chan bool)}
	h := newHarness(t, dns, netguard.Policy{AskUnknown: true, AllowPrivate: []string{"127.0.0.1"}}, options{approvals: ap, noWait: noWait})
	return h, ap, "http://" + hostPort("ask.test", up.port) + "/"
}

// TestForwardAskWaitsForApproval: a request to a host the policy asks about
// waits for the approval it opened, and the name reaches DNS only once a
// human approved; the grant then covers the next request without asking.
func TestForwardAskWaitsForApproval(t *testing.T) {
	h, ap, target := askHarness(t, false)
	type answer struct {
		resp *http.Response
		body string
	}
	done := make(chan answer, 1)
	go func() {
		resp, body := h.get(h.client(nil), target, nil)
		done <- answer{resp, body}
	}()
	select {
	case ap.answers <- true:
	case a := <-done:
		t.Fatalf("the request ended before anyone answered: %d %q", a.resp.StatusCode, a.body)
	case <-time.After(waitFor):
		t.Fatal("the request never waited for an approval")
	}
	if n := h.dns.Queries("ask.test"); n != 0 {
		t.Errorf("ask.test was looked up %d times before the answer, want 0", n)
	}
	a := <-done
	if a.resp.StatusCode != http.StatusOK || a.body != "reached" {
		t.Fatalf("after approval: %d %q, want 200 reached", a.resp.StatusCode, a.body)
	}
	if n := h.dns.Queries("ask.test"); n == 0 {
		t.Error("ask.test was never looked up, yet the request reached it")
	}
	resp, body := h.get(h.client(nil), target+"other", nil)
	if resp.StatusCode != http.StatusOK || body != "reached" {
		t.Fatalf("a second request under the grant: %d %q", resp.StatusCode, body)
	}
	if n := len(ap.list()); n != 1 {
		t.Errorf("%d approvals opened, want 1: the grant covers the second request", n)
	}
}

func TestForwardAskDeniedIsRefused(t *testing.T) {
	h, ap, target := askHarness(t, false)
	go func() { ap.answers <- false }()
	resp, body := h.get(h.client(nil), target, nil)
	wantRefusal(t, "GET ask.test, denied", resp, body, http.StatusForbidden, "approval.denied")
	if n := h.dns.Queries("ask.test"); n != 0 {
		t.Errorf("a denied name was looked up %d times, want 0", n)
	}
}

// TestForwardAskNoWaitLeavesApproval: without waiting, the ask is refused
// at once, naming the approval that stays open for the retry.
func TestForwardAskNoWaitLeavesApproval(t *testing.T) {
	h, ap, target := askHarness(t, true)
	resp, body := h.get(h.client(nil), target, nil)
	wantRefusal(t, "GET ask.test, no wait", resp, body, http.StatusForbidden, "network.unknown_domain")
	if opened := ap.list(); len(opened) != 1 || !strings.Contains(body, "approval appr-1 waits") {
		t.Errorf("refusal %q with approvals %v; want it to name the one approval opened", body, opened)
	}
	if n := h.dns.Queries("ask.test"); n != 0 {
		t.Errorf("ask.test was looked up %d times before anyone approved it, want 0", n)
	}
}

func TestForwardGateErrorIsUnavailable(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", up.port)), options{gateErr: errors.New("the audit store is unavailable")})
	resp, body := h.get(h.client(nil), "http://"+hostPort("app.test", up.port)+"/", nil)
	wantRefusal(t, "GET app.test with a failing gate", resp, body, http.StatusServiceUnavailable, "network.unavailable")
	if n := up.accepts.connections(t); n != 0 {
		t.Errorf("the server accepted %d connections, want 0", n)
	}
}
