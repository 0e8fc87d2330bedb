package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// TestCommandLineIsTheHostsCommand checks that a hook's `bash -c CMD` is
// decided as CMD, the command the host asked about, so that an approval
// given for it covers the rewritten run, and that anything else is quoted.
func TestCommandLineIsTheHostsCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bash", "-c", "git push origin main"}, "git push origin main"},
		{[]string{"/bin/bash", "-c", "make test && echo ok"}, "make test && echo ok"},
		{[]string{"bash", "-c", "x", "arg0"}, "bash -c x arg0"},
		{[]string{"sh", "-c", "ls"}, "sh -c ls"},
		{[]string{"ls", "-la", "my file"}, "ls -la 'my file'"},
	} {
		if got := commandLine(c.args); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestProjectRootIsTheWorkTree: a command run in a subdirectory of a
// repository works on the whole work tree (so it can commit), never above
// the home, and a directory outside any repository is its own project; an
// empty .git on the way (pkg/x/.git here) is no repository, as git passes
// over it (red-team-20: it made the package the project).
func TestProjectRootIsTheWorkTree(t *testing.T) {
	home := t.TempDir()
	repo := filepath.Join(home, "src", "repo")
	sub := filepath.Join(repo, "pkg", "x")
	plain := filepath.Join(home, "notes")
	for _, d := range []string{filepath.Join(repo, ".git", "objects"), filepath.Join(repo, ".git", "refs"), sub, plain, filepath.Join(home, ".git", "objects"), filepath.Join(home, ".git", "refs"), filepath.Join(sub, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{filepath.Join(repo, ".git"), filepath.Join(home, ".git")} {
		if err := os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ dir, want string }{
		{repo, repo},
		{sub, repo},
		{plain, plain}, // the home's own .git (dotfiles) does not make the home the project
		{home, home},
	} {
		if got := projectRoot(c.dir, home); got != c.want {
			t.Errorf("projectRoot(%s) = %s, want %s", c.dir, got, c.want)
		}
	}
}

// TestSandboxLoopbackGivesWayOnlyToThePolicysAnswers: a loopback target a
// command names is the sandbox's own where commands run contained, which
// lifts the private-address and unknown-host answers only: a deny rule the
// user wrote, and a network policy that cannot be built, still deny.
func TestSandboxLoopbackGivesWayOnlyToThePolicysAnswers(t *testing.T) {
	if sandbox.Supported() != nil {
		t.Skip("no sandbox here: loopback is the host's, and the policy decides")
	}
	a := openTestApp(t)
	check := func(p *config.Policy) warden.Decision {
		t.Helper()
		req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "curl http://localhost:3000/", Cwd: t.TempDir()}
		return Pipeline(a.Home, p, nil, a.Store, a.Now).Decide(context.Background(), &req)
	}
	if d := check(a.Policy); d.Verdict != warden.Allow {
		t.Errorf("default policy: %s %s (%s); want allow (the sandbox's own loopback)", d.Verdict, d.Rule, d.Reason)
	}
	denied := *a.Policy
	denied.Network.Denied = []string{"localhost"}
	if d := check(&denied); d.Verdict != warden.Deny || !strings.Contains(d.Reason, "network.denied_domains") {
		t.Errorf("a deny rule for localhost: %s %s; want deny by that rule", d.Verdict, d.Rule)
	}
	broken := *a.Policy
	broken.Network.Allowed = []string{"not a [rule"}
	if d := check(&broken); d.Verdict != warden.Deny {
		t.Errorf("a network policy that cannot be built: %s %s (%s); want deny", d.Verdict, d.Rule, d.Reason)
	}
}
