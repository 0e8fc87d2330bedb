package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// TestRunsWorkTreeCode: a program git runs by itself runs code of the work
// tree when it is a program of the tree, a shell, an interpreter, a task
// runner or a hook manager (run from the top, they load code from there:
// red-team-30), when its value sets the environment, or names a path of
// the tree, or holds a word only known when it runs; an installed tool
// given plain words does not, and neither does git's built-in monitor.
func TestRunsWorkTreeCode(t *testing.T) {
	top := t.TempDir()
	for _, name := range []string{"view.cfg", "tool.py"} {
		if err := os.WriteFile(filepath.Join(top, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		key, value string
		runs       bool
	}{
		// red-team-30's shapes
		{"core.fsmonitor", "awk -f fsmon.awk", true},
		{"diff.csv.textconv", "sed -f csvview.sed", true},
		{"core.fsmonitor", "tclsh tools/fsmon.tcl", true},
		{"core.fsmonitor", "make -s -f Makefile fsmonitor-query", true},
		{"core.fsmonitor", "npm run --silent fsmonitor --", true},
		{"core.fsmonitor", `sh "$(git rev-parse --show-toplevel)/fsmon.sh"`, true},
		{"core.fsmonitor", "BASH_ENV=.fsmonrc bash fsmon.sh", true},
		{"core.fsmonitor", "NODE_OPTIONS=--require=./fsmon-preload.js node fsmon.js", true},
		{"core.fsmonitor", "PYTHONPATH=. python3 tools/fsmon.py", true},
		{"core.fsmonitor", "python3 -c 'import sys, fsmonhook'", true},
		{"core.fsmonitor", "PATH=./bin:$PATH fsmon-hook", true},
		{"core.fsmonitor", "perl fsmon.pl", true},
		{"core.fsmonitor", "node --env-file=.env.fsmon fsmon.js", true},
		{"core.fsmonitor", "tools/fsmonitor", true},
		{"core.fsmonitor", "./fsmon", true},
		{"core.fsmonitor", "exec nice -n 5 python3 /opt/fsmon/fsmon.py", true},
		{"core.fsmonitor", "env FOO=1 watchman-hook", true},
		{"core.fsmonitor", "pre-commit run fsmon", true},
		{"diff.x.textconv", "viewer --config=view.cfg", true},
		{"diff.x.textconv", "viewer ./view.cfg", true},
		{"diff.x.textconv", "viewer " + filepath.Join(top, "view.cfg"), true},
		{"diff.x.textconv", "less $CFG", false},  // the user's environment
		{"diff.x.textconv", "viewer $CFG", true}, // a program warden does not know
		{"core.pager", "less < $(cat view.cfg)", true},
		{"core.pager", "less < $(cat x)", false}, // no x at the top
		{"core.pager", "less $GIT_WORK_TREE/x", true},
		// installed tools given plain words
		{"filter.lfs.process", "git-lfs filter-process", false},
		{"filter.lfs.clean", "git-lfs clean -- %f", false},
		{"diff.bin.textconv", "hexdump -C", false},
		{"diff.pdf.textconv", "/usr/bin/pdftotext -layout - -", false},
		{"core.pager", "less -FRX", false},
		{"core.pager", "delta --dark", false},
		{"credential.helper", "!gh auth git-credential", false},
		{"credential.helper", "store --file ~/.git-credentials", false},
		{"core.sshcommand", "ssh -i ~/.ssh/id_work", false},
		{"gpg.program", "gpg2", false},
		{"core.editor", "code --wait", false},
		{"core.fsmonitor", "true", false},
		{"core.fsmonitor", "false", false},
		{"mergetool.nvimdiff.cmd", `nvim -d "$LOCAL" "$REMOTE" "$MERGED" -c 'wincmd J'`, false},
		{"diff.x.textconv", "$HOME/bin/delta", false},
		{"diff.x.textconv", "$HOME/bin/viewer", true},
		{"diff.x.textconv", "$HOMEDIR/bin/viewer", true},
		{"credential.helper", "!aws codecommit credential-helper $@", false},
		{"credential.helper", `!f() { echo "username=${GIT_USER_NAME}"; echo "password=$(cat ~/.token)"; }; f`, false},
		{"credential.helper", `!f() { echo "password=$(cat .token)"; }; f`, false}, // no .token at the top
		{"credential.helper", `!f() { echo "password=$(cat view.cfg)"; }; f`, true},
		{"diff.x.textconv", "$PWD/tools/conv", true},
		{"diff.x.textconv", "viewer --plugin=$PWD/p.so", true},
		{"diff.x.textconv", "$(which viewer)", true},
		{"diff.x.textconv", "viewer $(echo x) ${X:-view.cfg}", true},
		{"core.fsmonitor", "$GIT_DIR/fsmon", true},
		{"diff.x.textconv", "cat view.txt", false}, // no such file at the top
		// red-team-31: wrappers, and programs that load code from where
		// git runs them or from the file they are given
		{"core.fsmonitor", "prlimit --nofile=4096 make -s fsmonitor-query", true},
		{"core.fsmonitor", "setpriv --no-new-privs python3 -m fsmonhook", true},
		{"core.fsmonitor", "pydoc3 fsmonhook", true},
		{"core.fsmonitor", "ipython --quick -c 'import fsmonhook'", true},
		{"core.fsmonitor", "flask routes", true},
		{"core.fsmonitor", `sqlite3 :memory: ".read fsmon.sql"`, true},
		{"core.fsmonitor", `jq -n 'import "fsmon" as f {search: "."}; f::q'`, true},
		{"core.fsmonitor", "run-parts --exit-on-error fsmon.d", true},
		{"diff.man.textconv", "nroff -man", true},
		{"diff.rst.textconv", "rst2pseudoxml.py", true},
		{"core.fsmonitor", ".git/hooks/fsmonitor-watchman", false},
		{"core.fsmonitor", `vim -es -N -u NONE -i NONE -c "source fsmon.vim" -c "qa!"`, true},
		{"core.editor", "emacs --eval '(load-file \"x.el\")'", true},
		{"core.editor", "vim -u NONE", false},
		{"core.editor", "nvim -f", false},
		{"mergetool.x.cmd", `nvim -d "$LOCAL" "$MERGED" -c "lua require('x')"`, true},
		{"mergetool.x.cmd", `vim -d "$LOCAL" "$MERGED" +'so x'`, true},
		{"filter.nbstripout.clean", `"/usr/bin/python3" -m nbstripout`, false},
		{"diff.ipynb.textconv", "python3 -m nbstripout -t", false},
		{"core.fsmonitor", "python3 -m view", true}, // a module warden does not know
		{"core.fsmonitor", "python3 -m tool", true}, // a module of the top
		{"core.fsmonitor", "python3 -c 'import x' -m nbstripout", true},
		{"core.fsmonitor", "python3 fsmon.py -m nbstripout", true},
		// a module that runs or loads what it is given, from the top
		{"core.fsmonitor", "python3 -m pytest -q", true},
		{"core.fsmonitor", "python3 -m runpy fsmonhook", true},
		{"diff.ipynb.textconv", "python3 -m nbstripout -t view.cfg", true},
		// wrappers warden knows: judged as the command they run
		{"credential.helper", "!op plugin run -- gh auth git-credential", false},
		{"core.fsmonitor", "op run --env-file=x -- python3 fsmon.py", true},
		{"core.fsmonitor", "op run python3 fsmon.py", true},
		{"diff.sops.textconv", "sops -d", false},
		{"core.fsmonitor", "sops exec-env secrets.env 'sh x.sh'", true},
		{"credential.helper", "", false},
		{"credential.helper", "cache --timeout=3600", false},
		{"credential.https://example.com.helper", "/usr/local/bin/git-credential-manager", false},
	} {
		why := runsWorkTreeCode(c.key, c.value, top)
		if (why != "") != c.runs {
			t.Errorf("runsWorkTreeCode(%s = %s) = %q; want runs code of the work tree: %v", c.key, c.value, why, c.runs)
		}
	}
}

// TestWorkTreeGitRunsCodeOfIsReadOnly: where the project's git
// configuration (or the user's) has git run code of the work tree by
// itself, the workspace sandbox keeps the project read-only as a whole and
// says why with every run; a program installed elsewhere leaves it
// writable.
func TestWorkTreeGitRunsCodeOfIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: git configuration cannot be read")
	}
	a := openTestApp(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	project := mkdirAll(t, filepath.Join(home, "src", "p"))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = project
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("config", "filter.lfs.process", "git-lfs filter-process")
	s, err := a.sandboxSpec("workspace", project, ExecOverride{}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.ProjectWritable || len(s.Notes) != 0 {
		t.Errorf("with git-lfs as a filter the project is writable %v, notes %q; want writable, none", s.ProjectWritable, s.Notes)
	}
	git("config", "core.fsmonitor", "python3 fsmon.py")
	if s, err = a.sandboxSpec("workspace", project, ExecOverride{}, &warden.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	if s.ProjectWritable || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "core.fsmonitor = python3 fsmon.py") {
		t.Errorf("with a Python monitor at the top the project is writable %v, notes %q; want read-only, said why", s.ProjectWritable, s.Notes)
	}
	// The user's own configuration counts in every repository.
	git("config", "--unset", "core.fsmonitor")
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[diff \"md\"]\n\ttextconv = sh tools/mdview.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = a.sandboxSpec("workspace", project, ExecOverride{}, &warden.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	if s.ProjectWritable {
		t.Errorf("with the user's textconv running sh from the top the project is writable")
	}
	// A configuration naming programs that git cannot read (here: no git
	// to read it with) may name any: the project is read-only.
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[diff \"md\"]\n\ttextconv = hexdump -C\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if s, err = a.sandboxSpec("workspace", project, ExecOverride{}, &warden.Request{}, nil); err != nil {
		t.Fatal(err)
	}
	if s.ProjectWritable || len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "could not be read") {
		t.Errorf("with a configuration git could not read, the project is writable %v, notes %q", s.ProjectWritable, s.Notes)
	}
}
