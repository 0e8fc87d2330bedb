package walk

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestVariablesFollowTheShell: what the walk says a variable holds when a
// later command uses it is what bash gives, or unknown; never another
// known value. Arrays are followed where their elements are known;
// whatever can change a variable behind the walk's back (an element
// assigned by index, in arithmetic or by ${a[1]:=v}, a trap that fires at
// a signal, a name reference, an attribute that rewrites values, a PS4
// expanded before each command) leaves it unknown. Each known answer is
// checked against bash itself where bash is installed.
func TestVariablesFollowTheShell(t *testing.T) {
	cases := []struct {
		src  string // ends with a command "printf '<%s>' WORDS"
		want string // its argv as render prints it, after printf '<%s>'
	}{
		{`a=(b c); printf '<%s>' "${a[@]}"`, "b c"},
		{`a=(b 'c d'); printf '<%s>' "${a[@]}"`, "b c d"},
		{`a=(b 'c d'); printf '<%s>' ${a[@]}`, "b c d"},
		{`a=(b c); IFS=,; printf '<%s>' "${a[*]}"`, "b,c"},
		{`a=(b c); printf '<%s>' "x${a[@]}y"`, "xb cy"},
		{`a=(b c); printf '<%s>' "${a[1]}" "${#a[@]}" "$a"`, "c 2 b"},
		{`a=(b c); a+=(d); printf '<%s>' "${a[@]}"`, "b c d"},
		{`a=(b c); a[1]=e; printf '<%s>' "${a[@]}"`, "b e"},
		{`a=(b c); a=f; printf '<%s>' "${a[@]}"`, "f c"},
		{`a=({x,y}.go); printf '<%s>' "${a[@]}"`, "x.go y.go"},
		{`declare -a a=(b c); printf '<%s>' "${a[@]}"`, "b c"},
		{`x=b; printf '<%s>' "${x[@]}" "${x[0]}" "${x[1]}"`, "b b "},
		// an empty array is no word; a for loop over known words runs
		// its body once for each
		{`a=(); printf '<%s>' "${a[@]}" x`, "x"},
		{`a=(); a+=(b 'c d'); printf '<%s>' "${a[@]}"`, "b c d"},
		{`a=(); a=x; printf '<%s>' "${a[@]}" "${#a[@]}"`, "x 1"},
		{`a=(); printf '<%s>' "${#a[@]}" "p${a[@]}q" ${a[@]}`, "0 pq"},
		{`a=(); printf '<%s>' "${a[*]}" x`, " x"},
		{`b=(); for v in debug release; do x=$v; b+=("build/$v"); done; printf '<%s>' "$x" "$v" "${b[@]}"`, "release release build/debug build/release"},
		// unknown, never another value
		{`for v in a b; do x=$v; break; done; printf '<%s>' "$x"`, "?"},
		{`f() { return; }; for v in a b; do x=$v; f; done; printf '<%s>' "$x"`, "?"},
		{`for v in a *.go; do x=$v; done; printf '<%s>' "$x"`, "?"},
		// red-team-29: a way out of a loop the name does not show, or a
		// trap that may take it
		{`for f in a b; do \break; done; printf '<%s>' "$f"`, "?"},
		{`for f in a b; do br\eak; done; printf '<%s>' "$f"`, "?"},
		{`for f in a b; do 'continue'; x=$f; done; printf '<%s>' "$f"`, "?"},
		{`trap break ERR; for f in a b; do false; done; printf '<%s>' "$f"`, "?"},
		// a read-only name keeps its value; one that may not be, or that
		// is local to a function, is unknown
		{`f=a; readonly f; read f <<< b 2>/dev/null; printf '<%s>' "$f"`, "a"},
		{`f=a; readonly f; unset f 2>/dev/null; printf '<%s>' "$f"`, "a"},
		{`readonly f=a; declare f=b 2>/dev/null; printf '<%s>' "$f"`, "a"},
		{`declare -r f=a; printf -v f %s b 2>/dev/null; printf '<%s>' "$f"`, "a"},
		{`f=a; readonly f; for f in b; do :; done 2>/dev/null; printf '<%s>' "$f"`, "a"},
		{`a=(x); readonly a; mapfile -t a < /dev/null 2>/dev/null; printf '<%s>' "${a[@]}"`, "x"},
		{`readonly $n; f=b; printf '<%s>' "$f"`, "?"},
		{`g() { local -r f=a; }; g; f=b; printf '<%s>' "$f"`, "?"},
		{`[ -e /nonexistent ] && readonly f=a; f=b; printf '<%s>' "$f"`, "?"},
		{`readonly -f g 2>/dev/null; f=b; printf '<%s>' "$f"`, "b"},
		{`x=$HOME; x[1]=build; printf '<%s>' "$x"`, "?"},
		{`a=(b c); a[5]=d; printf '<%s>' "${a[@]}"`, "?"},
		{`a=(b *.go); printf '<%s>' "${a[@]}"`, "?"},
		{`a=([1]=b c); printf '<%s>' "${a[@]}"`, "?"},
		{`a=(b c); (( a[0]=1 )); printf '<%s>' "${a[@]}"`, "?"},
		{`a=(b c); let 'a[0]=1'; printf '<%s>' "$a"`, "?"},
		{`x=b; let "x=1"; printf '<%s>' "$x"`, "?"},
		{`x=; : ${x[0]:=$HOME}; printf '<%s>' "$x"`, "?"},
		{`x=b; y=x; : ${!y:=z}; printf '<%s>' "$x"`, "?"},
		{`x=b; declare -n r=x; r=$HOME; printf '<%s>' "$x"`, "?"},
		{`declare -u x; x=build; printf '<%s>' "$x"`, "?"},
		{`trap 'x=$HOME' DEBUG; x=build; printf '<%s>' "$x"`, "?"},
		{`trap f USR1; f() { x=$HOME; }; x=build; kill -USR1 $$; printf '<%s>' "$x"`, "?"},
		{`PS4='${x:=/}'; x=; printf '<%s>' "$x"`, "?"},
		{`a=(b c); read -ra a < /dev/null; printf '<%s>' "${a[@]}"`, "?"},
		{`a=(b c); unset 'a[0]'; printf '<%s>' "${a[@]}"`, "?"},
		{`x=build; x=$HOME $e; printf '<%s>' "$x"`, "?"},
		{`f() { :; }; trap f INT; f() { x=$HOME; }; x=build; kill -INT $$; printf '<%s>' "$x"`, "?"},
		{`trap 'cd /' USR1; cd /work; kill -USR1 $$; printf '<%s>' "$PWD"`, "?"},
		{`trap 'eval "$c"' INT; x=build; printf '<%s>' "$x"`, "?"},
		// red-team-28: what builtins set unnamed, lastpipe, aliases, CDPATH
		{`OPTARG=build; getopts f: o -f "$HOME"; printf '<%s>' "$OPTARG"`, "?"},
		{`REPLY=build; read < /dev/null; printf '<%s>' "$REPLY"`, "?"},
		{`REPLY=build; select x in a; do break; done < /dev/null; printf '<%s>' "$REPLY"`, "?"},
		{`shopt -s lastpipe; d=build; echo ~ | read -r d; printf '<%s>' "$d"`, "?"},
		{`shopt -s expand_aliases; alias r='d=~'` + "\n" + `d=build; r; printf '<%s>' "$d"`, "?"},
		{`CDPATH=/; cd etc; printf '<%s>' "$PWD"`, "?"},
		{`CDPATH=; cd /tmp && cd .; printf '<%s>' "$PWD"`, "/tmp"},
		{`cd /tmp && cd / && printf '<%s>' "$OLDPWD"`, "/tmp"},
		{`cd /tmp; cd /nonexistent-dir 2>/dev/null; printf '<%s>' "$PWD"`, "?"},
		{`declare -n r=x; x=/tmp; printf '<%s>' "$r"`, "?"},
		{`interrupted=0; trap 'interrupted=1' INT; interrupted=0; printf '<%s>' "$interrupted"`, "?"},
		// only what it may change: what a trap assigns, a name
		// reference's target, the names an attribute rewrites
		// (agent-shapes-20)
		{`interrupted=0; trap 'interrupted=1' INT; out=/tmp/b; printf '<%s>' "$out"`, "/tmp/b"},
		{`f() { local -n _ref=$1; _ref=v; }; f a; out=/tmp/b; printf '<%s>' "$out"`, "/tmp/b"},
		{`x=a; declare -n r=x; y=b; r=c; printf '<%s>' "$y"`, "b"},
		{`f() { local -n _ref=$1; _ref=v; }; f a; out=/tmp/b; true && true; printf '<%s>' "$out"`, "/tmp/b"},
		{`declare -u x; y=build; printf '<%s>' "$y"`, "build"},
		// an EXIT trap fires only at the end; a trap that changes nothing
		// changes nothing
		{`trap 'x=$HOME' EXIT; x=build; printf '<%s>' "$x"`, "build"},
		{`trap 'kill $pid; rm -f "$x.pid"' INT TERM; x=build; printf '<%s>' "$x"`, "build"},
		{`stop() { kill "$pid"; }; trap stop INT; x=build; cd /tmp; printf '<%s>' "$x" "$PWD"`, "build /tmp"},
		{`PS4='+ $LINENO: '; x=build; printf '<%s>' "$x"`, "build"},
	}
	bash, _ := exec.LookPath("bash")
	for _, c := range cases {
		r := Walk(c.src, testOpt)
		var got string
		for _, cmd := range r.Commands {
			if len(cmd.Argv) > 1 && cmd.Argv[0].Value == "printf" {
				got = strings.TrimPrefix(render(cmd), "printf <%s>")
				got = strings.TrimPrefix(got, " ")
			}
		}
		unknown := strings.Contains(got, "?")
		if unknown != strings.Contains(c.want, "?") || !unknown && got != c.want {
			t.Errorf("Walk(%q): printf's words %q, want %q", c.src, got, c.want)
			continue
		}
		if bash == "" || unknown {
			continue
		}
		out, err := exec.Command(bash, "-c", c.src).Output()
		if err != nil {
			t.Errorf("bash -c %q: %v", c.src, err)
			continue
		}
		words := strings.Split(strings.TrimSuffix(strings.TrimPrefix(string(out), "<"), ">"), "><")
		if strings.Join(words, " ") != c.want {
			t.Errorf("bash -c %q printed %q; the case wants %q", c.src, out, c.want)
		}
	}
}

// TestExitTrapSeesTheStateAtExit: an EXIT trap's code runs when the shell
// exits, after whichever command ends it (set -e, exit, a signal), with the
// variables and the directory as they are then; another trap's at an
// error, a signal, a return or before a command. The walk judges it in
// every state the line passes through after the trap is set: what bash
// prints last is among what the walk gives its printf, or the walk says
// unknown.
func TestExitTrapSeesTheStateAtExit(t *testing.T) {
	cases := []struct {
		src  string
		want []string // among the trap's printf words the walk gives ("-w": not among them)
	}{
		{`x=build; trap 'printf "<%s>" "$x"' EXIT; x=.`, []string{".", "-build"}},
		// the shell cannot end while an assignment of literal text and
		// command output stores it: the trap is judged after it
		// (agent-shapes-21), unless something before may end it
		{`trap 'printf "<%s>" "${tmp:-}"' EXIT; tmp=$(echo /tmp/t.1)`, []string{"?"}},
		{`tmp=; trap 'printf "<%s>" "$tmp"' EXIT; tmp="$(echo /tmp/t.1)"`, []string{"?"}},
		{`x=build; trap 'printf "<%s>" "$x"' EXIT; x=$y`, []string{"build", "?"}},
		{`x=build; trap 'printf "<%s>" "$x"' EXIT; false; x=.`, []string{"build", "."}},
		// a trap a shell of its own sets ends with it (agent-shapes-4 and
		// -18: a bash -c's or heredoc's trap was judged again with the
		// outer shell's variables, where its name was unknown)
		{`(x=a; trap 'printf "<%s>" "$x"' EXIT); x=/`, []string{"a", "-/"}},
		{`bash -c 'x=a; trap "printf \"<%s>\" \"\$x\"" EXIT'; x=/`, []string{"a", "-/"}},
		{`echo $(x=a; trap 'printf "<%s>" "$x"' EXIT) >/dev/null; x=/; printf '<%s>' a`, []string{"a", "-/"}},
		{`x=build; trap 'printf "<%s>" "$x"' EXIT; x=.; x=build`, []string{"."}},
		{`set -e; x=build; trap 'printf "<%s>" "$x"' EXIT; x=/; false; x=build`, []string{"/"}},
		{`trap 'printf "<%s>" "$PWD"' EXIT; cd /tmp`, []string{"/tmp"}},
		{`trap 'printf "<%s>" "$x"' EXIT; x=a; x=b; x=c; x=d; x=e; x=f; x=g; x=h; x=i; x=j; x=k`, []string{"?"}},
		{`x=a; trap 'printf "<%s>" "$x"' EXIT; trap - EXIT; x=b`, []string{"a"}},
		{`tmp=/tmp/w.1; trap 'printf "<%s>" "$tmp"' EXIT; cd "$tmp" 2>/dev/null; echo hi`, []string{"/tmp/w.1"}},
		// every trap runs later: at an error, a signal, a return, before
		// each command (red-team-29)
		{`f=README.md; trap 'printf "<%s>" "$f"' ERR; f=/x; false; trap - ERR`, []string{"/x"}},
		{`f=README.md; trap 'printf "<%s>" "$f"' DEBUG; f=/x; trap - DEBUG`, []string{"/x"}},
		{`f=README.md; trap 'printf "<%s>" "$f"' RETURN; f=/x; . /dev/null; trap - RETURN`, []string{"/x"}},
		{`d=build; trap 'printf "<%s>" "$d"' USR1; d=/x; kill -USR1 $$; trap - USR1`, []string{"/x"}},
		{`d=build; trap 'printf "<%s>" "$d"' USR1; trap USR1; d=/x`, []string{"build"}},
		// a RETURN trap runs as a function returns, with its locals: not
		// with what the caller puts in the name after (agent-shapes-22)
		{`f() { local d=/tmp/a; trap 'printf "<%s>" "$d"' RETURN; }; f; d=/; true`, []string{"/tmp/a", "-/"}},
		{`g() { :; }; d=/tmp/a; trap 'printf "<%s>" "$d"' RETURN; g; d=/; g; trap - RETURN`, []string{"/tmp/a", "/"}},
	}
	bash, _ := exec.LookPath("bash")
	for _, c := range cases {
		r := Walk(c.src, testOpt)
		got := map[string]bool{}
		for _, cmd := range r.Commands {
			if cmd.Via == "trap" && len(cmd.Argv) > 1 && cmd.Argv[0].Value == "printf" {
				w := strings.TrimPrefix(render(cmd), "printf <%s> ")
				if strings.Contains(w, "?") {
					w = "?"
				}
				got[w] = true
			}
		}
		for _, w := range c.want {
			if absent, ok := strings.CutPrefix(w, "-"); ok && len(w) > 1 {
				if got[absent] {
					t.Errorf("Walk(%q): the EXIT trap's printf was given %v; %q cannot reach it", c.src, keys(got), absent)
				}
			} else if !got[w] {
				t.Errorf("Walk(%q): the EXIT trap's printf was given %v; want %q among them", c.src, keys(got), w)
			}
		}
		if bash == "" || got["?"] {
			continue
		}
		out, _ := exec.Command(bash, "-c", c.src).Output()
		s := string(out)
		if i := strings.LastIndex(s, "<"); i >= 0 {
			s = s[i:]
		}
		if s != "" && !got[strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")] {
			t.Errorf("bash -c %q printed %q at exit; the walk gave the trap %v", c.src, s, keys(got))
		}
	}
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestGitTopIsTheWorkTree: $(git rev-parse --show-toplevel) is the work
// tree's top the caller names (Options.Top), from a directory the walk
// knows is in it (agent-shapes-21: cd "$(git rev-parse --show-toplevel)"
// && rm -rf dist asked, rm -rf "$root/bin" was denied); from elsewhere,
// with a GIT_ variable of the line, or given more, it is unknown.
func TestGitTopIsTheWorkTree(t *testing.T) {
	opt := testOpt
	opt.Top = opt.Cwd
	for _, c := range []struct{ src, want string }{
		{`printf '<%s>' "$(git rev-parse --show-toplevel)"`, opt.Cwd},
		{`root=$(git rev-parse --show-toplevel 2>/dev/null); printf '<%s>' "$root/bin"`, opt.Cwd + "/bin"},
		{`cd sub && cd "$(git rev-parse --show-toplevel)" && printf '<%s>' "$PWD"`, opt.Cwd},
		{`cd /tmp && printf '<%s>' "$(git rev-parse --show-toplevel)"`, "?"},
		{`GIT_DIR=/x/.git; printf '<%s>' "$(git rev-parse --show-toplevel)"`, "?"},
		{`printf '<%s>' "$(git -C .. rev-parse --show-toplevel)"`, "?"},
		{`printf '<%s>' "$(git rev-parse --show-toplevel >/tmp/x)"`, "?"},
	} {
		if got := printfArg(c.src, opt); got != c.want {
			t.Errorf("Walk(%q): printf was given %q, want %q", c.src, got, c.want)
		}
	}
	if r := Walk(`printf '<%s>' "$(git rev-parse --show-toplevel)"`, testOpt); !strings.Contains(renderAll(r), "printf <%s> ?") {
		t.Errorf("with no top known: %s", renderAll(r))
	}
}

// TestNulItemsAreWhole: mapfile -d ” NAME and read -r -d ” NAME fed by a
// process substitution keep each item whole: "${NAME[@]}" and "$NAME" are
// words that are exactly one item (Word.FedBy, the substitution's span);
// text around them, an unquoted use, -t without -d ”, read without -r, a
// value given later, is not.
func TestNulItemsAreWhole(t *testing.T) {
	for _, c := range []struct {
		src   string
		whole bool
	}{
		{`mapfile -d '' a < <(find . -print0); printf '<%s>' "${a[@]}"`, true},
		{`while IFS= read -r -d '' f; do printf '<%s>' "$f"; done < <(find . -print0)`, true},
		{`mapfile -d '' a < <(find . -print0); printf '<%s>' "${a[@]}/x"`, false},
		{`mapfile -d '' a < <(find . -print0); printf '<%s>' ${a[@]}`, false},
		{`mapfile -t a < <(find . -print0); printf '<%s>' "${a[@]}"`, false},
		{`read -d '' f < <(find . -print0); printf '<%s>' "$f"`, false},
		{`mapfile -d '' a < <(find . -print0); a=x$y; printf '<%s>' "${a[@]}"`, false},
		{`mapfile -d '' a < list; printf '<%s>' "${a[@]}"`, false},
	} {
		r := Walk(c.src, testOpt)
		found := false
		for _, cmd := range r.Commands {
			if len(cmd.Argv) > 1 && cmd.Argv[0].Value == "printf" {
				for _, a := range cmd.Argv[2:] {
					if a.FedBy != (Span{}) {
						found = true
						if got := c.src[a.FedBy.Start:a.FedBy.End]; got != "<(find . -print0)" {
							t.Errorf("Walk(%q): the item comes from %q", c.src, got)
						}
					}
				}
			}
		}
		if found != c.whole {
			t.Errorf("Walk(%q): printf was given a whole item: %v, want %v", c.src, found, c.whole)
		}
	}
}

// printfArg is what the last printf '<%s>' of src is given, "?" when
// any of it is not known.
func printfArg(src string, opt Options) string {
	var got string
	for _, cmd := range Walk(src, opt).Commands {
		if len(cmd.Argv) > 1 && cmd.Argv[0].Value == "printf" {
			got = strings.TrimPrefix(render(cmd), "printf <%s> ")
		}
	}
	if strings.Contains(got, "?") {
		return "?"
	}
	return got
}

// TestConditionalAssignmentOfAnUnsetVariable: a variable only a branch that
// may not have run assigns (make && BUILD=build) is, in ${BUILD:?}, what
// the branch gave it where the environment lacks it: unset, the shell
// stops the command there. Anywhere else, or read another way, it stays
// unknown. Each known answer is what bash does.
func TestConditionalAssignmentOfAnUnsetVariable(t *testing.T) {
	opt := testOpt
	opt.Unset = func(name string) bool { return name != "SET" }
	for _, c := range []struct{ src, want string }{
		{`true && BUILD=build; printf '<%s>' "${BUILD:?}"`, "build"},
		{`true && BUILD=build; printf '<%s>' "${BUILD?}/x"`, "build/x"},
		{`false || BUILD=build; printf '<%s>' "${BUILD:?}"`, "build"},
		{`if test -f x; then BUILD=out; fi; printf '<%s>' "${BUILD:?}"`, "out"},
		{`true && B=b; true && B=b; printf '<%s>' "${B:?}"`, "b"},
		{`true && BUILD=build; printf '<%s>' "$BUILD"`, "?"},
		{`true && BUILD=build; printf '<%s>' "${BUILD:-x}"`, "?"},
		{`true && SET=build; printf '<%s>' "${SET:?}"`, "?"},
		{`B=a; true && B=b; printf '<%s>' "${B:?}"`, "?"},
		{`true && B=a; true && B=b; printf '<%s>' "${B:?}"`, "?"},
		{`true && B=b; . ./env.sh; printf '<%s>' "${B:?}"`, "?"},
		{`true && B=(a b); printf '<%s>' "${B:?}"`, "?"},
		{`declare -n B=C; true && B=b; printf '<%s>' "${B:?}"`, "?"},
		{`true && PATH=/x; printf '<%s>' "${PATH:?}"`, "?"},
	} {
		if got := printfArg(c.src, opt); got != c.want {
			t.Errorf("Walk(%q): printf was given %q, want %q", c.src, got, c.want)
		}
	}
	if got := printfArg(`true && BUILD=build; printf '<%s>' "${BUILD:?}"`, testOpt); got != "?" {
		t.Errorf("with no environment known: printf was given %q, want unknown", got)
	}
}

// TestUnsetEnvironmentVariablesTakeTheirDefault: with Options.Unset, a
// ${NAME:-word} (and -, :=, =, :+, +) of an environment variable the line
// has not assigned expands as bash expands it for an unset name; a name
// the line assigned (or may have: read), one the environment sets, and
// bash's own variables do not (each answer checked against bash with the
// name unset).
func TestUnsetEnvironmentVariablesTakeTheirDefault(t *testing.T) {
	opt := testOpt
	opt.Unset = func(name string) bool { return name != "SET" }
	for _, c := range []struct{ src, want string }{
		{`printf '<%s>' "${OUT:-build}"`, "build"},
		{`printf '<%s>' "${OUT-build}"`, "build"},
		{`printf '<%s>' "${OUT:+x}dist"`, "dist"},
		{`OUT=${OUT:-./out}; printf '<%s>' "$OUT/bin"`, "./out/bin"},
		{`: "${OUT:=gen}"; printf '<%s>' "$OUT"`, "gen"},
		{`BIN=${BIN:-$PWD/.bin}; printf '<%s>' "$BIN"`, opt.Cwd + "/.bin"},
		{`OUT=/x; printf '<%s>' "${OUT:-build}"`, "/x"},
		{`read OUT; printf '<%s>' "${OUT:-build}"`, "?"},
		{`printf '<%s>' "${SET:-build}"`, "?"},
		{`printf '<%s>' "${PATH:-build}"`, "?"},
		{`printf '<%s>' "${BASH_ENV:-build}"`, "?"},
		{`printf '<%s>' "${1:-build}"`, "?"},
		{`printf '<%s>' "$OUT"`, "?"},
		{`eval "$X"; printf '<%s>' "${OUT:-build}"`, "?"},
		{`. ./env.sh; printf '<%s>' "${OUT:-build}"`, "?"},
		{`. ./env.sh; OUT=dist; printf '<%s>' "${OUT:-build}"`, "dist"},
	} {
		if got := printfArg(c.src, opt); got != c.want {
			t.Errorf("Walk(%q): printf was given %q, want %q", c.src, got, c.want)
		}
	}
	if r := Walk(`printf '<%s>' "${OUT:-build}"`, testOpt); !strings.Contains(renderAll(r), "printf <%s> ?") {
		t.Errorf("with no environment known: %s", renderAll(r))
	}
}
