package app

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentwarden/warden/shellguard/walk"
)

// runsWorkTreeCode says why a program git runs by itself (the value of one of
// gitNamingKeys but core.hooksPath and the includes) runs code of the work
// tree at top, or "" when it does not. What such a program loads cannot be
// listed from its text: an interpreter or a task runner run from the top
// loads its code, modules, settings and plugins from there and from what
// they name, in ways each language adds to (red-team-30: 18 of 18 cases
// got through the files warden had followed: awk -f, make, npm run, perl's
// use lib, BASH_ENV, NODE_OPTIONS, PYTHONPATH=., a glob of sourced files, a
// settings file made later…). Such a work tree is kept read-only as a
// whole.
//
// The value exposes the work tree when it runs a program file of the work
// tree, or a shell, an interpreter, a task runner or another program that
// runs code it reads (codeRunner); when it sets the environment (a
// loader's variables); when a word names a path of the work tree (a
// relative path, or a file or directory at its top, $PWD or $GIT_DIR); or
// when its program is only known when it runs. Its other words may hold
// the user's environment or commands' output (credential helpers: "!f() {
// echo password=$(cat ~/.token); }; f", "!aws codecommit credential-helper
// $@"), the commands judged as the value's own. A program installed outside it, given plain
// words (git-lfs filter-process, hexdump -C, less, delta), does not.
func runsWorkTreeCode(key, value, top string) string {
	v := strings.TrimSpace(value)
	if key == "core.fsmonitor" && gitBool(v) {
		return "" // the built-in monitor, or none
	}
	v = strings.TrimPrefix(v, "!")
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(v), "")
	if err != nil {
		if f, err = syntax.NewParser().Parse(strings.NewReader(v), ""); err != nil {
			return "it is not shell warden can read"
		}
	}
	why := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			why = callExposure(n, top)
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

// callExposure is runsWorkTreeCode for one simple command of the value.
func callExposure(c *syntax.CallExpr, top string) string {
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
	if len(words) == 0 {
		return ""
	}
	// exec and command run the next word (nice, time… are codeRunners:
	// their options take values).
	for len(words) > 1 && slices.Contains([]string{"exec", "command"}, words[0]) {
		words = words[1:]
		for len(words) > 1 && strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
	}
	prog := words[0]
	if strings.Contains(prog, "/") {
		if p := workTreePath(prog, top); p != "" {
			return prog + " is a program of the work tree"
		}
	}
	if name := path.Base(prog); codeRunner(name) {
		return name + " runs code it reads, from the work tree's top"
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

// codeRunner reports whether a program of that name runs code it reads
// from files, its arguments or its environment: shells, interpreters,
// awk and sed, task runners, package managers' script runners, hook
// managers that read the project's settings, and the builtins that run
// text as code.
func codeRunner(name string) bool {
	if walk.IsShell(name) || strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy") || strings.HasPrefix(name, "lua") ||
		strings.HasPrefix(name, "perl") || strings.HasPrefix(name, "ruby") || strings.HasPrefix(name, "php") || strings.HasPrefix(name, "node") {
		return true
	}
	switch name {
	case "source", ".", "eval", "env", "xargs", "find", "timeout", "stdbuf", "setsid", "flock", "watch", "parallel",
		"nice", "nohup", "time", "ionice", "chrt", "taskset", "sudo", "doas", "su", "runuser", "unshare", "nsenter",
		"deno", "bun", "tclsh", "wish", "expect", "Rscript", "R", "julia", "java", "groovy", "scala", "kotlin", "clojure",
		"elixir", "erl", "escript", "guile", "racket", "sbcl", "ocaml", "swift", "osascript", "pwsh", "powershell",
		"awk", "gawk", "mawk", "nawk", "busybox", "sed", "gsed", "m4", "gdb",
		"make", "gmake", "bmake", "just", "task", "mage", "rake", "tox", "nox", "invoke", "cmake", "meson", "ninja", "scons",
		"gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "dotnet", "cargo", "go", "npm", "npx", "pnpm", "pnpx", "yarn",
		"corepack", "uv", "uvx", "pipx", "poetry", "pdm", "hatch", "pip", "pip3", "bundle", "composer",
		"pre-commit", "lefthook", "husky", "overcommit", "direnv":
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
	named, _ := gitConfigNamed(context.Background(), top, userHome)
	return exposedBy(named, top)
}

// exposedBy is why what git's configuration names (gitConfigNamed) runs
// code of the work tree at top, or "".
func exposedBy(named []configNamed, top string) string {
	top = filepath.Clean(top)
	for _, n := range named {
		if n.exposes != "" && n.path == top {
			return n.exposes
		}
	}
	return ""
}
