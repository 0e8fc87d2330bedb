package egress_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/internal/dnstest"
)

const realToken = "sk-live-0123456789abcdef"

// newSecrets binds realToken, as API_TOKEN, to app.test's Authorization
// header, and returns the placeholder the sandbox sees.
func newSecrets(t *testing.T, allowHTTP bool) (*egress.Secrets, string) {
	t.Helper()
	s, err := egress.NewSecrets([]egress.SecretSpec{{
		Name: "API_TOKEN", Value: realToken, Hosts: []string{"app.test"}, Header: "Authorization", AllowHTTP: allowHTTP,
	}})
	if err != nil {
		t.Fatalf("NewSecrets: %v", err)
	}
	env := s.Env()
	if len(env) != 1 || !strings.HasPrefix(env[0], "API_TOKEN=") {
		t.Fatalf("Env() = %q, want [API_TOKEN=…]", env)
	}
	return s, strings.TrimPrefix(env[0], "API_TOKEN=")
}

// wantRealValueUpstream checks that up served exactly one request, whose
// Authorization header carried the real value.
func wantRealValueUpstream(t *testing.T, up *upstream) {
	t.Helper()
	reqs := up.requests()
	if len(reqs) != 1 {
		t.Fatalf("the upstream served %d requests, want 1", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+realToken {
		t.Fatalf("the upstream got Authorization %q, want the real value", got)
	}
}

// echoAuth answers with the Authorization header it got, in the body and in
// X-Echo.
func echoAuth(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	w.Header().Set("X-Echo", auth)
	_, _ = io.WriteString(w, "auth="+auth)
}

func TestSecretPlaceholderKeepsShape(t *testing.T) {
	_, ph := newSecrets(t, true)
	if len(ph) != len(realToken) {
		t.Errorf("placeholder %q has length %d, want %d", ph, len(ph), len(realToken))
	}
	if !strings.HasPrefix(ph, "sk-") {
		t.Errorf("placeholder %q lost the sk- prefix", ph)
	}
	if ph == realToken || strings.Contains(ph, realToken[3:]) {
		t.Errorf("placeholder %q carries the real value", ph)
	}
	if _, other := newSecrets(t, true); other == ph {
		t.Errorf("two Secrets made the same placeholder %q", ph)
	}
}

// secretsSetup runs app.test (echoing Authorization) and other.test, both
// allowed, behind a proxy holding s.
func secretsSetup(t *testing.T, s *egress.Secrets) (h *harness, app, other *upstream) {
	t.Helper()
	app = startUpstream(t, "127.0.0.1:0", echoAuth, nil)
	other = startUpstream(t, "127.0.0.1:0", echoAuth, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	dns.Set("other.test", []netip.Addr{loopback})
	h = newHarness(t, dns, privatePolicy(hostPort("app.test", app.port), hostPort("other.test", other.port)), options{secrets: s})
	return h, app, other
}

func TestSecretSubstitutedOverPlainHTTP(t *testing.T) {
	s, ph := newSecrets(t, true)
	h, app, _ := secretsSetup(t, s)
	resp, body := h.get(h.client(nil), "http://"+hostPort("app.test", app.port)+"/echo", http.Header{"Authorization": {"Bearer " + ph}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d (%q), want 200", resp.StatusCode, body)
	}
	wantRealValueUpstream(t, app)
	if body != "auth=Bearer "+ph {
		t.Errorf("the client got the body %q, want %q", body, "auth=Bearer "+ph)
	}
	if got := resp.Header.Get("X-Echo"); got != "Bearer "+ph {
		t.Errorf("the client got X-Echo %q, want %q", got, "Bearer "+ph)
	}
	for _, e := range h.events.wait(t, warden.EventEgressRequest, 1) {
		mustContainNone(t, "an event", e.summary+" "+e.raw, realToken, ph)
	}
}

func TestSecretScrubbedWhenSplitAcrossWrites(t *testing.T) {
	s, ph := newSecrets(t, true)
	pad := strings.Repeat("x", 40000)
	app := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, pad+realToken[:10])
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, realToken[10:]+pad)
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", app.port)), options{secrets: s})
	resp, body := h.get(h.client(nil), "http://"+hostPort("app.test", app.port)+"/", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if want := pad + ph + pad; body != want {
		t.Errorf("body of %d bytes (real value inside: %v), want %d bytes with the placeholder", len(body), strings.Contains(body, realToken), len(want))
	}
}

// TestSecretScrubbedFromTrailers: an answer's trailers reach the client like
// its headers, so a real value echoed in a trailer must be scrubbed too.
func TestSecretScrubbedFromTrailers(t *testing.T) {
	s, ph := newSecrets(t, true)
	app := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Echo-Trailer")
		_, _ = io.WriteString(w, "body")
		w.Header().Set("X-Echo-Trailer", r.Header.Get("Authorization"))
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", app.port)), options{secrets: s})
	resp, body := h.get(h.client(nil), "http://"+hostPort("app.test", app.port)+"/", http.Header{"Authorization": {"Bearer " + ph}})
	if resp.StatusCode != http.StatusOK || body != "body" {
		t.Fatalf("status %d body %q, want 200 %q", resp.StatusCode, body, "body")
	}
	wantRealValueUpstream(t, app)
	if got := resp.Trailer.Get("X-Echo-Trailer"); got != "Bearer "+ph {
		t.Errorf("the client got the trailer X-Echo-Trailer %q, want %q (real value inside: %v)", got, "Bearer "+ph, strings.Contains(got, realToken))
	}
}

// TestSecretScrubbedFromInformationalAnswers: the headers of a 1xx answer
// (103 Early Hints) reach the client too, so a real value echoed there must
// be scrubbed.
func TestSecretScrubbedFromInformationalAnswers(t *testing.T) {
	s, ph := newSecrets(t, true)
	app := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo-Early", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("X-Echo-Early")
		_, _ = io.WriteString(w, "body")
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", app.port)), options{secrets: s})

	var mu sync.Mutex
	var early []string
	req, err := http.NewRequest(http.MethodGet, "http://"+hostPort("app.test", app.port)+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ph)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, header textproto.MIMEHeader) error {
			mu.Lock()
			defer mu.Unlock()
			early = append(early, header.Values("X-Echo-Early")...)
			return nil
		},
	}))
	resp, err := h.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	wantRealValueUpstream(t, app)
	mu.Lock()
	defer mu.Unlock()
	if len(early) != 1 || early[0] != "Bearer "+ph {
		t.Errorf("the client got X-Echo-Early %q in the 103 answer, want [%q] (real value inside: %v)", early, "Bearer "+ph, strings.Contains(strings.Join(early, " "), realToken))
	}
}

func TestSecretRefusedWhereItMayNotGo(t *testing.T) {
	cases := []struct {
		name      string
		allowHTTP bool
		host      string // app or other
		path      string
		header    string
		rule      string
	}{
		{name: "other header", allowHTTP: true, host: "app", path: "/", header: "X-Other", rule: "network.secret_misplaced"},
		{name: "query", allowHTTP: true, host: "app", path: "/?t=PH", rule: "network.secret_misplaced"},
		{name: "unbound host", allowHTTP: true, host: "other", path: "/", header: "Authorization", rule: "network.secret_wrong_host"},
		{name: "plain http", allowHTTP: false, host: "app", path: "/", header: "Authorization", rule: "network.secret_plain_http"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ph := newSecrets(t, tc.allowHTTP)
			h, app, other := secretsSetup(t, s)
			up, host := app, "app.test"
			if tc.host == "other" {
				up, host = other, "other.test"
			}
			header := http.Header{}
			if tc.header != "" {
				header.Set(tc.header, "Bearer "+ph)
			}
			target := "http://" + hostPort(host, up.port) + strings.ReplaceAll(tc.path, "PH", url.QueryEscape(ph))
			resp, body := h.get(h.client(nil), target, header)
			wantRefusal(t, "GET "+host+" with the placeholder", resp, body, http.StatusForbidden, tc.rule)
			mustContainNone(t, "the refusal", body, realToken, ph)
			if n := up.accepts.connections(t); n != 0 {
				t.Errorf("%s accepted %d connections, want 0", host, n)
			}
			evs := h.events.wait(t, warden.EventSecretLeak, 1)
			if evs[0].sev != warden.SevCritical {
				t.Errorf("the %s event has severity %s, want %s", warden.EventSecretLeak, evs[0].sev, warden.SevCritical)
			}
			for _, e := range append(evs, h.events.wait(t, warden.EventEgressRequest, 1)...) {
				mustContainNone(t, "the "+e.typ+" event", e.summary+" "+e.raw, realToken, ph)
			}
		})
	}
}

// tlsSetup runs app.test over HTTPS (certificate from its own authority,
// which the proxy trusts) behind a proxy holding a secret bound to it.
func tlsSetup(t *testing.T) (h *harness, app *upstream, ph string, proxyCA *x509.CertPool) {
	t.Helper()
	roots, cert := newCA(t, "app.test")
	app = startUpstream(t, "127.0.0.1:0", echoAuth, cert)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	s, ph := newSecrets(t, false)
	h = newHarness(t, dns, privatePolicy(hostPort("app.test", app.port)), options{secrets: s, roots: roots})
	proxyCA = x509.NewCertPool()
	if !proxyCA.AppendCertsFromPEM(s.CACertPEM()) {
		t.Fatalf("CACertPEM() = %q is not a PEM certificate", s.CACertPEM())
	}
	return h, app, ph, proxyCA
}

func TestSecretSubstitutedInsideInterceptedTLS(t *testing.T) {
	h, app, ph, proxyCA := tlsSetup(t)
	c := h.client(&tls.Config{RootCAs: proxyCA})
	resp, body := h.get(c, "https://"+hostPort("app.test", app.port)+"/echo", http.Header{"Authorization": {"Bearer " + ph}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d (%q), want 200", resp.StatusCode, body)
	}
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || resp.TLS.PeerCertificates[0].Issuer.CommonName == "egress test CA" {
		t.Errorf("the client's TLS was not terminated by the proxy")
	}
	wantRealValueUpstream(t, app)
	if body != "auth=Bearer "+ph {
		t.Errorf("the client got the body %q, want %q", body, "auth=Bearer "+ph)
	}
	if got := resp.Header.Get("X-Echo"); got != "Bearer "+ph {
		t.Errorf("the client got X-Echo %q, want %q", got, "Bearer "+ph)
	}
}

func TestInterceptRefusesOtherServerName(t *testing.T) {
	for _, tc := range []struct {
		serverName string
		ok         bool
	}{
		{"app.test", true},
		{"other.test", false},
	} {
		t.Run(tc.serverName, func(t *testing.T) {
			h, app, _, proxyCA := tlsSetup(t)
			c, br, resp := h.connect(hostPort("app.test", app.port), "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("CONNECT = %d, want 200", resp.StatusCode)
			}
			if br.Buffered() != 0 {
				t.Fatalf("%d unexpected bytes after the CONNECT answer", br.Buffered())
			}
			// The client does not verify, so only the proxy can fail the
			// handshake.
			tc2 := tls.Client(c, &tls.Config{ServerName: tc.serverName, RootCAs: proxyCA, InsecureSkipVerify: !tc.ok})
			err := tc2.Handshake()
			if tc.ok && err != nil {
				t.Errorf("handshake with server name %s: %v", tc.serverName, err)
			}
			if !tc.ok && err == nil {
				t.Errorf("handshake with server name %s succeeded through a tunnel to app.test", tc.serverName)
			}
		})
	}
}
