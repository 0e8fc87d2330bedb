package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/sandbox"
)

// TestGitGuardQuarantinesAndAudits: the sandbox's GitGuard takes its
// baseline before the command; after it, a repository the command made and
// added as a gitlink loses its core.fsmonitor to the quarantine, the run's
// warning says so, and a git_quarantined event names the git directory. In
// a folder of projects each repository below is watched.
func TestGitGuardQuarantinesAndAudits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, folder := range []bool{false, true} {
		name := "project"
		if folder {
			name = "folder of projects"
		}
		t.Run(name, func(t *testing.T) {
			a := openTestApp(t, Options{OpenDatabase: true})
			top := t.TempDir()
			repo := top
			if folder {
				repo = filepath.Join(top, "api")
			}
			run := shIn(t, repo)
			if err := os.MkdirAll(repo, 0o755); err != nil {
				t.Fatal(err)
			}
			run("git init -q && git commit -q --allow-empty -m first")
			q := filepath.Join(a.Home.Abs(), QuarantineDir)
			sweep := a.gitGuard(&sandbox.Spec{Project: top, ProjectWritable: true, Quarantine: q}, false)
			if sweep == nil {
				t.Fatal("gitGuard returned no sweep")
			}
			run(`git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch /nonexistent/pwned"\n' >> sub/.git/config`)
			warns := sweep()
			if len(warns) != 1 || !strings.Contains(warns[0], "core.fsmonitor") || !strings.Contains(warns[0], q) {
				t.Fatalf("warnings = %q; want one naming core.fsmonitor and the quarantine", warns)
			}
			if data, _ := os.ReadFile(filepath.Join(repo, "sub/.git/config")); strings.Contains(string(data), "fsmonitor") {
				t.Errorf("sub/.git/config still sets fsmonitor:\n%s", data)
			}
			evs, err := a.Store.Events(context.Background(), warden.EventFilter{Type: warden.EventGitQuarantined})
			if err != nil {
				t.Fatal(err)
			}
			gitDir := filepath.Join(repo, "sub", ".git")
			if len(evs) != 1 || evs[0].Severity != warden.SevWarn || !strings.Contains(string(evs[0].Metadata), gitDir) {
				t.Errorf("git_quarantined events = %+v; want one (warn) naming %s", evs, gitDir)
			}
			if again := sweep(); len(again) != 0 {
				t.Errorf("a second sweep warned again: %q", again)
			}
		})
	}
}

// TestGitGuardWatchesTheWholeFolder: in a folder of projects the command
// may write the folder, so a git directory it made beside the repository
// (in the folder, outside the repository) and named by a .git file of a
// gitlink in it is swept too.
func TestGitGuardWatchesTheWholeFolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	top := t.TempDir()
	repo := filepath.Join(top, "api")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run := shIn(t, repo)
	run("git init -q && git commit -q --allow-empty -m first")
	q := filepath.Join(a.Home.Abs(), QuarantineDir)
	sweep := a.gitGuard(&sandbox.Spec{Project: top, ProjectWritable: true, Quarantine: q}, false)
	if sweep == nil {
		t.Fatal("gitGuard returned no sweep")
	}
	run(`mkdir -p ../build && git init -q --separate-git-dir=` + filepath.Join(top, "build", "gd") + ` sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch /nonexistent/pwned"\n' >> ../build/gd/config`)
	warns := sweep()
	if len(warns) != 1 || !strings.Contains(warns[0], "core.fsmonitor") {
		t.Fatalf("warnings = %q; want one naming core.fsmonitor", warns)
	}
	if data, _ := os.ReadFile(filepath.Join(top, "build", "gd", "config")); strings.Contains(string(data), "fsmonitor") {
		t.Errorf("build/gd/config still sets fsmonitor:\n%s", data)
	}
}

// TestGitGuardWatchesTheWorkspace: the command may write warden's
// workspace (~/.warden/sandbox/files), so a git directory it made there
// and named by a .git file in the project is swept too.
func TestGitGuardWatchesTheWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	ws := filepath.Join(t.TempDir(), "files")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	run := shIn(t, repo)
	run("git init -q && git commit -q --allow-empty -m first")
	q := filepath.Join(a.Home.Abs(), QuarantineDir)
	sweep := a.gitGuard(&sandbox.Spec{Project: repo, ProjectWritable: true, Workspace: ws, Quarantine: q}, false)
	if sweep == nil {
		t.Fatal("gitGuard returned no sweep")
	}
	run(`git init -q --separate-git-dir=` + filepath.Join(ws, "gd") + ` sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch /nonexistent/pwned"\n' >> ` + filepath.Join(ws, "gd", "config"))
	warns := sweep()
	if len(warns) != 1 || !strings.Contains(warns[0], "core.fsmonitor") {
		t.Fatalf("warnings = %q; want one naming core.fsmonitor", warns)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "gd", "config")); strings.Contains(string(data), "fsmonitor") {
		t.Errorf("the workspace's gd/config still sets fsmonitor:\n%s", data)
	}
}

// TestGitGuardSweepsNestedRepositories: the guard of the sweeps off a
// command's path (nested) also watches the repositories nested in the
// project that its index does not name, in a project and five levels down
// in a folder of projects. A clone the command made there and planted
// core.fsmonitor in loses it, so does a pre-existing nested clone the
// command changed, and the user's own key in one the command left alone
// stays. The guard of a world's command (not nested) leaves them.
func TestGitGuardSweepsNestedRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, folder := range []bool{false, true} {
		a := openTestApp(t, Options{OpenDatabase: true})
		top := t.TempDir()
		project := top
		if folder {
			project = filepath.Join(top, "a/b/c/d/e")
		}
		run := shIn(t, project)
		if err := os.MkdirAll(project, 0o755); err != nil {
			t.Fatal(err)
		}
		run(`git init -q && git commit -q --allow-empty -m first
git init -q vendor/lib && git init -q vendor/own && git -C vendor/own config core.fsmonitor "echo the user's own"`)
		plant := `printf '[core]\n\tfsmonitor = "touch /nonexistent/pwned"\n' >> `
		q := filepath.Join(a.Home.Abs(), QuarantineDir)
		spec := &sandbox.Spec{Project: top, ProjectWritable: true, Quarantine: q}
		commandSweep := a.gitGuard(spec, false)
		sweep := a.gitGuard(spec, true)
		run(`git init -q scratch/clone && ` + plant + `scratch/clone/.git/config && ` + plant + `vendor/lib/.git/config`)
		if commandSweep != nil {
			if warns := commandSweep(); len(warns) != 0 {
				t.Errorf("folder %v: the command's own guard swept nested repositories: %q", folder, warns)
			}
		}
		warns := sweep()
		if len(warns) != 2 {
			t.Errorf("folder %v: warnings %q; want the two changed nested repositories", folder, warns)
		}
		for _, n := range []string{"scratch/clone", "vendor/lib"} {
			if data, _ := os.ReadFile(filepath.Join(project, n, ".git/config")); strings.Contains(string(data), "fsmonitor") {
				t.Errorf("folder %v: %s/.git/config still sets fsmonitor:\n%s", folder, n, data)
			}
		}
		if data, _ := os.ReadFile(filepath.Join(project, "vendor/own/.git/config")); !strings.Contains(string(data), "the user's own") {
			t.Errorf("folder %v: the user's own key in an unchanged nested repository was taken out:\n%s", folder, data)
		}
	}
}

// shIn returns what runs a shell script in dir with a git identity, failing
// the test when it fails.
func shIn(t *testing.T, dir string) func(script string) {
	return func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
}

// TestGitConfigTakenBack: after git commands that could write the
// project's .git/config ran with it writable, a key added that would run a
// program puts the config back as it was (the command's version in the
// quarantine, an event in the audit log); inert changes (a remote, a
// renamed branch) stay.
func TestGitConfigTakenBack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	run := shIn(t, repo)
	run("git init -q && git commit -q --allow-empty -m first")
	q := filepath.Join(a.Home.Abs(), QuarantineDir)
	worktree := []string{filepath.Join(repo, ".git", "worktrees", "x", "config.worktree"), filepath.Join(repo, ".git", "worktrees", "x", "hooks") + "/"}
	s := sandbox.Spec{Project: repo, ProjectWritable: true, Quarantine: q, Protected: append([]string{
		filepath.Join(repo, ".git", "config"), filepath.Join(repo, ".git", "hooks") + "/"}, worktree...)}
	if !writableGitConfig(&s) || len(s.Protected) != 3 || s.Protected[0] != filepath.Join(repo, ".git", "hooks")+"/" {
		t.Fatalf("writableGitConfig left Protected %q, want the project's hooks and the worktree's paths", s.Protected)
	}
	// A linked worktree's git directory is writable for a command that
	// removes one (the GitGuard sweeps it after); the project's hooks stay.
	if w := s; !writableWorktrees(&w, false, nil, nil) || len(w.Protected) != 1 {
		t.Fatalf("writableWorktrees left Protected %q, want only the project's hooks", w.Protected)
	}
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	run("git remote add origin https://example.com/x.git")
	if w := a.takeBackGitConfig(s, before); len(w) != 0 {
		t.Errorf("an inert change was taken back: %q", w)
	}
	kept, _ := os.ReadFile(cfg)
	run("git remote set-url origin https://example.com/elsewhere.git")
	if w := a.takeBackGitConfig(s, kept); len(w) != 1 || !strings.Contains(w[0], "remote.origin.url") {
		t.Errorf("a remote's URL moved elsewhere: warnings %q; want it taken back", w)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(kept) {
		t.Errorf(".git/config after the remote's URL was taken back:\n%s\nwant it as it was:\n%s", now, kept)
	}
	run(`git config core.fsmonitor "touch /nonexistent/pwned"`)
	w := a.takeBackGitConfig(s, kept)
	if len(w) != 1 || !strings.Contains(w[0], "core.fsmonitor") {
		t.Fatalf("warnings = %q; want one naming core.fsmonitor", w)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(kept) {
		t.Errorf(".git/config after the take-back:\n%s\nwant it as it was:\n%s", now, kept)
	}
	if entries, _ := os.ReadDir(q); len(entries) != 2 {
		t.Errorf("the quarantine holds %d entries; want the command's config", len(entries))
	}
}

// TestWorktreeWithinTheProjectKeepsItsPathsButGoes: a linked worktree kept
// inside the project (.worktrees/feat) keeps the project's protected paths
// and what the configuration names there, and a line that removes a
// worktree may remove it: its protected paths are writable in that run
// (pinned, its directory could not go: the e2e ordinary run).
func TestWorktreeWithinTheProjectKeepsItsPathsButGoes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	home := t.TempDir()
	t.Setenv("HOME", home)
	repo := filepath.Join(home, "src", "p")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run := shIn(t, repo)
	run("git init -q && mkdir -p .claude && echo '{}' > .claude/settings.json && git add -A && git -c user.name=u -c user.email=u@x commit -qm one && git worktree add -q .worktrees/feat -b feat")
	s, err := a.sandboxSpec("workspace", repo, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(repo, ".worktrees", "feat", ".claude") + "/"
	if !slices.Contains(s.Protected, settings) {
		t.Fatalf("the worktree inside the project does not keep .claude/: %q", s.Protected)
	}
	protected := a.Policy.Sandbox.ProtectedPaths
	if w := s; writableWorktrees(&w, false, []string{filepath.Join(repo, ".worktrees", "other")}, protected) && !slices.Contains(w.Protected, settings) {
		t.Errorf("a line removing another worktree makes %s writable", settings)
	}
	if w := s; !writableWorktrees(&w, false, []string{filepath.Join(repo, ".worktrees", "feat")}, protected) || slices.Contains(w.Protected, settings) {
		t.Errorf("a line removing the worktree keeps %s read-only: %q", settings, w.Protected)
	} else if !slices.Contains(w.Protected, filepath.Join(repo, ".claude")+"/") {
		t.Errorf("the project's own .claude/ is writable in that line: %q", w.Protected)
	}
	// A command can write a registration and a .git file naming it back
	// (red-team-23): .git itself, or a package holding a file the
	// project's config includes, made a "worktree" frees nothing of the
	// project's.
	run(`git config include.path ../sub/git.conf && mkdir -p sub && touch sub/git.conf &&
		for d in .git sub; do n=$(echo $d | tr -d .); mkdir -p .git/worktrees/$n && echo "$PWD/$d/.git" > .git/worktrees/$n/gitdir &&
		echo ../.. > .git/worktrees/$n/commondir && echo "ref: refs/heads/main" > .git/worktrees/$n/HEAD &&
		echo "gitdir: $PWD/.git/worktrees/$n" > $d/.git; done`)
	if s, err = a.sandboxSpec("workspace", repo, ExecOverride{}, &warden.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(s.Protected)
	writableWorktrees(&s, false, []string{filepath.Join(repo, ".git"), filepath.Join(repo, "sub")}, protected)
	for _, p := range []string{filepath.Join(repo, ".git", "config"), filepath.Join(repo, ".git", "hooks") + "/", filepath.Join(repo, "sub", "git.conf")} {
		if slices.Contains(before, p) && !slices.Contains(s.Protected, p) {
			t.Errorf("a forged worktree made %s writable", p)
		}
	}
	if !slices.Contains(before, filepath.Join(repo, "sub", "git.conf")) {
		t.Errorf("sub/git.conf, which the config includes, is not protected: %q", before)
	}
}

// TestGitConfigNotLookedAtIsAnError: a git line's run after which warden
// cannot look at .git (here no longer a directory) may have left a config
// that runs programs in git on the host; that is recorded as an error, not
// only printed as the run's warning.
func TestGitConfigNotLookedAtIsAnError(t *testing.T) {
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sandbox.Spec{Project: repo, ProjectWritable: true, Quarantine: filepath.Join(a.Home.Abs(), QuarantineDir)}
	w := a.takeBackGitConfig(s, []byte("[core]\n"))
	if len(w) != 1 || !strings.Contains(w[0], "could not look at") || !strings.Contains(w[0], "before running git on the host") {
		t.Fatalf("warnings = %q; want one saying .git could not be looked at and what to do", w)
	}
	evs, err := a.Store.Events(context.Background(), warden.EventFilter{Type: warden.EventGitQuarantined})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Severity != warden.SevError {
		t.Fatalf("git_quarantined events = %+v; want one error", evs)
	}
}

// TestProtectedFilesKeepNoOtherName: a one-shot run that could write a
// protected path could give its file another name (red-team-18: a git
// line's bisect script ran ln .git/config .git/x, and a later command in
// the session's world, where only the path .git/config is read-only, wrote
// core.fsmonitor through .git/x). After the run each such file is a file
// of its own again, with the same content, in a directory too; a file
// with one name is left as it is.
func TestProtectedFilesKeepNoOtherName(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	run := shIn(t, repo)
	run("git init -q && mkdir -p wt/.claude && echo '{}' > wt/.claude/settings.json && ln .git/config .git/x && ln wt/.claude/settings.json wt/s.json")
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	s := sandbox.Spec{Project: repo, ProjectWritable: true, Quarantine: filepath.Join(a.Home.Abs(), QuarantineDir)}
	if w := a.takeBackGitConfig(s, before); len(w) != 1 || !strings.Contains(w[0], "hard link") {
		t.Fatalf("warnings = %q; want one saying .git/config had another name", w)
	}
	if w := freshenPaths([]string{filepath.Join(repo, "wt", ".claude") + "/", filepath.Join(repo, "missing")}); len(w) != 1 {
		t.Fatalf("freshenPaths warnings = %q; want one for settings.json", w)
	}
	run(`git config --file .git/x core.fsmonitor "touch pwned" && echo '{"hooks":1}' > wt/s.json`)
	if now, _ := os.ReadFile(cfg); string(now) != string(before) {
		t.Errorf(".git/config changed through its other name:\n%s", now)
	}
	if now, _ := os.ReadFile(filepath.Join(repo, "wt", ".claude", "settings.json")); string(now) != "{}\n" {
		t.Errorf("settings.json changed through its other name: %s", now)
	}
	// Once a file of its own, it is left alone.
	if w := a.takeBackGitConfig(s, before); len(w) != 0 {
		t.Errorf("a config with one name: warnings %q", w)
	}
}

// TestGitConfigGoneOrHeldOpenIsPutBack: a git line's program that removed
// .git/config, or moved over it a file a process holds open for writing
// (red-team-19: the session's world then wrote core.fsmonitor, through a
// new file or that descriptor), leaves the config as it was, a file no
// descriptor of the run writes.
func TestGitConfigGoneOrHeldOpenIsPutBack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t, Options{OpenDatabase: true})
	repo := t.TempDir()
	run := shIn(t, repo)
	run("git init -q")
	cfg := filepath.Join(repo, ".git", "config")
	before, _ := os.ReadFile(cfg)
	s := sandbox.Spec{Project: repo, ProjectWritable: true, Quarantine: filepath.Join(a.Home.Abs(), QuarantineDir)}

	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if w := a.takeBackGitConfig(s, before); len(w) != 1 || !strings.Contains(w[0], "gone") {
		t.Errorf("warnings = %q; want one saying the config was gone and put back", w)
	}
	if now, err := os.ReadFile(cfg); err != nil || string(now) != string(before) {
		t.Errorf("after a removed config: %q, %v; want it as it was", now, err)
	}

	held := filepath.Join(repo, ".git", "next")
	if err := os.WriteFile(held, before, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(held, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Rename(held, cfg); err != nil {
		t.Fatal(err)
	}
	if w := a.takeBackGitConfig(s, before); len(w) != 0 {
		t.Errorf("an unchanged config with one name: warnings %q", w)
	}
	if _, err := f.WriteString("[core]\n\tfsmonitor = touch pwned\n"); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(cfg); string(now) != string(before) {
		t.Errorf("the config changed through a descriptor held across the run:\n%s", now)
	}
}
