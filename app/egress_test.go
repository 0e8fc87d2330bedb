package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// proxied is a daemon serving the egress proxy, a local server it may reach
// only through an approval (allow_private names it, no rule allows it), and
// a client that goes through the proxy.
type proxied struct {
	dm     *daemon
	target string // http://127.0.0.1:PORT
	client *http.Client
}

func startProxied(t *testing.T) *proxied {
	t.Helper()
	dm := startDaemon(t, "network.allow_private", `["127.0.0.1"]`)
	if dm.proxy == "" {
		t.Fatal("the daemon runs no egress proxy")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "reached "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: dm.proxy})}
	t.Cleanup(tr.CloseIdleConnections)
	return &proxied{dm: dm, target: srv.URL, client: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

type reply struct {
	status int
	body   string
	err    error
}

// get fetches path through the proxy in the background.
func (p *proxied) get(path string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		resp, err := p.client.Get(p.target + path)
		if err != nil {
			out <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- reply{status: resp.StatusCode, body: string(b)}
	}()
	return out
}

// pending waits for the one pending approval and returns it.
func (p *proxied) pending(t *testing.T) warden.Approval {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		as, err := p.dm.op.Approvals(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) == 1 {
			return as[0]
		}
		if len(as) > 1 {
			t.Fatalf("%d approvals pending, want 1: %+v", len(as), as)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no approval opened")
	return warden.Approval{}
}

func (r reply) want(t *testing.T, what string, status int, body string) {
	t.Helper()
	if r.err != nil || r.status != status || !strings.Contains(r.body, body) {
		t.Fatalf("%s: %d %q, %v; want %d with %q", what, r.status, r.body, r.err, status, body)
	}
}

// TestDaemonProxyWaitsForApproval: through warden serve's egress proxy, a
// request to a host no rule names waits for a human; approved for the
// session, it and every later request to that host and port go through
// without asking again, until the policy denies the host, which wins over
// the grant at once.
func TestDaemonProxyWaitsForApproval(t *testing.T) {
	p := startProxied(t)
	first := p.get("/first")
	a := p.pending(t)
	if a.Channel != "proxy" || a.Request.Capability != warden.CapNetwork || a.Request.Session == "" {
		t.Errorf("approval = channel %q, request %+v; want a network request on channel proxy, in the proxy's session", a.Channel, a.Request)
	}
	select {
	case r := <-first:
		t.Fatalf("the request ended before anyone answered: %+v", r)
	default:
	}
	if _, err := p.dm.op.Answer(ctx, a.ID, warden.AnswerSession, "console", "tester"); err != nil {
		t.Fatal(err)
	}
	(<-first).want(t, "after approval", http.StatusOK, "reached /first")
	(<-p.get("/second")).want(t, "another path under the session grant", http.StatusOK, "reached /second")
	if all, _ := p.dm.op.Approvals(ctx, false); len(all) != 1 {
		t.Errorf("%d approvals in all, want 1: the session grant covers the host", len(all))
	}

	if err := config.Set(p.dm.home.PolicyPath(), "network.denied_domains", `["127.0.0.1"]`); err != nil {
		t.Fatal(err)
	}
	r := <-p.get("/third")
	r.want(t, "a host the policy now denies", http.StatusForbidden, "warden:")

	// The answered requests' lines reach the log in groups, within the
	// group's delay; the refusal's before it was answered.
	var n int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		evs, err := p.dm.d.App.Store.Events(ctx, warden.EventFilter{Type: warden.EventEgressRequest})
		if err != nil {
			t.Fatal(err)
		}
		if n = requestLines(t, evs); n >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if n != 3 {
		t.Fatalf("the request log holds %d lines, want 3", n)
	}
}

// requestLines counts the request-log lines in egress_request events: one
// for an event of one line, else one for each under "requests".
func requestLines(t *testing.T, evs []warden.SecurityEvent) int {
	t.Helper()
	n := 0
	for _, ev := range evs {
		var m struct {
			Requests []json.RawMessage `json:"requests"`
		}
		if err := json.Unmarshal(ev.Metadata, &m); err != nil {
			t.Fatalf("event %s metadata %s: %v", ev.ID, ev.Metadata, err)
		}
		n += max(1, len(m.Requests))
	}
	return n
}

// TestDaemonProxyDeniedApprovalIsRefused: a denied approval refuses the
// request that waited for it.
func TestDaemonProxyDeniedApprovalIsRefused(t *testing.T) {
	p := startProxied(t)
	r := p.get("/")
	a := p.pending(t)
	if _, err := p.dm.op.Answer(ctx, a.ID, warden.AnswerDeny, "console", "tester"); err != nil {
		t.Fatal(err)
	}
	(<-r).want(t, "after deny", http.StatusForbidden, "denied by")
}

// TestDaemonProxyAlwaysAddsADestinationRule: "always" writes a rule that
// says it covers the destination, and the next request, on any path, needs
// no approval.
func TestDaemonProxyAlwaysAddsADestinationRule(t *testing.T) {
	p := startProxied(t)
	r := p.get("/a")
	a := p.pending(t)
	if _, err := p.dm.op.Answer(ctx, a.ID, warden.AnswerAlways, "console", "tester"); err != nil {
		t.Fatal(err)
	}
	(<-r).want(t, "after always", http.StatusOK, "reached /a")
	host := strings.TrimPrefix(p.target, "http://")
	policy, err := os.ReadFile(p.dm.home.PolicyPath())
	if err != nil || !strings.Contains(string(policy), "connections to "+host) {
		t.Fatalf("the policy file does not name %q as the rule's resource:\n%s", "connections to "+host, policy)
	}
	(<-p.get("/b")).want(t, "another path under the always rule", http.StatusOK, "reached /b")
	if all, _ := p.dm.op.Approvals(ctx, false); len(all) != 1 {
		t.Errorf("%d approvals in all, want 1", len(all))
	}
}
