package app

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden/internal/pyimport"
	"github.com/agentwarden/warden/shellguard/walk"
)

// runsWorkTreeCode says why a program git runs by itself (the value of one of
// gitNamingKeys but core.hooksPath and the includes) may run code of the
// work tree at top, or "" when it does not. What such a program loads
// cannot be listed from its text: programs load code, modules, settings
// and plugins from the directory git runs them in and from what they name,
// in ways each adds to (red-team-30: awk -f, make, npm run, perl's use lib,
// BASH_ENV, NODE_OPTIONS, PYTHONPATH=., a glob of sourced files, a settings
// file made later; red-team-31: wrappers such as prlimit or setpriv before
// them, pydoc, ipython, flask, sqlite3's .read, vim's source, jq's import,
// a linter's settings file, run-parts, and textconv programs whose input,
// the agent's own file, includes others: nroff's .so, docutils' include).
// Such a work tree is kept read-only as a whole.
//
// So every program of the value must be one known to read nothing of the
// work tree as code (sealedProgram: git-lfs, credential helpers, ssh and
// gpg, pagers, editors, byte dumps), named by its path outside the work
// tree or on the PATH, or a function the value itself defines; and no word
// may set the environment, name a path of the work tree (a relative path,
// an entry of its top, $PWD or $GIT_DIR), or hold what only the run knows
// but the user's environment or a command's output (credential helpers:
// "!f() { echo password=$(cat ~/.token); }; f", "!aws codecommit
// credential-helper $@"), the commands judged as the value's own. A program
// in the git directory's hooks (git's fsmonitor-watchman sample), which the
// sandbox keeps read-only, counts as installed.
func runsWorkTreeCode(key, value, top string) string {
	v := strings.TrimSpace(value)
	if key == "core.fsmonitor" && gitBool(v) {
		return "" // the built-in monitor, or none
	}
	if v == "" {
		return "" // resets a list (credential.helper =)
	}
	if strings.HasPrefix(key, "credential.") && !strings.HasPrefix(v, "!") && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") {
		v = "git-credential-" + v // git runs "git credential-NAME"
	}
	v = strings.TrimPrefix(v, "!")
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(v), "")
	if err != nil {
		if f, err = syntax.NewParser().Parse(strings.NewReader(v), ""); err != nil {
			return "it is not shell warden can read"
		}
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			why = callExposure(n, top, funcs)
		case *syntax.Redirect:
			if n.Word != nil {
				if _, ok := staticWord(n.Word, top); !ok && !runTimeWord(n.Word) {
					why = "a redirection only known when it runs"
				}
			}
		}
		return why == ""
	})
	return why
}

// callExposure is runsWorkTreeCode for one simple command of the value,
// funcs the functions it defines.
func callExposure(c *syntax.CallExpr, top string, funcs map[string]bool) string {
	if len(c.Assigns) > 0 {
		return "it sets the environment of what it runs (" + c.Assigns[0].Name.Value + "=…)"
	}
	words := make([]string, 0, len(c.Args))
	for i, a := range c.Args {
		w, ok := staticWord(a, top)
		if !ok {
			if i == 0 || !runTimeWord(a) {
				return "a word of it is only known when it runs"
			}
			// the user's environment or a command's output (whose
			// own command this walk judges too), not the tree's
			w = "run-time-value"
		}
		words = append(words, w)
	}
	return wordsExposure(words, top, funcs)
}

// wordsExposure is callExposure for a command's words, their expansions
// already read.
func wordsExposure(words []string, top string, funcs map[string]bool) string {
	if len(words) == 0 {
		return ""
	}
	// exec and command run the next word.
	for len(words) > 1 && slices.Contains([]string{"exec", "command"}, words[0]) {
		words = words[1:]
		for len(words) > 1 && strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
	}
	prog := words[0]
	hooks := filepath.Join(top, ".git", "hooks") + string(filepath.Separator)
	switch p := workTreePath(prog, top); {
	case strings.Contains(prog, "/") && strings.HasPrefix(p, hooks):
		// a hook script git's sample set up (kept read-only)
	case strings.Contains(prog, "/") && p != "":
		return prog + " is a program of the work tree"
	case funcs[prog] && !strings.Contains(prog, "/"):
		// a function of the value: its commands are judged
	case sealedPythonModule(words, top) != nil:
		// python -m nbstripout: from the top it imports new modules
		// made there first, which the sandbox sweeps (Spec.ModuleDirs),
		// and its compiled ones, kept; its own words are judged below
		words = sealedPythonModule(words, top)
	case runsCommand(path.Base(prog), words[1:]):
		// op run -- CMD, sops exec-env FILE CMD: judged as the command
		// it runs, where it is one more command of the value
		if rest := afterDashDash(words[1:]); rest != nil {
			return wordsExposure(rest, top, funcs)
		}
		return path.Base(prog) + " is given a command to run that warden cannot read"
	case !sealedProgram(path.Base(prog)):
		return path.Base(prog) + " is not a program warden knows to read nothing of the work tree as code, and git runs it there"
	case editorCommands(path.Base(prog), words[1:]):
		return path.Base(prog) + " is given commands to run, which may read the work tree's files as code"
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			_, val, ok := strings.Cut(w, "=")
			if !ok {
				continue
			}
			w = val
		}
		if p := workTreePath(w, top); p != "" {
			return "it is given " + w + ", a path of the work tree"
		}
	}
	return ""
}

// workTreePath is where w leads in the work tree at top (the directory git
// runs the program in) when it names a path there: a relative path with a
// slash, an absolute one inside top, or a bare name of an entry at top;
// "" otherwise.
func workTreePath(w, top string) string {
	if w == "" || w == "~" || strings.HasPrefix(w, "~/") {
		return ""
	}
	p := w
	if !filepath.IsAbs(p) {
		if !strings.Contains(p, "/") {
			if _, err := os.Lstat(filepath.Join(top, p)); err != nil {
				return "" // a plain word, no file of the top
			}
		}
		p = filepath.Join(top, p)
	}
	p = filepath.Clean(p)
	if !inside(p, top) {
		return ""
	}
	return p
}

// staticWord is the text of a word, quotes removed, whose only expansions
// are of what git gives the program (its arguments, a tool's $LOCAL and
// $REMOTE: gitGiven), the home first, or the top ($PWD, where git runs
// it, and $GIT_DIR below it); not ok for any other.
func staticWord(w *syntax.Word, top string) (string, bool) {
	return walk.StaticText(w, func(pe *syntax.ParamExp, first bool) (string, bool) {
		if pe.Param == nil || pe.Exp != nil || pe.Slice != nil || pe.Repl != nil || pe.Index != nil || pe.Length || pe.Excl {
			return "", false
		}
		switch name := pe.Param.Value; {
		case name == "HOME" && first:
			return "~", true
		case name == "PWD" && first:
			return top, true
		case name == "GIT_DIR" && first:
			return filepath.Join(top, ".git"), true
		case gitGiven[name] || name == "@" || name == "*" || len(name) == 1 && name[0] >= '0' && name[0] <= '9':
			return "git-given-value", true
		}
		return "", false
	})
}

// runTimeWord reports whether a word's expansions are the user's
// environment (${NAME}, $NAME) or commands' output ($(…), whose commands
// runsWorkTreeCode judges as the value's own): nothing of the work tree
// chooses them, and the command they are given to is judged by its name.
func runTimeWord(w *syntax.Word) bool {
	ok := true
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param == nil || n.Exp != nil || n.Slice != nil || n.Repl != nil || n.Index != nil || n.Excl ||
				n.Param.Value == "PWD" || n.Param.Value == "OLDPWD" || gitPlaces[n.Param.Value] {
				ok = false
			}
		case *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob, *syntax.BraceExp:
			ok = false
		case *syntax.CmdSubst:
			return false // its commands are judged on their own
		}
		return ok
	})
	return ok
}

// gitBool reports whether v is one of git's boolean values.
func gitBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return true
	}
	return false
}

// sealedPythonModule returns, where words run with Python a module known
// to read nothing of the work tree as code (sealedModules: nbstripout, a
// filter and textconv people install per repository), from outside the
// work tree at top (no file of the top named as it or its package), the
// words left to judge: the program and the module's own arguments. Nil
// for anything else: -c, a script, a module that runs or loads what it is
// given (runpy, pytest, unittest, pydoc…). Python looks the module and
// what it imports up in the top first: the modules a command adds there
// are swept and its __pycache__ kept (programFiles, pythonPathDir).
func sealedPythonModule(words []string, top string) []string {
	name := path.Base(words[0])
	if !strings.HasPrefix(name, "python") && !strings.HasPrefix(name, "pypy") {
		return nil
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-m" && i+1 < len(words):
			mod := words[i+1]
			first, _, _ := strings.Cut(mod, ".")
			if !sealedModules[mod] || !pyimport.Identifier(first) || workTreePath(first, top) != "" || workTreePath(first+".py", top) != "" {
				return nil
			}
			return append([]string{"python"}, words[i+2:]...)
		case w == "-c" || !strings.HasPrefix(w, "-") || strings.Contains(w, "c") && !strings.HasPrefix(w, "--"):
			return nil // code, a script, or an option cluster holding -c
		}
	}
	return nil
}

// sealedModules are the Python modules, run with -m, known to read
// nothing of the work tree as code: what they read is the file git gives
// them, as data.
var sealedModules = map[string]bool{"nbstripout": true, "json.tool": true}

// runsCommand reports whether a program warden knows runs a command it is
// given (op run, op plugin run, sops exec-env and exec-file).
func runsCommand(name string, args []string) bool {
	switch name {
	case "op":
		return slices.Contains(args, "run")
	case "sops":
		return slices.Contains(args, "exec-env") || slices.Contains(args, "exec-file")
	}
	return false
}

// afterDashDash is the words after the first "--", or nil.
func afterDashDash(args []string) []string {
	if i := slices.Index(args, "--"); i >= 0 && i+1 < len(args) {
		return args[i+1:]
	}
	return nil
}

// editorCommands reports whether an editor is given commands or a script
// to run (vim -c "source x.vim", -S, --cmd, +cmd, -u FILE; emacs --eval,
// -l, --script), which the value's words alone do not show the reach of.
func editorCommands(name string, args []string) bool {
	switch name {
	case "vi", "vim", "nvim", "gvim", "lvim", "nvr", "vimdiff", "nvimdiff", "gvimdiff":
		for i, a := range args {
			switch {
			case (a == "-c" || a == "--cmd") && i+1 < len(args):
				if vimCommandLoads(args[i+1]) {
					return true
				}
			case strings.HasPrefix(a, "+") && len(a) > 1:
				if vimCommandLoads(a[1:]) {
					return true
				}
			case a == "-c" || a == "--cmd" || a == "-S" || a == "-s" || a == "-W" || a == "-w":
				return true
			case a == "-u" || a == "-U":
				if i+1 >= len(args) || args[i+1] != "NONE" && args[i+1] != "NORC" {
					return true
				}
			}
		}
	case "emacs", "emacsclient":
		for _, a := range args {
			if a == "--eval" || a == "-l" || a == "--load" || a == "--script" || a == "-e" || strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--load=") {
				return true
			}
		}
	}
	return false
}

// vimCommandLoads reports whether a vim command given on the command line
// may load a file or run code (source, runtime, lua, python…, !, exe,
// call) or names a file (a word with a dot, a slash or a parenthesis);
// "wincmd J" or "set nomodeline" do not.
func vimCommandLoads(cmd string) bool {
	words := strings.Fields(cmd)
	if len(words) == 0 {
		return false
	}
	first := strings.TrimLeft(words[0], ":")
	if strings.HasPrefix(first, "!") || slices.Contains([]string{"so", "source", "ru", "runtime", "lua", "luafile", "luado",
		"py", "python", "py3", "python3", "pyfile", "py3file", "pyx", "perl", "perldo", "ruby", "rubyfile", "tcl", "tclfile",
		"mz", "exe", "execute", "call", "r", "read", "w", "write", "e", "edit"}, first) {
		return true
	}
	return slices.ContainsFunc(words, func(w string) bool { return strings.ContainsAny(w, "./(") })
}

// sealedProgram reports whether a program of that name, given the words
// of a git setting, reads nothing of the work tree it runs in as code:
// what people name in git's configuration for git to run by itself (large
// file and encryption filters, credential helpers, ssh and signing,
// pagers and diff highlighters, editors and merge tools, which open the
// files git gives them, byte and text dumps of a file), and the shell's
// builtins a credential helper's function prints with.
func sealedProgram(name string) bool {
	if strings.HasPrefix(name, "git-credential-") {
		return true
	}
	switch name {
	case "git", "git-lfs", "git-crypt", "gh", "glab", "aws", "op", "ssh", "ssh-keygen", "gpg", "gpg2", "gpgsm",
		"less", "more", "most", "delta", "diff-so-fancy", "diff-highlight", "bat", "batcat", "riff", "diffr", "difft",
		"vi", "vim", "nvim", "gvim", "vimdiff", "nvimdiff", "gvimdiff", "nano", "emacs", "emacsclient", "code",
		"code-insiders", "cursor", "subl", "mate", "micro", "hx", "helix", "kak", "zed", "gedit", "kate",
		"meld", "kdiff3", "opendiff", "bcompare", "p4merge", "tkdiff", "xxdiff", "smerge",
		"cat", "hexdump", "xxd", "od", "strings", "pdftotext", "docx2txt", "odt2txt", "catdoc", "file", "exiftool",
		"echo", "printf", "test", "[", "true", "false", ":", "sleep", "read", "exit", "return",
		"op-ssh-sign", "ssh-askpass", "x11-ssh-askpass", "ksshaskpass", "git-gui--askpass", "sops",
		"moar", "ov", "pspg", "lvim", "nvr", "codium", "code-oss", "windsurf", "idea", "goland", "pycharm", "webstorm",
		"charm", "fleet", "pico", "ne", "joe", "jed", "mcedit", "gnome-text-editor", "diffmerge", "ksdiff", "araxis":
		return true
	}
	return false
}

// gitGiven are the variables git sets for a difftool's or mergetool's
// command: files of its own making, not of the work tree.
var gitGiven = map[string]bool{"LOCAL": true, "REMOTE": true, "MERGED": true, "BASE": true, "BACKUP": true}

// gitPlaces are the variables git sets to places of the repository (the
// work tree's, its git directory's) for what it runs.
var gitPlaces = map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_COMMON_DIR": true, "GIT_INDEX_FILE": true,
	"GIT_PREFIX": true, "GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_EXEC_PATH": true}

// ProjectReadOnly says why the workspace sandbox keeps the work tree that
// holds dir read-only as a whole (a program git runs by itself runs its
// code: runsWorkTreeCode), or "" when it does not.
func ProjectReadOnly(dir, userHome string) string {
	top := filepath.Clean(projectRoot(dir, userHome))
	named, complete := gitConfigNamed(context.Background(), top, userHome)
	return exposedBy(named, complete, top)
}

// exposedBy is why what git's configuration names (gitConfigNamed, and
// whether git could read all of it) runs code of the work tree at top, or
// "". A configuration git could not read may name any program: that is a
// reason too.
func exposedBy(named []configNamed, complete bool, top string) string {
	if !complete {
		return "a git configuration file that names programs git runs could not be read with git, so what it runs is not known"
	}
	top = filepath.Clean(top)
	for _, n := range named {
		if n.exposes != "" && n.path == top {
			return n.exposes
		}
	}
	return ""
}
