package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden"
)

// TestProjectPolicyOnlyTightens: a project's .warden.yaml can add destructive
// patterns and switch task runners off, but its attempts to loosen (safe
// patterns, replacements) are ignored, and a broken file fails closed.
func TestProjectPolicyOnlyTightens(t *testing.T) {
	a := openTestApp(t)
	project := filepath.Join(t.TempDir(), "repo")
	sub := filepath.Join(project, "pkg", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(project, ProjectPolicyFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(cmd, cwd string) warden.Decision {
		t.Helper()
		d, err := a.Gate.Check(context.Background(), &warden.Request{Capability: "shell", Action: "exec", Resource: cmd, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	if d := check("make build", sub); d.Verdict != warden.Allow {
		t.Fatalf("without a project file, make build = %v, want allow", d.Verdict)
	}
	write("version: 1\nshell:\n  allow_task_runners: false\n  destructive: [\"deploy-prod\"]\n  safe: [\"frobnicate\"]\n")
	cases := []struct {
		cmd  string
		want warden.Verdict
	}{
		{"deploy-prod --now", warden.Deny},   // added destructive pattern
		{"make build", warden.Sandbox},       // task runners switched off
		{"frobnicate --all", warden.Sandbox}, // a project cannot declare a program safe
		{"ls -la", warden.Allow},
	}
	for _, c := range cases {
		if d := check(c.cmd, sub); d.Verdict != c.want {
			t.Errorf("with the project file, %q in a subdirectory = %v (%s), want %v", c.cmd, d.Verdict, d.Rule, c.want)
		}
	}
	// Outside the project the layer does not apply.
	if d := check("deploy-prod --now", t.TempDir()); d.Verdict != warden.Allow || d.Rule != "shell.unknown_program" {
		t.Errorf("outside the project, deploy-prod = %v (%s), want allow by shell.unknown_program (an unknown program runs in the workspace sandbox)", d.Verdict, d.Rule)
	}

	write("version: 1\nshell:\n  destructiv: [x]\n")
	if d := check("ls -la", sub); d.Verdict != warden.Ask || d.Rule != "shell.project_policy_invalid" {
		t.Fatalf("with a broken project file, ls = %v %s, want ask shell.project_policy_invalid", d.Verdict, d.Rule)
	}
	d, err := a.Gate.Check(context.Background(), &warden.Request{Capability: "shell", Action: "exec", Resource: "ls", Cwd: sub, Autonomous: true})
	if err != nil || d.Verdict != warden.Deny {
		t.Fatalf("broken project file on an autonomous turn = %v, %v; want deny", d.Verdict, err)
	}

	// A project policy file that is a symlink or a FIFO is refused, not read.
	os.Remove(filepath.Join(project, ProjectPolicyFile))
	if err := os.Symlink("/dev/zero", filepath.Join(project, ProjectPolicyFile)); err != nil {
		t.Fatal(err)
	}
	if d := check("ls -la", sub); d.Rule != "shell.project_policy_invalid" {
		t.Fatalf("symlinked project file: %v %s, want shell.project_policy_invalid", d.Verdict, d.Rule)
	}
}
