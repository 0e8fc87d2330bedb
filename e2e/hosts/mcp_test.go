package hosts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClaudeCodeMCPThroughWarden: the real Claude Code is the MCP client,
// its MCP config pointing at `warden mcp -- server-filesystem PROJECT` (the
// server from npm, pinned by scripts/mcp-servers.sh, in warden's workspace
// sandbox). The tool the policy denies is never offered to the model, a
// call to it never reaches the server, and an allowed call's result reaches
// the model fenced as untrusted data.
func TestClaudeCodeMCPThroughWarden(t *testing.T) {
	h := setup(t)
	server := mcpServer(t, h)
	w := newWorld(t, h, "claude")
	w.warden(t, "", "config", "set", "tools.tiers.mcp__fs__read_text_file", "1")
	w.warden(t, "", "config", "set", "tools.denied", `["mcp__fs__write_file"]`)
	w.write(t, filepath.Join(w.project, "NOTES.txt"), "the launch is on tuesday\n", 0o644)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"command": "warden", "args": []string{"mcp", "--name", "fs", "--", server, w.project},
	}}})
	mcpConfig := filepath.Join(w.root, "mcp.json")
	w.write(t, mcpConfig, string(cfg), 0o644)

	written := filepath.Join(w.project, "written.txt")
	m := newModel(t, anthropicWire{},
		call{Tool: "mcp__fs__read_text_file", Args: map[string]any{"path": filepath.Join(w.project, "NOTES.txt")}},
		call{Tool: "mcp__fs__write_file", Args: map[string]any{"path": written, "content": "x"}},
	)
	res := runClaudeWith(t, w, m, "e2e: read the notes, then write a file", "--mcp-config", mcpConfig, "--strict-mcp-config")

	offered := m.offered()
	if !slices.Contains(offered, "mcp__fs__read_text_file") {
		t.Fatalf("Claude Code offered the model %v; want the proxied read_text_file", offered)
	}
	if slices.Contains(offered, "mcp__fs__write_file") {
		t.Errorf("Claude Code offered the model mcp__fs__write_file, which the policy denies")
	}
	if !strings.Contains(res[0].Text, "the launch is on tuesday") || !strings.Contains(res[0].Text, "untrusted id=") {
		t.Errorf("read_text_file reached the model as %q; want the file's text fenced by warden", clip(res[0].Text, 1000))
	}
	if !res[1].Error {
		t.Errorf("write_file reached the model as %q, not an error", clip(res[1].Text, 500))
	}
	if _, err := os.Stat(written); err == nil {
		t.Error("write_file reached the server: the file exists")
	}
	if out := w.warden(t, "", "audit", "events", "--json", "--limit", "50"); !strings.Contains(out, `"server":"fs"`) {
		t.Errorf("no action_result of the proxied call in the audit log:\n%s", clip(out, 2000))
	}
}

// runClaudeWith runs the world's Claude Code headless with extra arguments
// and returns what reached the model, failing unless it made every call of
// the script.
func runClaudeWith(t *testing.T, w *world, m *model, prompt string, extra ...string) []toolResult {
	t.Helper()
	args, env := hostSpecs["claude"].command(t, w, m, prompt)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, w.h.bin["claude"], append(args, extra...)...)
	c.Dir = w.project
	// MCP tools offered to the model up front, not behind Claude Code's
	// tool search, so that what warden listed is what the model sees.
	c.Env = append(append(append([]string{}, w.env...), env...), "ENABLE_TOOL_SEARCH=false")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = 5 * time.Second
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude did not finish within %s\nstdout: %s\nstderr: %s\n%s", runTimeout, clip(stdout.String(), 4000), clip(stderr.String(), 4000), m.requests())
	}
	res := m.results()
	if len(res) != len(m.script) {
		t.Fatalf("claude sent back %d tool results, want %d; err %v\nstdout: %s\nstderr: %s\n%s",
			len(res), len(m.script), err, clip(stdout.String(), 3000), clip(stderr.String(), 3000), m.requests())
	}
	return res
}

// TestCodexMCPThroughWarden: the same with the real Codex as the MCP
// client, its config.toml pointing at warden mcp (Codex offers a server's
// tools to the model in the namespace mcp__SERVER).
func TestCodexMCPThroughWarden(t *testing.T) {
	h := setup(t)
	server := mcpServer(t, h)
	w := newWorld(t, h, "codex")
	w.warden(t, "", "config", "set", "tools.tiers.mcp__fs__read_text_file", "1")
	w.warden(t, "", "config", "set", "tools.denied", `["mcp__fs__write_file"]`)
	w.write(t, filepath.Join(w.project, "NOTES.txt"), "the launch is on tuesday\n", 0o644)
	written := filepath.Join(w.project, "written.txt")
	m := newModel(t, responsesWire{},
		call{Tool: "mcp__fs/read_text_file", Args: map[string]any{"path": filepath.Join(w.project, "NOTES.txt")}},
		call{Tool: "mcp__fs/write_file", Args: map[string]any{"path": written, "content": "x"}},
	)
	args, env := codexCommand(t, w, m, "e2e: read the notes, then write a file", "danger-full-access")
	// The server as a user configures it, in the project's .codex/config.toml
	// (Codex reads it in a trusted project), with a comment; then warden
	// install codex --mcp routes it through warden mcp.
	cfg := filepath.Join(w.project, ".codex", "config.toml")
	srv, _ := json.Marshal(server) // a JSON string of a path is a TOML basic string
	proj, _ := json.Marshal(w.project)
	orig := "# the project's MCP servers\n[mcp_servers.fs]\ncommand = " + string(srv) + " # server-filesystem\nargs = [\n  " + string(proj) + ",\n]\n"
	w.write(t, cfg, orig, 0o644)
	if out := w.warden(t, w.project, "install", "codex", "--mcp"); !strings.Contains(out, "MCP server fs: wrapped") {
		t.Fatalf("warden install codex --mcp said:\n%s\nwant the server fs wrapped", out)
	}
	wrappedCfg, _ := os.ReadFile(cfg)
	want := "# the project's MCP servers\n[mcp_servers.fs]\ncommand = \"warden\" # server-filesystem\nargs = [\"mcp\", \"--name\", \"fs\", \"--\", " + string(srv) + ", \n  " + string(proj) + ",\n]\n"
	if string(wrappedCfg) != want {
		t.Fatalf("the project's config.toml after install --mcp:\n%s\nwant:\n%s", wrappedCfg, want)
	}
	defer func() {
		// uninstall --mcp gives the file back as the user wrote it.
		w.warden(t, w.project, "uninstall", "codex", "--mcp")
		if b, _ := os.ReadFile(cfg); string(b) != orig {
			t.Errorf("config.toml after uninstall --mcp:\n%s\nwant the original:\n%s", b, orig)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, w.h.bin["codex"], args...)
	c.Dir = w.project
	c.Env = append(append([]string{}, w.env...), env...)
	c.WaitDelay = 5 * time.Second
	out, runErr := c.CombinedOutput()
	res := m.results()
	if len(res) != 2 {
		t.Fatalf("codex sent back %d tool results, want 2; err %v\n%s\n%s", len(res), runErr, clip(string(out), 3000), m.requests())
	}
	m.mu.Lock()
	first := m.turns[0].Raw
	m.mu.Unlock()
	if !strings.Contains(first, `"read_text_file"`) || strings.Contains(first, `"write_file"`) {
		t.Errorf("Codex's first request offers read_text_file %v and write_file %v; want only the first (the policy denies write_file)\n%s",
			strings.Contains(first, `"read_text_file"`), strings.Contains(first, `"write_file"`), clip(string(out), 3000))
	}
	if !strings.Contains(res[0].Text, "the launch is on tuesday") || !strings.Contains(res[0].Text, "untrusted id=") {
		t.Errorf("read_text_file reached the model as %q; want the file's text fenced by warden", clip(res[0].Text, 1000))
	}
	t.Logf("write_file reached the model as %q", clip(res[1].Text, 300))
	if strings.Contains(res[1].Text, "Successfully wrote") {
		t.Errorf("write_file reached the model as %q; want a refusal", clip(res[1].Text, 500))
	}
	if _, err := os.Stat(written); err == nil {
		t.Error("write_file reached the server: the file exists")
	}
}

var (
	mcpCopy    sync.Once
	mcpCopyErr error
)

// mcpServer is server-filesystem from the npm cache (scripts/mcp-servers.sh)
// at a path the workspace sandbox can read: a clone under /tmp (which is
// private in the sandbox) has its cache copied into the worlds' directory
// once.
func mcpServer(t *testing.T, h *harness) string {
	t.Helper()
	cache := filepath.Join(h.module, "bin", "cache", "npm-mcp")
	rel := filepath.Join("node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(filepath.Join(cache, rel)); err != nil {
		t.Skipf("server-filesystem is not installed (%v): run scripts/mcp-servers.sh (make test does)", err)
	}
	tmp := filepath.Clean(os.TempDir())
	if mod := filepath.Clean(h.module); mod != tmp && !strings.HasPrefix(mod, tmp+string(filepath.Separator)) {
		return filepath.Join(cache, rel)
	}
	dst := filepath.Join(h.base, "npm-mcp")
	mcpCopy.Do(func() {
		if out, err := exec.Command("cp", "-a", cache, dst).CombinedOutput(); err != nil {
			mcpCopyErr = fmt.Errorf("copy %s out of /tmp: %v\n%s", cache, err, out)
		}
	})
	if mcpCopyErr != nil {
		t.Fatal(mcpCopyErr)
	}
	return filepath.Join(dst, rel)
}
