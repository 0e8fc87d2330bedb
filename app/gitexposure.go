package app

import (
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
// runs code it reads (codeRunners); when it sets the environment (a
// loader's variables); when a word names a path of the work tree (a
// relative path, or a file or directory at its top); or when a word is
// only known when it runs. A program installed outside it, given plain
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
				if _, ok := staticWord(n.Word); !ok {
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
	for _, a := range c.Args {
		w, ok := staticWord(a)
		if !ok {
			return "a word of it is only known when it runs"
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
// are of what git itself gives the program (gitGiven) or, first, the home;
// not ok for any other.
func staticWord(w *syntax.Word) (string, bool) {
	return walk.StaticText(w, func(pe *syntax.ParamExp, first bool) (string, bool) {
		if pe.Param == nil || pe.Exp != nil || pe.Slice != nil || pe.Repl != nil || pe.Index != nil || pe.Length || pe.Excl {
			return "", false
		}
		switch {
		case pe.Param.Value == "HOME" && first:
			return "~", true
		case gitGiven[pe.Param.Value]:
			return "git-given-file", true
		}
		return "", false
	})
}

// gitGiven are the variables git sets for a difftool's or mergetool's
// command: files of its own making, not of the work tree.
var gitGiven = map[string]bool{"LOCAL": true, "REMOTE": true, "MERGED": true, "BASE": true, "BACKUP": true}

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
