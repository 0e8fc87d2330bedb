package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/httpapi"
)

// daemon is a warden serve running in this test process.
type daemon struct {
	home   app.Home
	d      *app.Daemon
	socket string
	tcp    string
	proxy  string          // the egress proxy
	agent  *httpapi.Client // over the socket, no token
	op     *httpapi.Client // over the socket, operator token
}

func startDaemon(t testing.TB, settings ...string) *daemon {
	t.Helper()
	home := app.Home(filepath.Join(t.TempDir(), "h"))
	if _, err := app.Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(settings); i += 2 {
		if err := config.Set(home.PolicyPath(), settings[i], settings[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	d, err := app.NewDaemon(ctx, home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.ProxyListen = "127.0.0.1:0"
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan app.Listening, 1)
	done := make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(at app.Listening) { ready <- at }) }()
	var addrs app.Listening
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		d.Close()
	})
	return &daemon{home: home, d: d, socket: addrs.Socket, tcp: addrs.TCP, proxy: addrs.Proxy,
		agent: httpapi.UnixClient(addrs.Socket, ""), op: httpapi.UnixClient(addrs.Socket, d.Operator)}
}

func toolReq(tool, session string) *warden.Request {
	return &warden.Request{Capability: warden.CapTool, Action: "call", Resource: tool, Session: session}
}

func TestDaemonSocketIsPrivate(t *testing.T) {
	dm := startDaemon(t)
	fi, err := os.Stat(dm.socket)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if d, err := dm.agent.Check(ctx, toolReq("get_price", "")); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("agent check over the socket = %+v, %v", d, err)
	}
}

// TestAgentCannotAnswerItsOwnApproval: the socket's tokenless (agent)
// requests may check and poll, never answer, list, reconfigure or kill.
func TestAgentCannotAnswerItsOwnApproval(t *testing.T) {
	dm := startDaemon(t)
	d, err := dm.agent.Check(ctx, toolReq("write_file", "s1"))
	if err != nil || d.Verdict != warden.Ask || d.ApprovalID == "" {
		t.Fatalf("check = %+v, %v; want an ask with an approval", d, err)
	}
	if a, err := dm.agent.Approval(ctx, d.ApprovalID); err != nil || a.State != warden.ApprovalPending {
		t.Fatalf("the agent polling its approval = %+v, %v", a, err)
	}
	if _, err := dm.agent.Answer(ctx, d.ApprovalID, warden.AnswerOnce, "console", "agent"); err == nil || !strings.Contains(err.Error(), "operator") {
		t.Errorf("agent approving = %v; want refused for lack of an operator token", err)
	}
	if _, err := dm.agent.Approvals(ctx, true); err == nil {
		t.Error("agent listing approvals succeeded")
	}
	if err := dm.agent.SetKillSwitch(ctx, false, "agent"); err == nil {
		t.Error("agent flipped the kill switch")
	}
	agentTok, err := httpapi.NewToken(httpapi.ScopeAgent)
	if err != nil {
		t.Fatal(err)
	}
	// A token the daemon never issued is refused outright.
	if _, err := httpapi.UnixClient(dm.socket, agentTok).Check(ctx, toolReq("get_price", "")); err == nil {
		t.Error("an unknown token was accepted")
	}
	if a, _ := dm.op.Approval(ctx, d.ApprovalID); a.State != warden.ApprovalPending {
		t.Errorf("after the refused answers the approval is %s", a.State)
	}
}

func TestWrongScopeTokenIsRejected(t *testing.T) {
	home := app.Home(filepath.Join(t.TempDir(), "h"))
	if _, err := app.Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	agentTok, err := app.NewAPIToken(home, "agent")
	if err != nil {
		t.Fatal(err)
	}
	d, err := app.NewDaemon(ctx, home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httpServer(t, d.Server.Handler(false))
	agent := &httpapi.Client{Base: srv, Token: agentTok}
	dec, err := agent.Check(ctx, toolReq("write_file", "s1"))
	if err != nil || dec.Verdict != warden.Ask {
		t.Fatalf("agent token check = %+v, %v", dec, err)
	}
	_, err = agent.Answer(ctx, dec.ApprovalID, warden.AnswerOnce, "console", "")
	if err == nil || !strings.Contains(err.Error(), "operator token") {
		t.Fatalf("agent-scope approve = %v; want a 403 naming the operator scope", err)
	}
	op := &httpapi.Client{Base: srv, Token: d.Operator}
	if a, err := op.Answer(ctx, dec.ApprovalID, warden.AnswerOnce, "console", "me"); err != nil || a.State != warden.ApprovalApproved {
		t.Fatalf("operator approve = %+v, %v", a, err)
	}
	// Over TCP nothing is anonymous.
	if _, err := (&httpapi.Client{Base: srv}).Check(ctx, toolReq("get_price", "")); err == nil {
		t.Error("an unsigned request over TCP was answered")
	}
}

func httpServer(t *testing.T, h http.Handler) string {
	t.Helper()
	s := &http.Server{Handler: h}
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return "http://" + l.Addr().String()
}

// TestReplayedAndStaleRequestsAreRejected sends signed requests over TCP: a
// byte-for-byte replay, and requests signed 31 s in the past and future.
func TestReplayedAndStaleRequestsAreRejected(t *testing.T) {
	dm := startDaemon(t, "approvals.daemon.tcp", "127.0.0.1:0")
	body := []byte(`{"capability":"tool","action":"call","resource":"get_price"}`)
	send := func(r *http.Request) int {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	newReq := func(at time.Time) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://"+dm.tcp+"/v1/check", bytes.NewReader(body))
		if err := httpapi.Sign(r, dm.d.Operator, body, at); err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := newReq(time.Now())
	replay := first.Clone(ctx)
	replay.Body = http.NoBody
	replay.Body, replay.ContentLength = readCloser(body), int64(len(body))
	if code := send(first); code != http.StatusOK {
		t.Fatalf("a fresh signed request = %d, want 200", code)
	}
	if code := send(replay); code != http.StatusUnauthorized {
		t.Errorf("the same request replayed = %d, want 401", code)
	}
	for _, skew := range []time.Duration{-31 * time.Second, 31 * time.Second} {
		if code := send(newReq(time.Now().Add(skew))); code != http.StatusUnauthorized {
			t.Errorf("a request signed %v away = %d, want 401", skew, code)
		}
	}
	tampered := newReq(time.Now())
	forged := []byte(`{"capability":"tool","action":"call","resource":"transfer_token"}`)
	tampered.Body, tampered.ContentLength = readCloser(forged), int64(len(forged))
	if code := send(tampered); code != http.StatusUnauthorized {
		t.Errorf("a request whose body changed after signing = %d, want 401", code)
	}
}

// TestConcurrentChecksAreAllAnsweredAndAudited: 200 clients at once, each
// answered, each decision in the audit log exactly once.
func TestConcurrentChecksAreAllAnsweredAndAudited(t *testing.T) {
	dm := startDaemon(t)
	const n = 200
	var wg sync.WaitGroup
	traces := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			c := httpapi.UnixClient(dm.socket, "")
			d, err := c.Check(ctx, toolReq("get_price", ""))
			if err == nil && d.Verdict != warden.Allow {
				err = warden.Errorf(warden.EInternal, "verdict %s", d.Verdict)
			}
			traces[i], errs[i] = d.TraceID, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	es, err := dm.d.App.Store.Entries(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range es {
		seen[e.TraceID]++
	}
	for i, tr := range traces {
		if seen[tr] != 1 {
			t.Errorf("client %d's decision %s is in the audit log %d times, want once", i, tr, seen[tr])
		}
	}
	if rep, err := dm.d.App.Store.Verify(ctx); err != nil || !rep.OK() {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// TestWaitingCheckReturnsTheAnswer: an agent's check waits; an operator
// approves for the session; the waiting check returns allow, and later
// identical checks in that session are allowed without asking.
func TestWaitingCheckReturnsTheAnswer(t *testing.T) {
	dm := startDaemon(t)
	got := make(chan warden.Decision, 1)
	go func() {
		d, err := dm.agent.CheckWait(ctx, toolReq("write_file", "s1"))
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	var pending []warden.Approval
	for deadline := time.Now().Add(5 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pending, _ = dm.op.Approvals(ctx, true)
	}
	if len(pending) != 1 {
		t.Fatalf("pending = %d, want the waiting check's approval", len(pending))
	}
	if _, err := dm.op.Answer(ctx, pending[0].ID, warden.AnswerSession, "console", "op"); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-got:
		if d.Verdict != warden.Allow || d.Rule != "grant.session" {
			t.Fatalf("the waiting check returned %s %s; want allow by grant.session", d.Verdict, d.Rule)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting check did not return after the approval")
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "s1")); d.Verdict != warden.Allow {
		t.Errorf("the same call later in the session: %s, want allow", d.Verdict)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "s2")); d.Verdict != warden.Ask {
		t.Errorf("the same call in another session: %s, want ask", d.Verdict)
	}
}

// TestAlwaysAnswerWritesThePolicyAndKillSwitchStillWins: "always" adds a
// rule to the policy file that the daemon applies at once; the kill switch,
// turned on through the API, still denies.
func TestAlwaysAnswerWritesThePolicyAndKillSwitchStillWins(t *testing.T) {
	dm := startDaemon(t)
	d, _ := dm.agent.Check(ctx, toolReq("write_file", ""))
	if _, err := dm.op.Answer(ctx, d.ApprovalID, warden.AnswerAlways, "console", "op"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(dm.home.PolicyPath())
	if !strings.Contains(string(data), warden.InputHash(toolReq("write_file", ""))) {
		t.Fatalf("the policy file has no always rule:\n%s", data)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "any")); d.Verdict != warden.Allow || d.Rule != "approvals.always" {
		t.Errorf("after always: %s %s, want allow by approvals.always", d.Verdict, d.Rule)
	}
	if err := dm.op.SetKillSwitch(ctx, true, "test"); err != nil {
		t.Fatal(err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "")); d.Verdict != warden.Deny {
		t.Errorf("under the kill switch: %s, want deny", d.Verdict)
	}
	// An approval answered while the kill switch is on stays denied.
	if err := dm.op.SetKillSwitch(ctx, false, "test"); err != nil {
		t.Fatal(err)
	}
	d2, _ := dm.agent.Check(ctx, toolReq("patch", "s"))
	if d2.Verdict != warden.Ask {
		t.Fatalf("patch = %s, want ask", d2.Verdict)
	}
	if err := dm.op.SetKillSwitch(ctx, true, "test"); err != nil {
		t.Fatal(err)
	}
	a, err := dm.op.Answer(ctx, d2.ApprovalID, warden.AnswerOnce, "console", "op")
	if err != nil || a.State != warden.ApprovalDenied || !strings.Contains(a.Note, "emergency stop") {
		t.Errorf("approving under the kill switch = %+v, %v; want denied, noting the emergency stop", a, err)
	}
}

func TestTier4OnlyOnceFromAHumanOverTheAPI(t *testing.T) {
	dm := startDaemon(t)
	d, _ := dm.agent.Check(ctx, toolReq("transfer_token", "s1"))
	if d.Verdict != warden.Ask || !d.ManualOnly {
		t.Fatalf("transfer_token = %+v; want a manual-only ask", d)
	}
	for _, tc := range []struct {
		ans     warden.Answer
		channel string
	}{{warden.AnswerSession, "console"}, {warden.AnswerAlways, "console"}, {warden.AnswerOnce, "api"}} {
		if _, err := dm.op.Answer(ctx, d.ApprovalID, tc.ans, tc.channel, "op"); err == nil {
			t.Errorf("tier 4 answered %s from %s was accepted", tc.ans, tc.channel)
		}
	}
	if a, err := dm.op.Answer(ctx, d.ApprovalID, warden.AnswerOnce, "console", "op"); err != nil || a.State != warden.ApprovalApproved {
		t.Fatalf("tier 4 approve once from the console = %+v, %v", a, err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("transfer_token", "s1")); d.Verdict != warden.Allow {
		t.Errorf("the approved tier 4 retry: %s, want allow (once)", d.Verdict)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("transfer_token", "s1")); d.Verdict != warden.Ask {
		t.Errorf("a second tier 4 retry: %s, want ask again", d.Verdict)
	}
}

func TestFeedStreamsDecisions(t *testing.T) {
	dm := startDaemon(t, "approvals.daemon.tcp", "127.0.0.1:0")
	r, _ := http.NewRequest(http.MethodGet, "http://"+dm.tcp+"/api/audit/feed?stream=1&type=ask", nil)
	if err := httpapi.Sign(r, dm.d.Operator, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	if _, err := dm.agent.Check(ctx, toolReq("get_price", "")); err != nil { // filtered out
		t.Fatal(err)
	}
	if _, err := dm.agent.Check(ctx, toolReq("write_file", "")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(string(buf), "write_file") && time.Now().Before(deadline) {
		n, err := resp.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			break
		}
	}
	s := string(buf)
	if !strings.Contains(s, "event: item") || !strings.Contains(s, "write_file") || strings.Contains(s, "get_price") {
		t.Errorf("stream = %q; want the ask for write_file and not the filtered allow", s)
	}
	var item struct {
		Kind, Type string
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "data: ") && strings.Contains(l, "write_file") {
			json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &item)
		}
	}
	if item.Kind != "decision" || item.Type != "ask" {
		t.Errorf("item = %+v", item)
	}
}

var ctx = context.Background()

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func TestMetricsCountDecisions(t *testing.T) {
	dm := startDaemon(t)
	for _, tool := range []string{"get_price", "get_price", "write_file"} {
		if _, err := dm.agent.Check(ctx, toolReq(tool, "")); err != nil {
			t.Fatal(err)
		}
	}
	c := httpapi.UnixClient(dm.socket, "")
	resp, err := c.HTTP.Get("http://warden/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`warden_decisions_total{verdict="allow"} 2`, `warden_decisions_total{verdict="ask"} 1`,
		`warden_pending_approvals 1`, `warden_stage_duration_seconds_bucket{stage="tool-tier"`, `warden_check_duration_seconds_count 3`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestDaemonSeesKillWithABrokenPolicy: `warden kill` from another process
// (its state file, written while the policy file is not even YAML) applies
// to the running daemon's next request, and stays on once the policy file
// is good again; the daemon reports it, and unkill turns it off.
func TestDaemonSeesKillWithABrokenPolicy(t *testing.T) {
	dm := startDaemon(t)
	good, err := os.ReadFile(dm.home.PolicyPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dm.home.PolicyPath(), []byte("version: 1\nsafety: [not: valid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := app.SetKill(dm.home, true, "test", "broken policy", time.Now()); err != nil {
		t.Fatalf("kill with a broken policy file: %v", err)
	}
	if err := os.WriteFile(dm.home.PolicyPath(), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "")); d.Verdict != warden.Deny || d.Rule != "safety.kill_switch" {
		t.Fatalf("after kill: %s %s; want deny by the kill switch", d.Verdict, d.Rule)
	}
	if !dm.d.KillSwitch() {
		t.Error("the daemon reports the stop off")
	}
	if err := dm.op.SetKillSwitch(ctx, false, "test"); err != nil {
		t.Fatal(err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("get_price", "")); d.Verdict != warden.Allow {
		t.Fatalf("after unkill: %s %s", d.Verdict, d.Rule)
	}
}

// TestDaemonFollowsThePolicyFile: `warden kill` from another process (a
// write to the file) applies to the daemon's next request, and a section
// that turns invalid is audited and falls back closed.
func TestDaemonFollowsThePolicyFile(t *testing.T) {
	dm := startDaemon(t)
	if err := config.SetKillSwitch(dm.home.PolicyPath(), true); err != nil {
		t.Fatal(err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("write_file", "")); d.Verdict != warden.Deny || d.Rule != "safety.kill_switch" {
		t.Fatalf("after the kill switch went on in the file: %s %s; want deny by the kill switch", d.Verdict, d.Rule)
	}
	data, err := os.ReadFile(dm.home.PolicyPath())
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "timeout: 5m", "timeout: soon", 1)
	if err := os.WriteFile(dm.home.PolicyPath(), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, _ := dm.agent.Check(ctx, toolReq("get_price", "")); d.Verdict != warden.Allow {
		t.Fatalf("get_price after the change: %s", d.Verdict)
	}
	evs, err := dm.d.App.Store.Events(ctx, warden.EventFilter{Type: warden.EventConfigInvalid})
	found := false
	for _, ev := range evs {
		found = found || strings.Contains(ev.Summary, "approvals.timeout")
	}
	if err != nil || !found {
		t.Errorf("config_invalid events = %d, %v; want the invalid approvals.timeout audited", len(evs), err)
	}
}
