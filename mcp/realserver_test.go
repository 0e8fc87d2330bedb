package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/sandbox"
)

// The real MCP servers, pinned and installed from npm by
// scripts/mcp-servers.sh (make test runs it through scripts/deps.sh).
const npmMCP = "../bin/cache/npm-mcp"

// realServer is the path of an installed server's entry point, or skips.
func realServer(t *testing.T, bin string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; the real MCP servers need it")
	}
	p, err := filepath.Abs(filepath.Join(npmMCP, "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		why := "run scripts/mcp-servers.sh (make test does) to install them"
		if b, err := os.ReadFile(filepath.Join(npmMCP, ".unreachable")); err == nil {
			why = strings.TrimSpace(string(b))
		}
		t.Skipf("%s is not installed in %s: %s", bin, npmMCP, why)
	}
	return p
}

var (
	buildOnce sync.Once
	wardenBin string
	buildErr  error
)

// warden builds the warden binary once for the tests that run it.
func wardenExe(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-mcp-test")
		if err != nil {
			buildErr = err
			return
		}
		wardenBin = filepath.Join(dir, "warden")
		out, err := exec.Command("go", "build", "-o", wardenBin, "../cmd/warden").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return wardenBin
}

// newHome makes a warden home with policy.
func newHome(t *testing.T, policy string) app.Home {
	t.Helper()
	home := app.Home(filepath.Join(t.TempDir(), "home"))
	if _, err := app.Init(context.Background(), home, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(home.PolicyPath(), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// throughWarden connects the SDK client to `warden mcp ARGS…`.
func throughWarden(t *testing.T, home app.Home, args ...string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.Command(wardenExe(t), append([]string{"--home", string(home), "mcp"}, args...)...)
	cmd.Stderr = testWriter{t}
	c := sdk.NewClient(&sdk.Implementation{Name: "warden-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to warden mcp %v: %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("warden mcp: %s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func names(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var n []string
	for _, tl := range res.Tools {
		n = append(n, tl.Name)
	}
	slices.Sort(n)
	return n
}

func realCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// openHome opens home to read what the proxy recorded.
func openHome(t *testing.T, home app.Home) *app.App {
	t.Helper()
	a, err := app.Open(context.Background(), home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

const fsPolicy = `version: 1
tools:
  tiers:
    mcp__fs__read_text_file: 1
    mcp__fs__list_directory: 1
  denied: [mcp__fs__write_file, mcp__fs__edit_file, mcp__fs__move_file, mcp__fs__create_directory]
`

// TestRealFilesystemServer runs the SDK client through `warden mcp` to the
// real @modelcontextprotocol/server-filesystem.
func TestRealFilesystemServer(t *testing.T) {
	server := realServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("meeting at noon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "page.html"), []byte("<p>Product page</p>\n"+injection+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := newHome(t, fsPolicy)
	cs := throughWarden(t, home, "--name", "fs", "--no-sandbox", "--wait", "-1s", "--", server, dir)

	got := names(t, cs)
	for _, hidden := range []string{"write_file", "edit_file", "move_file", "create_directory"} {
		if slices.Contains(got, hidden) {
			t.Errorf("listed tools %v include %s, which the policy denies", got, hidden)
		}
	}
	if !slices.Contains(got, "read_text_file") || !slices.Contains(got, "list_directory") {
		t.Fatalf("listed tools %v lack read_text_file or list_directory", got)
	}

	t.Run("denied call never reaches the server", func(t *testing.T) {
		target := filepath.Join(dir, "written.txt")
		res := realCall(t, cs, "write_file", map[string]any{"path": target, "content": "x"})
		if !res.IsError || !strings.Contains(text(res), "tools.denied") {
			t.Errorf("write_file = %q; want an isError refusal by tools.denied", text(res))
		}
		if _, err := os.Stat(target); err == nil {
			t.Error("write_file reached the server: the file exists")
		}
	})
	t.Run("allowed call comes back fenced", func(t *testing.T) {
		res := realCall(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
		got := text(res)
		if res.IsError || !strings.Contains(got, "meeting at noon") || !strings.Contains(got, "⟦untrusted id=") {
			t.Errorf("read_text_file = %q; want the file's text fenced", got)
		}
	})
	t.Run("injection in a file is withheld", func(t *testing.T) {
		res := realCall(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "page.html")})
		if got := text(res); !res.IsError || strings.Contains(got, "developer mode") || !strings.Contains(got, "withheld") {
			t.Errorf("read_text_file of the injected page = %q; want it withheld (score 1 is above the default block score)", got)
		}
	})
	t.Run("unknown tool asks", func(t *testing.T) {
		res := realCall(t, cs, "get_file_info", map[string]any{"path": filepath.Join(dir, "notes.txt")})
		if !res.IsError || !strings.Contains(text(res), "tier 3") || !strings.Contains(text(res), "warden approvals approve") {
			t.Errorf("get_file_info = %q; want a tier 3 ask refused, naming the approval", text(res))
		}
	})
	cs.Close()

	a := openHome(t, home)
	for tool, want := range map[string]warden.Verdict{"mcp__fs__write_file": warden.Deny, "mcp__fs__read_text_file": warden.Allow, "mcp__fs__get_file_info": warden.Ask} {
		es := entries(t, a, tool)
		if len(es) == 0 || es[0].Verdict != want {
			t.Errorf("audit of %s = %+v; want a %s", tool, es, want)
		}
	}
	if evs := events(t, a, warden.EventInjectionFound); len(evs) != 1 {
		t.Errorf("injection_found events = %d, want 1", len(evs))
	}
}

const everythingPolicy = `version: 1
tools:
  tiers:
    mcp__everything__echo: 1
    mcp__everything__get-sum: 1
  denied: ["mcp__everything__trigger-*", "mcp__everything__toggle-*"]
`

// TestRealEverythingServer runs the SDK client through `warden mcp` to the
// real @modelcontextprotocol/server-everything, over stdio.
func TestRealEverythingServer(t *testing.T) {
	server := realServer(t, "mcp-server-everything")
	home := newHome(t, everythingPolicy)
	cs := throughWarden(t, home, "--name", "everything", "--no-sandbox", "--wait", "-1s", "--", server, "stdio")
	checkEverything(t, cs)
}

// TestRealEverythingServerOverHTTP: the same through --upstream, the
// server speaking Streamable HTTP, and through --listen, warden serving it.
func TestRealEverythingServerOverHTTP(t *testing.T) {
	server := realServer(t, "mcp-server-everything")
	port := freePort(t)
	cmd := exec.Command(server, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitPort(t, "127.0.0.1:"+port)
	upstream := "http://127.0.0.1:" + port + "/mcp"
	home := newHome(t, everythingPolicy)

	t.Run("upstream", func(t *testing.T) {
		checkEverything(t, throughWarden(t, home, "--name", "everything", "--wait", "-1s", "--upstream", upstream))
	})
	t.Run("listen", func(t *testing.T) {
		listen := "127.0.0.1:" + freePort(t)
		w := exec.Command(wardenExe(t), "--home", string(home), "mcp", "--name", "everything", "--wait", "-1s", "--upstream", upstream, "--listen", listen)
		stderr, _ := w.StderrPipe()
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Process.Kill(); w.Wait() })
		sc := bufio.NewScanner(stderr)
		if !sc.Scan() || !strings.Contains(sc.Text(), "serving everything") {
			t.Fatalf("warden mcp --listen said %q; want it serving", sc.Text())
		}
		go func() {
			for sc.Scan() {
				t.Log(sc.Text())
			}
		}()
		req, _ := http.NewRequest(http.MethodPost, "http://"+listen+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("a request from a web origin = %v, %v; want 403", resp, err)
		}
		c := sdk.NewClient(&sdk.Implementation{Name: "warden-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + listen + "/", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect over HTTP to warden mcp --listen: %v", err)
		}
		defer cs.Close()
		checkEverything(t, cs)
	})
}

// checkEverything lists and calls the everything server's tools through
// the proxy.
func checkEverything(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	got := names(t, cs)
	if !slices.Contains(got, "echo") || !slices.Contains(got, "get-sum") {
		t.Fatalf("listed tools %v lack echo or get-sum", got)
	}
	for _, n := range got {
		if strings.HasPrefix(n, "trigger-") || strings.HasPrefix(n, "toggle-") {
			t.Errorf("listed tools include %s, which the policy denies", n)
		}
	}
	res := realCall(t, cs, "echo", map[string]any{"message": "hello through warden"})
	if res.IsError || !strings.Contains(text(res), "hello through warden") || !strings.Contains(text(res), "⟦untrusted id=") {
		t.Errorf("echo = %q; want the echo fenced", text(res))
	}
	res = realCall(t, cs, "trigger-long-running-operation", map[string]any{"duration": 1, "steps": 1})
	if !res.IsError || !strings.Contains(text(res), "tools.denied") {
		t.Errorf("trigger-long-running-operation = %q; want refused by tools.denied", text(res))
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func waitPort(t *testing.T, addr string) {
	t.Helper()
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

// TestRealServerInTheSandbox: by default the real filesystem server
// runs under warden exec in the workspace sandbox, its stdio passed
// through, and the start of the server is itself decided and audited.
func TestRealServerInTheSandbox(t *testing.T) {
	server := realServer(t, "mcp-server-filesystem")
	if err := sandbox.Supported(); err != nil {
		t.Skipf("no sandbox can run here: %v", err)
	}
	dir, err := filepath.Abs("testdata/fs") // the project: /tmp is private in the sandbox
	if err != nil {
		t.Fatal(err)
	}
	home := newHome(t, fsPolicy)
	cs := throughWarden(t, home, "--name", "fs", "--wait", "-1s", "--", server, dir) // sandboxed by default
	res := realCall(t, cs, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
	if res.IsError || !strings.Contains(text(res), "sandboxed notes") {
		t.Fatalf("read_text_file in the sandbox = %q; want the file's text", text(res))
	}
	cs.Close()
	a := openHome(t, home)
	var sandboxed bool
	for _, ev := range events(t, a, warden.EventActionResult) {
		if m := meta(t, ev); m["profile"] == "workspace" {
			sandboxed = true
		}
	}
	if !sandboxed {
		t.Error("no action_result of a workspace-sandboxed run: the server did not run under warden exec")
	}
}
