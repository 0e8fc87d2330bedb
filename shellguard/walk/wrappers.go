package walk

import (
	"path"
	"slices"
	"strings"
)

// wrapperKind says where a wrapper's inner command is.
type wrapperKind uint8

const (
	innerArgv wrapperKind = iota // the operands after the options are an argv
	innerCode                    // the rest, joined by spaces, is a code string (ssh, watch)
)

// wrapperSpec is the option grammar of one wrapper: which options take a
// value, how many operands come before the inner command, and what running
// through it means.
type wrapperSpec struct {
	name  string
	sub   string // required subcommand ("exec" for docker exec), or ""
	short string // short options that take a value
	long  string // long options that take a value, space separated
	// operands before the inner command (timeout DURATION, ssh HOST…)
	operands int
	kind     wrapperKind
	// codeShort/codeLong name an option whose value is a code string
	// (su -c, script -c, flock -c, npx -c).
	codeShort byte
	codeLong  string
	priv      bool
	remote    bool
	assigns   bool   // NAME=VAL operands before the command (env)
	dynTail   bool   // more arguments come from stdin (xargs, parallel)
	stopOpts  string // short options that mean "no command runs" (command -v)
	noOpts    bool   // the wrapper takes no options (builtin, nohup's argv)
	dashDash  bool   // the inner command follows "--" (kubectl exec)
}

// wrapperTable lists the wrappers Walk unwraps. It is data: adding a
// wrapper is adding a row.
var wrapperTable = [...]wrapperSpec{
	{name: "sudo", short: "ugpCDhrtTUR", long: "user group prompt chdir close-from host role type command-timeout other-user chroot", priv: true},
	{name: "doas", short: "uC", priv: true},
	{name: "pkexec", long: "user", priv: true},
	{name: "su", short: "sgGw", long: "shell group supp-group whitelist-environment", codeShort: 'c', codeLong: "command session-command", priv: true, operands: 1},
	{name: "runuser", short: "sgGwu", long: "shell group supp-group whitelist-environment", codeShort: 'c', codeLong: "command session-command", priv: true},
	{name: "env", short: "uCS", long: "unset chdir split-string default-signal ignore-signal block-signal", assigns: true},
	{name: "command", stopOpts: "vV"},
	{name: "builtin", noOpts: true},
	{name: "exec", short: "a"},
	{name: "time", short: "fo", long: "format output"},
	{name: "timeout", short: "sk", long: "signal kill-after", operands: 1},
	{name: "nice", short: "n", long: "adjustment"},
	{name: "ionice", short: "cnp", long: "class classdata pid pgid uid", stopOpts: "pPu"},
	{name: "chrt", long: "sched-runtime sched-deadline sched-period", operands: 1, stopOpts: "p"},
	{name: "taskset", long: "cpu-list", operands: 1, stopOpts: "p"},
	{name: "stdbuf", short: "ioe", long: "input output error"},
	{name: "nohup"},
	{name: "setsid"},
	{name: "flock", short: "wEc", long: "timeout conflict-exit-code", codeShort: 'c', codeLong: "command", operands: 1},
	{name: "strace", short: "oepsuEabIOPSX", long: "output trace signal attach string-limit user env"},
	{name: "ltrace", short: "oepsuEabnAD", long: "output library"},
	{name: "unbuffer"},
	{name: "busybox"},
	{name: "xargs", short: "ILnPsdEa", long: "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var", dynTail: true},
	{name: "parallel", short: "jSaIdnN", long: "jobs sshlogin arg-file delimiter colsep max-args", dynTail: true},
	{name: "watch", short: "nq", long: "interval equexit", kind: innerCode},
	{name: "script", short: "tTOIBEc", long: "timing log-timing log-out log-in log-io echo", codeShort: 'c', codeLong: "command"},
	{name: "chroot", long: "userspec groups", operands: 1},
	{name: "unshare", short: "SGRwl", long: "setuid setgid root wd propagation map-user map-group"},
	{name: "firejail"},
	{name: "nsenter", short: "tSG", long: "target setuid setgid"},
	{name: "npx", short: "pc", long: "package call", codeShort: 'c', codeLong: "call"},
	{name: "pnpx", short: "p", long: "package"},
	{name: "bunx", short: "p", long: "package"},
	{name: "uvx", short: "pw", long: "from with python"},
	{name: "npm", sub: "exec", short: "pc", long: "package call workspace", codeShort: 'c', codeLong: "call"},
	{name: "pipx", sub: "run", long: "spec python pip-args"},
	{name: "ssh", short: "BbcDEeFIiJLlmOoPpQRSWw", operands: 1, kind: innerCode, remote: true},
	{name: "docker", sub: "exec", short: "euw", long: "env env-file user workdir detach-keys", operands: 1, remote: true},
	{name: "podman", sub: "exec", short: "euw", long: "env env-file user workdir detach-keys", operands: 1, remote: true},
	{name: "docker", sub: "run", short: "evpwumlhac", long: dockerRunLong, operands: 1, remote: true},
	{name: "podman", sub: "run", short: "evpwumlhac", long: dockerRunLong, operands: 1, remote: true},
	{name: "docker", sub: "container exec", short: "euw", long: "env env-file user workdir detach-keys", operands: 1, remote: true},
	{name: "podman", sub: "container exec", short: "euw", long: "env env-file user workdir detach-keys", operands: 1, remote: true},
	{name: "docker", sub: "container run", short: "evpwumlhac", long: dockerRunLong, operands: 1, remote: true},
	{name: "podman", sub: "container run", short: "evpwumlhac", long: dockerRunLong, operands: 1, remote: true},
	{name: "kubectl", sub: "exec", short: "cnf", long: "container namespace filename context cluster kubeconfig pod-running-timeout", operands: 1, remote: true, dashDash: true},
}

const dockerRunLong = "env volume publish workdir user memory label hostname attach cpus name network entrypoint mount add-host device cap-add cap-drop env-file gpus ipc pid platform restart security-opt tmpfs ulimit shm-size stop-signal log-driver log-opt dns expose label-file runtime userns uts volumes-from cidfile cgroupns link pull"

// progName is the name a word runs: the base name of a path.
func progName(s string) string {
	if strings.Contains(s, "/") {
		return path.Base(s)
	}
	return s
}

// lookupWrapper finds the wrapper row for argv, or nil.
func lookupWrapper(argv []Word) *wrapperSpec {
	name := progName(argv[0].Value)
	for i := range wrapperTable {
		sp := &wrapperTable[i]
		if sp.name != name {
			continue
		}
		if sp.sub != "" && !matchSub(argv, sp.sub) {
			if !(sp.name == "npm" && len(argv) > 1 && argv[1].Value == "x") {
				continue
			}
		}
		return sp
	}
	return nil
}

// matchSub reports whether argv[1:] starts with the words of sub
// ("exec", "container exec").
func matchSub(argv []Word, sub string) bool {
	k := 1
	for sub != "" {
		var f string
		f, sub, _ = strings.Cut(sub, " ")
		if k >= len(argv) || argv[k].Dynamic || argv[k].Value != f {
			return false
		}
		k++
	}
	return true
}

// subLen is the number of words in a subcommand ("container exec": 2).
func subLen(sub string) int {
	if sub == "" {
		return 0
	}
	return strings.Count(sub, " ") + 1
}

// unwrapped is what a wrapper runs.
type unwrapped struct {
	inner   []Word
	code    *Word // a code string run by sh -c
	assigns []Assign
	chdir   *Word  // env -C DIR
	split   *Word  // env -S STRING
	shell   bool   // sudo -s / -i without a command: an interactive shell
	replace string // xargs -I R: R in the inner argv stands for input
	// argsElsewhere: xargs or parallel takes its input from a file or the
	// command line (-a FILE, --arg-file, ::: ARGS, :::: FILE), not stdin
	argsElsewhere bool
	nul           bool   // xargs -0 / --null: its input items end with NUL
	raw           []Word // xargs: the inner argv before input was marked unknown
	none          bool   // no command runs through the wrapper (command -v, ionice -p)
	// computedAssigns is the first word only known at run time that env
	// took for assignments before its program.
	computedAssigns *Word
}

func hasWord(list, w string) bool {
	for list != "" {
		var f string
		f, list, _ = strings.Cut(list, " ")
		if f == w {
			return true
		}
	}
	return false
}

// assignName returns NAME when prefix starts with NAME= (a variable's
// name, then "=").
func assignName(prefix string) (string, bool) {
	n, _, ok := strings.Cut(prefix, "=")
	if !ok || n == "" || !isIdentStart(n[0]) {
		return "", false
	}
	for i := 1; i < len(n); i++ {
		if c := n[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "", false
		}
	}
	return n, true
}

// unwrap applies the spec's grammar to argv.
func (sp *wrapperSpec) unwrap(argv []Word) unwrapped {
	var u unwrapped
	i := 1 + subLen(sp.sub)
	operands := sp.operands
	sawDashDash := false
	for i < len(argv) {
		a := argv[i]
		v := a.Value
		if a.Dynamic {
			// env PATH="$PATH" go build: a word whose known start is
			// NAME= is an assignment whatever its value, as env reads
			// it (and as the shell's own NAME="$X" cmd is one).
			if n, ok := assignName(a.Prefix); ok && sp.assigns && !sawDashDash {
				u.assigns = append(u.assigns, Assign{Name: n, Value: Word{Value: strings.TrimPrefix(v, n+"="), Dynamic: true, Prefix: strings.TrimPrefix(a.Prefix, n+"="), Span: a.Span}})
				i++
				continue
			}
			// env $(grep -v '^#' .env | xargs) ./bin/app: words only
			// known at run time before a plain program are taken for the
			// assignments they are written as; had one been no NAME=VALUE
			// it would be the program, which Issue.EnvAssigns says.
			if sp.assigns && !sawDashDash && a.Prefix == "" && i+1 < len(argv) && !argv[i+1].Dynamic && !strings.HasPrefix(argv[i+1].Value, "-") && !strings.Contains(argv[i+1].Value, "=") {
				u.assigns = append(u.assigns, Assign{Value: a})
				if u.computedAssigns == nil {
					u.computedAssigns = &argv[i]
				}
				i++
				continue
			}
			break
		}
		if sp.name == "env" && v == "-" && !sawDashDash {
			i++ // env - is env -i
			continue
		}
		if sp.noOpts || len(v) < 2 || v[0] != '-' || sawDashDash {
			if sp.assigns && strings.Contains(v, "=") && !strings.HasPrefix(v, "=") {
				n, val, _ := strings.Cut(v, "=")
				u.assigns = append(u.assigns, Assign{Name: n, Value: Word{Value: val, Span: a.Span}})
				i++
				continue
			}
			if operands > 0 {
				if sp.name == "su" && v == "-" { // su - user
					i++
					continue
				}
				operands--
				i++
				continue
			}
			if sp.dashDash && !sawDashDash {
				// kubectl exec POD CMD without "--" is the legacy form.
			}
			break
		}
		if v == "--" {
			i++
			sawDashDash = true
			if sp.dashDash {
				operands = 0
			}
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			if hasWord(sp.codeLong, name) {
				if hasVal {
					w := Word{Value: val, Span: a.Span}
					u.code = &w
				} else if i+1 < len(argv) {
					w := argv[i+1]
					u.code = &w
					i++
				}
				i++
				continue
			}
			if sp.name == "env" && (name == "chdir" || name == "split-string") {
				var w Word
				if hasVal {
					w = Word{Value: val, Span: a.Span}
				} else if i+1 < len(argv) {
					w = argv[i+1]
					i++
				}
				if name == "chdir" {
					u.chdir = &w
				} else {
					u.split = &w
				}
				i++
				if u.split != nil {
					break
				}
				continue
			}
			if (sp.name == "xargs" || sp.name == "parallel") && name == "arg-file" {
				u.argsElsewhere = true
			}
			if sp.name == "xargs" && name == "null" {
				u.nul = true
			}
			if sp.name == "xargs" && (name == "replace" || name == "eof") {
				// optional values, attached only (--replace[=R], --eof[=E])
				if name == "replace" {
					u.replace = "{}"
					if hasVal {
						u.replace = val
					}
				}
				i++
				continue
			}
			if !hasVal && hasWord(sp.long, name) {
				i++
			}
			i++
			continue
		}
		// a cluster of short options
		j := 1
		for ; j < len(v); j++ {
			ch := v[j]
			if sp.name == "nice" && ch >= '0' && ch <= '9' {
				break
			}
			if strings.IndexByte(sp.stopOpts, ch) >= 0 {
				u.none = true
				return u
			}
			if sp.name == "xargs" && (ch == 'i' || ch == 'e') {
				// -i[R], -e[E]: optional values, attached only
				if ch == 'i' {
					u.replace = "{}"
					if j+1 < len(v) {
						u.replace = v[j+1:]
					}
				}
				break
			}
			if sp.name == "sudo" && (ch == 's' || ch == 'i') || sp.name == "doas" && ch == 's' {
				u.shell = true
			}
			if sp.codeShort != 0 && ch == sp.codeShort {
				var w Word
				if j+1 < len(v) {
					w = Word{Value: v[j+1:], Span: a.Span}
				} else if i+1 < len(argv) {
					w = argv[i+1]
					i++
				}
				u.code = &w
				break
			}
			if (sp.name == "xargs" || sp.name == "parallel") && ch == 'a' {
				u.argsElsewhere = true
			}
			if sp.name == "xargs" && ch == '0' {
				u.nul = true
			}
			if strings.IndexByte(sp.short, ch) >= 0 {
				var w Word
				if j+1 < len(v) {
					w = Word{Value: v[j+1:], Span: a.Span}
				} else if i+1 < len(argv) {
					w = argv[i+1]
					i++
				}
				if sp.name == "env" && ch == 'C' {
					u.chdir = &w
				}
				if sp.name == "env" && ch == 'S' {
					u.split = &w
				}
				if sp.name == "xargs" && ch == 'I' {
					u.replace = w.Value
				}
				break
			}
		}
		i++
		if u.split != nil {
			break
		}
	}
	rest := argv[min(i, len(argv)):] // an option's value may be missing at the end
	if sp.kind == innerCode && len(rest) > 0 {
		w := joinWords(rest)
		u.code = &w
		return u
	}
	u.inner = rest
	if sp.name == "parallel" {
		// the arguments after ::: / :::: are inputs, not the command
		for k, a := range rest {
			if !a.Dynamic && (a.Value == ":::" || a.Value == "::::" || a.Value == ":::+" || a.Value == "::::+") {
				u.inner = rest[:k]
				u.argsElsewhere = true
				if k == 0 {
					// parallel ::: CMD…: each input is a command line
					code := joinWords(rest[1:])
					lines := make([]string, 0, len(rest)-1)
					for _, in := range rest[1:] {
						lines = append(lines, in.Value)
					}
					code.Value = strings.Join(lines, "\n")
					if a.Value != ":::" {
						code.Dynamic = true
					}
					u.code = &code
					return u
				}
				break
			}
		}
	}
	u.raw = u.inner
	if u.replace != "" {
		// xargs -I R: input replaces R and is not appended
		inner := make([]Word, len(u.inner))
		for k, a := range u.inner {
			inner[k] = placeholder(a, u.replace)
			inner[k].Input = inner[k].Input && !u.argsElsewhere
		}
		u.inner = inner
		return u
	}
	if sp.dynTail && len(u.inner) > 0 {
		sp0 := u.inner[len(u.inner)-1].Span
		u.inner = append(append([]Word(nil), u.inner...), Word{Dynamic: true, Input: !u.argsElsewhere, Span: sp0})
	}
	return u
}

// xargsKnown rebuilds the inner argv of xargs from stdin text Walk knows
// (echo ~ | xargs rm -rf): with -I R the single input line replaces R,
// otherwise the whitespace-separated items are appended. It gives up (false)
// on options that change how input is read, on quoting in the input, and on
// more than one -I line or 64 items.
func xargsKnown(argv []Word, u unwrapped, in output) ([]Word, bool) {
	if !in.known || len(u.raw) == 0 {
		return nil, false
	}
	for _, a := range argv[1 : len(argv)-len(u.raw)] {
		v := a.Value
		if a.Dynamic || v == "-0" || v == "--null" || strings.HasPrefix(v, "-d") || strings.HasPrefix(v, "--delimiter") ||
			strings.HasPrefix(v, "-a") || strings.HasPrefix(v, "--arg-file") || strings.HasPrefix(v, "-E") ||
			strings.HasPrefix(v, "-e") || strings.HasPrefix(v, "--eof") {
			return nil, false
		}
	}
	if strings.ContainsAny(in.s, "'\"\\\x00") {
		return nil, false
	}
	sp := u.raw[len(u.raw)-1].Span
	if u.replace != "" {
		line := strings.TrimSpace(in.s)
		if lines := strings.Split(line, "\n"); len(lines) > 1 {
			// One command a line. Judged with the first when every line is
			// a plain token (letters, digits, _ and -, no dot or slash:
			// seq's numbers, a list of names): such a token can neither
			// climb out of a directory, name a dotted file (every protected
			// name has a dot), nor be read as shell syntax in a code
			// string, so each line's command has the first one's effects.
			if len(lines) > 64 || slices.ContainsFunc(lines, func(l string) bool { return !plainToken(l) }) {
				return nil, false
			}
			line = lines[0]
		}
		if line == "" {
			return nil, false
		}
		out := make([]Word, len(u.raw))
		for k, a := range u.raw {
			if !a.Dynamic {
				a.Value = strings.ReplaceAll(a.Value, u.replace, line)
			}
			out[k] = a
		}
		return out, true
	}
	items := strings.Fields(in.s)
	if len(items) > 64 {
		return nil, false
	}
	out := append([]Word(nil), u.raw...)
	for _, it := range items {
		out = append(out, Word{Value: it, Span: sp})
	}
	return out, true
}

// joinWords joins words with spaces, as ssh and eval do.
func joinWords(ws []Word) Word {
	var b strings.Builder
	out := Word{}
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.Dynamic && !out.Dynamic {
			out.Dynamic = true
			out.Prefix = b.String() + w.Prefix
		}
		b.WriteString(w.Value)
	}
	out.Value = b.String()
	if len(ws) > 0 {
		out.Span = Span{ws[0].Span.Start, ws[len(ws)-1].Span.End}
	}
	return out
}

// plainToken reports whether s is a token xargs -I can put anywhere in a
// command with no effect of its own: letters, digits, _ and -, not
// starting with - (an option).
func plainToken(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
