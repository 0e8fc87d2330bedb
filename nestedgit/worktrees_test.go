package nestedgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestBesideListsTheWorktreesGitMade: the worktrees real git makes beside
// the main work tree are listed, from the main work tree only; those in
// the project, in a dot directory or elsewhere are not.
func TestBesideListsTheWorktreesGitMade(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	src := filepath.Dir(project)
	sh(t, home, project, `git worktree add -q ../p-feature -b feature && git worktree add -q ../p-fix -b fix && git worktree add -q inner -b inner && git worktree add -q ../.p-hidden -b hidden && mkdir -p ../deeper && git worktree add -q ../deeper/p-x -b x`)
	feature, fix := filepath.Join(src, "p-feature"), filepath.Join(src, "p-fix")
	if got, want := Beside(project), []string{feature, fix}; !slices.Equal(got, want) {
		t.Errorf("Beside(main) = %q, want %q", got, want)
	}
	// Nothing from a linked worktree: its main work tree is whatever its
	// .git file names.
	for _, linked := range []string{feature, filepath.Join(project, "inner")} {
		if got := Beside(linked); got != nil {
			t.Errorf("Beside(%s) = %q, want none", linked, got)
		}
	}
	if got := Beside(filepath.Join(src, "nothing")); got != nil {
		t.Errorf("Beside(no work tree) = %q", got)
	}
	// Those kept inside the project are Within's.
	if got, want := Within(project), []string{filepath.Join(project, "inner")}; !slices.Equal(got, want) {
		t.Errorf("Within(main) = %q, want %q", got, want)
	}
}

// TestBesideNeedsBothLinks: a registration the command writes in the git
// directory it may write does not make a directory beside the project a
// worktree; only a .git file there, which it cannot write, naming the
// registration back does, and not through a symbolic link.
func TestBesideNeedsBothLinks(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	src := filepath.Dir(project)
	register := func(name, dotGit string) {
		d := filepath.Join(project, ".git", "worktrees", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "gitdir"), []byte(dotGit+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "commondir"), []byte("../..\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A directory with no .git file.
	victim := mkdir(filepath.Join(src, "victim"))
	register("victim", filepath.Join(victim, ".git"))
	// A .git file naming another git directory.
	other := mkdir(filepath.Join(src, "other"))
	if err := os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+filepath.Join(home, "gd")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	register("other", filepath.Join(other, ".git"))
	// A .git that is a symbolic link to a file naming the registration.
	linked := mkdir(filepath.Join(src, "linked"))
	target := filepath.Join(home, "dotgit")
	if err := os.WriteFile(target, []byte("gitdir: "+filepath.Join(project, ".git", "worktrees", "linked")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(linked, ".git")); err != nil {
		t.Fatal(err)
	}
	register("linked", filepath.Join(linked, ".git"))
	// A real worktree, named through a symbolic link to it.
	sh(t, home, project, `git worktree add -q ../real -b real && ln -s real ../alias`)
	real := filepath.Join(src, "real")
	register("alias", filepath.Join(src, "alias", ".git"))
	if got, want := Beside(project), []string{real}; !slices.Equal(got, want) {
		t.Errorf("Beside = %q, want only %q", got, want)
	}
}

// TestCommonOfNeedsBothLinks: a linked worktree git made (inside the
// project, as Claude Code's --worktree makes one, beside it, or of a bare
// repository) leads to its common git directory; a .git file naming a
// registration that does not name it back, a worktree reached through a
// symbolic link, a main work tree and a directory without .git lead
// nowhere.
func TestCommonOfNeedsBothLinks(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	src := filepath.Dir(project)
	sh(t, home, project, `git worktree add -q .claude/worktrees/feat -b feat && git worktree add -q ../p-fix -b fix && ln -s p-fix ../alias`)
	for _, wt := range []string{filepath.Join(project, ".claude", "worktrees", "feat"), filepath.Join(src, "p-fix")} {
		if got, want := CommonOf(wt), filepath.Join(project, ".git"); got != want {
			t.Errorf("CommonOf(%s) = %q, want %q", wt, got, want)
		}
	}
	sh(t, home, src, `git clone -q --bare `+project+` bare/.bare && git -C bare/.bare worktree add -q ../main`)
	if got, want := CommonOf(filepath.Join(src, "bare", "main")), filepath.Join(src, "bare", ".bare"); got != want {
		t.Errorf("CommonOf(a bare repository's worktree) = %q, want %q", got, want)
	}
	// A copy of a worktree's .git file elsewhere: the registration names
	// the real worktree, not the copy.
	copied := filepath.Join(src, "copied")
	if err := os.MkdirAll(copied, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "p-fix", ".git"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copied, ".git"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{copied, filepath.Join(src, "alias"), project, src} {
		if got := CommonOf(dir); got != "" {
			t.Errorf("CommonOf(%s) = %q, want none", dir, got)
		}
	}
	// A registration whose commondir names another repository's git
	// directory.
	other := filepath.Join(src, "other")
	sh(t, home, src, `git init -q other`)
	reg := filepath.Join(project, ".git", "worktrees", "p-fix", "commondir")
	if err := os.WriteFile(reg, []byte(filepath.Join(other, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CommonOf(filepath.Join(src, "p-fix")); got != "" {
		t.Errorf("CommonOf(a worktree whose commondir names another repository) = %q, want none", got)
	}
}

// BenchmarkBeside: what the shell guard and every workspace run pay to list
// the worktrees beside the project, with none (no .git/worktrees) and with
// two beside it and one inside.
func BenchmarkBeside(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	home := b.TempDir()
	none := filepath.Join(home, "src", "none")
	some := filepath.Join(home, "src", "some")
	for _, p := range []string{none, some} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			b.Fatal(err)
		}
		run := exec.Command("sh", "-c", "git init -q && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x")
		run.Dir = p
		if out, err := run.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	run := exec.Command("sh", "-c", "git worktree add -q ../some-a -b a && git worktree add -q ../some-b -b b && git worktree add -q inner -b c")
	run.Dir = some
	if out, err := run.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	for _, c := range []struct{ name, project string }{{"none", none}, {"two-beside", some}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Beside(c.project)
			}
		})
	}
}
