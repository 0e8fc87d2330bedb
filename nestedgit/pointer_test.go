package nestedgit

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSweepCutsALeadIntoAGitDirectoryTheCommandCannotWrite: a git
// directory with a planted fsmonitor, made where this command cannot write
// (by an earlier command with other rights: a linked worktree's common
// directory, another project), and a .git file this command makes in the
// project naming it: the sweep cannot make that git directory safe, so it
// moves the .git file out; a .git file that led to such a directory before
// the command (the user's) stays, and the git directory itself is never
// touched.
func TestSweepCutsALeadIntoAGitDirectoryTheCommandCannotWrite(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, ".warden", "quarantine")
	mark := filepath.Join(home, "pwned")
	planted := filepath.Join(home, "elsewhere", "gd")
	sh(t, home, home, `git init -q --bare `+planted+` && git -C `+planted+` config core.fsmonitor "touch `+mark+`; false" && git -C `+planted+` config core.bare false`)
	users := filepath.Join(home, "elsewhere", "users")
	sh(t, home, home, `git init -q --bare `+users+` && git -C `+users+` config core.bare false`)
	sh(t, home, project, `mkdir users && printf 'gitdir: `+users+`\n' > users/.git`)
	g := NewWithNested(project, nil, q)
	sh(t, home, project, `mkdir sub && printf 'gitdir: `+planted+`\n' > sub/.git`)
	gitIn(t, home, filepath.Join(project, "sub"), "status")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the attack is inert: git status in sub did not run the planted program (%v)", err)
	}
	os.Remove(mark)

	found := g.Sweep(time.Now())
	if len(found) != 1 || !found[0].Cut || found[0].Pointer != filepath.Join(project, "sub", ".git") || found[0].Err != nil {
		t.Fatalf("Sweep = %+v, want sub/.git cut", found)
	}
	if _, err := os.Lstat(filepath.Join(project, "sub", ".git")); err == nil {
		t.Error("sub/.git is still there")
	}
	if _, err := os.Stat(filepath.Join(found[0].Moved, ".git")); err != nil {
		t.Errorf("sub/.git is not in the quarantine: %v", err)
	}
	hostGit(home, filepath.Join(project, "sub"), "status")
	if _, err := os.Stat(mark); err == nil {
		t.Error("after the sweep, git status in sub still ran the planted program")
	}
	if _, err := os.Lstat(filepath.Join(project, "users", ".git")); err != nil {
		t.Errorf("the .git file that led there before the command was moved: %v", err)
	}
	if out := gitIn(t, home, planted, "config", "core.fsmonitor"); out == "" {
		t.Error("the sweep changed a git directory the command could not write")
	}
}

// TestSweepDoesNotWaitOnAFIFO: a FIFO where git keeps a file (a
// registration's commondir) is not read: the sweep ends, and sweeps after
// it are not held back.
func TestSweepDoesNotWaitOnAFIFO(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	g := NewWithNested(project, nil, filepath.Join(home, ".warden", "quarantine"))
	reg := filepath.Join(project, ".git", "worktrees", "zz")
	if err := os.MkdirAll(reg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reg, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"commondir", "gitdir", "index", "config"} {
		if err := syscall.Mkfifo(filepath.Join(reg, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() {
		g.Sweep(time.Now())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the sweep waited on a FIFO for a minute")
	}
}

// TestSweepReadsAWorktreeIndexWhereItReallyIs: a linked worktree whose
// registration's gitdir file (the command may write it) names another
// work tree: its index is still read against the directory whose .git
// names it, and the repository gitlinked there (in node_modules, which the
// search of nested repositories passes over) is swept.
func TestSweepReadsAWorktreeIndexWhereItReallyIs(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	mark := filepath.Join(home, "pwned")
	g := NewWithNested(project, nil, filepath.Join(home, ".warden", "quarantine"))
	sh(t, home, project, `git worktree add -q x && printf '%s\n' "$PWD/.git" > .git/worktrees/x/gitdir && mkdir -p x/node_modules/evil && git -C x/node_modules/evil init -q && git -C x/node_modules/evil commit -q --allow-empty -m e && git -C x/node_modules/evil config core.fsmonitor "touch `+mark+`; false" && git -C x add -f node_modules/evil 2>/dev/null`)
	gitIn(t, home, filepath.Join(project, "x"), "status")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the attack is inert: git status in x did not run the planted program (%v)", err)
	}
	os.Remove(mark)
	g.Sweep(time.Now())
	hostGit(home, filepath.Join(project, "x"), "status")
	if _, err := os.Stat(mark); err == nil {
		t.Error("after the sweep, git status in x still ran the planted program")
	}
}
