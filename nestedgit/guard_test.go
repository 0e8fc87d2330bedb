package nestedgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitIn runs git in dir with a home of the test's own (no user or system
// configuration of the machine), failing the test when it fails.
func gitIn(t testing.TB, home, dir string, args ...string) string {
	t.Helper()
	out, err := hostGit(home, dir, args...)
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

func hostGit(home, dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_ALLOW_PROTOCOL=file"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the guard reads configuration with git, and the tests run git as the host would")
	}
}

// newProject makes a home and a committed project in it.
func newProject(t *testing.T) (home, project string) {
	t.Helper()
	home = t.TempDir()
	project = filepath.Join(home, "src", "p")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, home, project, "init", "-q")
	gitIn(t, home, project, "commit", "-q", "--allow-empty", "-m", "first")
	return home, project
}

func sh(t *testing.T, home, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_ALLOW_PROTOCOL=file"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// The ways a command makes git on the host enter a repository it wrote.
// Each script runs in the project, with $M the file the planted program
// creates; each is shown live first: the user's git status runs it.
var attacks = []struct {
	name, script string
}{
	{"init-and-add", `git init -q sub && git -C sub config core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`},
	{"config-written-by-hand", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$M" >> sub/.git/config`},
	{"include-path", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$M" > inc.cfg && git -C sub config include.path ../../inc.cfg`},
	{"gitfile-to-a-dir-it-wrote", `mkdir -p build && git init -q --separate-git-dir=$PWD/build/gd sub && git -C sub config core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`},
	{"gitfile-to-a-cache", `mkdir -p "$HOME/.cache" && git init -q --separate-git-dir="$HOME/.cache/gd" sub && git -C sub config core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`},
	{"submodule-add-local", `git init -q lib && git -C lib commit -q --allow-empty -m x && git -c protocol.file.allow=always submodule add -q ./lib vendor/lib && git -C vendor/lib config core.fsmonitor "touch $M; false"`},
	{"nested-submodule", `git init -q a && git -C a commit -q --allow-empty -m x && git init -q a/b && git -C a/b config core.fsmonitor "touch $M; false" && git -C a/b commit -q --allow-empty -m y && git -C a add b 2>/dev/null && git -C a commit -q -m z && git add a 2>/dev/null`},
	{"modules-dir-made-by-hand", `mkdir -p .git/modules && git init -q --separate-git-dir=$PWD/.git/modules/x x && git -C x config core.fsmonitor "touch $M; false" && git -C x commit -q --allow-empty -m x && git add x 2>/dev/null`},
	// A split index keeps its entries in .git/sharedindex.*: the gitlink
	// is not in .git/index itself.
	{"split-index", `git init -q sub && git -C sub config core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && git update-index --split-index`},
	// Deeper than any fixed bound of the old search (8): git's recursion
	// into submodules has none.
	{"gitlink-chain-of-eleven", `p=sub; for i in 1 2 3 4 5 6 7 8 9 10 11; do p=$p/n; done; git init -q $p && git -C $p config core.fsmonitor "touch $M; false" && git -C $p commit -q --allow-empty -m x && c=$p && while [ $c != sub ]; do d=$(dirname $c); git -C $d init -q && git -C $d add n && git -C $d commit -q -m y; c=$d; done && git add sub 2>/dev/null`},
	// A gitlinked repository whose core.worktree (inside the project)
	// holds the work tree of its own gitlink elsewhere.
	{"core-worktree-moves-the-gitlinks", `git init -q sub && git init -q sub/inner && git -C sub/inner commit -q --allow-empty -m x && git -C sub add inner && git -C sub commit -q -m y && git add sub 2>/dev/null && mkdir -p node_modules/w && mv sub/inner node_modules/w/inner && git -C sub config core.worktree "$PWD/node_modules/w" && git -C node_modules/w/inner config core.fsmonitor "touch $M; false"`},
	{"config-worktree", `git init -q sub && git -C sub config extensions.worktreeConfig true && git -C sub config --worktree core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`},
	// A linked worktree's own index gitlinks a repository in it (in
	// node_modules, which the search of nested repositories passes over).
	{"linked-worktree-index", `git worktree add -q wt && mkdir -p wt/node_modules/evil && git -C wt/node_modules/evil init -q && git -C wt/node_modules/evil commit -q --allow-empty -m x && git -C wt/node_modules/evil config core.fsmonitor "touch $M; false" && git -C wt add -f node_modules/evil 2>/dev/null`},
}

// TestSweepTakesOutWhatRunsOnTheHost plays each attack after the baseline,
// shows that the user's git status then runs the planted program, and that
// after Sweep it no longer does, with the keys and originals in quarantine.
func TestSweepTakesOutWhatRunsOnTheHost(t *testing.T) {
	needGit(t)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			home, project := newProject(t)
			q := filepath.Join(home, ".warden", "quarantine")
			mark := filepath.Join(home, "pwned")
			g := New(project, []string{filepath.Join(home, ".cache")}, q)
			sh(t, home, project, "M="+mark+"; "+a.script)
			// Where the user runs git: the project, and a linked worktree
			// the attack made in it.
			dirs := []string{project}
			if _, err := os.Stat(filepath.Join(project, "wt", ".git")); err == nil {
				dirs = append(dirs, filepath.Join(project, "wt"))
			}
			for _, d := range dirs {
				gitIn(t, home, d, "status")
			}
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("the attack is inert: git status did not run the planted program (%v)", err)
			}
			os.Remove(mark)
			fs := g.Sweep(time.Now())
			if len(fs) == 0 {
				t.Fatal("Sweep found nothing")
			}
			for _, f := range fs {
				t.Log(f.String())
				if f.Err != nil {
					t.Errorf("Sweep could not make %s safe: %v", f.GitDir, f.Err)
				}
				if data, err := os.ReadFile(filepath.Join(f.Moved, "RESTORE.txt")); err != nil || !strings.Contains(string(data), f.GitDir) {
					t.Errorf("no RESTORE.txt naming %s in %s: %v", f.GitDir, f.Moved, err)
				}
			}
			for _, d := range dirs {
				for _, args := range [][]string{{"status"}, {"diff"}, {"status", "--porcelain"}} {
					gitIn(t, home, d, args...)
					if _, err := os.Stat(mark); err == nil {
						t.Fatalf("after Sweep, git %s in %s on the host still runs the planted program", strings.Join(args, " "), d)
					}
				}
			}
			// A second sweep has nothing left to do.
			for _, f := range g.Sweep(time.Now()) {
				t.Errorf("a second Sweep did something: %s", f)
			}
		})
	}
}

// TestSweepLeavesOrdinaryWorkAlone: scratch repositories that are not
// gitlinks, gitlinked repositories whose config runs nothing, and what was
// there before the baseline are not touched.
func TestSweepLeavesOrdinaryWorkAlone(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, "q")
	// The user's own: a gitlinked repository with a hook and a pager,
	// there before the command.
	sh(t, home, project, `git init -q mine && git -C mine config core.pager less && mkdir -p mine/.git/hooks && printf '#!/bin/sh\n' > mine/.git/hooks/pre-commit && chmod +x mine/.git/hooks/pre-commit && git -C mine commit -q --allow-empty -m x && git add mine 2>/dev/null`)
	g := New(project, nil, q)
	// The command's: a test fixture with hooks (not in the index), and a
	// gitlinked scratch repository with a remote, a branch and a user.
	sh(t, home, project, `git init -q testdata/fixture && printf '#!/bin/sh\nexit 0\n' > testdata/fixture/.git/hooks/pre-commit && git -C testdata/fixture config core.hooksPath .githooks && git init -q scratch && git -C scratch config user.name "A B" && git -C scratch remote add origin https://example.com/x.git && git -C scratch commit -q --allow-empty -m x && git add scratch 2>/dev/null`)
	before, _ := os.ReadFile(filepath.Join(project, "scratch/.git/config"))
	if fs := g.Sweep(time.Now()); len(fs) != 0 {
		for _, f := range fs {
			t.Errorf("Sweep touched ordinary work: %s", f)
		}
	}
	after, _ := os.ReadFile(filepath.Join(project, "scratch/.git/config"))
	if string(before) != string(after) {
		t.Errorf("scratch's config changed:\n%s\nwas\n%s", after, before)
	}
	for _, p := range []string{"mine/.git/hooks/pre-commit", "testdata/fixture/.git/hooks/pre-commit"} {
		if _, err := os.Stat(filepath.Join(project, p)); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
	if _, err := os.Stat(q); err == nil {
		t.Errorf("the quarantine %s was made", q)
	}
}

// TestSweepKeepsTheInertKeysAndCanBeRestored: the rewritten config keeps
// every inert key as git read it, the repository still works, and the
// RESTORE.txt commands put the original back.
func TestSweepKeepsTheInertKeysAndCanBeRestored(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	g := New(project, nil, filepath.Join(home, "q"))
	sh(t, home, project, `git init -q sub && git -C sub config user.name "Q \"x\" \\ y" && git -C sub config branch.Main.description "two
lines" && git -C sub config alias.st '!touch $HOME/pwned' && git -C sub config --add diff.external 'sh -c "touch $HOME/pwned"' && git -C sub config filter.x.clean "touch $HOME/pwned" && mkdir -p sub/.git/hooks && printf '#!/bin/sh\ntouch $HOME/pwned\n' > sub/.git/hooks/post-checkout && chmod +x sub/.git/hooks/post-checkout && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`)
	orig, _ := os.ReadFile(filepath.Join(project, "sub/.git/config"))
	fs := g.Sweep(time.Now())
	if len(fs) != 1 {
		t.Fatalf("Sweep = %v, want one finding", fs)
	}
	f := fs[0]
	for _, k := range []string{"alias.st", "diff.external", "filter.x.clean"} {
		if !slices.Contains(f.Keys, k) {
			t.Errorf("Keys = %v, want %s among them", f.Keys, k)
		}
	}
	if !slices.Contains(f.Hooks, "post-checkout") {
		t.Errorf("Hooks = %v, want post-checkout", f.Hooks)
	}
	got := gitIn(t, home, filepath.Join(project, "sub"), "config", "--list", "--local")
	for _, want := range []string{`user.name=Q "x" \ y`, "branch.Main.description=two\nlines", "core.bare=false"} {
		if !strings.Contains(got, want) {
			t.Errorf("the rewritten config lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pwned") {
		t.Errorf("the rewritten config still names the program:\n%s", got)
	}
	gitIn(t, home, filepath.Join(project, "sub"), "log", "--oneline")
	restore, _ := os.ReadFile(filepath.Join(f.Moved, "RESTORE.txt"))
	var cmds []string
	for _, line := range strings.Split(string(restore), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "cp -a ") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("RESTORE.txt has %d cp commands, want 2:\n%s", len(cmds), restore)
	}
	sh(t, home, project, strings.Join(cmds, " && "))
	if now, _ := os.ReadFile(filepath.Join(project, "sub/.git/config")); string(now) != string(orig) {
		t.Errorf("restored config differs:\n%s\nwant\n%s", now, orig)
	}
	if _, err := os.Stat(filepath.Join(project, "sub/.git/hooks/post-checkout")); err != nil {
		t.Errorf("the hook was not restored: %v", err)
	}
}

// TestSweepMovesAnUnreadableConfigWhole: a config git cannot parse is
// moved as a whole (fail closed), and git still works in the repository.
func TestSweepMovesAnUnreadableConfigWhole(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	g := New(project, nil, filepath.Join(home, "q"))
	sh(t, home, project, `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core\n\tfsmonitor = "touch $HOME/pwned"\n' >> sub/.git/config`)
	fs := g.Sweep(time.Now())
	if len(fs) != 1 || !slices.Contains(fs[0].Whole, "config") {
		t.Fatalf("Sweep = %v, want the config moved whole", fs)
	}
	if _, err := os.Lstat(filepath.Join(project, "sub/.git/config")); err == nil {
		t.Error("the unreadable config is still there")
	}
	gitIn(t, home, project, "status")
	gitIn(t, home, filepath.Join(project, "sub"), "log", "--oneline")
}

// TestReachableReadsEveryIndexVersion: the gitlinks of an index git wrote
// in versions 2, 3 (an intent-to-add entry has extended flags) and 4 are
// found, and a SHA-256 repository's too.
func TestReachableReadsEveryIndexVersion(t *testing.T) {
	needGit(t)
	for _, v := range []string{"2", "3", "4", "sha256"} {
		t.Run(v, func(t *testing.T) {
			home := t.TempDir()
			project := filepath.Join(home, "p")
			args := []string{"init", "-q"}
			if v == "sha256" {
				args = append(args, "--object-format=sha256")
			}
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			gitIn(t, home, project, append(args, ".")...)
			format := "sha1"
			if v == "sha256" {
				format = "sha256"
			}
			sh(t, home, project, `mkdir -p a/long/directory/name && echo x > a/long/directory/name/f && echo y > a/long/directory/name/g && git add a && echo z > later && git add -N later && git init -q --object-format=`+format+` a/long/directory/sub && git -C a/long/directory/sub commit -q --allow-empty -m x && git add a/long/directory/sub 2>/dev/null`)
			if v != "sha256" {
				gitIn(t, home, project, "update-index", "--index-version", v)
			}
			data, err := os.ReadFile(filepath.Join(project, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			size := sha1Size
			if v == "sha256" {
				size = sha256Size
			}
			links, err := gitlinks(data, size)
			if err != nil {
				t.Fatalf("gitlinks: %v", err)
			}
			if len(links) != 1 || links[0] != "a/long/directory/sub" {
				t.Errorf("gitlinks = %q, want [a/long/directory/sub]", links)
			}
			repos, problems := Reachable(project)
			if len(problems) != 0 || len(repos) != 1 {
				t.Errorf("Reachable = %v, %v", repos, problems)
			}
		})
	}
}

// TestSweepThroughASymlinkedProject: a project named through a symlink (a
// home under /home that leads elsewhere) is judged where its repositories
// really are: the gitlinked repository's git directory, which Reachable
// names by its real path, is still inside what the command may write.
func TestSweepThroughASymlinkedProject(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	link := filepath.Join(home, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	g := New(link, nil, filepath.Join(home, "q"))
	sh(t, home, link, `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf '[core]\n\tfsmonitor = "touch $HOME/pwned; false"\n' >> sub/.git/config`)
	fs := g.Sweep(time.Now())
	if len(fs) != 1 || !slices.Contains(fs[0].Keys, "core.fsmonitor") {
		t.Fatalf("Sweep = %v, want core.fsmonitor taken out", fs)
	}
	gitIn(t, home, link, "status")
	if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
		t.Error("git status still ran the planted program")
	}
}

// TestSweepFollowsASymlinkIntoWhatTheCommandWrites: a .git file that names
// its git directory through a symlink the command could not have made
// (outside what it may write) but that leads into what it may write is
// still swept: the git directory is judged where it really is.
func TestSweepFollowsASymlinkIntoWhatTheCommandWrites(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	cache := filepath.Join(home, ".cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	// Made by the user, before the command: ~/c leads to ~/.cache.
	if err := os.Symlink(cache, filepath.Join(home, "c")); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(home, "pwned")
	g := New(project, []string{cache}, filepath.Join(home, ".warden", "quarantine"))
	sh(t, home, project, `M=`+mark+`; git init -q --separate-git-dir="$HOME/.cache/gd" sub && git -C sub config core.fsmonitor "touch $M; false" && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && printf 'gitdir: %s\n' "$HOME/c/gd" > sub/.git`)
	gitIn(t, home, project, "status")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the attack is inert: git status did not run the planted program (%v)", err)
	}
	os.Remove(mark)
	if fs := g.Sweep(time.Now()); len(fs) == 0 {
		t.Fatal("Sweep found nothing")
	}
	gitIn(t, home, project, "status")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("after Sweep, git status on the host still runs the planted program")
	}
}

// TestSweepIntoAQuarantineOnAnotherFilesystem: with warden's home (the
// quarantine) on another filesystem than the project, where a rename
// cannot move anything, the planted config and hook are still taken out,
// their copies kept in the quarantine.
func TestSweepIntoAQuarantineOnAnotherFilesystem(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q, err := os.MkdirTemp("/dev/shm", "warden-quarantine-")
	if err != nil {
		t.Skipf("no /dev/shm to put the quarantine on another filesystem: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(q) })
	var a, b syscall.Stat_t
	if syscall.Stat(q, &a) != nil || syscall.Stat(project, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the project's filesystem")
	}
	mark := filepath.Join(home, "pwned")
	g := New(project, nil, q)
	sh(t, home, project, `M=`+mark+`; git init -q sub && git -C sub config core.fsmonitor "touch $M; false" && printf '#!/bin/sh\ntouch %s\n' "$M" > sub/.git/hooks/post-checkout && chmod +x sub/.git/hooks/post-checkout && git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null`)
	os.Remove(mark) // git commit in sub ran it already
	fs := g.Sweep(time.Now())
	if len(fs) != 1 || fs[0].Err != nil || !slices.Contains(fs[0].Keys, "core.fsmonitor") || !slices.Contains(fs[0].Hooks, "post-checkout") {
		t.Fatalf("Sweep = %v", fs)
	}
	gitIn(t, home, project, "status")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("after Sweep, git status on the host still runs the planted program")
	}
	if _, err := os.Stat(filepath.Join(project, "sub", ".git", "hooks", "post-checkout")); err == nil {
		t.Error("the hook is still in the git directory")
	}
	for _, name := range []string{"config", "hooks/post-checkout"} {
		if _, err := os.Stat(filepath.Join(fs[0].Moved, name)); err != nil {
			t.Errorf("no copy of %s in the quarantine: %v", name, err)
		}
	}
}

// TestSweepNeverActsOutsideWhatTheCommandCouldWrite: the sweep runs
// unconfined, so a command must not be able to point it at the user's
// files: a config that is a symlink to one, a file planted where the sweep
// writes its new config, a git directory reached through a symlink to a
// folder of the home. Each outside file is left exactly as it was, and
// the planted programs still never run.
func TestSweepNeverActsOutsideWhatTheCommandCouldWrite(t *testing.T) {
	needGit(t)
	cases := []struct{ name, script string }{
		{"config-symlink", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && ln -sf "$O/rc" sub/.git/config`},
		{"new-config-name-planted", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && for i in 0 1 2 3; do ln -s "$O/rc" sub/.git/config.warden-new; done 2>/dev/null; printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$M" >> sub/.git/config`},
		{"hooks-symlink", `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && rm -rf sub/.git/hooks && ln -s "$O/hooks" sub/.git/hooks`},
		{"gitdir-through-symlink", `mkdir -p build && git init -q --separate-git-dir="$PWD/build/gd" sub && git -C sub commit -q --allow-empty -m x && git add sub && ln -s "$O" sub/lnk && printf 'gitdir: lnk\n' > sub/.git`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, project := newProject(t)
			outside := filepath.Join(home, "outside") // not writable by the command
			if err := os.MkdirAll(filepath.Join(outside, "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{
				"rc":             "# the user's rc\n",
				"config":         "[core]\n\tpager = less\n",
				"HEAD":           "ref: refs/heads/main\n",
				"hooks/pre-push": "#!/bin/sh\n",
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(outside, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			g := New(project, nil, filepath.Join(home, "q"))
			sh(t, home, project, "O="+outside+"; M="+filepath.Join(home, "pwned")+"; "+c.script)
			for _, f := range g.Sweep(time.Now()) {
				t.Log(f.String())
			}
			for name, data := range files {
				got, err := os.ReadFile(filepath.Join(outside, name))
				if err != nil || string(got) != data {
					t.Errorf("the sweep changed %s outside what the command could write: %q, %v; want %q", name, got, err, data)
				}
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 4 {
				t.Errorf("the folder outside holds %d entries after the sweep; want the 4 it had", len(entries))
			}
			hostGit(home, project, "status")
			if _, err := os.Stat(filepath.Join(home, "pwned")); err == nil {
				t.Error("after the sweep, git status on the host runs the planted program")
			}
		})
	}
}

// TestSweepTakesOutPartialClone: a partial clone's promisor remote makes
// git on the host fetch from it by itself (git status does, for a missing
// object): the keys that make it one are taken out, the URL stays.
func TestSweepTakesOutPartialClone(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	g := New(project, nil, filepath.Join(home, "q"))
	sh(t, home, project, `git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && git -C sub config core.repositoryformatversion 1 && git -C sub config extensions.partialClone origin && git -C sub config remote.origin.url http://127.0.0.1:9/x.git && git -C sub config remote.origin.promisor true && git -C sub config remote.origin.partialclonefilter blob:none`)
	fs := g.Sweep(time.Now())
	if len(fs) != 1 {
		t.Fatalf("Sweep = %v; want one finding", fs)
	}
	for _, k := range []string{"extensions.partialclone", "remote.origin.promisor", "remote.origin.partialclonefilter"} {
		if !slices.Contains(fs[0].Keys, k) {
			t.Errorf("Keys = %v; want %s among them", fs[0].Keys, k)
		}
	}
	if got := gitIn(t, home, filepath.Join(project, "sub"), "config", "remote.origin.url"); strings.TrimSpace(got) != "http://127.0.0.1:9/x.git" {
		t.Errorf("remote.origin.url = %q; want it kept", got)
	}
}

// TestSplitIndexIsRead: the gitlinks of a split index (entries in
// .git/sharedindex.*) are read from it and its shared index, not left to
// the bounded walk of the work tree.
func TestSplitIndexIsRead(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	sh(t, home, project, `git init -q a && git -C a commit -q --allow-empty -m x && git add a && git update-index --split-index && git init -q b && git -C b commit -q --allow-empty -m x && git add b && echo x > f && git add f`)
	if matches, _ := filepath.Glob(filepath.Join(project, ".git", "sharedindex.*")); len(matches) == 0 {
		t.Fatal("git made no shared index")
	}
	links, err := indexGitlinks(filepath.Join(project, ".git"))
	if err != nil {
		t.Fatalf("indexGitlinks of a split index: %v", err)
	}
	for _, want := range []string{"a", "b"} {
		if !slices.Contains(links, want) {
			t.Errorf("gitlinks = %v; want %s among them", links, want)
		}
	}
}

// TestNestedRepositoriesGitlinksAreSwept: a repository nested in the
// project (not in its index) whose own index names a gitlink in a folder
// the search of nested repositories passes over (node_modules, .cache):
// git status there enters it, so the guard with nested sweeps it.
func TestNestedRepositoriesGitlinksAreSwept(t *testing.T) {
	needGit(t)
	for _, dir := range []string{"node_modules", ".cache"} {
		t.Run(dir, func(t *testing.T) {
			home, project := newProject(t)
			mark := filepath.Join(home, "pwned")
			g := NewWithNested(project, nil, filepath.Join(home, "q"))
			sh(t, home, project, "git init -q scratch && git init -q scratch/"+dir+"/inner && git -C scratch/"+dir+"/inner commit -q --allow-empty -m x && git -C scratch add "+dir+"/inner && git -C scratch commit -q -m y && git -C scratch/"+dir+"/inner config core.fsmonitor 'touch "+mark+"; false'")
			gitIn(t, home, filepath.Join(project, "scratch"), "status")
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("the attack is inert: git status in scratch did not run the planted program (%v)", err)
			}
			os.Remove(mark)
			for _, f := range g.Sweep(time.Now()) {
				t.Log(f.String())
			}
			gitIn(t, home, filepath.Join(project, "scratch"), "status")
			if _, err := os.Stat(mark); err == nil {
				t.Error("after Sweep, git status in scratch still runs the planted program")
			}
		})
	}
}

// TestSweepMovesARootThatLooksLikeAGitDirectory: a command that makes the
// project's .git no git directory (its HEAD renamed) and the project's
// root one (HEAD, objects/, refs/ and a config running a program) has git
// on the host take the root for a bare repository and run the program
// (red-team-16); the sweep moves the root's HEAD to the quarantine. A root
// with objects/ and refs/ but no HEAD is left alone.
func TestSweepMovesARootThatLooksLikeAGitDirectory(t *testing.T) {
	needGit(t)
	home, project := newProject(t)
	q := filepath.Join(home, "q")
	mark := filepath.Join(home, "pwned")
	g := New(project, nil, q)
	sh(t, home, project, "mkdir -p objects/pack refs/tags")
	if fs := g.Sweep(time.Now()); len(fs) != 0 {
		t.Fatalf("a root with objects/ and refs/ but no HEAD was swept: %v", fs)
	}
	sh(t, home, project, "M="+mark+`; mv .git/HEAD .git/HEAD.away && echo 'ref: refs/heads/main' > HEAD && printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch %s; false"\n' "$M" > config`)
	out, _ := hostGit(home, project, "status")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the attack is inert: git status did not run the planted program (%v): %s", err, out)
	}
	os.Remove(mark)
	fs := g.Sweep(time.Now())
	if len(fs) != 1 || fs[0].Err != nil || fs[0].Moved == "" {
		t.Fatalf("Sweep = %v, want the root's HEAD moved", fs)
	}
	if data, err := os.ReadFile(filepath.Join(fs[0].Moved, "RESTORE.txt")); err != nil || !strings.Contains(string(data), filepath.Join(project, "HEAD")) {
		t.Errorf("no RESTORE.txt naming the root's HEAD: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(project, "HEAD")); err == nil {
		t.Error("the root's HEAD is still there")
	}
	for _, args := range [][]string{{"status"}, {"diff"}, {"status", "--porcelain"}} {
		_, _ = hostGit(home, project, args...)
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("after Sweep, git %s on the host still runs the planted program", strings.Join(args, " "))
		}
	}
}
