package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/audit/feed"
	"github.com/agentwarden/warden/internal/browser"
)

func TestConsoleServesFiles(t *testing.T) {
	srv := &Server{Backend: &fakeBackend{}, Verifier: &Verifier{}, Feed: feed.New(0)}
	h := srv.Handler(false)
	tests := []struct {
		path        string
		status      int
		contentType string
		body        string
	}{
		{path: "/console/", status: http.StatusOK, contentType: "text/html", body: `<script src="app.js" defer></script>`},
		{path: "/console/app.js", status: http.StatusOK, contentType: "text/javascript", body: "X-Warden-Signature"},
		{path: "/console/style.css", status: http.StatusOK, contentType: "text/css", body: "[hidden]"},
		{path: "/console/missing.js", status: http.StatusNotFound, contentType: "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if w.Code != tt.status {
				t.Fatalf("GET %s: status %d, want %d", tt.path, w.Code, tt.status)
			}
			want := map[string]string{
				"Content-Security-Policy": consoleCSP,
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
			}
			if tt.status == http.StatusOK { // http.FileServer drops it from an error
				want["Cache-Control"] = "no-store"
			}
			for name, want := range want {
				if got := w.Header().Get(name); got != want {
					t.Errorf("GET %s: %s = %q, want %q", tt.path, name, got, want)
				}
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("GET %s: Content-Type = %q, want %s", tt.path, ct, tt.contentType)
			}
			if !strings.Contains(w.Body.String(), tt.body) {
				t.Errorf("GET %s: body does not contain %q", tt.path, tt.body)
			}
		})
	}
}

// TestConsoleHasNoInlineCode keeps the page within its CSP and keeps API text
// out of HTML: no inline script or style, no event-handler attributes, and no
// API in app.js that parses a string as HTML or code.
func TestConsoleHasNoInlineCode(t *testing.T) {
	doc, err := fs.ReadFile(consoleFiles, "console/index.html")
	if err != nil {
		t.Fatal(err)
	}
	z := html.NewTokenizer(bytes.NewReader(doc))
	inScript := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			src := false
			for _, a := range tok.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("index.html: <%s %s=…>: inline style and event handlers break the CSP", tok.Data, a.Key)
				}
				src = src || a.Key == "src"
			}
			if tok.Data == "style" {
				t.Errorf("index.html: a <style> element breaks the CSP; use style.css")
			}
			if tok.Data == "script" && !src {
				t.Errorf("index.html: a <script> without src breaks the CSP; use app.js")
			}
			inScript = tok.Data == "script"
		case html.TextToken:
			if inScript && strings.TrimSpace(tok.Data) != "" {
				t.Errorf("index.html: inline script %q", tok.Data)
			}
		case html.EndTagToken:
			inScript = false
		}
	}

	js, err := fs.ReadFile(consoleFiles, "console/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage", "document.cookie"} {
		if bytes.Contains(js, []byte(bad)) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

func TestConsoleBrowser(t *testing.T) {
	ctx := browser.New(t)

	t.Run("approve once, live", func(t *testing.T) {
		c := startConsole(t, ctx)
		c.login(t, c.token)
		c.do(t, "see the empty approvals", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
		if got := run(t, c, chromedp.TextContent(chromedp.ID("approvals-empty"))); got != "no pending approvals" {
			t.Errorf("the empty approvals say %q, want %q", got, "no pending approvals")
		}
		c.waitFor(t, "the sandboxes show none", `document.getElementById("sandboxes").textContent === "none"`)

		c.backend.add(pendingApproval("a1", "rm -rf /tmp/build", "s1", warden.TierAlwaysConfirm))
		c.srv.Feed.Add(feed.Item{Kind: feed.KindEvent, Type: warden.EventApprovalRequested, Severity: "info", Summary: "approval a1 requested: shell exec rm -rf /tmp/build"})
		card := chromedp.CSS(`[data-approval-id="a1"]`)
		c.do(t, "see the new approval", chromedp.WaitVisible(card))
		text := c.text(t, `[data-approval-id="a1"]`)
		for _, want := range []string{"shell exec", "rm -rf /tmp/build", "needs a human", "tier 3", "expires in"} {
			if !strings.Contains(text, want) {
				t.Errorf("the card says %q, want it to contain %q", text, want)
			}
		}
		if c.backend.answerCount() != 0 {
			t.Fatalf("answered before a click: %v", c.backend.answered())
		}

		c.click(t, "approve once", `[data-approval-id="a1"] [data-answer="once"]`)
		c.do(t, "see the card go", chromedp.WaitNotPresent(card))
		want := []fakeAnswer{{ID: "a1", Answer: warden.AnswerOnce, Channel: "console"}}
		if got := c.backend.answered(); !slices.Equal(got, want) {
			t.Errorf("Answer calls = %v, want %v", got, want)
		}
		c.do(t, "see the empty approvals again", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
	})

	t.Run("every answer", func(t *testing.T) {
		c := startConsole(t, ctx)
		for _, id := range []string{"deny", "session", "always", "host", "gone"} {
			c.backend.add(pendingApproval(id, "curl https://example.com/"+id, "s1", warden.TierAlwaysConfirm))
		}
		c.backend.failAnswer("gone", warden.Errorf(warden.EConflict, "approval gone already ended").WithHint("reload the list"))
		c.login(t, c.token)
		for _, id := range []string{"deny", "session", "always", "host"} {
			card := chromedp.CSS(fmt.Sprintf(`[data-approval-id=%q]`, id))
			c.click(t, "answer "+id, fmt.Sprintf(`[data-approval-id=%q] [data-answer=%q]`, id, id))
			c.do(t, "see "+id+" go", chromedp.WaitNotPresent(card))
		}
		want := []fakeAnswer{
			{ID: "deny", Answer: warden.AnswerDeny, Channel: "console"},
			{ID: "session", Answer: warden.AnswerSession, Channel: "console"},
			{ID: "always", Answer: warden.AnswerAlways, Channel: "console"},
			{ID: "host", Answer: warden.AnswerHost, Channel: "console"},
		}
		if got := c.backend.answered(); !slices.Equal(got, want) {
			t.Errorf("Answer calls = %v, want %v", got, want)
		}

		c.click(t, "answer an approval that fails", `[data-approval-id="gone"] [data-answer="once"]`)
		c.waitFor(t, "the error shows on its card",
			`document.querySelector('[data-approval-id="gone"] .error').textContent === "approval gone already ended (reload the list)"`)
	})

	t.Run("wrong token", func(t *testing.T) {
		c := startConsole(t, ctx)
		c.backend.add(pendingApproval("a1", "rm -rf /", "", warden.TierAlwaysConfirm))
		other, err := NewToken(ScopeOperator)
		if err != nil {
			t.Fatal(err)
		}
		c.login(t, other)
		c.waitFor(t, "the login error", `document.getElementById("login-error").textContent !== ""`)
		if got := run(t, c, chromedp.TextContent(chromedp.ID("login-error"))); !strings.Contains(got, "unknown token") {
			t.Errorf("the login error says %q, want the daemon's %q", got, "unknown token")
		}
		state := run(t, c, chromedp.Evaluate[map[string]any](`({
			appHidden: document.getElementById("app").hidden,
			cards: document.querySelectorAll("[data-approval-id]").length,
			stored: sessionStorage.length,
		})`))
		if state["appHidden"] != true || state["cards"] != 0.0 || state["stored"] != 0.0 {
			t.Errorf("after a wrong token: %v, want the app hidden, no cards and nothing stored", state)
		}
		if n := c.backend.listCount(); n != 0 {
			t.Errorf("Approvals called %d times with a wrong token", n)
		}
	})

	t.Run("kill switch asks twice", func(t *testing.T) {
		c := startConsole(t, ctx)
		c.login(t, c.token)
		c.waitFor(t, "the kill switch shows off", `document.getElementById("kill-state").textContent === "off"`)
		c.do(t, "ask to turn it on",
			chromedp.Click(chromedp.ID("kill-toggle")),
			chromedp.WaitVisible(chromedp.ID("kill-confirm")))
		if got := c.backend.killSets(); len(got) != 0 {
			t.Fatalf("SetKillSwitch called before the confirmation: %v", got)
		}
		c.do(t, "confirm", chromedp.Click(chromedp.ID("kill-confirm")))
		c.waitFor(t, "the kill switch shows on", `document.getElementById("kill-state").textContent === "on"`)
		if got, want := c.backend.killSets(), []fakeKill{{On: true, By: "console"}}; !slices.Equal(got, want) {
			t.Errorf("SetKillSwitch calls = %v, want %v", got, want)
		}
		if got := run(t, c, chromedp.TextContent(chromedp.ID("kill-toggle"))); got != "Turn kill switch off" {
			t.Errorf("the toggle says %q after turning it on", got)
		}
	})

	t.Run("buttons by tier", func(t *testing.T) {
		c := startConsole(t, ctx)
		write := pendingApproval("fs-write", "/repo/notes.txt", "s1", warden.TierAlwaysConfirm)
		write.Request.Capability, write.Request.Action = warden.CapFilesystem, "write"
		transfer := pendingApproval("t4-transfer", "transfer 5000 USDC", "s1", warden.TierManualOnly)
		transfer.Request.Capability, transfer.Request.Action = warden.CapTool, "call"
		c.backend.add(
			pendingApproval("t3-session", "make deploy", "s1", warden.TierAlwaysConfirm),
			pendingApproval("t3-nosession", "make deploy", "", warden.TierAlwaysConfirm),
			pendingApproval("t4", "git push --force", "s1", warden.TierManualOnly),
			write, transfer,
		)
		c.login(t, c.token)
		// Run on host is offered for shell commands only.
		for _, tt := range []struct {
			id   string
			want []string
		}{
			{"t3-session", []string{"once", "deny", "session", "always", "host", "view"}},
			{"t3-nosession", []string{"once", "deny", "always", "host", "view"}},
			{"t4", []string{"once", "deny", "host", "view"}},
			{"fs-write", []string{"once", "deny", "session", "always", "view"}},
			{"t4-transfer", []string{"once", "deny", "view"}},
		} {
			c.do(t, "see "+tt.id, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-approval-id=%q]`, tt.id))))
			got := run(t, c, chromedp.Evaluate[[]string](fmt.Sprintf(
				`Array.from(document.querySelectorAll('[data-approval-id=%q] [data-answer]'), b => b.dataset.answer)`, tt.id)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("approval %s has buttons %q, want %q", tt.id, got, tt.want)
			}
		}
	})

	t.Run("attacker text stays text", func(t *testing.T) {
		const payload = `<img src=x onerror=alert(1)>`
		c := startConsole(t, ctx)
		a := pendingApproval("x1", payload, "", warden.TierAlwaysConfirm)
		a.Decision.Reason = `<script>alert(2)</script>`
		c.backend.add(a)
		c.srv.Feed.Add(feed.Item{Kind: feed.KindEvent, Type: warden.EventApprovalRequested, Severity: "info", Summary: "asked: " + payload})
		c.login(t, c.token)
		card := chromedp.CSS(`[data-approval-id="x1"]`)
		c.do(t, "see the approval", chromedp.WaitVisible(card))
		c.waitFor(t, "see the feed item", `document.querySelectorAll("#feed tr").length === 1`)
		text := c.text(t, `[data-approval-id="x1"]`)
		for _, want := range []string{payload, a.Decision.Reason} {
			if !strings.Contains(text, want) {
				t.Errorf("the card says %q, want it to contain %q as text", text, want)
			}
		}
		c.clickUntil(t, "view the detail", `[data-approval-id="x1"] [data-answer="view"]`, `[data-approval-id="x1"] pre`)
		var detail struct {
			Request warden.Request `json:"request"`
		}
		raw := c.text(t, `[data-approval-id="x1"] pre`)
		if err := json.Unmarshal([]byte(raw), &detail); err != nil || detail.Request.Resource != payload {
			t.Errorf("the detail %q does not hold the request as JSON (%v)", raw, err)
		}
		n := run(t, c, chromedp.Evaluate[int](`document.querySelectorAll("img, #approvals script, #feed script").length`))
		if n != 0 {
			t.Errorf("the page holds %d img or script elements made from API text", n)
		}
	})

	t.Run("feed filter and reconnect", func(t *testing.T) {
		c := startConsole(t, ctx)
		c.srv.Feed.Add(feed.Item{Kind: feed.KindDecision, Type: "allow", Severity: "info", Summary: "allow shell exec: ls"})
		c.srv.Feed.Add(feed.Item{Kind: feed.KindDecision, Type: "deny", Severity: "warn", Summary: "deny shell exec: rm -rf /"})
		c.login(t, c.token)
		c.waitFor(t, "both items, newest first", `Array.from(document.querySelectorAll("#feed tr"), r => r.dataset.type).join() === "deny,allow"`)

		c.do(t, "filter on deny, at least warn",
			chromedp.SetValue(chromedp.ID("feed-type"), "deny"),
			chromedp.SetValue(chromedp.ID("feed-severity"), "warn"),
			chromedp.Click(chromedp.ID("feed-apply")))
		c.waitFor(t, "only the deny", `Array.from(document.querySelectorAll("#feed tr"), r => r.dataset.type).join() === "deny"`)

		c.waitFor(t, "the feed is live", `document.getElementById("feed-status").textContent === "live"`)
		c.http.CloseClientConnections()
		c.srv.Feed.Add(feed.Item{Kind: feed.KindDecision, Type: "allow", Severity: "info", Summary: "allow shell exec: pwd"})
		c.srv.Feed.Add(feed.Item{Kind: feed.KindDecision, Type: "deny", Severity: "warn", Summary: "deny shell exec: shutdown"})
		c.waitFor(t, "the new deny after the reconnect, once",
			`Array.from(document.querySelectorAll("#feed tr"), r => r.dataset.seq).join() === "4,2"`)
		want := []string{
			"stream=1&limit=500",
			"stream=1&limit=500&type=deny&severity=warn",
			"stream=1&limit=500&afterSeq=2&type=deny&severity=warn",
		}
		if got := c.feedQueries(); !slices.Equal(got, want) {
			t.Errorf("the feed was asked with %q, want %q", got, want)
		}
	})

	t.Run("feed keeps the newest 500", func(t *testing.T) {
		c := startConsole(t, ctx)
		for i := range 600 {
			c.srv.Feed.Add(feed.Item{Kind: feed.KindEvent, Type: "config_changed", Severity: "info", Summary: fmt.Sprint("old ", i)})
		}
		c.login(t, c.token)
		const rows = `(() => { const r = document.querySelectorAll("#feed tr");
			return [r.length, r[0].dataset.seq, r[r.length-1].dataset.seq].join(); })()`
		c.waitFor(t, "the newest 500 of the backlog", rows+` === "500,600,101"`)
		for i := range 5 {
			c.srv.Feed.Add(feed.Item{Kind: feed.KindEvent, Type: "config_changed", Severity: "info", Summary: fmt.Sprint("new ", i)})
		}
		c.waitFor(t, "the newest 500 after 5 more", rows+` === "500,605,106"`)
	})

	t.Run("token lives in this tab only", func(t *testing.T) {
		c := startConsole(t, ctx)
		c.login(t, c.token)
		c.do(t, "see the app", chromedp.WaitVisible(chromedp.ID("approvals-empty")))
		stored := run(t, c, chromedp.Evaluate[[]string](`[sessionStorage.getItem("warden.operatorToken"), String(localStorage.length), document.cookie]`))
		if want := []string{c.token, "0", ""}; !slices.Equal(stored, want) {
			t.Errorf("after log in, sessionStorage, localStorage and cookies hold %q, want %q", stored, want)
		}
		c.do(t, "reload, still logged in", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("approvals-empty")))
		c.do(t, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("token")))
		if n := run(t, c, chromedp.Evaluate[int](`sessionStorage.length`)); n != 0 {
			t.Errorf("sessionStorage holds %d items after log out", n)
		}
		c.do(t, "reload, logged out", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("token")))
	})
}

// stepTimeout bounds one step of a browser test.
const stepTimeout = 10 * time.Second

// console is one daemon API with a fake backend, and a browser tab on its
// console that fails the test if the page throws, breaks its CSP or opens a
// dialog.
type console struct {
	backend *fakeBackend
	srv     *Server
	http    *httptest.Server
	token   string
	tab     context.Context

	mu       sync.Mutex
	problems []string
	feeds    []string // the query of every request for the feed, in order
}

// feedQueries returns the queries the page asked the feed with.
func (c *console) feedQueries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.feeds)
}

func startConsole(t *testing.T, browserCtx context.Context) *console {
	t.Helper()
	token, err := NewToken(ScopeOperator)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := NewTokens(token)
	if err != nil {
		t.Fatal(err)
	}
	c := &console{backend: &fakeBackend{}, token: token}
	c.srv = &Server{Backend: c.backend, Verifier: &Verifier{Tokens: tokens}, Feed: feed.New(0)}
	api := c.srv.Handler(false)
	c.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The page sends a token id, never a token: the daemon finds the
		// token by that id, so logging in proves the id is this token's.
		secret := token[len(token)-tokenSecretText:]
		for name, vals := range r.Header {
			if strings.Contains(name+"\n"+strings.Join(vals, "\n"), secret) {
				c.problem("sent the token in its " + name + " header")
			}
		}
		if auth := r.Header.Get("Authorization"); auth != "" {
			if got, ok := strings.CutPrefix(auth, "Bearer "); !ok || !validTokenID(got) {
				c.problem(fmt.Sprintf("sent an Authorization header that is not Bearer and a token id (%d characters)", len(auth)))
			}
		}
		if r.URL.Path == "/api/audit/feed" {
			c.mu.Lock()
			c.feeds = append(c.feeds, r.URL.RawQuery)
			c.mu.Unlock()
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		c.http.CloseClientConnections() // the feed's stream
		c.http.Close()
	})

	tab, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(func() {
		cancel()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.problems {
			t.Errorf("the page: %s", p)
		}
	})
	c.tab = tab
	if err := chromedp.Listen(tab, c.watch); err != nil { // opens the tab
		t.Fatalf("open a tab: %v", err)
	}
	c.do(t, "open the console", chromedp.Navigate(c.http.URL+"/console/"))
	return c
}

// watch records what the page must never do. It runs in chromedp's event
// loop, so it only appends.
func (c *console) watch(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		p = "threw " + d.Text
		if d.Exception != nil {
			p += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		// Failed requests (a 401, a missing favicon) are the network's;
		// anything else at error level is the page's: a CSP violation, a
		// script error.
		if ev.Entry.Level == log.EntryLevelError && ev.Entry.Source != log.EntrySourceNetwork {
			p = fmt.Sprintf("logged %s error: %s", ev.Entry.Source, ev.Entry.Text)
		}
	case *page.EventJavascriptDialogOpening:
		p = fmt.Sprintf("opened a %s dialog: %q", ev.Type, ev.Message)
	}
	if p != "" {
		c.problem(p)
	}
}

// problem records something the page did that it must never do.
func (c *console) problem(p string) {
	c.mu.Lock()
	c.problems = append(c.problems, p)
	c.mu.Unlock()
}

// do runs the actions within stepTimeout.
func (c *console) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(c.tab, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// click clicks the element sel selects. The approvals list is rendered again
// when the live feed reports a change, which can replace the node between
// finding and clicking it; the click is then tried again on the new node.
func (c *console) click(t *testing.T, what, sel string) {
	t.Helper()
	var err error
	for range 5 {
		ctx, cancel := context.WithTimeout(c.tab, stepTimeout)
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clickUntil clicks the element sel selects until the element shown
// selects is there and visible: a click can land on a node the live feed's
// re-rendering replaces a moment later, which takes what it opened with it
// (a loaded machine widens that moment). It clicks only while shown is not
// visible, so a slow open is not clicked shut.
func (c *console) clickUntil(t *testing.T, what, sel, shown string) {
	t.Helper()
	q, err := json.Marshal(shown)
	if err != nil {
		t.Fatal(err)
	}
	visible := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.offsetParent !== null })()`, q)
	deadline := time.Now().Add(3 * stepTimeout)
	for time.Now().Before(deadline) {
		c.click(t, what, sel)
		for wait := time.Now().Add(stepTimeout / 2); time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
			if run(t, c, chromedp.Evaluate[bool](visible)) {
				return
			}
		}
	}
	t.Fatalf("%s: %s is not visible after clicking %s for %s", what, shown, sel, 3*stepTimeout)
}

// text is the text of the element sel selects ("" when there is none),
// read in the page in one step: the approvals list is rendered again when
// the live feed reports a change, and a node CDP found may be gone by the
// time it reads it.
func (c *console) text(t *testing.T, sel string) string {
	t.Helper()
	q, err := json.Marshal(sel)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, c, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%s) || {textContent: ""}).textContent`, q)))
}

// waitFor waits until the JavaScript expression js is true. (chromedp.Poll
// would not do: it compiles its predicate with new Function in the page,
// which the console's CSP forbids.)
func (c *console) waitFor(t *testing.T, what, js string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(c.tab, stepTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("wait for %s: %s is still not true (last error: %v)", what, js, err)
		case <-tick.C:
		}
	}
}

// run runs one action within stepTimeout and returns its value.
func run[T any](t *testing.T, c *console, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(c.tab, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (c *console) login(t *testing.T, token string) {
	t.Helper()
	c.do(t, "log in",
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("login-button")))
}

func pendingApproval(id, resource, session string, tier warden.Tier) warden.Approval {
	now := time.Now()
	return warden.Approval{
		ID:      id,
		TraceID: "trace-" + id,
		Request: warden.Request{Capability: "shell", Action: "exec", Resource: resource, Session: session},
		Decision: warden.Decision{Verdict: warden.Ask, Reason: "this command needs a human", Rule: "shell.ask",
			Tier: tier, ManualOnly: tier == warden.TierManualOnly},
		CreatedAt: now,
		ExpiresAt: now.Add(5 * time.Minute),
		Channel:   "api",
		State:     warden.ApprovalPending,
	}
}

// fakeBackend serves a list of pending approvals and a kill switch, and
// records what the console asked of it.
type fakeBackend struct {
	mu        sync.Mutex
	pending   []warden.Approval
	fail      map[string]error // Answer's error by approval id
	answers   []fakeAnswer
	kill      bool
	sets      []fakeKill
	listCalls int
}

var _ Backend = (*fakeBackend)(nil)

type fakeAnswer struct {
	ID      string
	Answer  warden.Answer
	Channel string
}

type fakeKill struct {
	On bool
	By string
}

func (f *fakeBackend) add(as ...warden.Approval) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, as...)
}

func (f *fakeBackend) failAnswer(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail == nil {
		f.fail = make(map[string]error)
	}
	f.fail[id] = err
}

func (f *fakeBackend) answered() []fakeAnswer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers)
}

func (f *fakeBackend) answerCount() int { return len(f.answered()) }

func (f *fakeBackend) killSets() []fakeKill {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sets)
}

func (f *fakeBackend) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listCalls
}

func (f *fakeBackend) Check(context.Context, *warden.Request, CheckOptions) (warden.Decision, error) {
	return warden.Decision{}, warden.Errorf(warden.EUnavailable, "the fake backend does not check requests")
}

func (f *fakeBackend) Approvals(context.Context, warden.ApprovalFilter) ([]warden.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	return slices.Clone(f.pending), nil
}

func (f *fakeBackend) Approval(_ context.Context, id string) (warden.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.pending {
		if a.ID == id {
			return a, nil
		}
	}
	return warden.Approval{}, warden.Errorf(warden.ENotFound, "no pending approval %s", id)
}

func (f *fakeBackend) Answer(_ context.Context, id string, ans warden.Answer, who approval.Who) (warden.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[id]; err != nil {
		return warden.Approval{}, err
	}
	i := slices.IndexFunc(f.pending, func(a warden.Approval) bool { return a.ID == id })
	if i < 0 {
		return warden.Approval{}, warden.Errorf(warden.ENotFound, "no pending approval %s", id)
	}
	a := f.pending[i]
	f.pending = slices.Delete(f.pending, i, i+1)
	f.answers = append(f.answers, fakeAnswer{ID: id, Answer: ans, Channel: who.Channel})
	a.State, a.Answer, a.AnsweredBy, a.AnsweredAt = warden.ApprovalApproved, ans, who.Name, time.Now()
	if ans == warden.AnswerDeny {
		a.State = warden.ApprovalDenied
	}
	return a, nil
}

func (f *fakeBackend) WaitApproval(context.Context, string) (warden.Approval, error) {
	return warden.Approval{}, warden.Errorf(warden.EUnavailable, "the fake backend does not wait")
}

func (f *fakeBackend) Config() ([]ConfigItem, error) { return nil, nil }

func (f *fakeBackend) SetConfig(context.Context, string, string, string) error {
	return warden.Errorf(warden.EUnavailable, "the fake backend has no policy")
}

func (f *fakeBackend) KillSwitch() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kill
}

func (f *fakeBackend) SetKillSwitch(_ context.Context, on bool, by string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kill = on
	f.sets = append(f.sets, fakeKill{On: on, By: by})
	return nil
}

func (f *fakeBackend) Sandboxes(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"sandboxes":[]}`), nil
}
