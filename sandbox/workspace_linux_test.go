package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/sandbox"
)

// workspaceSpec is the workspace profile's isolation around a fresh git-like
// project inside a fake home holding a secret: the whole filesystem
// readable but the masks, the project writable but its protected paths,
// Unix sockets of its own, and a session /tmp.
func workspaceSpec(t *testing.T) (s sandbox.Spec, home string) {
	t.Helper()
	home = t.TempDir()
	project := filepath.Join(home, "proj")
	for _, d := range []string{project + "/.git/hooks", home + "/.ssh"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, project+"/.git/config", "[core]\n")
	mustWrite(t, home+"/.ssh/id_rsa", "WORKSPACE-SECRET\n")
	mustWrite(t, home+"/.gitconfig", "[user]\n\tname = someone\n")
	mustWrite(t, home+"/.bashrc", "# rc\n")
	return sandbox.Spec{
		Mode:            sandbox.ModeStandard,
		Project:         project,
		ProjectWritable: true,
		Workspace:       t.TempDir(),
		ReadAll:         true,
		Hidden:          []string{home + "/.ssh"},
		Protected:       []string{project + "/.git/config", project + "/.git/hooks/", project + "/.claude/"},
		UnixSockets:     true,
		Tmp:             t.TempDir(),
		Quarantine:      filepath.Join(t.TempDir(), "quarantine"),
		Limits:          sandbox.Limits{Wall: 30 * time.Second, Pids: 512, Output: 1 << 20},
	}, home
}

// runAt runs args in s with HOME=home, as an agent host's command would.
func runAt(t *testing.T, s sandbox.Spec, home string, args ...string) run {
	t.Helper()
	var out, errb bytes.Buffer
	res, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args: args, Dir: s.Project, Env: []string{"PATH=" + systemPath, "HOME=" + home},
		Stdout: &out, Stderr: &errb,
	})
	return run{res, out.String(), errb.String(), err}
}

// TestWorkspaceProfileRunsRealWork runs what ordinary work needs and checks
// each effect: shell pipelines and redirects that fork, project writes, git's
// own files but its config and hooks, the home readable, a /tmp that the
// session's next command still finds.
func TestWorkspaceProfileRunsRealWork(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	script := `set -e
echo built > out.txt && cat out.txt | tr a-z A-Z
cat > notes.md <<'END'
heredoc
END
mkdir -p .git/refs/heads && echo ref > .git/refs/heads/x
cat ` + home + `/.gitconfig | grep -c someone
echo kept > /tmp/session-file
echo shm > /dev/shm/x && cat /dev/shm/x
ls / > /dev/null
echo "$NO_PROXY"
`
	r := runAt(t, s, home, "/bin/bash", "-c", script)
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("ordinary work failed: %s", r)
	}
	if _, err := os.Lstat(filepath.Join(s.Project, ".claude")); err == nil {
		t.Error("the sandbox left a placeholder .claude in the project")
	}
	for _, want := range []string{"BUILT", "1", "shm"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q: %s", want, r)
		}
	}
	for path, want := range map[string]string{"notes.md": "heredoc\n", ".git/refs/heads/x": "ref\n"} {
		if b, err := os.ReadFile(filepath.Join(s.Project, path)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.Tmp, "session-file")); err != nil || string(b) != "kept\n" {
		t.Errorf("the session's /tmp holds %q, %v; want the file the command wrote", b, err)
	}
	next := runAt(t, s, home, "/bin/cat", "/tmp/session-file")
	if next.stdout != "kept\n" {
		t.Errorf("the next command of the session does not find its /tmp file: %s", next)
	}
}

// TestWorkspaceProfileRefuses checks what the workspace profile keeps from
// a command, by effect: masked secrets, the home and protected paths
// unwritable, protected directories not creatable, devices and /run hidden.
func TestWorkspaceProfileRefuses(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	for _, c := range []struct {
		name, script string
	}{
		{"read the masked secret", "cat " + home + "/.ssh/id_rsa"},
		{"list the masked secret's directory", "ls " + home + "/.ssh"},
		{"find the secret by walking", "grep -r WORKSPACE-SECRET " + home},
		{"append to the shell's rc file", "echo evil >> " + home + "/.bashrc"},
		{"rewrite git's config", "echo '[core] hooksPath=/tmp' >> .git/config"},
		{"replace git's config", "echo x > c && mv c .git/config"},
		{"add a git hook", "echo evil > .git/hooks/pre-commit"},
		{"move .git aside and write a new config", "mv .git .git-old && mkdir -p .git/hooks && echo '[core] fsmonitor=evil' > .git/config"},
		{"move the hooks' parent aside", "mv .git .git-old"},
		{"read a raw device", "head -c 1 /dev/sda /dev/vda /dev/nvme0n1 /dev/mem"},
		{"reach the host's sockets", "ls /run/docker.sock /run/dbus || ls /run"},
		{"write outside the project", "touch /usr/local/warden-probe " + home + "/new"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runAt(t, s, home, "/bin/bash", "-c", c.script)
			if r.err != nil {
				t.Fatalf("could not run: %v", r.err)
			}
			if r.res.ExitCode == 0 {
				t.Errorf("%q succeeded: %s", c.script, r)
			}
			if strings.Contains(r.stdout+r.stderr, "WORKSPACE-SECRET") {
				t.Errorf("the secret leaked: %s", r)
			}
		})
	}
	if b, _ := os.ReadFile(home + "/.bashrc"); string(b) != "# rc\n" {
		t.Errorf(".bashrc changed: %q", b)
	}
	if _, err := os.Lstat(s.Project + "/.git-old"); err == nil {
		t.Error(".git was moved aside")
	}
	if b, _ := os.ReadFile(s.Project + "/.git/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if _, err := os.Stat(s.Project + "/.git/hooks/pre-commit"); err == nil {
		t.Error("a git hook was added")
	}
	// A protected directory that is missing can be created, but not kept:
	// it leaves the project when the run ends, and the run says so.
	r := runAt(t, s, home, "/bin/bash", "-c", "mkdir -p .claude && echo '{}' > .claude/settings.json")
	if !slices.ContainsFunc(r.res.Warnings, func(w string) bool { return strings.Contains(w, ".claude") && strings.Contains(w, "moved to") }) {
		t.Errorf("no warning says .claude was moved out: %s %q", r, r.res.Warnings)
	}
	if _, err := os.Lstat(s.Project + "/.claude"); err == nil {
		t.Error(".claude was created in the project and left there")
	}
	if entries, _ := os.ReadDir(s.Quarantine); len(entries) == 0 {
		t.Error("nothing reached the quarantine, though commands created .claude")
	}
	if _, err := os.Stat("/usr/local/warden-probe"); err == nil {
		os.Remove("/usr/local/warden-probe")
		t.Error("a file was written in /usr/local")
	}
}

// TestWorkspaceSweepsAProtectedPathWhoseParentIsMissing: a protected
// path whose parent does not exist either (the hooks directory .husky/_
// that core.hooksPath names, in a project without .husky) can be made by a
// command with its parent, and is moved out when the run ends.
func TestWorkspaceSweepsAProtectedPathWhoseParentIsMissing(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	s.Protected = append(s.Protected, s.Project+"/.husky/_/")
	r := runAt(t, s, home, "/bin/bash", "-c", "mkdir -p .husky/_ && echo 'cat ~/.ssh/id_rsa' > .husky/_/pre-commit")
	if r.err != nil {
		t.Fatalf("sandbox failed: %s", r)
	}
	if _, err := os.Lstat(s.Project + "/.husky/_/pre-commit"); err == nil {
		t.Error(".husky/_/pre-commit was created in the project and left there")
	}
	if !slices.ContainsFunc(r.res.Warnings, func(w string) bool { return strings.Contains(w, ".husky/_") && strings.Contains(w, "moved to") }) {
		t.Errorf("no warning says .husky/_ was moved out: %s %q", r, r.res.Warnings)
	}
}

// TestWorkspaceSweepsModulesAddedWherePythonImportsFirst: in a directory a
// Python program on the host imports from first (Spec.ModuleDirs), a
// module the command adds (a file, an extension with any ABI tag, a
// package's __init__, a link named as a module) is moved out after the
// run; what was there before, and files Python does not import, stay.
func TestWorkspaceSweepsModulesAddedWherePythonImportsFirst(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	s.ModuleDirs = []string{s.Project}
	mustWrite(t, s.Project+"/fsmon_git.py", "WATCHED = []\n")
	mustWrite(t, s.Project+"/tools/__init__.py", "")
	if err := os.MkdirAll(s.Project+"/http", 0o755); err != nil {
		t.Fatal(err)
	}
	r := runAt(t, s, home, "/bin/bash", "-c", `echo 'import os' > selectors.py && : > json.cpython-311-x86_64-linux-gnu.so && : > _strptime.pyc &&
echo 'x = 1' >> fsmon_git.py && echo '' >> tools/__init__.py && : > http/__init__.py && ln -s /tmp subprocess &&
echo notes > NOTES.md && echo 'print(1)' > selectors.pyi && mkdir -p email && echo 'data' > email/readme.txt`)
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("sandbox failed: %s", r)
	}
	for _, gone := range []string{"selectors.py", "json.cpython-311-x86_64-linux-gnu.so", "_strptime.pyc", "http/__init__.py", "subprocess"} {
		if _, err := os.Lstat(filepath.Join(s.Project, gone)); err == nil {
			t.Errorf("%s was added where Python imports first and left there: %q", gone, r.res.Warnings)
		}
	}
	for _, kept := range []string{"fsmon_git.py", "tools/__init__.py", "http", "NOTES.md", "selectors.pyi", "email/readme.txt"} {
		if _, err := os.Lstat(filepath.Join(s.Project, kept)); err != nil {
			t.Errorf("%s is gone: %v", kept, err)
		}
	}
	if !slices.ContainsFunc(r.res.Warnings, func(w string) bool { return strings.Contains(w, "selectors.py") && strings.Contains(w, "moved to") }) {
		t.Errorf("no warning says selectors.py was moved out: %q", r.res.Warnings)
	}
}

// TestWorkspaceProfileInAGitWorktree: in a git worktree (or submodule) the
// project's .git is a file, so .git/config and .git/hooks cannot exist.
// Commands run, and a command that puts a directory there in its place,
// with a hook in it, leaves none behind.
func TestWorkspaceProfileInAGitWorktree(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	if err := os.RemoveAll(s.Project + "/.git"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s.Project+"/.git", "gitdir: /elsewhere/.git/worktrees/proj\n")
	if r := runAt(t, s, home, "/bin/bash", "-c", "echo ok > built"); r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("a command in the worktree: %s", r)
	}
	r := runAt(t, s, home, "/bin/bash", "-c", "rm .git && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit && echo '[core]' > .git/config")
	if r.err != nil {
		t.Fatalf("could not run: %v", r.err)
	}
	for _, p := range []string{"/.git/hooks/pre-commit", "/.git/config"} {
		if _, err := os.Lstat(s.Project + p); err == nil {
			t.Errorf("%s was left in the project: %s", p, r)
		}
	}
}

// TestProxiedCommandsAreToldOfTheProxy: under the egress proxy a command
// gets the proxy variables in both cases, and NODE_USE_ENV_PROXY=1 (without
// which Node's http, https and fetch ignore them), whatever the caller had.
func TestProxiedCommandsAreToldOfTheProxy(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	s.Net, s.Egress = sandbox.NetProxy, &answerServer{answer: "proxied"}
	var out, errb bytes.Buffer
	res, err := (&sandbox.Native{}).Run(context.Background(), s, sandbox.Command{
		Args: []string{"/usr/bin/env"}, Dir: s.Project,
		Env:    []string{"PATH=" + systemPath, "HOME=" + home, "NODE_USE_ENV_PROXY=0", "https_proxy=http://elsewhere:8080"},
		Stdout: &out, Stderr: &errb,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("env: exit %d, %v: %s", res.ExitCode, err, errb.String())
	}
	env := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, want := range []string{"HTTP_PROXY=http://" + sandbox.ProxyAddr, "https_proxy=http://" + sandbox.ProxyAddr, "NODE_USE_ENV_PROXY=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the command's environment lacks %s: %q", want, env)
		}
	}
	for _, kv := range env {
		if kv == "NODE_USE_ENV_PROXY=0" || strings.Contains(kv, "elsewhere") {
			t.Errorf("the caller's %s reached the command", kv)
		}
	}
}

// TestNestedRepositoriesKeepTheirGitReadOnly: a writable project holds
// repositories of its own (a vendored clone, one six directories down):
// the command can write their files but not their config or hooks, which
// git on the host runs when an editor or a prompt enters them, nor move
// their git directories away to put others in their place; a protected
// path missing at the start (config.worktree) is swept out after the run.
func TestNestedRepositoriesKeepTheirGitReadOnly(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	s.NestedGit = []string{"config", "config.worktree", "hooks/"}
	nested := []string{"vendor/lib", "a/b/c/d/e/deep"}
	for _, n := range nested {
		for _, d := range []string{n + "/.git/hooks", n + "/.git/objects"} {
			if err := os.MkdirAll(filepath.Join(s.Project, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		mustWrite(t, filepath.Join(s.Project, n, ".git/config"), "[core]\n\tbare = false\n")
	}
	for _, n := range nested {
		r := runAt(t, s, home, "/bin/bash", "-c", `n=`+n+`
echo data > $n/file.txt && echo file ok
touch $n/.git/objects/x && echo objects ok
printf '[core]\n\tfsmonitor = id\n' >> $n/.git/config && echo config WRITTEN
printf '#!/bin/sh\nid\n' > $n/.git/hooks/pre-commit && echo hook WRITTEN
echo x > $n/.git/config.worktree # missing at the start: swept after the run
mv $n/.git $n/.git-old && echo MOVED
true`)
		if r.err != nil || !strings.Contains(r.stdout, "file ok\nobjects ok\n") || strings.Contains(r.stdout, "WRITTEN") || strings.Contains(r.stdout, "MOVED") {
			t.Errorf("%s: %v; want its files and objects written, its config and hooks not, its git directory not moved", n, r)
		}
		if b, _ := os.ReadFile(filepath.Join(s.Project, n, ".git/config")); strings.Contains(string(b), "fsmonitor") {
			t.Errorf("%s: the nested repository's config was changed: %q", n, b)
		}
		for _, f := range []string{".git/hooks/pre-commit", ".git/config.worktree"} {
			if _, err := os.Stat(filepath.Join(s.Project, n, f)); err == nil {
				t.Errorf("%s: %s is there after the run", n, f)
			}
		}
	}
}

// TestSweepNeverFollowsTheCommandsSymlinks: in a project with no .git yet,
// a command makes .git a symlink to a folder of the home that it cannot
// write (which holds a config and hooks), or to a git directory of its own
// elsewhere. The sweep of the protected .git/config and .git/hooks, which
// runs unconfined, moves the symlink out of the project and leaves what it
// leads to exactly as it was.
func TestSweepNeverFollowsTheCommandsSymlinks(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	project := filepath.Join(home, "fresh")
	victim := filepath.Join(home, "victim")
	for _, d := range []string{project, victim + "/hooks"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, victim+"/config", "the user's own\n")
	mustWrite(t, victim+"/hooks/pre-push", "#!/bin/sh\n")
	s.Project = project
	s.Protected = []string{project + "/.git/config", project + "/.git/hooks/"}
	r := runAt(t, s, home, "/bin/ln", "-s", victim, project+"/.git")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("ln -s: %s", r)
	}
	if b, err := os.ReadFile(victim + "/config"); err != nil || string(b) != "the user's own\n" {
		t.Errorf("the sweep changed %s/config, which .git led to: %q, %v", victim, b, err)
	}
	if _, err := os.Stat(victim + "/hooks/pre-push"); err != nil {
		t.Errorf("the sweep moved the hooks .git led to: %v", err)
	}
	if _, err := os.Lstat(project + "/.git"); err == nil {
		t.Errorf("the .git symlink the command made is still in the project (warnings %q)", r.res.Warnings)
	}
}

// TestGitInitInAFreshProjectKeepsItsConfig: git init in a project with no
// .git yet, then a user, a remote and a key that runs a program: the
// repository keeps its inert keys (git works there as the command left
// it), and what would run on the host goes to the quarantine.
func TestGitInitInAFreshProjectKeepsItsConfig(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s, home := workspaceSpec(t)
	project := filepath.Join(home, "fresh")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	s.Project = project
	s.Protected = []string{project + "/.git/config", project + "/.git/hooks/"}
	r := runAt(t, s, home, "/bin/sh", "-c", `git init -q && git config user.name Agent && git remote add origin https://example.com/x.git && git config core.fsmonitor "touch $HOME/pwned"`)
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("git init: %s", r)
	}
	cfg, err := os.ReadFile(project + "/.git/config")
	if err != nil {
		t.Fatalf("the repository lost its config: %v (warnings %q)", err, r.res.Warnings)
	}
	for _, want := range []string{"Agent", "https://example.com/x.git"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf(".git/config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(string(cfg), "fsmonitor") {
		t.Errorf(".git/config still sets fsmonitor:\n%s", cfg)
	}
	if entries, _ := os.ReadDir(s.Quarantine); len(entries) == 0 {
		t.Error("the original config did not reach the quarantine")
	}
}

// TestWorkspaceHasPseudoTerminalsOfItsOwn: script and anything that opens
// a pseudo-terminal work in the workspace profile, on a devpts of the
// sandbox's own: the host's terminals are not there.
func TestWorkspaceHasPseudoTerminalsOfItsOwn(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script (util-linux) is not installed")
	}
	s, home := workspaceSpec(t)
	r := runAt(t, s, home, "/bin/sh", "-c", "script -qec tty /dev/null; ls /dev/pts | tr '\\n' ' '")
	if r.err != nil || r.res.ExitCode != 0 || !strings.Contains(r.stdout, "/dev/pts/0") {
		t.Fatalf("script in the workspace profile: %s", r)
	}
	if got := strings.Fields(r.stdout); !slices.Equal(got[len(got)-1:], []string{"ptmx"}) {
		t.Errorf("the sandbox's /dev/pts holds %q after its terminal closed; want only its ptmx", r.stdout)
	}
}

// TestMaskInAWritableCacheStaysPut: a secret masked inside a writable tool
// cache (~/.cache/huggingface/token) cannot be moved out from under its
// mask by renaming its folder, or the cache itself; every later sandbox
// masks it by name.
func TestMaskInAWritableCacheStaysPut(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	cache := filepath.Join(home, ".cache")
	if err := os.MkdirAll(filepath.Join(cache, "huggingface", "hub"), 0o755); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(cache, "huggingface", "token")
	mustWrite(t, token, "CACHE-SECRET\n")
	s.ReadWrite = append(s.ReadWrite, cache)
	s.Hidden = append(s.Hidden, token)
	s.UserHome = home
	r := runAt(t, s, home, "/bin/sh", "-c", `cd "$HOME/.cache"
cat huggingface/token; echo "read: $?"
mv huggingface hf2 && echo "moved the folder"
mv "$HOME/.cache" "$HOME/c2" && echo "moved the cache"
touch huggingface/hub/x && echo "wrote beside it"`)
	if r.err != nil {
		t.Fatalf("could not run: %v", r.err)
	}
	if strings.Contains(r.stdout, "CACHE-SECRET") {
		t.Errorf("the masked token was read: %s", r.stdout)
	}
	for _, bad := range []string{"moved the folder", "moved the cache"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("the command %s holding a masked secret: %s", bad, r)
		}
	}
	if !strings.Contains(r.stdout, "wrote beside it") {
		t.Errorf("the rest of the cache is no longer writable: %s", r)
	}
	if b, err := os.ReadFile(token); err != nil || string(b) != "CACHE-SECRET\n" {
		t.Errorf("the token is no longer at its name on the host: %q, %v", b, err)
	}
}

// TestEmptyDirsInRemovesOnlyEmptyDirectories: Spec.EmptyDirsIn lets the
// command remove an empty directory there (git worktree remove ../feature
// removes the worktree's emptied directory last), and nothing else: no
// file removed, no directory made, none moved. Without it the directory
// stays. Outside /tmp, which the sandbox replaces with its own.
func TestEmptyDirsInRemovesOnlyEmptyDirectories(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	userHome, err := os.UserHomeDir()
	if err != nil || userHome == "" || userHome == "/" || strings.HasPrefix(userHome, "/tmp") {
		t.Skipf("no home outside /tmp to make the directories in (%q, %v)", userHome, err)
	}
	for _, grant := range []bool{true, false} {
		dir, err := os.MkdirTemp(userHome, "warden-emptydirs-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		for _, d := range []string{"wt", "keep"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, d, "f"), "x\n")
		}
		s, home := workspaceSpec(t)
		s.ReadWrite = append(s.ReadWrite, filepath.Join(dir, "wt"))
		if grant {
			s.EmptyDirsIn = []string{dir}
		}
		r := runAt(t, s, home, "/bin/sh", "-c", `cd "`+dir+`"
rm wt/f && rmdir wt && echo "removed wt"
rm keep/f && echo "removed a file"
mkdir new && echo "made a directory"
mv keep moved && echo "moved a directory"`)
		if r.err != nil {
			t.Fatalf("could not run: %v", r.err)
		}
		if _, err := os.Stat(filepath.Join(dir, "wt")); grant != os.IsNotExist(err) {
			t.Errorf("grant %v: the emptied directory: %v (%s)", grant, err, r)
		}
		for _, bad := range []string{"removed a file", "made a directory", "moved a directory"} {
			if strings.Contains(r.stdout, bad) {
				t.Errorf("grant %v: the command %s: %s", grant, bad, r)
			}
		}
	}
}

// TestCoreDumpsCanBeTurnedOn: a command starts with no core dumps, and may
// raise the limit up to the host's own hard limit where the kernel writes
// a dump as a file in the command's directory; where it pipes dumps to a
// helper on the host (or writes them to a path of its own), it may not.
func TestCoreDumpsCanBeTurnedOn(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	r := runAt(t, s, home, "bash", "-c", "ulimit -Sc; ulimit -Hc")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("ulimit in the sandbox: %v", r)
	}
	want := "0"
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if len(pattern) > 0 && pattern[0] != '|' && !bytes.ContainsRune(pattern, '/') {
		out, err := exec.Command("bash", "-c", "ulimit -Hc").Output()
		if err != nil {
			t.Fatal(err)
		}
		want = strings.TrimSpace(string(out))
	}
	if got := strings.Fields(r.stdout); len(got) != 2 || got[0] != "0" || got[1] != want {
		t.Errorf("core limits in the sandbox (soft, hard) = %q; want 0 and %s (core_pattern %q)", got, want, strings.TrimSpace(string(pattern)))
	}
}

// TestSessionTmpSymlinksAreNotFollowed: the session's /tmp is a directory
// on the host that the agent's commands write. A project under /tmp is
// carried into it at its own path, so warden makes that path there before
// mounting: a symlink an earlier command left in its place (to a folder of
// the home) must not make warden create the path's directories where it
// leads on the host, and the command still runs with its project.
func TestSessionTmpSymlinksAreNotFollowed(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	if !strings.HasPrefix(s.Project, "/tmp/") {
		t.Skipf("the project %s is not under /tmp (TMPDIR is set elsewhere): nothing is carried", s.Project)
	}
	// Outside /tmp: inside the sandbox, a symlink to a path under /tmp
	// leads into the session's /tmp itself.
	victim, err := os.MkdirTemp("/var/tmp", "warden-victim-")
	if err != nil {
		t.Skipf("no directory outside /tmp to stand for the user's home: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(victim) })
	// The first component of the project's path below /tmp, left by the
	// agent as a symlink into the home.
	first := strings.SplitN(strings.TrimPrefix(s.Project, "/tmp/"), "/", 2)[0]
	if err := os.Symlink(victim, filepath.Join(s.Tmp, first)); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, s.Project+"/README", "the project\n")
	r := runAt(t, s, home, "/bin/cat", "README")
	if r.err != nil || r.res.ExitCode != 0 || r.stdout != "the project\n" {
		t.Errorf("the command did not run in its project: %s", r)
	}
	if entries, err := os.ReadDir(victim); err != nil || len(entries) != 0 {
		t.Errorf("warden made paths where the agent's symlink led (%s): %v, %v", victim, entries, err)
	}
	if st, err := os.Lstat(filepath.Join(s.Tmp, first)); err != nil || !st.IsDir() {
		t.Errorf("the mount point's place in the session's /tmp: %v, %v", st, err)
	}
}

// TestHiddenVarKeepsThePackageDatabases: a policy that denies /var (the
// default's) hides it from a command that reads the whole filesystem, but
// for the package databases apt and dpkg read, and /var/tmp is the
// command's own /tmp.
func TestHiddenVarKeepsThePackageDatabases(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if _, err := os.Stat("/var/lib/dpkg/status"); err != nil {
		t.Skipf("no dpkg database here: %v", err)
	}
	s, home := workspaceSpec(t)
	s.Hidden = append(s.Hidden, "/var")
	r := runAt(t, s, home, "/bin/bash", "-c",
		"head -c 8 /var/lib/dpkg/status; echo; ls /var/log >/dev/null 2>&1 && echo log-listed; f=$(mktemp -p /var/tmp) && echo mine > $f && cat /tmp/$(basename $f)")
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("the command failed: %s", r)
	}
	if !strings.HasPrefix(r.stdout, "Package:") {
		t.Errorf("the dpkg database is not readable: %q", r.stdout)
	}
	if strings.Contains(r.stdout, "log-listed") {
		t.Errorf("the rest of /var is visible: %q", r.stdout)
	}
	if !strings.Contains(r.stdout, "mine") {
		t.Errorf("a file made in /var/tmp is not in the command's /tmp: %q", r.stdout)
	}
}

// TestRedactedFileReadsAsItsCopy: a hidden file with a redacted copy reads
// as the copy (its settings, ~/.npmrc's registry) in a one-shot run and in
// a world, and cannot be written; a hidden file without one reads as
// empty, as ever.
func TestRedactedFileReadsAsItsCopy(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	s, home := workspaceSpec(t)
	npmrc, netrc := home+"/.npmrc", home+"/.netrc"
	mustWrite(t, npmrc, "registry=https://npm.example/\n//npm.example/:_authToken=NPM-SECRET\n")
	mustWrite(t, netrc, "machine x password NETRC-SECRET\n")
	s.Hidden = append(s.Hidden, npmrc, netrc)
	s.Redacted = map[string][]byte{npmrc: []byte("registry=https://npm.example/\n")}
	s.UserHome = home // under /tmp: carried into the command's /tmp
	r := runAt(t, s, home, "/bin/bash", "-c", "cat ~/.npmrc; cat ~/.netrc; echo x >> ~/.npmrc && echo WROTE")
	if r.err != nil || r.stdout != "registry=https://npm.example/\n" || strings.Contains(r.stdout+r.stderr, "SECRET") {
		t.Fatalf("one-shot: %v; want the copy only, and the write refused", r)
	}
	m := testManager(t.TempDir())
	ctx := context.Background()
	if _, err := m.Start(ctx, "redacted", "workspace", s); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _, _ = m.Stop(context.Background(), "redacted") })
	var out bytes.Buffer
	res, err := m.Exec(ctx, "redacted", sandbox.Command{Args: []string{"/bin/cat", npmrc}, Env: []string{"PATH=" + systemPath}, Stdout: &out, Stderr: &out}, sandbox.Limits{})
	if err != nil || res.ExitCode != 0 || out.String() != "registry=https://npm.example/\n" {
		t.Fatalf("in a world: %+v %q %v; want the copy", res, out.String(), err)
	}
	if b, _ := os.ReadFile(npmrc); !strings.Contains(string(b), "NPM-SECRET") {
		t.Fatalf("the host's file changed: %q", b)
	}
}

// TestServiceCredentialsInEtcAreMasked: a credential a service keeps in
// /etc (a WireGuard key, readable by root alone) is masked in the
// workspace profile, where a root caller's command runs as root and owns
// it. It needs root to plant one, and leaves a host's own config alone.
func TestServiceCredentialsInEtcAreMasked(t *testing.T) {
	requireMode(t, sandbox.ModeStandard)
	if os.Geteuid() != 0 {
		t.Skip("planting a credential in /etc needs root (CI runs as root)")
	}
	const dir = "/etc/wireguard"
	if _, err := os.Lstat(dir); err == nil {
		t.Skipf("%s exists on this host; the test plants its own and leaves a real one alone", dir)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(dir+"/wg0.conf", []byte("[Interface]\nPrivateKey = WORKSPACE-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, home := workspaceSpec(t)
	for _, script := range []string{"cat " + dir + "/wg0.conf", "grep -r WORKSPACE-SECRET /etc 2>/dev/null; ls -la " + dir} {
		r := runAt(t, s, home, "/bin/bash", "-c", script)
		if r.err != nil {
			t.Fatalf("could not run %q: %v", script, r.err)
		}
		if strings.Contains(r.stdout+r.stderr, "WORKSPACE-SECRET") || strings.Contains(r.stdout, "wg0.conf") {
			t.Errorf("%q reached the key: %s", script, r)
		}
	}
}
