package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/sandbox"
)

// TestProtectedPathsHoldInEverySubmoduleAndWorktree: the .git/ entries of
// sandbox.protected_paths hold in each git directory kept inside the
// repository's own, where git on the host reads a config and runs hooks
// too: submodules (nested, and with a slash in their name) and linked
// worktrees. Other entries are not repeated.
func TestProtectedPathsHoldInEverySubmoduleAndWorktree(t *testing.T) {
	project := t.TempDir()
	for _, gitDir := range []string{".git", ".git/modules/lib", ".git/modules/lib/modules/deep", ".git/modules/vendor/tool", ".git/worktrees/topic"} {
		if err := os.MkdirAll(filepath.Join(project, gitDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, gitDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := protectedInGitDirs(project, []string{".git/config", ".git/hooks/", ".claude/"})
	for _, want := range []string{
		".git/config", ".git/hooks/", ".claude/",
		".git/modules/lib/config", ".git/modules/lib/hooks/",
		".git/modules/lib/modules/deep/config", ".git/modules/lib/modules/deep/hooks/",
		".git/modules/vendor/tool/config", ".git/modules/vendor/tool/hooks/",
		".git/worktrees/topic/config", ".git/worktrees/topic/hooks/",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not protected; got %v", want, got)
		}
	}
	for _, p := range got {
		if filepath.Base(filepath.Clean(p)) == ".claude" && p != ".claude/" {
			t.Errorf("%s: only .git/ entries are repeated in the other git directories", p)
		}
	}
	if n := len(got); n != 3+4*2 {
		t.Errorf("got %d protected paths, want %d: %v", n, 3+4*2, got)
	}
}

// TestGitConfigProtectsHooksPathAndIncludes: the directory core.hooksPath
// names (in the project's .git/config or the user's own configuration,
// relative to the work tree) and the files the project's .git/config
// includes are protected when they lie in the project, as git itself reads
// them; paths outside the project are not.
func TestGitConfigProtectsHooksPathAndIncludes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: git configuration cannot be read")
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	cases := []struct {
		name, repoConfig, userConfig string
		// files are written into the project first.
		files map[string]string
		want  []string
	}{
		// The files an included file includes, and the hooks directory
		// it names, to git's depth (red-team-17: a command appended a
		// core.fsmonitor to the second file of a chain).
		{name: "include of an include", repoConfig: "[include]\n\tpath = ../tools/git.conf\n",
			files: map[string]string{"tools/git.conf": "[include]\n\tpath = local.conf\n", "tools/local.conf": "[core]\n\thooksPath = .githooks\n[includeIf \"gitdir:/\"]\n\tpath = ../etc/more.conf\n", "etc/more.conf": "[include]\n\tpath = ../tools/git.conf\n"},
			want:  []string{"tools/git.conf", "tools/local.conf", ".githooks/", "etc/more.conf"}},
		{name: "husky", repoConfig: "[core]\n\thooksPath = .husky/_\n", want: []string{".husky/_/"}},
		{name: "quoted and cased", repoConfig: "[Core]\n\tHooksPath = \".githooks\" ; a comment\n", want: []string{".githooks/"}},
		{name: "the user's relative hooksPath", userConfig: "[core]\n\thookspath = tools/hooks\n", want: []string{"tools/hooks/"}},
		{name: "absolute outside the project", repoConfig: "[core]\n\thooksPath = /usr/share/hooks\n"},
		{name: "include", repoConfig: "[include]\n\tpath = ../shared.gitconfig\n[includeIf \"onbranch:main\"]\n\tpath = ../ci/git.conf\n", want: []string{"shared.gitconfig", "ci/git.conf"}},
		{name: "include outside", repoConfig: "[include]\n\tpath = ~/.gitconfig.local\n"},
		{name: "none", repoConfig: "[core]\n\tbare = false\n"},
		// The programs git runs by itself, named by a path in the
		// project (red-team-19: a Write of the fsmonitor script, a
		// textconv script rewritten by a command); a bare name is found
		// on the PATH, an alias runs only when named.
		{name: "programs", repoConfig: "[core]\n\tfsmonitor = sh tools/fsmonitor.sh\n\tpager = less -R\n[diff \"bin\"]\n\ttextconv = ./tools/textconv.sh --x\n[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n[alias]\n\tr = !./scripts/release.sh\n",
			userConfig: "[core]\n\teditor = vim\n[credential]\n\thelper = /usr/lib/git-core/git-credential-store\n", want: []string{"tools/"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			project := filepath.Join(home, "src", "p")
			if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n"+c.repoConfig), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.userConfig != "" {
				if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(c.userConfig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(mkdirAll(t, filepath.Dir(filepath.Join(project, name))), filepath.Base(name)), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := gitConfigProtected(context.Background(), project, home)
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestLinkedWorktreeKeepsTheRepositorysProtectedPaths: in a linked
// worktree, the hooks directory the repository's configuration names is
// the worktree's own (hooks run at the top of the work tree), and when its
// common git directory is writable, that directory's config, hooks, the
// worktrees' own config files and the files its config includes stay
// read-only.
func TestLinkedWorktreeKeepsTheRepositorysProtectedPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: git configuration cannot be read")
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	home := t.TempDir()
	project := filepath.Join(home, "src", "p")
	wt := filepath.Join(project, ".claude", "worktrees", "fix")
	run := exec.Command("sh", "-c", `git init -q && git config core.hooksPath .husky/_ && git config include.path extra.cfg &&
		git -c user.name=t -c user.email=t@e commit -q --allow-empty -m x && git worktree add -q .claude/worktrees/fix -b fix`)
	run.Dir, run.Env = mkdirAll(t, project), append(os.Environ(), "HOME="+home)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := gitConfigProtected(context.Background(), wt, home); !slices.Contains(got, ".husky/_/") {
		t.Errorf("in the linked worktree: %q, want its .husky/_/ among them", got)
	}
	common := filepath.Join(project, ".git")
	got := commonProtected(wt, common, config.Default().Sandbox.ProtectedPaths, home)
	for _, want := range []string{"config", "config.worktree", "commondir", "hooks/", "worktrees/fix/config.worktree", "worktrees/fix/commondir", "worktrees/fix/hooks/", "extra.cfg"} {
		abs := filepath.Join(common, want)
		if strings.HasSuffix(want, "/") {
			abs += "/"
		}
		if !slices.Contains(got, abs) {
			t.Errorf("the common directory's protected paths %q lack %s", got, abs)
		}
	}
}

func mkdirAll(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMakeSecretDirs: a secret path in the home written with a trailing
// slash is made (mode 0700) when missing, so that the sandbox masks it from
// the start; paths without the slash, outside the home, or the home itself
// are left alone.
func TestMakeSecretDirs(t *testing.T) {
	home := t.TempDir()
	makeSecretDirs([]string{"~/.cache/git/credential/", "~/.git-credential-cache", "/abs/dir/", "~/", "~/../escape/"}, home)
	st, err := os.Stat(filepath.Join(home, ".cache", "git", "credential"))
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("~/.cache/git/credential/ was not made as a 0700 directory: %v %v", st, err)
	}
	for _, p := range []string{filepath.Join(home, ".git-credential-cache"), filepath.Join(filepath.Dir(home), "escape")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was made", p)
		}
	}
}

// BenchmarkGitConfigProtected measures what finding the hooks directory and
// includes costs each workspace command in a repository whose config names
// none (the common case: no git is run) and in one that sets core.hooksPath
// (git config reads the file): go test -bench GitConfigProtected -run ^$ ./app.
func BenchmarkGitConfigProtected(b *testing.B) {
	for _, c := range []struct{ name, config string }{
		{"plain", "[core]\n\tbare = false\n"},
		{"hooksPath", "[core]\n\thooksPath = .husky/_\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			home := b.TempDir()
			project := filepath.Join(home, "p")
			if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".git", "config"), []byte(c.config), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_ = gitConfigProtected(context.Background(), project, home)
			}
		})
	}
}

// TestMakeCache: a missing cache is made when it is one of createdCaches,
// or when its parent is there and is not the home (cargo's registry once
// ~/.cargo is); not otherwise, and never outside the home.
func TestMakeCache(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		rel  string
		made bool
	}{
		{"go/pkg", true},
		{".npm", true},
		{".local/share/pnpm/store", true},
		{".cargo/registry", false}, // its parent, ~/.cargo, is not there
		{".cargo", false},
		{".m2/repository", false},
		{".yarn", false},
		{"../outside", false},
	} {
		if c.rel == ".cargo" {
			_ = os.MkdirAll(filepath.Join(home, ".cargo"), 0o755)
			c.rel, c.made = ".cargo/registry", true // now its parent is there
		}
		p := filepath.Join(home, c.rel)
		makeCache(p, home)
		if _, err := os.Stat(p); (err == nil) != c.made {
			t.Errorf("makeCache(~/%s): made %v, want %v", c.rel, err == nil, c.made)
		}
	}
}

// TestCacheHoldingAProgramDirIsNotWritable: a cache that is, or holds, a
// directory the user's shell runs programs from is not one a command may
// write.
func TestCacheHoldingAProgramDirIsNotWritable(t *testing.T) {
	home := t.TempDir()
	pnpmHome := filepath.Join(home, ".local", "share", "pnpm")
	for _, d := range []string{filepath.Join(pnpmHome, "store"), filepath.Join(home, ".cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	programs := programDirs(home, "/usr/bin:"+pnpmHome)
	if !holdsProgramDir(pnpmHome, programs) {
		t.Errorf("PNPM_HOME on PATH: the cache %s holds it, want not writable", pnpmHome)
	}
	for _, c := range []string{filepath.Join(pnpmHome, "store"), filepath.Join(home, ".cache")} {
		if holdsProgramDir(c, programs) {
			t.Errorf("%s holds no program directory, but holdsProgramDir says it does (%q)", c, programs)
		}
	}
}

// TestPnpmStoreEnv: a line that runs pnpm is told the writable store;
// other lines, and a caller that names one, are left alone.
func TestPnpmStoreEnv(t *testing.T) {
	spec := sandbox.Spec{ReadWrite: []string{"/h/.cache", "/h/.local/share/pnpm/store"}}
	want := "npm_config_store_dir=/h/.local/share/pnpm/store"
	for _, c := range []struct {
		args []string
		env  []string
		set  bool
	}{
		{[]string{"bash", "-c", "npx --yes pnpm@9.12.0 add ms"}, nil, true},
		{[]string{"pnpm", "install"}, []string{"PATH=/bin"}, true},
		{[]string{"bash", "-c", "npm install && node x.js"}, nil, false},
		{[]string{"bash", "-c", "cat pnpm-lock.yaml"}, nil, false},
		{[]string{"pnpm", "install"}, []string{"NPM_CONFIG_STORE_DIR=/mine"}, false},
	} {
		got := pnpmStoreEnv(c.env, c.args, spec)
		if slices.Contains(got, want) != c.set {
			t.Errorf("pnpmStoreEnv(%q, %q) = %q, want the store named: %v", c.env, c.args, got, c.set)
		}
	}
	if got := pnpmStoreEnv(nil, []string{"pnpm", "i"}, sandbox.Spec{}); len(got) != 0 {
		t.Errorf("with no writable store: %q", got)
	}
}

// TestGitNamedInACacheStaysReadOnly: what git's configuration names in a
// writable tool cache (a pre-commit environment's script, a Poetry
// environment's activate script it sources, a file it includes, a tool in
// the Go module cache) stays read-only: git on the host runs it at the
// user's next git status (red-team-27). The user's configuration counts
// outside a repository too; what is not writable is left alone.
func TestGitNamedInACacheStaysReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: git configuration cannot be read")
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	home := t.TempDir()
	cache, mod := filepath.Join(home, ".cache"), filepath.Join(home, "go", "pkg", "mod")
	write := fileWriter(t, home)
	write(".cache/pre-commit/repoab12/fsmon.sh", "true\n")
	write(".cache/pypoetry/virtualenvs/app-py3.11/bin/activate", "PATH=x\n")
	write(".cache/teamcfg/project.gitconfig", "[pull]\n\trebase = true\n")
	write(".cache/top.sh", "true\n")
	write("go/pkg/mod/example.com/tool@v1.2.0/tool.sh", "true\n")
	write("bin/diffpdf", "true\n")
	write(".cache/pypoetry/virtualenvs/web-Ab12-py3.11/bin/fsmon.py", "pass\n")
	write(".cache/hooks/run.sh", ". \"$HOME/.cache/shared/common.sh\"\n")
	write(".cache/shared/common.sh", "true\n")
	write(".cache/pre-commit/repoK7/hooks/fsmon.py", "import os, sys\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\nimport repo_common\n")
	write(".cache/pre-commit/repoK7/repo_common.py", "X = 1\n")
	write("src/p/.git/config", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = . ~/.cache/pypoetry/virtualenvs/app-py3.11/bin/activate && sh ~/.cache/pre-commit/repoab12/fsmon.sh\n"+
		"[include]\n\tpath = ~/.cache/teamcfg/project.gitconfig\n[diff \"pdf\"]\n\ttextconv = ~/bin/diffpdf\n"+
		"[diff \"py\"]\n\ttextconv = python3 ~/.cache/pypoetry/virtualenvs/web-*-py3.11/bin/fsmon.py\n[diff \"sh\"]\n\ttextconv = cd ~/.cache/hooks && sh run.sh\n[diff \"txt\"]\n\ttextconv = python3 ~/.cache/pre-commit/repoK7/hooks/fsmon.py\n")
	write(".gitconfig", "[diff \"md\"]\n\ttextconv = sh ~/go/pkg/mod/example.com/tool@v1.2.0/tool.sh\n[core]\n\tpager = sh ~/.cache/top.sh\n")
	writable := []string{cache, mod}

	named, _ := gitConfigNamed(context.Background(), filepath.Join(home, "src", "p"), home)
	got := namedWritable(filepath.Join(home, "src", "p"), named, writable)
	want := []string{
		cache + "/pypoetry/virtualenvs/app-py3.11/bin/",
		cache + "/pypoetry/virtualenvs/app-py3.11/bin/activate",
		cache + "/pre-commit/repoab12/",
		cache + "/pre-commit/repoab12/fsmon.sh",
		cache + "/teamcfg/project.gitconfig",
		mod + "/example.com/tool@v1.2.0/",
		mod + "/example.com/tool@v1.2.0/tool.sh",
		cache + "/top.sh",
		// red-team-28: a glob, a cd into the cache, a sourced $HOME path
		cache + "/pypoetry/virtualenvs/web-Ab12-py3.11/bin/fsmon.py",
		cache + "/hooks/run.sh",
		cache + "/shared/common.sh",
		cache + "/pre-commit/repoK7/repo_common.py", // imported from the directory above
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("namedWritable = %q; want %s among them", got, w)
		}
	}
	for _, bad := range []string{cache + "/", home + "/bin/", home + "/bin/diffpdf"} {
		if slices.Contains(got, bad) {
			t.Errorf("namedWritable = %q; %s is a cache itself or not writable", got, bad)
		}
	}

	// Outside a repository, the user's configuration still names its
	// programs: git runs them in every repository the user enters.
	plain := filepath.Join(home, "scratch")
	mkdirAll(t, plain)
	named, _ = gitConfigNamed(context.Background(), plain, home)
	if got := namedWritable(plain, named, writable); !slices.Contains(got, mod+"/example.com/tool@v1.2.0/tool.sh") || !slices.Contains(got, cache+"/top.sh") {
		t.Errorf("outside a repository: %q; want the user's configuration's programs", got)
	}
}
