package hosts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A hostSpec is how one host is driven: its model protocol, how it is
// started headless, and its tools.
type hostSpec struct {
	install string // the host warden installs for; "" is the spec's name
	wire    wire
	// command returns the host's arguments and the environment it adds, and
	// writes the settings it needs into the world's home.
	command func(t *testing.T, w *world, m *model, prompt string) (args, env []string)
	shell   func(cmd string) call
	read    func(path string) call // the file-read tool
	write   func(path, content string) call
}

var hostSpecs = map[string]hostSpec{
	"claude": {
		wire: anthropicWire{},
		// Claude Code in -p mode in its default permission mode: no login,
		// onboarding or trust prompt.
		command: func(t *testing.T, w *world, m *model, prompt string) ([]string, []string) {
			return []string{"-p", prompt, "--output-format", "json"}, []string{
				"ANTHROPIC_BASE_URL=" + m.url(), "ANTHROPIC_API_KEY=sk-ant-e2e-fake",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
			}
		},
		shell: func(cmd string) call {
			return call{Tool: "Bash", Args: map[string]any{"command": cmd, "description": "e2e step"}}
		},
		read: func(path string) call { return call{Tool: "Read", Args: map[string]any{"file_path": path}} },
		write: func(path, content string) call {
			return call{Tool: "Write", Args: map[string]any{"file_path": path, "content": content}}
		},
	},
	"codex": {
		wire: responsesWire{},
		// codex exec with Codex's own sandbox off, as docs/hosts/codex.md
		// advises (warden's is the one), and the approval policy headless
		// runs need. Hooks must be trusted: a user trusts warden's once in
		// the TUI's /hooks; here --dangerously-bypass-hook-trust stands for
		// that (an untrusted hook is skipped silently).
		command: func(t *testing.T, w *world, m *model, prompt string) ([]string, []string) {
			return codexCommand(t, w, m, prompt, "danger-full-access")
		},
		shell: func(cmd string) call {
			return call{Tool: "exec_command", Args: map[string]any{"cmd": cmd}}
		},
	},
	// Codex in its workspace-write sandbox (what --full-auto selects), with
	// warden's home among its writable roots, as docs/hosts/codex.md says
	// warden exec needs there.
	"codex-workspace-write": {
		install: "codex",
		wire:    responsesWire{},
		command: func(t *testing.T, w *world, m *model, prompt string) ([]string, []string) {
			return codexCommand(t, w, m, prompt, "workspace-write")
		},
		shell: func(cmd string) call {
			return call{Tool: "exec_command", Args: map[string]any{"cmd": cmd}}
		},
	},
	"gemini": {
		wire: geminiWire{},
		// gemini -p with API-key auth (GOOGLE_GEMINI_BASE_URL alone selects
		// a gateway auth headless runs refuse), in yolo mode: in the default
		// mode headless Gemini does not even offer its shell and write tools
		// to the model, so the hook is the only gate.
		command: func(t *testing.T, w *world, m *model, prompt string) ([]string, []string) {
			w.write(t, filepath.Join(w.home, ".gemini", "settings.json"), `{
  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "security": { "auth": { "selectedType": "gemini-api-key" } }
}
`, 0o644)
			// Gemini refuses to read outside the workspace before any hook
			// runs; the home's .ssh is included so that warden's hook is what
			// decides the read.
			return []string{"-m", "gemini-2.5-pro", "--approval-mode", "yolo", "-o", "json",
					"--include-directories", filepath.Join(w.home, ".ssh"), "-p", prompt},
				[]string{"GOOGLE_GEMINI_BASE_URL=" + m.url(), "GEMINI_API_KEY=e2e-fake",
					"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true"}
		},
		shell: func(cmd string) call {
			return call{Tool: "run_shell_command", Args: map[string]any{"command": cmd, "description": "e2e step"}}
		},
		read: func(path string) call { return call{Tool: "read_file", Args: map[string]any{"file_path": path}} },
		write: func(path, content string) call {
			return call{Tool: "write_file", Args: map[string]any{"file_path": path, "content": content}}
		},
	},
}

// codexCommand writes $CODEX_HOME/config.toml for a run in sandbox mode
// (with warden's home writable in workspace-write) and returns codex exec's
// arguments and environment.
func codexCommand(t *testing.T, w *world, m *model, prompt, sandbox string) ([]string, []string) {
	codexDaemonDir(t)
	codexHome := filepath.Join(w.home, ".codex")
	w.write(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "e2e-model"
model_provider = "e2e"
approval_policy = "never"
sandbox_mode = %q
check_for_update_on_startup = false
%s

[sandbox_workspace_write]
writable_roots = [%q]

[model_providers.e2e]
name = "e2e"
base_url = "%s/v1"
wire_api = "responses"
env_key = "E2E_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects.%q]
trust_level = "trusted"
`, sandbox, codexMCPGrace, w.wardenHome, m.url(), w.project), 0o644)
	return []string{"exec", "--json", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", prompt},
		[]string{"CODEX_HOME=" + codexHome, "E2E_OPENAI_KEY=sk-e2e-fake"}
}

// codexMCPGrace is how long Codex's first turn waits for an MCP server to
// start before it leaves the server's tools out of that turn: 1 s by
// default in Codex 0.171.0 (an optional server's "startup grace"), which
// server-filesystem (about 250 ms on a quiet machine, warden mcp adds about
// 70) overran in CI beside the e2e/session suite, and the model was offered
// none of its tools. A user on a loaded machine sets the same; the tests
// are about what warden lets through, not how fast node starts.
const codexMCPGrace = "mcp_optional_startup_grace_ms = 60000"

// codexDaemonDir makes Codex's app-server socket directory in the temporary
// directory, /tmp/codex-daemon-UID, private again where an earlier run left
// it readable by others: Codex 0.171.0 made one with mode 0755 on this
// machine (2026-11-28) and then refused, in every later run, to build its
// sandbox beside it ("app-server socket directory must be a user-owned
// directory with mode 0700"). It is Codex's own directory, shared by
// every run of the machine's user.
func codexDaemonDir(t *testing.T) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("codex-daemon-%d", os.Getuid()))
	if st, err := os.Lstat(dir); err == nil && st.IsDir() && st.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Logf("Codex's %s is mode %o and could not be made private: %v", dir, st.Mode().Perm(), err)
		}
	}
}

// installName is the host warden installs its hook for, and whose binary
// runs, in a world for the spec named host.
func installName(host string) string {
	if s := hostSpecs[host]; s.install != "" {
		return s.install
	}
	return host
}
