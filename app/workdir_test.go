package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// TestProjectMayBeWritten: a workspace sandbox makes the project writable
// unless it is the root, the home or above it, a hidden directory of the
// home or inside one (where the host keeps what it runs: ~/.config/systemd,
// ~/.local/bin, ~/.claude), warden's home, or a system directory; a
// symlink is judged where it leads.
func TestProjectMayBeWritten(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	wardenHome := filepath.Join(root, "opt", "warden")
	for _, d := range []string{home + "/src/p", home + "/.config/systemd", wardenHome + "/sandbox/files"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(home+"/.config", home+"/src/cfg"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir  string
		want bool
	}{
		{home + "/src/p", true},
		{home + "/src", true},
		{home + "/work.d/p", true},
		{"/", false},
		{home, false},
		{root, false},
		{home + "/.config", false},
		{home + "/.config/systemd", false},
		{home + "/.local/bin", false},
		{home + "/.claude", false},
		{home + "/src/cfg", false}, // a symlink to ~/.config
		{wardenHome, false},
		{wardenHome + "/sandbox/files", false},
		{root + "/opt", false}, // holds warden's home
		{"/etc/x", false},
		{"/usr/local/src", false},
	}
	for _, c := range cases {
		if got := projectMayBeWritten(c.dir, home, wardenHome); got != c.want {
			t.Errorf("projectMayBeWritten(%s) = %v, want %v", c.dir, got, c.want)
		}
	}
}

// TestProgramFoldersAreNotProjects: the folders of the home the user's
// shell runs programs from (~/bin, ~/go/bin, an entry of PATH in the home)
// are not writable projects, nor is anything in one; a project holding one
// keeps it read-only; the rest of the home's projects are untouched.
func TestProgramFoldersAreNotProjects(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"bin", "go/bin", "go/src/x", "tools/sdk/bin", "src/p"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	programs := programDirs(home, "/usr/bin:"+home+"/tools/sdk/bin:relative/bin:"+home)
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{home + "/bin", true},
		{home + "/go/bin", true},
		{home + "/go/bin/sub", true},
		{home + "/tools/sdk/bin", true},
		{home + "/go", false}, // holds ~/go/bin, which stays read-only in it
		{home + "/go/src/x", false},
		{home + "/src/p", false},
		{home + "/tools", false},
	} {
		if got := inProgramDir(c.dir, programs); got != c.want {
			t.Errorf("inProgramDir(%s) = %v; want %v", c.dir, got, c.want)
		}
	}
	if slices.Contains(programs, home) || slices.Contains(programs, "/usr/bin") {
		t.Errorf("programDirs = %v; want neither the home itself nor a folder outside it", programs)
	}
}

// TestWorkspaceInAHiddenHomeDirectoryIsReadOnly: a workspace sandbox run
// from a working directory in ~/.config leaves it read-only (no project to
// write), while one run from a project under the home may write it.
func TestWorkspaceInAHiddenHomeDirectoryIsReadOnly(t *testing.T) {
	a := openTestApp(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	cfg := filepath.Join(home, ".config")
	project := filepath.Join(home, "src", "p")
	for _, d := range []string{cfg, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]bool{cfg: false, project: true} {
		s, err := a.sandboxSpec("workspace", dir, ExecOverride{}, &warden.Request{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.ProjectWritable != want {
			t.Errorf("a workspace run in %s: project writable %v, want %v", dir, s.ProjectWritable, want)
		}
	}
}

// TestSecretPathsAreDeniedToTheFileTools: what sandbox.secret_paths masks
// in every sandbox is denied to the tools a host runs itself (Claude
// Code's Read and Grep), wherever the host says it works, and to the shell
// guard's reading of paths; the rest of the home they read, as the
// workspace sandbox does.
func TestSecretPathsAreDeniedToTheFileTools(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, d := range []string{".config/gh", ".claude", ".cache/huggingface", "src/p"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := openTestApp(t)
	cases := []struct {
		name string
		req  warden.Request
		want warden.Verdict
		rule string
	}{
		{"gh token from the project", warden.Request{Capability: "filesystem", Action: "read", Resource: home + "/.config/gh/hosts.yml", Cwd: home + "/src/p"}, warden.Deny, "fs.denied"},
		{"gh token from ~/.config", warden.Request{Capability: "filesystem", Action: "read", Resource: home + "/.config/gh/hosts.yml", Cwd: home + "/.config"}, warden.Deny, "fs.denied"},
		{"claude login from ~/.claude", warden.Request{Capability: "filesystem", Action: "read", Resource: ".credentials.json", Cwd: home + "/.claude"}, warden.Deny, "fs.denied"},
		{"a token in a cache", warden.Request{Capability: "filesystem", Action: "read", Resource: "token", Cwd: home + "/.cache/huggingface"}, warden.Deny, "fs.denied"},
		{"grep of a secret directory", warden.Request{Capability: "filesystem", Action: "list", Resource: home + "/.config/gh", Cwd: home + "/.config"}, warden.Deny, "fs.denied"},
		{"grep from ~/.config", warden.Request{Capability: "filesystem", Action: "list", Resource: home + "/.config", Cwd: home + "/.config"}, warden.Deny, "fs.denied_within"},
		{"the user's git settings", warden.Request{Capability: "filesystem", Action: "read", Resource: "~/.gitconfig", Cwd: home + "/src/p"}, warden.Allow, "fs.home_read"},
		{"shell reads ~/.npmrc", warden.Request{Capability: "shell", Action: "exec", Resource: "cat ~/.npmrc", Cwd: home + "/src/p"}, warden.Deny, "shell.denied_path"},
		{"the project still reads", warden.Request{Capability: "filesystem", Action: "read", Resource: "main.go", Cwd: home + "/src/p"}, warden.Allow, "fs.allowed"},
	}
	for _, c := range cases {
		req := c.req
		d, err := a.Gate.Check(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict != c.want || d.Rule != c.rule {
			t.Errorf("%s: %v %s (%s), want %v %s", c.name, d.Verdict, d.Rule, d.Reason, c.want, c.rule)
		}
	}
}

// TestSecretPatterns: each secret path (a glob, as denied paths are) is
// denied with everything below it; a bad entry gives no pattern.
func TestSecretPatterns(t *testing.T) {
	got := secretPatterns([]string{"~/.ssh", "~/.cache/git/credential/", "~/.config/*/token", "~/.kube/**", "relative", "~"})
	want := []string{"~/.ssh", "~/.ssh/**", "~/.cache/git/credential", "~/.cache/git/credential/**", "~/.config/*/token", "~/.config/*/token/**", "~/.kube", "~/.kube/**"}
	if len(got) != len(want) {
		t.Fatalf("secretPatterns = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("secretPatterns[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestFolderOfProjectsKeepsEachRepositoryProtected: a workspace run from a
// directory above several repositories, with no .git of its own, may write
// it, but each repository's .git/config, .git/hooks and agent settings stay
// protected, as they would with that repository as the project; a
// repository inside another is left to that one's own rules.
func TestFolderOfProjectsKeepsEachRepositoryProtected(t *testing.T) {
	a := openTestApp(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	folder := filepath.Join(home, "src")
	for _, d := range []string{"go/.git/hooks", "group/web/.git/hooks", ".hidden/tool/.git", "go/inner/.git", "node_modules/x/.git", "plain/dir"} {
		if err := os.MkdirAll(filepath.Join(folder, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"go/.git/config", "group/web/.git/config"} {
		if err := os.WriteFile(filepath.Join(folder, f), []byte("[core]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := a.sandboxSpec("workspace", folder, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.ProjectWritable {
		t.Fatal("a folder of projects should stay writable")
	}
	has := func(p string) bool {
		for _, q := range s.Protected {
			if q == filepath.Join(folder, p) || q == filepath.Join(folder, p)+"/" {
				return true
			}
		}
		return false
	}
	for _, p := range []string{"go/.git/config", "go/.git/hooks", "go/.claude", "group/web/.git/config", "group/web/.git/hooks", ".hidden/tool/.git/config"} {
		if !has(p) {
			t.Errorf("%s is not protected: %q", p, s.Protected)
		}
	}
	for _, p := range []string{"go/inner/.git/config", "node_modules/x/.git/config", "plain/dir/.git/config"} {
		if has(p) {
			t.Errorf("%s is protected, but lies in a repository or node_modules", p)
		}
	}
}

// TestReposBelowIsBounded: a folder with more directories to read than
// the bound says so, and the caller keeps it read-only.
func TestReposBelowIsBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range maxFolderDirs + 1 {
		if err := os.MkdirAll(filepath.Join(dir, "a", fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := reposBelow(dir); ok {
		t.Fatalf("reposBelow read more than %d directories and said ok", maxFolderDirs)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	a := openTestApp(t)
	big := filepath.Join(home, "big")
	if err := os.Rename(dir, big); err != nil {
		t.Fatal(err)
	}
	s, err := a.sandboxSpec("workspace", big, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ProjectWritable {
		t.Error("a folder too large to search for repositories was left writable")
	}
}

// TestOtherHomesStoresAreHidden: where the caller is root, its command runs
// as root and owns every user's credential stores, so each "~/…" secret
// path is masked in the other homes too (root's own when $HOME names
// another directory), and only the stores that can be there are named.
func TestOtherHomesStoresAreHidden(t *testing.T) {
	root := t.TempDir()
	mine, alice, rootHome := filepath.Join(root, "me"), filepath.Join(root, "alice"), filepath.Join(root, "root")
	for _, d := range []string{mine + "/.ssh", alice + "/.ssh", alice + "/.config/gh", alice + "/src", rootHome + "/.aws"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	home := Home(filepath.Join(root, "warden"))
	if err := os.MkdirAll(home.Abs()+"/sandbox", 0o700); err != nil {
		t.Fatal(err)
	}
	got := hiddenPathsIn(home, []string{"~/.ssh/**", "~/.aws", "~/.config/gh", "~/.netrc", "/etc/secret"}, mine, []string{alice, rootHome})
	for _, want := range []string{mine + "/.ssh", alice + "/.ssh", alice + "/.config/gh", rootHome + "/.aws", "/etc/secret"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not hidden: %q", want, got)
		}
	}
	for _, not := range []string{alice + "/.aws", alice + "/.netrc", rootHome + "/.ssh", alice + "/src", alice} {
		if slices.Contains(got, not) {
			t.Errorf("%s is hidden, though no store is there: %q", not, got)
		}
	}
	if os.Geteuid() != 0 {
		if h := otherHomes(mine); h != nil {
			t.Errorf("a caller that is not root got other homes to hide: %q", h)
		}
	} else if h := otherHomes(mine); !slices.Contains(h, "/root") {
		t.Errorf("root with $HOME=%s: other homes %q, want /root among them", mine, h)
	}
}

// TestFileToolsAskToWriteWhatGitConfigNames: the file tools write the
// project without asking, but not the directory core.hooksPath names or a
// file the repository's config includes: git on the host runs and obeys
// those (the sandbox keeps them read-only for the agent's commands).
func TestFileToolsAskToWriteWhatGitConfigNames(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	project := filepath.Join(home, "src", "p")
	if err := os.MkdirAll(filepath.Join(project, ".husky"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.hooksPath", ".husky"}, {"config", "include.path", "../team.gitconfig"},
		{"config", "--add", "include.path", "../tools/git.conf"}, {"config", "--add", "include.path", "../conf/c2.conf"}, {"config", "--add", "include.path", "../sub/sub.conf"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// What a command could have left (red-team-17): a second file in an
	// include chain, symlinks to a named file and into the hooks
	// directory (one dangling), one to a directory beside a named file, a
	// directory link the configuration names a file through, and an empty
	// .git that is no repository above the working directory.
	mkdirAll(t, filepath.Join(project, "tools", "inner"))
	mkdirAll(t, filepath.Join(project, "sub", ".git"))
	for name, content := range map[string]string{"tools/git.conf": "[include]\n\tpath = local.conf\n", "tools/local.conf": "[user]\n\tname = t\n", "tools/c2.conf": "", "sub/sub.conf": ""} {
		if err := os.WriteFile(filepath.Join(project, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"gc.conf": "tools/git.conf", "pc.sh": ".husky/pre-commit", "x": "tools/inner", "conf": "tools"} {
		if err := os.Symlink(target, filepath.Join(project, link)); err != nil {
			t.Fatal(err)
		}
	}
	a := openTestApp(t)
	for _, c := range []struct {
		path, cwd string
		want      warden.Verdict
	}{
		{"src/main.go", "", warden.Allow},
		{".husky/pre-commit", "", warden.Ask},
		{project + "/.husky/pre-push", "", warden.Ask},
		{"team.gitconfig", "", warden.Ask},
		{"tools/local.conf", "", warden.Ask},
		{"gc.conf", "", warden.Ask},
		{"pc.sh", "", warden.Ask},
		{"x/../git.conf", "", warden.Ask},
		{"x/../other.conf", "", warden.Allow},
		{"~/src/p/tools/git.conf", "", warden.Ask},
		{"tools/c2.conf", "", warden.Ask},
		{"sub.conf", "sub", warden.Ask},
		{"tools/fsmonitor.sh", "", warden.Allow},
		{"other.txt", "sub", warden.Allow},
	} {
		cwd := project
		if c.cwd != "" {
			cwd = filepath.Join(project, c.cwd)
		}
		req := warden.Request{Capability: "filesystem", Action: "write", Resource: c.path, Cwd: cwd}
		d, err := a.Gate.Check(context.Background(), &req)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict != c.want {
			t.Errorf("write %s: %v %s (%s), want %v", c.path, d.Verdict, d.Rule, d.Reason, c.want)
		}
	}
	// A program git runs by itself from the work tree (runsWorkTreeCode):
	// what it loads cannot be listed, so every write of the work tree
	// asks, as the sandbox keeps the whole tree read-only.
	cmd := exec.Command("git", "config", "core.fsmonitor", "sh tools/fsmonitor.sh")
	cmd.Dir = project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	for _, p := range []string{"src/main.go", "tools/fsmonitor.sh", "sub/other.txt"} {
		req := warden.Request{Capability: "filesystem", Action: "write", Resource: p, Cwd: project}
		if d, err := a.Gate.Check(context.Background(), &req); err != nil || d.Verdict != warden.Ask {
			t.Errorf("write %s in a work tree git runs code of: %v %s, %v; want ask", p, d.Verdict, d.Rule, err)
		}
	}
	// Where git cannot read the configuration that names them, what it
	// names is not known: every write there asks.
	t.Setenv("PATH", t.TempDir())
	req := warden.Request{Capability: "filesystem", Action: "write", Resource: "src/main.go", Cwd: project}
	if d, err := a.Gate.Check(context.Background(), &req); err != nil || d.Verdict != warden.Ask {
		t.Errorf("write src/main.go with no git to read the config: %v %s, %v; want ask", d.Verdict, d.Rule, err)
	}
}

// TestRepositoryOfRepositoriesKeepsEachProtected: a project that is a
// repository itself and holds others (an agent's git init in a folder of
// projects, an umbrella repository with clones inside) keeps each inner
// repository's protected paths too (red-team-20: after git init in ~/src,
// a command wrote go/.claude/settings.json and go/.mcp.json).
func TestRepositoryOfRepositoriesKeepsEachProtected(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	folder := filepath.Join(home, "src")
	run := exec.Command("sh", "-c", "git init -q . && git init -q go && mkdir -p go/.claude")
	run.Dir = mkdirAll(t, folder)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s, err := a.sandboxSpec("workspace", folder, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(folder, "go", ".claude") + "/", filepath.Join(folder, "go", ".mcp.json")} {
		if !slices.Contains(s.Protected, p) {
			t.Errorf("%s is not protected in a repository that holds it: %q", p, s.Protected)
		}
	}
	// Its git directory is the nested repositories' guard's, which the
	// sandbox applies as it starts (and a linked worktree of the project
	// inside it, or a test fixture's repository, stays git's to change).
	if !slices.Contains(s.NestedGit, "config") {
		t.Errorf("nested repositories' config is not kept read-only: %q", s.NestedGit)
	}
	if slices.Contains(s.Protected, filepath.Join(folder, "go", ".git", "config")) {
		t.Errorf("the inner repository's .git/config is a protected path of the project; it is NestedGit's")
	}

	// What an inner repository's configuration names stays read-only
	// (red-team-22: an included file in its git directory and in its work
	// tree, a script core.fsmonitor runs), and so does the git directory a
	// .git file leads to elsewhere in the project, with what it includes.
	run = exec.Command("sh", "-c", `git -C go config include.path local.cfg && git -C go config --add include.path ../lib.cfg &&
		git -C go config core.fsmonitor "sh tools/fsmonitor.sh" &&
		printf '[include]\n\tpath = ../../conf/lib.cfg\n' > go/.git/local.cfg &&
		git init -q --separate-git-dir .sdk-git tools/sdk && git -C tools/sdk config include.path local.cfg`)
	run.Dir = folder
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s, err = a.sandboxSpec("workspace", folder, ExecOverride{}, &warden.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	// go's fsmonitor runs sh from its top: its work tree is kept whole
	// (runsWorkTreeCode), which holds what its configuration names in it.
	for _, p := range []string{"go/", "conf/lib.cfg", ".sdk-git/config", ".sdk-git/hooks/", ".sdk-git/local.cfg"} {
		abs := filepath.Join(folder, p)
		if strings.HasSuffix(p, "/") {
			abs += "/"
		}
		if !slices.Contains(s.Protected, abs) {
			t.Errorf("%s is not protected: %q", p, s.Protected)
		}
	}
}

// TestWorkTreesAboveTheProjectKeepWhatTheyName: where the project is a
// repository nested in another (git init in a package), what the outer
// repository's configuration names inside it stays protected: git run
// from the outer one on the host obeys and runs it (red-team-21: an
// included file and an fsmonitor script in the package were written).
func TestWorkTreesAboveTheProjectKeepWhatTheyName(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a := openTestApp(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	outer := filepath.Join(home, "src", "p")
	run := exec.Command("sh", "-c", `git init -q . && git config include.path ../sub/git.conf && git config core.fsmonitor "sh sub/tools/fsmonitor.sh" && mkdir -p sub/tools && git -C sub init -q`)
	run.Dir = mkdirAll(t, outer)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sub := filepath.Join(outer, "sub")
	s, err := a.sandboxSpec("workspace", sub, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != sub {
		t.Fatalf("project = %s, want the nested repository %s", s.Project, sub)
	}
	for _, p := range []string{filepath.Join(sub, "git.conf"), filepath.Join(sub, "tools") + "/"} {
		if !slices.Contains(s.Protected, p) {
			t.Errorf("%s, named by the repository above, is not protected: %q", p, s.Protected)
		}
	}
}
