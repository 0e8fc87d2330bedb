package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDefaultProtectedPathsHoldWhereGitReadsItsConfig plants, in a fresh
// repository, each file of the git directory through which git reads
// configuration (and so runs core.fsmonitor, a pager, hooks) other than
// .git/config itself, checks with the real git that git obeys it, and then
// that the default protected paths keep it read-only. A sandboxed command
// that could write one would have the user's next git status on the host
// run what it says.
func TestDefaultProtectedPathsHoldWhereGitReadsItsConfig(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: which files git reads cannot be shown")
	}
	const planted = "echo planted-by-the-agent"
	cases := []struct {
		path  string // relative to the work tree
		plant func(t *testing.T, dir string)
	}{
		{".git/commondir", func(t *testing.T, dir string) {
			// commondir moves the common directory (config, hooks, refs)
			// to one the agent made.
			evil := filepath.Join(dir, "evil")
			for _, d := range []string{"objects", "refs"} {
				mkdir(t, filepath.Join(evil, d))
			}
			write(t, filepath.Join(evil, "HEAD"), "ref: refs/heads/main\n")
			write(t, filepath.Join(evil, "config"), "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "+planted+"\n")
			write(t, filepath.Join(dir, ".git", "commondir"), "../evil\n")
		}},
		{".git/config.worktree", func(t *testing.T, dir string) {
			// The user's own .git/config turns the extension on (git
			// sparse-checkout does); the agent writes config.worktree.
			git(t, gitBin, dir, "config", "extensions.worktreeConfig", "true")
			write(t, filepath.Join(dir, ".git", "config.worktree"), "[core]\n\tfsmonitor = "+planted+"\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			dir := t.TempDir()
			git(t, gitBin, dir, "init", "-q")
			c.plant(t, dir)
			if got := strings.TrimSpace(git(t, gitBin, dir, "config", "core.fsmonitor")); got != planted {
				t.Fatalf("git does not read %s here (core.fsmonitor = %q): the case shows nothing", c.path, got)
			}
			if !slices.Contains(DefaultProtectedPaths, c.path) {
				t.Errorf("git reads its configuration from %s, which the default sandbox.protected_paths (%v) leave writable", c.path, DefaultProtectedPaths)
			}
		})
	}
}

// TestDefaultProtectedPathsHoldEditorSettings: VS Code and Cursor run the
// tasks (runOn: folderOpen), MCP servers and interpreters that a project's
// .vscode/ names, on the host, when the user opens the folder; other agent
// hosts and editors start what their project settings name (Continue's and
// Roo Code's MCP servers, Zed's language servers, opencode's MCP servers,
// aider's lint and test commands).
func TestDefaultProtectedPathsHoldEditorSettings(t *testing.T) {
	for _, p := range []string{".vscode/", ".cursor/", ".mcp.json", ".continue/", ".roo/", ".zed/", "opencode.json", ".aider.conf.yml"} {
		if !slices.Contains(DefaultProtectedPaths, p) {
			t.Errorf("%s is not among the default protected paths %v", p, DefaultProtectedPaths)
		}
	}
}

func git(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil && len(args) > 0 && args[0] != "config" {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultSecretPathsHoldTheCommonStores: beside keys and cloud logins,
// the default masks cover the agent hosts' own logins (a command reading
// Claude Code's or Codex's would act as the user's account), database
// password files, wallets' keys and a token kept inside a writable cache.
func TestDefaultSecretPathsHoldTheCommonStores(t *testing.T) {
	for _, p := range []string{
		"~/.ssh", "~/.aws", "~/.git-credentials",
		"~/.claude/.credentials.json", "~/.claude.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json",
		"~/.pgpass", "~/.my.cnf", "~/.m2/settings.xml", "~/.gem/credentials",
		"~/.config/solana", "~/.ethereum/keystore", "~/.cache/huggingface/token",
		// git credential-store's XDG file, registry and container logins.
		"~/.config/git/credentials", "~/.yarnrc.yml", "~/.config/pip/pip.conf", "~/.config/pypoetry/auth.toml",
		"~/.config/containers/auth.json", "~/.pulumi/credentials.json", "~/.config/sops/age",
	} {
		if !slices.Contains(DefaultSecretPaths, p) {
			t.Errorf("%s is not among the default sandbox.secret_paths", p)
		}
	}
	l, err := Parse(DefaultFile())
	if err != nil || len(l.Problems) > 0 {
		t.Fatalf("the default policy: %v %v", err, l.Problems)
	}
	p := l.Policy
	if !slices.Equal(p.Sandbox.SecretPaths, DefaultSecretPaths) {
		t.Errorf("the commented default policy's secret_paths differ from DefaultSecretPaths:\n%q\n%q", p.Sandbox.SecretPaths, DefaultSecretPaths)
	}
	if !slices.Equal(p.Sandbox.ProtectedPaths, DefaultProtectedPaths) {
		t.Errorf("the commented default policy's protected_paths differ from DefaultProtectedPaths:\n%q\n%q", p.Sandbox.ProtectedPaths, DefaultProtectedPaths)
	}
}
