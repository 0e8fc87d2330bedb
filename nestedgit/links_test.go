package nestedgit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The ways a command leaves a link in a git directory that git on the
// host reads and prints: each script runs in the project with $S the
// secret's path; each is shown live first (the user's git status prints
// the secret), then gone after Sweep.
var linkAttacks = []struct{ name, script string }{
	{"bisect-start", `printf 'x\n' > .git/BISECT_LOG && ln -s "$S" .git/BISECT_START`},
	{"rebase-head-name", `mkdir -p .git/rebase-merge && touch .git/rebase-merge/interactive && git rev-parse HEAD > .git/rebase-merge/onto && ln -s "$S" .git/rebase-merge/head-name && ln -s "$S" .git/rebase-merge/done`},
	{"shallow", `ln -s "$S" .git/shallow`},
	{"alternates", `mkdir -p .git/objects/info && ln -s "$S" .git/objects/info/alternates`},
	{"linked-directory", `mkdir -p "$HOME/.evil" && ln -s "$S" "$HOME/.evil/head-name" && touch "$HOME/.evil/interactive" && git rev-parse HEAD > "$HOME/.evil/onto" && ln -s "$HOME/.evil" .git/rebase-merge`},
	{"in-a-gitlinked-repository", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && ln -s "$S" sub/.git/shallow`},
	// Past any bound on the entries walked: 60,000 of them first.
	{"behind-many-entries", `mkdir .git/aaa && (cd .git/aaa && seq 1 60000 | xargs touch) && printf 'x\n' > .git/BISECT_LOG && ln -s "$S" .git/BISECT_START`},
	// Alternates name object directories outside every git directory, whose
	// own alternates git reads too.
	{"alternates-chain", `mkdir -p vendor/objs/info && ln -s "$S" vendor/objs/info/alternates && mkdir -p .git/objects/info && echo "$PWD/vendor/objs" > .git/objects/info/alternates`},
	{"alternates-chain-info-link", `mkdir -p vendor/o2 "$HOME/.evil2" && ln -s "$S" "$HOME/.evil2/alternates" && ln -s "$HOME/.evil2" vendor/o2/info && mkdir -p .git/objects/info && echo ../../vendor/o2 > .git/objects/info/alternates`},
}

// TestSweepRemovesLinksGitWouldPrint: a link a command made anywhere in a
// git directory git on the host enters (the project's own, a gitlinked
// repository's) is removed, with a RESTORE.txt that makes it again; the
// file it led to is untouched, and links there before stay.
func TestSweepRemovesLinksGitWouldPrint(t *testing.T) {
	needGit(t)
	for _, a := range linkAttacks {
		t.Run(a.name, func(t *testing.T) {
			home, project := newProject(t)
			secret := filepath.Join(home, ".netrc")
			if err := os.WriteFile(secret, []byte("machine example.com password SECRET-MARK\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// The user's own link, there before the command.
			sh(t, home, project, `rm -f .git/description && ln -s ../../elsewhere .git/description`)
			q := filepath.Join(home, "q")
			g := New(project, nil, q)
			sh(t, home, project, "S="+secret+"; "+a.script)
			if out, _ := hostGit(home, project, "status"); !strings.Contains(out, "SECRET-MARK") {
				sub, _ := hostGit(home, filepath.Join(project, "sub"), "status")
				if !strings.Contains(sub, "SECRET-MARK") {
					t.Fatalf("the case is not live: git status did not print the secret:\n%s\n%s", out, sub)
				}
			}
			fs := g.Sweep(time.Now())
			var links []string
			for _, f := range fs {
				if f.Err != nil {
					t.Errorf("Sweep: %v", f.Err)
				}
				links = append(links, f.Links...)
			}
			if len(links) == 0 {
				t.Fatalf("Sweep removed no link: %v", fs)
			}
			for _, dir := range []string{project, filepath.Join(project, "sub")} {
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				out, _ := hostGit(home, dir, "status")
				if strings.Contains(out, "SECRET-MARK") {
					t.Errorf("after Sweep, git status in %s still prints the secret:\n%s", dir, out)
				}
			}
			if data, err := os.ReadFile(secret); err != nil || !strings.Contains(string(data), "SECRET-MARK") {
				t.Errorf("the secret file itself changed: %q, %v", data, err)
			}
			if target, err := os.Readlink(filepath.Join(project, ".git/description")); err != nil || target != "../../elsewhere" {
				t.Errorf("the user's own link is gone: %q, %v", target, err)
			}
			restore, err := os.ReadFile(filepath.Join(fs[0].Moved, "RESTORE.txt"))
			if err != nil || !strings.Contains(string(restore), "ln -s '"+secret+"'") && !strings.Contains(string(restore), "ln -s '"+home) {
				t.Errorf("RESTORE.txt does not make the links again: %q, %v", restore, err)
			}
			if again := g.Sweep(time.Now()); len(again) != 0 {
				t.Errorf("a second Sweep found %v", again)
			}
		})
	}
}

// TestGitLinksPassesOverObjects: links under objects/ are not looked for
// (git reads objects and packs only as such) but for objects/info.
func TestGitLinksPassesOverObjects(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	sh(t, home, project, `mkdir -p .git/objects/ab .git/objects/info && ln -s /x .git/objects/ab/cd && ln -s /y .git/objects/info/alternates && ln -s /z .git/refs/heads/l`)
	links := linksOf(filepath.Join(project, ".git"))
	want := map[string]string{"objects/info/alternates": "/y", "refs/heads/l": "/z"}
	if len(links) != len(want) {
		t.Errorf("gitLinks = %v, want %v", links, want)
	}
	for k, v := range want {
		if links[k] != v {
			t.Errorf("gitLinks[%s] = %q, want %q", k, links[k], v)
		}
	}
}

// TestLinksFoundInUnlistableDirectories: a command that made a directory
// of the git directory (or the git directory itself) unreadable (mode
// 0311: git still opens a file in it by name) does not hide a link there
// from the walk, nor a linked worktree's git directory from the search,
// which run as the user, not as root. Run as root, the
// check runs again in a process of an unprivileged user.
func TestLinksFoundInUnlistableDirectories(t *testing.T) {
	if dir := os.Getenv("WARDEN_TEST_LINKS_IN"); dir != "" {
		fmt.Println("links:", strings.Join(sortedKeys(linksOf(dir)), ","))
		var found []string
		insideGitDir(dir, 0, func(child string, _ int) { found = append(found, filepath.Base(child)) })
		fmt.Println("inside:", strings.Join(found, ","))
		return
	}
	base := t.TempDir()
	gitDir := filepath.Join(base, "g", ".git")
	for _, d := range []string{"rebase-merge", "refs/heads", "worktrees/wt"} {
		if err := os.MkdirAll(filepath.Join(gitDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(gitDir, "worktrees", "wt", "HEAD"), []byte("ref: refs/heads/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"rebase-merge/head-name", "BISECT_START"} {
		if err := os.Symlink("/nonexistent/secret", filepath.Join(gitDir, l)); err != nil {
			t.Fatal(err)
		}
	}
	run := func() string {
		if os.Geteuid() != 0 {
			var found []string
			insideGitDir(gitDir, 0, func(child string, _ int) { found = append(found, filepath.Base(child)) })
			return fmt.Sprintf("links: %s\ninside: %s", strings.Join(sortedKeys(linksOf(gitDir)), ","), strings.Join(found, ","))
		}
		const nobody = 65534
		// The test's own directories (t.TempDir's, below the system's
		// temporary directory) searchable by the other user.
		for d := base; d != os.TempDir() && d != "/" && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
			_ = os.Chmod(d, 0o755)
		}
		if err := filepath.Walk(filepath.Join(base, "g"), func(p string, _ os.FileInfo, err error) error {
			if err == nil {
				err = os.Lchown(p, nobody, nobody)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for d := base; d != "/"; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is not searchable by other users, so an unprivileged process cannot reach the test's directory", d)
			}
		}
		// A copy of this test binary the other user can run (go test's
		// own directory is the builder's).
		self, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(base, "links.test")
		if err := os.WriteFile(bin, self, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^TestLinksFoundInUnlistableDirectories$")
		cmd.Dir = base
		cmd.Env = append(os.Environ(), "WARDEN_TEST_LINKS_IN="+gitDir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the walk as user %d: %v\n%s", nobody, err, out)
		}
		var lines []string
		for line := range strings.SplitSeq(string(out), "\n") {
			if strings.HasPrefix(line, "links:") || strings.HasPrefix(line, "inside:") {
				lines = append(lines, line)
			}
		}
		if len(lines) != 2 {
			t.Fatalf("the walk as user %d printed no links and inside lines:\n%s", nobody, out)
		}
		return strings.Join(lines, "\n")
	}
	for _, d := range []string{filepath.Join(gitDir, "rebase-merge"), filepath.Join(gitDir, "worktrees"), gitDir} {
		if err := os.Chmod(d, 0o311); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := strings.TrimSpace(run()), "links: BISECT_START,rebase-merge/head-name\ninside: wt"; got != want {
		t.Errorf("with the git directory, rebase-merge and worktrees at mode 0311: %q, want %q", got, want)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestSweepTakesOutWhatRunsFromAnUnlistableGitDirectory: a gitlinked
// repository whose git directory the command made unreadable (mode 0311)
// still loses its hooks and the keys that run programs. Run as root, the
// permission is not in the way; the walk's own test runs unprivileged.
func TestSweepTakesOutWhatRunsFromAnUnlistableGitDirectory(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	g := New(project, nil, filepath.Join(home, "q"))
	sh(t, home, project, `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && git -C sub config core.fsmonitor "touch $HOME/pwned; false" && printf '#!/bin/sh\n' > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit && chmod 0311 sub/.git/hooks sub/.git`)
	fs := g.Sweep(time.Now())
	var keys, hooks []string
	for _, f := range fs {
		if f.Err != nil {
			t.Errorf("Sweep: %v", f.Err)
		}
		keys, hooks = append(keys, f.Keys...), append(hooks, f.Hooks...)
	}
	if len(keys) == 0 || len(hooks) == 0 {
		t.Errorf("Sweep took out keys %q and hooks %q, want core.fsmonitor and pre-commit", keys, hooks)
	}
}
