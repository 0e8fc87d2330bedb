package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden"
)

func TestLoopbackOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost:3000":     true,
		"http://127.0.0.1":          true,
		"http://[::1]:8080":         true,
		"https://evil.example":      false,
		"http://127.0.0.1.evil.com": false,
		"null":                      false,
		"":                          false,
	} {
		if got := loopbackOrigin(origin); got != want {
			t.Errorf("loopbackOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestCheckMCPName(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "github": true, "my-server": true, "a_b": true,
		"": false, "a__b": false, "_x": false, "x_": false, "../etc": false, "a b": false, "a/b": false,
	} {
		if err := CheckMCPName(name); (err == nil) != ok {
			t.Errorf("CheckMCPName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// TestMCPUpstreamHeaders: --header-env's headers reach the upstream server
// with every request, and a server that needs them works through the proxy.
func TestMCPUpstreamHeaders(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "authed", Version: "1"}, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			refused.Add(1)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- a.RunMCP(ctx, MCPOptions{Name: "authed", Upstream: ts.URL, Headers: http.Header{"Authorization": {"Bearer s3cret"}}}, inR, outW, io.Discard)
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools through the proxy to a server that needs the header: %v", err)
	}
	cs.Close()
	if n := refused.Load(); n != 0 {
		t.Errorf("the upstream refused %d requests without the header", n)
	}
}

// TestMCPListenEndsIdleSessions: a client that goes away without ending
// its session does not keep it (and its upstream session) forever.
func TestMCPListenEndsIdleSessions(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	go a.RunMCP(ctx, MCPOptions{Name: "up", Upstream: up.URL, Listen: "127.0.0.1:0", IdleSession: 300 * time.Millisecond,
		Ready: func(s string) { addr <- s }}, nil, io.Discard, io.Discard)
	listen := <-addr
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + listen + "/", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The client goes quiet without ending its session.
	time.Sleep(2 * time.Second)
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("a request on a session idle past IdleSession succeeded; want it ended")
	}
}

// TestWrapMCPServersCodex: install --mcp for Codex rewrites .codex/config.toml
// in the project (or, for --user, in the home directory), naming a home
// that is not the default, and uninstall --mcp gives the file back.
func TestWrapMCPServersCodex(t *testing.T) {
	for _, scope := range []HookScope{HookProject, HookUser} {
		project, homeDir := t.TempDir(), t.TempDir()
		dir := project
		if scope == HookUser {
			dir = homeDir
		}
		path := filepath.Join(dir, ".codex", "config.toml")
		in := "model = \"o3\"\n\n[mcp_servers.fs] # files\ncommand = \"npx\"\nargs = [\"-y\", \"srv\"]\n"
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		home := Home(filepath.Join(homeDir, "other-warden"))
		res, err := WrapMCPServers("codex", scope, project, homeDir, "warden", home, false)
		if err != nil || !res.Changed || res.Path != path {
			t.Fatalf("scope %v: WrapMCPServers(codex) = %+v, %v; want %s rewritten", scope, res, err, path)
		}
		b, _ := os.ReadFile(path)
		want := "model = \"o3\"\n\n[mcp_servers.fs] # files\ncommand = \"warden\"\nargs = [\"--home\", \"" + string(home) + "\", \"mcp\", \"--name\", \"fs\", \"--\", \"npx\", \"-y\", \"srv\"]\n"
		if string(b) != want {
			t.Errorf("scope %v: config.toml is\n%s\nwant\n%s", scope, b, want)
		}
		if res, err := WrapMCPServers("codex", scope, project, homeDir, "warden", home, true); err != nil || !res.Changed {
			t.Fatalf("scope %v: undo = %+v, %v", scope, res, err)
		}
		if b, _ := os.ReadFile(path); string(b) != in {
			t.Errorf("scope %v: after undo config.toml is %q, want %q", scope, b, in)
		}
	}
}

func TestWrapMCPServersCodexRefusesInvalidTOML(t *testing.T) {
	project := t.TempDir()
	path := filepath.Join(project, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	in := "[mcp_servers.fs]\ncommand = \"npx\"\ncommand = \"again\"\n"
	os.WriteFile(path, []byte(in), 0o600)
	_, err := WrapMCPServers("codex", HookProject, project, t.TempDir(), "warden", Home(t.TempDir()), false)
	var we *warden.Error
	if !errors.As(err, &we) || we.Code != warden.EInvalid || !strings.Contains(err.Error(), "config.toml") || we.Hint == "" {
		t.Fatalf("WrapMCPServers on a config.toml with a duplicate key = %v; want an invalid-input error naming the file, with a hint", err)
	}
	if b, _ := os.ReadFile(path); string(b) != in {
		t.Errorf("the refused file was changed to %q", b)
	}
}

// TestMCPListenSessionPerClient: with --listen, each HTTP client session
// is a warden session of its own (an approval "for this session" given in
// one host's window does not cover another's), unless --session names one.
func TestMCPListenSessionPerClient(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, struct{}, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, struct{}{}, nil
		})
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer up.Close()
	seen := map[string]bool{} // the sessions of earlier runs
	sessions := func(session string) map[string]bool {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr := make(chan string, 1)
		go a.RunMCP(ctx, MCPOptions{Name: "up", Upstream: up.URL, Listen: "127.0.0.1:0", Session: session, Wait: -1,
			Ready: func(s string) { addr <- s }}, nil, io.Discard, io.Discard)
		listen := <-addr
		for range 2 {
			c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + listen + "/", MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			cs.Close()
		}
		es, err := a.Store.Entries(ctx, warden.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, e := range es {
			if e.Tool == "mcp__up__echo" && (session == "" || e.Session == session) && !seen[e.Session] {
				got[e.Session] = true
			}
		}
		for s := range got {
			seen[s] = true
		}
		return got
	}
	if got := sessions(""); len(got) != 2 {
		t.Errorf("two HTTP clients were audited under sessions %v; want two different ones", got)
	}
	if got := sessions("named"); len(got) != 1 || !got["named"] {
		t.Errorf("with --session named: sessions %v; want only named", got)
	}
}

// TestMCPListenKeepsQuestionsUntilTheClientListens: the questions a client
// is asked in the middle of a tool call (warden's own approval, then the
// server's elicitation), sent before the client has opened its GET stream,
// reach the client when that stream opens, and the call then finishes. The
// proxy cannot relate a question to the client's call, so it goes to the
// GET stream; a client that opened that stream late (a loaded machine)
// lost it, and the call failed.
func TestMCPListenKeepsQuestionsUntilTheClientListens(t *testing.T) {
	a := openTestApp(t)
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "greet"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, struct{}, error) {
			r, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, struct{}{}, err
			}
			name, _ := r.Content["name"].(string)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello " + name}}}, struct{}{}, nil
		})
	up := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer up.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := make(chan string, 1)
	go a.RunMCP(ctx, MCPOptions{Name: "up", Upstream: up.URL, Listen: "127.0.0.1:0", Wait: -1,
		Ready: func(s string) { addr <- s }}, nil, io.Discard, io.Discard)
	c := &rawMCP{t: t, ctx: ctx, url: "http://" + <-addr + "/"}

	c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	result := make(chan []string, 1)
	go func() {
		result <- c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}`)
	}()
	// Warden asks about the call (the default policy asks about an
	// unknown tool) while the client has no stream open for the question.
	time.Sleep(500 * time.Millisecond)
	select {
	case got := <-result:
		t.Fatalf("the tool call ended before the client could answer: %q", got)
	default:
	}

	get, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(sessionHeader, c.session)
	get.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	var asked []string
	for {
		select {
		case data := <-events:
			var q struct {
				ID     json.RawMessage  `json:"id"`
				Method string           `json:"method"`
				Params sdk.ElicitParams `json:"params"`
			}
			if json.Unmarshal([]byte(data), &q) != nil || q.Method != "elicitation/create" {
				continue
			}
			asked = append(asked, q.Params.Message)
			answer := `{"name":"ada"}`
			if strings.HasPrefix(q.Params.Message, "warden:") {
				answer = `{"approve":true}`
			}
			c.post(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":` + answer + `}}`)
		case got := <-result:
			if !strings.Contains(strings.Join(got, "\n"), "hello ada") {
				t.Errorf("the tool call answered %q after the questions %q; want its result with the client's answer", got, asked)
			}
			if len(asked) != 2 {
				t.Errorf("the client was asked %q; want warden's approval, then the server's question", asked)
			}
			return
		case <-ctx.Done():
			t.Fatalf("the tool call never finished; the client was asked %q", asked)
		}
	}
}

// rawMCP is a Streamable HTTP client that sends each message by hand.
type rawMCP struct {
	t       *testing.T
	ctx     context.Context
	url     string
	session string
}

// post sends one message and returns the data of every event (or the
// JSON body) of its answer.
func (c *rawMCP) post(msg string) []string {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, strings.NewReader(msg))
	if err != nil {
		c.t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set(sessionHeader, c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		c.t.Errorf("POST %s: %s %s", msg, resp.Status, b)
		return nil
	}
	if c.session == "" {
		c.session = resp.Header.Get(sessionHeader)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return []string{string(b)}
	}
	var data []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	return data
}
