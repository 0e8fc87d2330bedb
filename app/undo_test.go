package app

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/sandbox"
	"github.com/agentwarden/warden/undo"
)

// hostRun runs a sandbox.Command as a plain process: for testing saveWork
// without a sandbox (cli.TestHookDiscardIsUndone runs it in a real one).
func hostRun(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, c.Stdout, c.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return sandbox.Result{ExitCode: ee.ExitCode()}, nil
	}
	return sandbox.Result{}, err
}

// TestSaveWork: warden exec's decision of a discard is allowed by
// shell.git.saved and names the work tree; saveWork saves it as a snapshot
// and records a work_saved event under the command's trace id; when the
// snapshot cannot be taken or the environment points git elsewhere, it is
// an error, which keeps the command from running.
func TestSaveWork(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	a := openTestApp(t, Options{OpenDatabase: true})
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	req, d, _, err := a.decideExec(ctx, ExecRequest{Args: []string{"git", "reset", "--hard"}, Dir: dir, Base: warden.Request{Session: "s1", RequestedBy: "agent"}})
	if err != nil || d.Verdict != warden.Allow || d.Rule != "shell.git.saved" || !slices.Equal(d.Snapshot, []string{dir}) {
		t.Fatalf("warden exec's decision of git reset --hard: %v %s %q (%v); want allow by shell.git.saved saving %s", d.Verdict, d.Rule, d.Snapshot, err, dir)
	}
	env := os.Environ()
	if err := a.saveWork(ctx, &req, d, sandboxGit{run: hostRun, env: undo.CleanEnv(env)}); err != nil {
		t.Fatal(err)
	}
	repo, _ := undo.Open(ctx, undo.Host{}, dir)
	snaps, err := undo.List(ctx, undo.Host{}, repo)
	if err != nil || len(snaps) != 1 || snaps[0].Meta.Command != "git reset --hard" || snaps[0].Meta.Trace != req.TraceID {
		t.Fatalf("snapshots after saveWork: %+v, %v", snaps, err)
	}
	evs, err := a.Store.Events(ctx, warden.EventFilter{Type: warden.EventWorkSaved})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].TraceID != req.TraceID || !strings.Contains(string(evs[0].Metadata), snaps[0].Ref()) {
		t.Errorf("work_saved events: %+v; want one under the command's trace naming %s", evs, snaps[0].Ref())
	}

	failing := func(context.Context, sandbox.Command) (sandbox.Result, error) {
		return sandbox.Result{}, errors.New("the sandbox could not start")
	}
	if err := a.saveWork(ctx, &req, d, sandboxGit{run: failing, env: env}); err == nil || !strings.Contains(warden.UserMessage(err), "so it did not run") {
		t.Errorf("saveWork with a sandbox that cannot run git: %v, want an error saying the command did not run", err)
	}
	if err := a.saveWork(ctx, &req, d, sandboxGit{run: hostRun, env: append(env, "GIT_WORK_TREE=/elsewhere")}); err == nil || !strings.Contains(warden.UserMessage(err), "GIT_WORK_TREE") {
		t.Errorf("saveWork with GIT_WORK_TREE set: %v, want a refusal naming it", err)
	}
	if err := a.saveWork(ctx, &req, warden.Decision{Snapshot: []string{t.TempDir()}}, sandboxGit{run: hostRun, env: env}); err == nil {
		t.Error("saveWork in a directory that is no repository succeeded")
	}
}

// TestMayWrite: warden exec saves a discard's work tree wherever the
// command's sandbox may write in it, not only where the project is
// writable: a profile's read_write over a read-only project, a cache path
// inside the tree, the host's /tmp under read_all. A read-only project
// that nothing makes writable is not saved (the discard cannot change it).
func TestMayWrite(t *testing.T) {
	proj := "/home/u/proj"
	ro := sandbox.Spec{Mode: sandbox.ModeStandard, Project: proj, Workspace: "/home/u/.warden/workspace"}
	for _, c := range []struct {
		name string
		spec func(s *sandbox.Spec)
		tree string
		want bool
	}{
		{"read-only project", func(*sandbox.Spec) {}, proj, false},
		{"writable project", func(s *sandbox.Spec) { s.ProjectWritable = true }, proj, true},
		{"writable project, a tree inside", func(s *sandbox.Spec) { s.ProjectWritable = true }, proj + "/sub", true},
		{"no isolation", func(s *sandbox.Spec) { s.Mode = sandbox.ModeOff }, proj, true},
		{"the profile's read_write is the project", func(s *sandbox.Spec) { s.ReadWrite = []string{proj} }, proj, true},
		{"a writable cache inside the tree", func(s *sandbox.Spec) { s.ReadWrite = []string{"/home/u/.cache"} }, "/home/u", true},
		{"a writable path elsewhere", func(s *sandbox.Spec) { s.ReadWrite = []string{"/home/u/.cache"} }, proj, false},
		{"the host's /tmp under read_all", func(s *sandbox.Spec) { s.ReadAll = true }, "/tmp/proj", true},
		{"/tmp without read_all", func(*sandbox.Spec) {}, "/tmp/proj", false},
	} {
		s := ro
		c.spec(&s)
		if got := mayWrite(s, c.tree); got != c.want {
			t.Errorf("%s: mayWrite(%s) = %v, want %v", c.name, c.tree, got, c.want)
		}
	}
}

// TestSaveWorkRefusesRecursingSubmodules: where git's configuration
// (here the user's, submodule.recurse) makes a discard recurse into the
// repository's submodules, their work is in no snapshot: saveWork refuses,
// so the command does not run; without submodules it saves as ever.
func TestSaveWorkRefusesRecursingSubmodules(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[submodule]\n\trecurse = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	ctx := context.Background()
	a := openTestApp(t, Options{OpenDatabase: true})
	dir := t.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := warden.Request{Resource: "git reset --hard", Session: "s1", TraceID: "t1"}
	d := warden.Decision{Verdict: warden.Allow, Rule: "shell.git.saved", Snapshot: []string{dir}}
	g := sandboxGit{run: hostRun, env: undo.CleanEnv(os.Environ())}
	if err := a.saveWork(ctx, &req, d, g); err != nil {
		t.Fatalf("saveWork without submodules: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitmodules"), []byte("[submodule \"s\"]\n\tpath = s\n\turl = ../s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.saveWork(ctx, &req, d, g); err == nil || !strings.Contains(warden.UserMessage(err), "submodule.recurse") {
		t.Errorf("saveWork where git recurses into submodules: %v, want a refusal naming submodule.recurse", err)
	}
}
