package walk

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testOpt are the facts most cases assume.
var testOpt = Options{Cwd: "/work", Home: "/home/u", Tmp: "/tmp"}

// render prints a command's argv; a Dynamic word shows as ?VALUE.
func render(c Command) string {
	parts := make([]string, len(c.Argv))
	for i, w := range c.Argv {
		if w.Dynamic {
			parts[i] = "?" + w.Value
		} else {
			parts[i] = w.Value
		}
	}
	return strings.Join(parts, " ")
}

func renderAll(r Result) string {
	var b strings.Builder
	for _, c := range r.Commands {
		fmt.Fprintf(&b, "[%s]", render(c))
		if c.Via != "" {
			fmt.Fprintf(&b, "via=%q ", c.Via)
		}
		if c.Depth > 0 {
			fmt.Fprintf(&b, "d=%d ", c.Depth)
		}
		if len(c.Wrappers) > 0 {
			fmt.Fprintf(&b, "wr=%v ", c.Wrappers)
		}
		if c.Privileged {
			b.WriteString("priv ")
		}
		if c.Remote {
			b.WriteString("remote ")
		}
		if c.Conditional {
			b.WriteString("cond ")
		}
		if c.Cwd != "" || c.CwdDynamic {
			fmt.Fprintf(&b, "cwd=%s/%v ", c.Cwd, c.CwdDynamic)
		}
		b.WriteString("; ")
	}
	for _, is := range r.Issues {
		fmt.Fprintf(&b, "{%s: %s} ", is.Kind, is.Message)
	}
	return b.String()
}

// find returns the first command whose rendered argv is s.
func find(r Result, s string) (Command, bool) {
	for _, c := range r.Commands {
		if render(c) == s {
			return c, true
		}
	}
	return Command{}, false
}

func hasIssue(r Result, k IssueKind) bool {
	return slices.ContainsFunc(r.Issues, func(i Issue) bool { return i.Kind == k })
}

// walkCase is one Walk table case. has lists rendered commands that must be
// found; not lists program names that must not be; issues is the exact set
// of issue kinds (nil: none); check runs on the command has[0].
type walkCase struct {
	name   string
	src    string
	opt    *Options
	has    []string
	not    []string
	issues []IssueKind
	check  func(c Command) string
	result func(r Result) string
}

func via(v string) func(Command) string {
	return func(c Command) string {
		if c.Via != v {
			return fmt.Sprintf("Via %q, want %q", c.Via, v)
		}
		return ""
	}
}

func all(fs ...func(Command) string) func(Command) string {
	return func(c Command) string {
		for _, f := range fs {
			if s := f(c); s != "" {
				return s
			}
		}
		return ""
	}
}

func depth(d int) func(Command) string {
	return func(c Command) string {
		if c.Depth != d {
			return fmt.Sprintf("Depth %d, want %d", c.Depth, d)
		}
		return ""
	}
}

func priv(c Command) string {
	if !c.Privileged {
		return "not Privileged"
	}
	return ""
}

func remote(c Command) string {
	if !c.Remote {
		return "not Remote"
	}
	return ""
}

func cond(want bool) func(Command) string {
	return func(c Command) string {
		if c.Conditional != want {
			return fmt.Sprintf("Conditional %v, want %v", c.Conditional, want)
		}
		return ""
	}
}

func cwdAlts(alts ...string) func(Command) string {
	return func(c Command) string {
		if !slices.Equal(c.CwdAlts, alts) && (len(alts) > 0 || len(c.CwdAlts) > 0) {
			return fmt.Sprintf("CwdAlts %q, want %q", c.CwdAlts, alts)
		}
		return ""
	}
}

func cwd(d string, dyn bool) func(Command) string {
	return func(c Command) string {
		if c.Cwd != d || c.CwdDynamic != dyn {
			return fmt.Sprintf("Cwd %q/%v, want %q/%v", c.Cwd, c.CwdDynamic, d, dyn)
		}
		return ""
	}
}

func wrappers(ws ...string) func(Command) string {
	return func(c Command) string {
		if !slices.Equal(c.Wrappers, ws) {
			return fmt.Sprintf("Wrappers %q, want %q", c.Wrappers, ws)
		}
		return ""
	}
}

func pipe(pos, n int) func(Command) string {
	return func(c Command) string {
		if c.PipePos != pos || c.PipeLen != n {
			return fmt.Sprintf("PipePos/PipeLen %d/%d, want %d/%d", c.PipePos, c.PipeLen, pos, n)
		}
		return ""
	}
}

func word(i int, f func(Word) string) func(Command) string {
	return func(c Command) string {
		if i >= len(c.Argv) {
			return fmt.Sprintf("no word %d", i)
		}
		return f(c.Argv[i])
	}
}

var walkCases = []walkCase{
	// static word evaluation
	{name: "plain", src: `rm -rf /`, has: []string{"rm -rf /"}, check: all(depth(0), via(""), cwd("/work", false), pipe(0, 1))},
	{name: "backslash", src: `r\m -rf /`, has: []string{"rm -rf /"}},
	{name: "quote concat", src: `'r'"m" -fr x`, has: []string{"rm -fr x"}},
	{name: "ansi-c", src: `$'\x72\x6d' -rf /`, has: []string{"rm -rf /"}},
	{name: "ansi-c octal", src: `$'\162\155' -rf /`, has: []string{"rm -rf /"}},
	{name: "brace list", src: `{rm,-rf,/}`, has: []string{"rm -rf /"}},
	{name: "brace seq", src: `echo {a..c} {1..3}`, has: []string{"echo a b c 1 2 3"}},
	{name: "brace cap", src: `echo {1..1000}`, issues: []IssueKind{BudgetExceeded},
		result: func(r Result) string {
			if len(r.Commands) != 1 || len(r.Commands[0].Argv) > maxFields+1 {
				return "brace expansion not capped"
			}
			return ""
		}},
	{name: "brace tilde", src: `{rm,-rf,~}`, has: []string{"rm -rf /home/u"}},
	{name: "brace empty element", src: `f(){ echo {,}0 x{a,}; }; f`, has: []string{"echo 0 0 xa x"}},
	{name: "variable program", src: `a=rm; $a -rf ~`, has: []string{"rm -rf /home/u"}},
	{name: "variable flag", src: `X=-rf; rm $X /`, has: []string{"rm -rf /"}},
	{name: "ifs split", src: `rm -rf ${IFS}/`, has: []string{"rm -rf /"}},
	{name: "ifs joined", src: `rm${IFS}-rf${IFS}/`, has: []string{"rm -rf /"}},
	{name: "custom ifs", src: `IFS=,; x=rm,-rf,/; $x`, has: []string{"rm -rf /"}},
	{name: "unknown ifs", src: `IFS=$1; x=rm,-rf; $x`, issues: []IssueKind{DynamicCommand}},
	{name: "glob from variable", src: `x='*'; rm $x`, has: []string{"rm *"}, check: word(1, func(w Word) string {
		if !w.Glob {
			return "unquoted expansion of * not Glob"
		}
		return ""
	})},
	{name: "line continuation", src: "rm -r\\\nf /", has: []string{"rm -rf /"}},
	{name: "tilde", src: `rm ~/x ~root/y`, has: []string{"rm /home/u/x ?/y"}},
	{name: "home pwd tmpdir", src: `echo $HOME "$PWD" ${TMPDIR}/a`, has: []string{"echo /home/u /work /tmp/a"}},
	{name: "options env", src: `echo $FOO`, opt: &Options{Env: map[string]string{"FOO": "bar"}}, has: []string{"echo bar"}},
	{name: "unknown variable prefix", src: `rm -rf /$X`, has: []string{"rm -rf ?/"},
		check: word(2, func(w Word) string {
			if w.Prefix != "/" {
				return fmt.Sprintf("Prefix %q, want %q", w.Prefix, "/")
			}
			return ""
		})},
	{name: "glob flag", src: `rm *.go 'a*'`, has: []string{"rm *.go a*"},
		check: all(word(1, func(w Word) string {
			if !w.Glob {
				return "unquoted * not Glob"
			}
			return ""
		}), word(2, func(w Word) string {
			if w.Glob {
				return "quoted * Glob"
			}
			return ""
		}))},
	{name: "empty quoted arg", src: `rm "" x`, result: func(r Result) string {
		if len(r.Commands) != 1 || len(r.Commands[0].Argv) != 3 {
			return "empty quoted word dropped"
		}
		return ""
	}},
	{name: "default known", src: `X=/etc; rm -rf ${X:-/tmp}`, has: []string{"rm -rf /etc"}},
	{name: "echo is data", src: `echo "rm -rf /"`, has: []string{"echo rm -rf /"}, not: []string{"rm"}},
	{name: "commit message is data", src: `git commit -m "rm -rf /"`, not: []string{"rm"}},

	// structure
	{name: "list", src: `ls; rm x`, has: []string{"ls", "rm x"}, check: cond(false)},
	{name: "pipeline", src: `ls | grep x | wc -l`, has: []string{"grep x"}, check: pipe(1, 3)},
	{name: "and", src: `true && rm x`, has: []string{"rm x"}, check: cond(true)},
	{name: "or", src: `false || rm x`, has: []string{"rm x"}, check: cond(true)},
	{name: "subshell", src: `(rm x)`, has: []string{"rm x"}},
	{name: "block", src: `{ rm x; }`, has: []string{"rm x"}},
	{name: "if", src: `if test -f x; then rm x; else rm y; fi`, has: []string{"rm x", "rm y", "test -f x"}, check: cond(true)},
	{name: "while", src: `while read l; do rm "$l"; done < list`, has: []string{"rm ?"}, check: cond(true)},
	{name: "until", src: `until false; do rm x; done`, has: []string{"rm x"}, check: cond(true)},
	{name: "for", src: `for f in $x; do rm $f; done`, has: []string{"rm ?"}, check: cond(true)},
	{name: "for unrolled", src: `for f in a b; do rm $f; done`, has: []string{"rm a", "rm b"}, check: cond(false)},
	{name: "for that may break", src: `for f in a b; do rm $f; break; done`, has: []string{"rm ?"}, check: cond(true)},
	{name: "for calling what may break", src: `g() { [ -e x ] && return; }; for f in a b; do rm $f; g; done`, has: []string{"rm ?"}},
	{name: "for c-style", src: `for ((i=$(rm q);i<2;i++)); do :; done`, has: []string{"rm q"}},
	{name: "case", src: `case $x in a) rm -rf y;; esac`, has: []string{"rm -rf y"}, check: cond(true)},
	{name: "function called", src: `f(){ rm -rf ~; }; f`, has: []string{"rm -rf /home/u"}, check: all(via("function f"), cond(false))},
	{name: "function uncalled", src: `g() { rm -rf ~; }`, has: []string{"rm -rf /home/u"}, check: all(via("function g"), cond(true))},
	{name: "function recursion", src: `f(){ f; rm x; }; f`, has: []string{"rm x"}},
	{name: "cmdsubst", src: `echo $(rm -rf x)`, has: []string{"rm -rf x", "echo ?"}, check: via("$()")},
	{name: "backticks", src: "echo `rm -rf x`", has: []string{"rm -rf x"}, check: via("$()")},
	{name: "procsubst", src: `diff <(rm -rf x) y`, has: []string{"rm -rf x"}, check: via("<()")},
	{name: "param default", src: `echo ${x:-$(rm -rf y)}`, has: []string{"rm -rf y"}, check: via("$()")},
	{name: "arithmetic", src: `echo $(( $(rm -rf z) + 1 ))`, has: []string{"rm -rf z"}},
	{name: "arithm cmd", src: `(( $(rm -rf z) ))`, has: []string{"rm -rf z"}},
	{name: "test clause", src: `[[ -n $(rm -rf z) ]]`, has: []string{"rm -rf z"}},
	{name: "export", src: `export A=$(rm -rf q)`, has: []string{"rm -rf q", "export"}},
	{name: "local in function", src: `f(){ local d=/etc; rm -rf $d; }; f`, has: []string{"rm -rf /etc"}},
	{name: "time", src: `time rm -rf x`, has: []string{"rm -rf x"}, check: wrappers("time")},
	{name: "background", src: `rm x &`, has: []string{"rm x"}, check: func(c Command) string {
		if !c.Background {
			return "not Background"
		}
		return ""
	}},
	{name: "redirect", src: `echo hi 2>/dev/null > /etc/passwd`, has: []string{"echo hi"}, check: func(c Command) string {
		if len(c.Redirects) != 2 || c.Redirects[1].Target.Value != "/etc/passwd" || c.Redirects[0].Fd != "2" || c.Redirects[1].Op != ">" {
			return fmt.Sprintf("Redirects %+v", c.Redirects)
		}
		return ""
	}},
	{name: "bare redirect", src: `> /etc/motd`, result: func(r Result) string {
		if len(r.Commands) != 1 || len(r.Commands[0].Argv) != 0 || len(r.Commands[0].Redirects) != 1 ||
			r.Commands[0].Redirects[0].Target.Value != "/etc/motd" {
			return "want one Command with no Argv and the redirect"
		}
		return ""
	}},
	{name: "compound redirect", src: `{ echo a; } > /etc/x`, has: []string{"echo a"}, check: func(c Command) string {
		if len(c.Redirects) != 1 || c.Redirects[0].Target.Value != "/etc/x" {
			return fmt.Sprintf("Redirects %+v", c.Redirects)
		}
		return ""
	}},

	// cwd
	{name: "cd", src: `cd /tmp && rm -rf x`, has: []string{"rm -rf x"}, check: cwd("/tmp", false)},
	{name: "cd relative", src: `cd sub/../b; rm x`, has: []string{"rm x"}, check: cwd("/work/b", false)},
	{name: "subshell cd", src: `(cd /; rm -rf x); rm y`, has: []string{"rm -rf x", "rm y"}, result: func(r Result) string {
		x, _ := find(r, "rm -rf x")
		y, _ := find(r, "rm y")
		if x.Cwd != "/" || y.Cwd != "/work" {
			return fmt.Sprintf("Cwd %q and %q, want / and /work", x.Cwd, y.Cwd)
		}
		return ""
	}},
	{name: "cd dynamic", src: `cd $X; rm y`, has: []string{"rm y"}, check: func(c Command) string {
		if !c.CwdDynamic {
			return "not CwdDynamic"
		}
		return ""
	}},
	{name: "cd chain", src: `cd /tmp && cd sub && rm x`, has: []string{"rm x"}, check: cwd("/tmp/sub", false)},
	{name: "conditional cd", src: `test -d /x && cd /x; rm y`, has: []string{"rm y"}, check: all(cwd("/x", false), cwdAlts("/work"))},
	{name: "conditional cd, relative, then cd", src: `mkdir -p b/r && cd b/r && cc x.c; cd out; rm y`, has: []string{"rm y"}, check: all(cwd("/work/b/r/out", false), cwdAlts("/work/out", "/work/b/r", "/work"))},
	// a cd that may fail (no build) leaves the shell where it was
	{name: "cd that may fail", src: `cd build; rm -rf *`, has: []string{"rm -rf *"}, check: all(cwd("/work/build", false), cwdAlts("/work"))},
	{name: "cd under set -e", src: `set -euo pipefail; cd build; rm -rf *`, has: []string{"rm -rf *"}, check: all(cwd("/work/build", false), cwdAlts())},
	{name: "cd in a list", src: `cd build && rm -rf *`, has: []string{"rm -rf *"}, check: all(cwd("/work/build", false), cwdAlts())},
	{name: "cd in a block in a list", src: `{ cd build; rm -rf *; } && true`, has: []string{"rm -rf *"}, check: all(cwd("/work/build", false), cwdAlts("/work"))},
	{name: "conditional cd, then absolute", src: `test -d /x && cd /x; cd /tmp; rm y`, has: []string{"rm y"}, check: all(cwd("/tmp", false), cwdAlts())},
	{name: "conditional cd somewhere unknown", src: `test -d "$D" && cd "$D"; rm y`, has: []string{"rm y"}, check: cwd("/work", true)},
	{name: "cd then or", src: `cd /tmp || exit; rm y`, has: []string{"rm y"}, check: cwd("/tmp", false)},
	{name: "pushd", src: `pushd /tmp; rm y`, has: []string{"rm y"}, check: cwd("/tmp", false)},
	// cd - goes back where the last cd left (OLDPWD): known only after a
	// cd of the line's own, in this shell, the same on every branch.
	{name: "cd back", src: `cd /tmp && cd - && rm y`, has: []string{"rm y"}, check: cwd("/work", false)},
	{name: "cd back quiet", src: `cd ../w2 && sed -i s/a/b/ f && cd - > /dev/null && rm y`, has: []string{"rm y", "sed -i s/a/b/ f"}, result: func(r Result) string {
		s, _ := find(r, "sed -i s/a/b/ f")
		y, _ := find(r, "rm y")
		if s.Cwd != "/w2" || y.Cwd != "/work" || y.CwdDynamic {
			return fmt.Sprintf("Cwd %q and %q (%v), want /w2 and /work", s.Cwd, y.Cwd, y.CwdDynamic)
		}
		return ""
	}},
	{name: "cd back twice", src: `cd /a && cd /b && cd - && cd - && rm y`, has: []string{"rm y"}, check: cwd("/b", false)},
	{name: "cd back with no cd before", src: `cd -; rm y`, has: []string{"rm y"}, check: cwd("/work", true)},
	{name: "cd back after a conditional cd", src: `test -d /x && cd /x; cd -; rm y`, has: []string{"rm y"}, check: func(c Command) string {
		if !c.CwdDynamic {
			return fmt.Sprintf("Cwd %q known, want unknown", c.Cwd)
		}
		return ""
	}},
	{name: "cd back in a new shell", src: `cd /tmp && bash -c 'cd -; rm y'`, has: []string{"rm y"}, check: cwd("/tmp", true)},
	{name: "cd back after a statement", src: `cd /a; cd -; rm y`, has: []string{"rm y"}, check: func(c Command) string {
		if !c.CwdDynamic {
			return fmt.Sprintf("Cwd %q known, want unknown: cd /a may have failed", c.Cwd)
		}
		return ""
	}},
	{name: "cd back after a failed cd", src: `cd ~ && cd /p; cd /nonexistent; cd - && echo x >> .bashrc`, has: []string{"echo x"}, check: func(c Command) string {
		if !c.CwdDynamic {
			return fmt.Sprintf("Cwd %q known, want unknown", c.Cwd)
		}
		return ""
	}},
	{name: "cd back to an assigned OLDPWD", src: `cd /p && OLDPWD=/home/u && cd - && echo x >> .profile`, has: []string{"echo x"}, check: func(c Command) string {
		if !c.CwdDynamic {
			return fmt.Sprintf("Cwd %q known, want unknown", c.Cwd)
		}
		return ""
	}},
	{name: "cd back in one list", src: `cd /a && (cd /b) && cd - && rm y`, has: []string{"rm y"}, check: cwd("/work", false)},

	// wrappers
	{name: "sudo sh -c", src: `sudo -u root sh -c "rm -rf /etc"`, has: []string{"rm -rf /etc"}, check: all(priv, depth(1), via("sh -c"))},
	{name: "sudo", src: `sudo rm -rf /`, has: []string{"rm -rf /"}, check: all(priv, wrappers("sudo"))},
	{name: "sudo interactive", src: `sudo -i`, has: []string{"sh"}, check: priv},
	{name: "sudo -s code", src: `sudo -s 'rm -rf /'`, has: []string{"rm -rf /"}, check: all(priv, depth(1))},
	{name: "doas", src: `doas rm x`, has: []string{"rm x"}, check: priv},
	{name: "pkexec", src: `pkexec --user root rm x`, has: []string{"rm x"}, check: priv},
	{name: "runuser", src: `runuser -u bob -- rm x`, has: []string{"rm x"}, check: priv},
	{name: "su -c", src: `su -c 'rm -rf /' root`, has: []string{"rm -rf /"}, check: all(priv, depth(1))},
	{name: "env -S", src: `env -S 'rm -rf /'`, has: []string{"rm -rf /"}, check: wrappers("env")},
	{name: "env -S escapes", src: `env -S 'rm\_-rf\_/home/u \c ignored'`, has: []string{"rm -rf /home/u"}, check: wrappers("env")},
	{name: "env assigns", src: `env -i A=1 rm x`, has: []string{"rm x"}, check: func(c Command) string {
		if len(c.Assigns) != 1 || c.Assigns[0].Name != "A" {
			return fmt.Sprintf("Assigns %+v", c.Assigns)
		}
		return ""
	}},
	{name: "env dash", src: `env - rm x`, has: []string{"rm x"}},
	{name: "env assigns a value known at run time", src: `env -i PATH="$PATH" HOME="$HOME" go build ./x`, has: []string{"go build ./x"}, check: func(c Command) string {
		if len(c.Assigns) != 2 || c.Assigns[0].Name != "PATH" || !c.Assigns[0].Value.Dynamic || c.Assigns[1].Name != "HOME" {
			return fmt.Sprintf("Assigns %+v, want PATH and HOME, dynamic", c.Assigns)
		}
		return ""
	}},
	{name: "alias", src: `alias ls='rm -rf ~'`, has: []string{"rm -rf /home/u"}, check: all(via("alias ls"), cond(true))},
	{name: "env -C", src: `env -C /tmp rm x`, has: []string{"rm x"}, check: cwd("/tmp", false)},
	{name: "timeout nice", src: `timeout 5 nice -n 10 rm -rf x`, has: []string{"rm -rf x"}, check: wrappers("timeout", "nice")},
	{name: "command", src: `command rm x; command -v rm`, has: []string{"rm x", "command -v rm"}},
	{name: "builtin exec", src: `exec rm x`, has: []string{"rm x"}, check: wrappers("exec")},
	{name: "chain", src: `nohup setsid stdbuf -oL ionice -c 3 chrt -f 1 taskset -c 0 rm x`, has: []string{"rm x"},
		check: wrappers("nohup", "setsid", "stdbuf", "ionice", "chrt", "taskset")},
	{name: "flock strace", src: `flock /tmp/l strace -o out ltrace rm x`, has: []string{"rm x"}},
	{name: "unbuffer busybox", src: `unbuffer busybox rm -rf /`, has: []string{"rm -rf /"}},
	{name: "xargs", src: `xargs rm -rf`, has: []string{"rm -rf ?"}, check: all(wrappers("xargs"), via("xargs"))},
	{name: "xargs -I sh -c", src: `xargs -I{} sh -c 'rm -rf {}'`, has: []string{"sh -c ?rm -rf ", "rm -rf ?"}, issues: []IssueKind{PlaceholderCode}},
	{name: "find -exec sh -c placeholder", src: `find . -exec sh -c 'gzip "{}" && rm {}.bak' \;`, has: []string{"gzip ?", "rm ?.bak"}, issues: []IssueKind{PlaceholderCode}},
	{name: "xargs -I placeholder is the code", src: `xargs -I{} sh -c '{}'`, issues: []IssueKind{PlaceholderCode, DynamicCommand}},
	{name: "xargs known input", src: `echo ~ /srv | xargs rm -rf`, has: []string{"rm -rf /home/u /srv"}},
	{name: "xargs -I known input", src: `echo ~ | xargs -I{} sh -c 'rm -rf {}'`, has: []string{"rm -rf /home/u"}, check: depth(1)},
	// only the first xargs reads the known input, so this ends
	{name: "xargs of xargs", src: `echo xargs xargs | xargs xargs`, has: []string{"? ? ?"}, issues: []IssueKind{DynamicCommand}},
	{name: "wrapper budget", src: strings.Repeat("nohup ", 40) + "rm x", issues: []IssueKind{BudgetExceeded}},
	{name: "xargs quoted input", src: `echo "'a b'" | xargs rm`, has: []string{"rm ?"}},
	{name: "xargs -I", src: `xargs -I % rm -rf %`, has: []string{"rm -rf ?"}},
	{name: "xargs sh -c", src: `xargs sh -c 'rm -rf "$@"' _`, has: []string{"rm -rf ?"}, check: depth(1)},
	{name: "parallel", src: `parallel rm ::: a b`, has: []string{"rm ?"}},
	{name: "watch", src: `watch -n 1 'rm -rf x'`, has: []string{"rm -rf x"}, check: depth(1)},
	{name: "script -c", src: `script -q -c 'rm -rf x' /dev/null`, has: []string{"rm -rf x"}},
	{name: "chroot", src: `chroot /mnt rm -rf x`, has: []string{"rm -rf x"}},
	{name: "unshare firejail nsenter", src: `unshare -r firejail --net=none nsenter -t 1 -m rm x`, has: []string{"rm x"}},
	{name: "npx", src: `npx -y rimraf /`, has: []string{"rimraf /"}},
	{name: "npm exec", src: `npm exec rimraf /; pipx run foo x; uvx bar; bunx baz; pnpx qux`, has: []string{"rimraf /", "foo x", "bar", "baz", "qux"}},
	{name: "ssh", src: `ssh host 'rm -rf /'`, has: []string{"rm -rf /"}, check: all(remote, depth(1))},
	{name: "ssh options", src: `ssh -p 22 -t host rm -rf /`, has: []string{"rm -rf /"}, check: remote},
	{name: "ssh heredoc", src: "ssh host <<'EOF'\nrm -rf /srv\nEOF", has: []string{"rm -rf /srv"}, check: all(remote, depth(1))},
	{name: "ssh sudo bash heredoc", src: "ssh host sudo bash -s <<'EOF'\nrm -rf /srv\nEOF", has: []string{"rm -rf /srv"}, check: all(remote, priv)},
	{name: "ssh interactive", src: `ssh host`, has: []string{"ssh host"}},
	{name: "docker exec sh heredoc", src: "docker exec -i c sh <<'EOF'\nrm -rf /data\nEOF", has: []string{"rm -rf /data"}, check: remote},
	{name: "docker exec", src: `docker exec c rm -rf /`, has: []string{"rm -rf /"}, check: remote},
	{name: "podman run", src: `podman run --rm -v /:/h alpine rm -rf /h`, has: []string{"rm -rf /h"}, check: remote},
	{name: "kubectl exec", src: `kubectl exec -it -n ns pod -- rm -rf /`, has: []string{"rm -rf /"}, check: remote},

	// code strings
	{name: "bash -lc", src: `bash -lc 'rm -rf /'`, has: []string{"rm -rf /"}, check: all(depth(1), via("bash -c"))},
	{name: "sh -ec", src: `sh -ec 'rm x'`, has: []string{"rm x"}},
	{name: "nested shells", src: `bash -c 'sh -c "rm -rf x"'`, has: []string{"rm -rf x"}, check: depth(2)},
	{name: "eval", src: `eval 'rm -rf x'`, has: []string{"rm -rf x"}, check: via("eval")},
	{name: "eval closes a coproc", src: `coproc BC { bc -l; }; eval "exec ${BC[1]}>&-"`, has: []string{"bc -l", "exec"}},
	{name: "eval closes a named fd", src: `exec {fd}>/tmp/lock; eval "exec ${fd}>&-"`, has: []string{"exec"}},
	{name: "eval coproc reassigned", src: `coproc BC { bc; }; BC[1]='1; rm x'; eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc by nameref", src: `coproc BC { bc; }; declare -n r=BC; r[1]='1; rm x'; eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc read", src: `coproc BC { bc; }; read -r 'BC[1]' < f; eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc maybe", src: `if x; then coproc BC { bc; }; fi; eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc in subshell", src: `( coproc BC { bc; } ); eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc other index", src: `coproc BC { bc; }; eval "exec ${BC[2]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc with a trap", src: `trap 'read -r "BC[1]" < f' DEBUG; coproc BC { bc; }; eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval fd closed by name", src: `read -r fd < f; : {fd}>&-; eval "exec ${fd}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval no coproc", src: `eval "exec ${BC[1]}>&-"`, issues: []IssueKind{DynamicCode}},
	{name: "eval coproc then code", src: `coproc BC { bc; }; eval "exec ${BC[1]}>&-; rm -rf ~"`, has: []string{"rm -rf /home/u"}},
	{name: "eval shares state", src: `eval 'cd /tmp'; rm x`, has: []string{"rm x"}, check: cwd("/tmp", false)},
	{name: "source procsubst", src: `source <(echo rm -rf x)`, has: []string{"rm -rf x"}, check: depth(1)},
	{name: "find -exec", src: `find . -name x -exec rm -rf {} \;`, has: []string{"rm -rf ?"}, check: via("find -exec")},
	{name: "find two execs", src: `sudo find . -exec nice rm {} \; -exec timeout 1 cp {} /x \;`, has: []string{"rm ?", "cp ? /x"},
		result: func(r Result) string {
			a, _ := find(r, "rm ?")
			b, _ := find(r, "cp ? /x")
			if !slices.Equal(a.Wrappers, []string{"sudo", "nice"}) || !slices.Equal(b.Wrappers, []string{"sudo", "timeout"}) {
				return fmt.Sprintf("Wrappers %q and %q", a.Wrappers, b.Wrappers)
			}
			return ""
		}},
	{name: "find -execdir sh", src: `find . -execdir sh -c 'rm -rf x' \;`, has: []string{"rm -rf x"}, check: depth(2)},
	{name: "git alias", src: `git -c alias.x='!rm -rf ~' x`, has: []string{"rm -rf /home/u"}, check: depth(1)},
	{name: "git sshCommand", src: `git -c core.sshCommand='rm -rf x' fetch`, has: []string{"rm -rf x"}},
	{name: "git clone config", src: `git clone --config core.sshCommand="rm -rf y" repo`, has: []string{"rm -rf y"}},
	{name: "git config alias", src: `git config --global alias.up '!rm -rf ~'`, has: []string{"rm -rf /home/u"}, check: cond(true)},
	{name: "git dynamic alias", src: `git -c alias.x="$A" x`, issues: []IssueKind{DynamicCode}},
	{name: "git plain", src: `git -c user.name=x commit -m "rm -rf /"`, not: []string{"rm"}},
	{name: "docker container exec", src: `docker container exec -it c rm -rf /`, has: []string{"rm -rf /"}, check: remote},
	{name: "tar to-command", src: `tar -xf a.tar --to-command='rm -rf x'`, has: []string{"rm -rf x"}},
	{name: "tar checkpoint", src: `tar --checkpoint=1 --checkpoint-action=exec='rm y' -cf a.tar .`, has: []string{"rm y"}},
	{name: "tar -I", src: `tar -I 'rm z' -xf a.tar`, has: []string{"rm z"}},
	{name: "sed e", src: `sed -n '1e rm -rf ~' f`, has: []string{"rm -rf /home/u"}, check: via("sed e")},
	{name: "sed s///e", src: `sed 's/x/rm -rf y/e' f`, has: []string{"rm -rf y"}},
	{name: "sed e after label", src: `sed -n ':x;1e rm -rf ~' f`, has: []string{"rm -rf /home/u"}},
	{name: "sed e pattern space", src: `sed e f`, issues: []IssueKind{DynamicCode}},
	{name: "sed in-place suffix e", src: `sed -ie 's/a/b/' f`, has: []string{"sed -ie s/a/b/ f"}, not: []string{"b"}},
	{name: "sed plain", src: `sed -i 's/a/b/g' f`, not: []string{"b"}},
	{name: "awk system", src: `awk 'BEGIN{system("rm -rf ~")}'`, has: []string{"rm -rf /home/u"}, check: via("awk")},
	{name: "awk pipe", src: `awk '{print | "rm -rf x"}' f`, has: []string{"rm -rf x"}},
	{name: "awk getline", src: `awk 'BEGIN{"rm y" | getline}'`, has: []string{"rm y"}},
	// A command held in a variable the program only sets to literals is
	// each of them (agent-shapes-11: cmd = "git ls-files"; cmd | getline).
	{name: "awk getline from a literal variable", src: `awk 'BEGIN { cmd = "git ls-files"; while ((cmd | getline f) > 0) n++; close(cmd); print n }'`, has: []string{"git ls-files"}},
	{name: "awk system of a literal variable", src: `awk 'BEGIN { c = "rm -rf x"; if (1) c = "rm -rf y"; system(c) }'`, has: []string{"rm -rf x", "rm -rf y"}},
	{name: "awk print to a literal variable", src: `awk '{ s = "sort -u"; print | s }' f`, has: []string{"sort -u"}},
	{name: "vim bang", src: `vim -c '!rm -rf ~' x`, has: []string{"rm -rf /home/u"}, check: via("vim !")},
	{name: "vim filter", src: `vim -Es +'%!rm -rf y' +wq x`, has: []string{"rm -rf y"}},
	{name: "vim silent bang after bar", src: `vim -c 'set ff=unix | silent !rm z' x`, has: []string{"rm z"}},
	{name: "vim read bang", src: `ex -s -c 'r !curl -s x' f`, has: []string{"curl -s x"}},
	{name: "vim write bang", src: `vim -c 'w !sh' f`, has: []string{"sh"}},
	{name: "vim system", src: `nvim --headless -c "call system('rm q')" -c q`, has: []string{"rm q"}},
	{name: "vim attached", src: `vim -c'!rm w' f`, has: []string{"rm w"}},
	{name: "vim plain", src: `vim -Es -c '%s/\s\+$//e' -c 'wq!' -c 'g!/x/d' README.md`, not: []string{"wq", "e", "/x/d", "d"}},
	{name: "rg pre", src: `rg --pre 'rm -rf' x`, has: []string{"rm -rf"}, check: via("rg --pre")},
	{name: "dynamic code", src: `bash -c "$X"`, issues: []IssueKind{DynamicCode}},
	{name: "bash procsubst curl", src: `bash <(curl -s x)`, has: []string{"curl -s x"}, issues: []IssueKind{DynamicCode}},
	{name: "bash procsubst literal", src: `bash <(echo rm -rf x)`, has: []string{"rm -rf x"}, check: via("bash <()")},
	{name: "bash dynamic script", src: `bash "$f"`, issues: []IssueKind{DynamicCode}},
	{name: "bash script file", src: `bash ./build.sh`, has: []string{"bash ./build.sh"}},
	{name: "trap exit", src: `trap 'rm -rf /tmp/x' EXIT`, has: []string{"rm -rf /tmp/x"}, check: all(via("trap"), cond(false))},
	{name: "trap signal", src: `trap 'rm -rf y' INT`, has: []string{"rm -rf y"}, check: cond(true)},
	{name: "dynamic command", src: `$(echo rm) -rf /`, has: []string{"? -rf /", "echo rm"}, issues: []IssueKind{DynamicCommand}},
	{name: "dynamic from read", src: `x=$(cat); $x`, issues: []IssueKind{DynamicCommand}},

	// stdin
	{name: "curl sh", src: `curl -s x | sh`, has: []string{"curl -s x", "sh"}, issues: []IssueKind{DynamicCode}, check: pipe(0, 2)},
	{name: "curl sudo bash", src: `curl -s x | sudo bash`, has: []string{"bash"}, issues: []IssueKind{DynamicCode}, check: all(priv, pipe(1, 2))},
	{name: "source stdin", src: `. /dev/stdin <<< 'rm -rf ~'`, has: []string{"rm -rf /home/u"}, check: via("heredoc")},
	{name: "echo sh", src: `echo rm -rf x | bash`, has: []string{"rm -rf x"}, check: via("echo|bash")},
	{name: "printf sh", src: `printf '%s' 'rm -rf x' | sh`, has: []string{"rm -rf x"}},
	{name: "rev sh", src: `echo 'f- mr' | rev | sh`, has: []string{"rm -f"}, check: via("rev|sh")},
	{name: "base64 sh", src: `echo cm0gLXJmIH4= | base64 -d | sh`, has: []string{"rm -rf /home/u"}, check: all(via("base64|sh"), depth(1))},
	{name: "xxd sh", src: `echo 726d202d7266207e | xxd -r -p | bash`, has: []string{"rm -rf /home/u"}, check: via("xxd|bash")},
	{name: "heredoc bash", src: "bash <<'EOF'\nrm -rf ~\nEOF", has: []string{"rm -rf /home/u"}, check: via("heredoc")},
	{name: "heredoc unquoted bash", src: "bash <<EOF\nrm -rf $HOME/x\nEOF", has: []string{"rm -rf /home/u/x"}, check: via("heredoc")},
	{name: "heredoc cat", src: "cat <<'EOF'\nrm -rf ~\nEOF", has: []string{"cat"}, not: []string{"rm"}, check: func(c Command) string {
		if !c.StdinKnown || c.Stdin != "rm -rf ~\n" {
			return fmt.Sprintf("Stdin %q/%v", c.Stdin, c.StdinKnown)
		}
		return ""
	}},
	{name: "heredoc tee", src: "tee f <<'EOF'\nrm -rf ~\nEOF", not: []string{"rm"}},
	{name: "heredoc python", src: "python3 - <<'EOF'\nimport os\nEOF", not: []string{"import"}},
	{name: "heredoc cat to sh", src: "cat <<'EOF' | sh\nrm -rf x\nEOF", has: []string{"rm -rf x"}},
	{name: "herestring bash", src: `bash <<< 'rm -rf /'`, has: []string{"rm -rf /"}, check: via("heredoc")},
	{name: "herestring grep", src: `grep x <<< "rm -rf /"`, not: []string{"rm"}},

	{name: "base64 of a file", src: `base64 -d f | sh`, not: []string{"rm"}, issues: []IssueKind{DynamicCode}},
	{name: "base64 herestring", src: `base64 -d <<< cm0gLXJmIH4= | sh`, has: []string{"rm -rf /home/u"}, check: via("base64|sh")},
	{name: "sh -c positional", src: `sh -c 'rm -rf "$1"' _ /etc`, has: []string{"rm -rf /etc"}},
	{name: "parallel inputs are commands", src: `parallel ::: 'rm -rf x' ls`, has: []string{"rm -rf x", "ls"}},

	// state
	{name: "read forgets", src: `x=ls; read x; $x`, issues: []IssueKind{DynamicCommand}},
	{name: "arithmetic forgets", src: `x=1; ((x++)); rm $x`, has: []string{"rm ?"}},
	{name: "branch forgets", src: `x=a; if c; then x=b; fi; rm $x`, has: []string{"rm ?"}},
	{name: "pipeline does not leak", src: `x=a | true; rm $x`, has: []string{"rm ?"}},
	{name: "test clause", src: `[[ -f x ]]`, has: []string{"[["}},
	{name: "let", src: `let x=1`, has: []string{"let"}},
	{name: "fork bomb", src: `:(){ :|:& };:`, has: []string{":"}},

	// issues and budgets
	{name: "parse error", src: `rm -rf (`, issues: []IssueKind{ParseError}, result: func(r Result) string {
		if len(r.Commands) != 0 {
			return "commands from unparsable input"
		}
		return ""
	}},
	{name: "depth budget", src: `bash -c 'bash -c "rm x"'`, opt: &Options{MaxDepth: 1}, has: []string{"bash -c rm x"}, not: []string{"rm"}, issues: []IssueKind{BudgetExceeded}},
	{name: "node budget", src: `a; b; c; d; e; f`, opt: &Options{MaxNodes: 3}, issues: []IssueKind{BudgetExceeded}},
	{name: "size budget", src: `echo ` + strings.Repeat("a", 100), opt: &Options{MaxBytes: 50}, issues: []IssueKind{BudgetExceeded}},
	{name: "empty", src: ``},
}

func TestWalk(t *testing.T) {
	for _, tc := range walkCases {
		t.Run(tc.name, func(t *testing.T) {
			opt := testOpt
			if tc.opt != nil {
				opt = *tc.opt
			}
			r := Walk(tc.src, opt)
			got := renderAll(r)
			for _, h := range tc.has {
				if _, ok := find(r, h); !ok {
					t.Errorf("Walk(%q) = %s, want a command %q", tc.src, got, h)
				}
			}
			for _, n := range tc.not {
				for _, c := range r.Commands {
					if len(c.Argv) > 0 && c.Argv[0].Value == n {
						t.Errorf("Walk(%q) = %s, want no command %q", tc.src, got, n)
					}
				}
			}
			var kinds []IssueKind
			for _, is := range r.Issues {
				if !slices.Contains(kinds, is.Kind) {
					kinds = append(kinds, is.Kind)
				}
			}
			slices.Sort(kinds)
			want := slices.Clone(tc.issues)
			slices.Sort(want)
			if !slices.Equal(kinds, want) {
				t.Errorf("Walk(%q) = %s, want issues %v", tc.src, got, want)
			}
			if tc.check != nil && len(tc.has) > 0 {
				if c, ok := find(r, tc.has[0]); ok {
					if msg := tc.check(c); msg != "" {
						t.Errorf("Walk(%q) = %s: %q: %s", tc.src, got, tc.has[0], msg)
					}
				}
			}
			if tc.result != nil {
				if msg := tc.result(r); msg != "" {
					t.Errorf("Walk(%q) = %s: %s", tc.src, got, msg)
				}
			}
		})
	}
}
