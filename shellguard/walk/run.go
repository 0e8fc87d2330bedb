package walk

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// stdinSource says where a command's stdin comes from.
type stdinSource uint8

const (
	stdinNone stdinSource = iota // inherited (the terminal, the agent)
	stdinFile                    // < file
	stdinText                    // a pipe, heredoc or here-string
)

// walkCall evaluates one simple command and runs it.
func (w *walker) walkCall(s *syntax.Stmt, ce *syntax.CallExpr, st *state, c *ctx) output {
	cmd := w.base(s, c)
	var assigns []*syntax.Assign
	for _, a := range ce.Assigns {
		if a.Name != nil {
			cmd.Assigns = append(cmd.Assigns, w.assign(a, st, c))
			assigns = append(assigns, a)
		}
	}
	var argv []Word
	for _, a := range ce.Args {
		argv = append(argv, w.fields(a, st, c)...)
		if w.b.stopped {
			return output{}
		}
	}
	src := stdinNone
	if c.stdinPiped {
		src = stdinText
	}
	cmd.Redirects = append(cmd.Redirects, w.redirects(s.Redirs, st, c, &cmd)...)
	for _, r := range cmd.Redirects[len(c.redirs):] {
		if r.Fd != "" && r.Fd != "0" {
			continue
		}
		if r.IsBody {
			src = stdinText
		} else if r.Op == "<" || r.Op == "<>" {
			src = stdinFile
		}
	}
	cmd.Cwd, cmd.CwdDynamic, cmd.CwdAlts, cmd.CwdVar = st.cwd, st.cwdDyn, slices.Clone(st.cwdAlts), st.cwdVar
	if len(argv) > 0 && argv[0].Dynamic {
		// A command name that expands to nothing leaves its
		// assignments in the shell (x=v $empty).
		for _, a := range cmd.Assigns {
			st.set(a.Name, "", false)
		}
	}
	if len(argv) == 0 {
		// No command name: the assignments are the shell's (x=v, and
		// x=v $(true), whose name expands to nothing).
		for i, a := range cmd.Assigns {
			setAssigned(st, assigns[i], a)
		}
		if len(cmd.Assigns) > 0 || len(cmd.Redirects) > 0 {
			w.emit(cmd)
		}
		return output{}
	}
	return w.run(cmd, argv, st, c, src)
}

// maxWrappers bounds how many wrappers run unwraps for one command.
const maxWrappers = 32

// run unwraps wrappers, emits the command and recurses into the code it
// carries. It returns the command's output when that is known statically.
func (w *walker) run(cmd Command, argv []Word, st *state, c *ctx, src stdinSource) output {
	// appends below must not write into a backing array another Command shares
	cmd.Wrappers = slices.Clip(cmd.Wrappers)
	cmd.Assigns = slices.Clip(cmd.Assigns)
	stdinUsed := false // the first xargs reads the known stdin; nested ones get none
	for n := 0; len(argv) > 0 && !argv[0].Dynamic; n++ {
		sp := lookupWrapper(argv)
		if sp == nil {
			break
		}
		if n >= maxWrappers {
			w.issue(BudgetExceeded, "more than 32 nested wrappers", argv[0].Span)
			break
		}
		u := sp.unwrap(argv)
		if u.shell && len(u.inner) > 0 && u.code == nil {
			// sudo -s CMD ARGS… / sudo -i CMD: the shell runs the words as code
			code := joinWords(u.inner)
			u.code, u.inner = &code, nil
		}
		if sp.name == "xargs" && !stdinUsed {
			stdinUsed = true
			if inner, ok := xargsKnown(argv, u, stdinOf(cmd, c, src)); ok {
				u.inner = inner
			}
		}
		if u.none {
			break
		}
		label := sp.name
		if sp.sub != "" {
			label += " " + sp.sub
		}
		rsh, rpriv := false, false
		if sp.name == "ssh" {
			rsh, rpriv = u.code == nil, false
			if u.code != nil {
				rsh, rpriv = remoteShell(*u.code)
			}
		}
		if rsh {
			// ssh host [bash]: the remote shell reads its commands on stdin
			out := cmd
			out.Argv = argv
			w.emit(out)
			if src == stdinText {
				cmd.Wrappers = append(cmd.Wrappers, label)
				cmd.Remote = true
				cmd.Privileged = cmd.Privileged || rpriv
				w.stdinCode(cmd, "ssh", st, c, src, stdinOf(cmd, c, src), false)
			}
			return output{}
		}
		if u.code == nil && u.split == nil && len(u.inner) == 0 {
			if u.shell || sp.name == "su" || (sp.name == "runuser" && len(argv) > 1) {
				// an interactive shell
				cmd.Wrappers = append(cmd.Wrappers, label)
				cmd.Privileged = cmd.Privileged || sp.priv
				argv = []Word{{Value: "sh", Span: argv[0].Span}}
			}
			break
		}
		cmd.Assigns = append(cmd.Assigns, u.assigns...)
		if u.computedAssigns != nil {
			w.res.Issues = append(w.res.Issues, Issue{Kind: DynamicCommand, Message: "env: words only known at run time before the program are taken for assignments; one that is none would be the program", Span: u.computedAssigns.Span, EnvAssigns: true})
		}
		if u.chdir != nil {
			if u.chdir.Dynamic {
				cmd.CwdDynamic = true
			} else {
				cmd.Cwd = joinDir(cmd.Cwd, u.chdir.Value)
			}
		}
		if u.code != nil {
			// the wrapper runs sh -c CODE: emit it as itself, then the code.
			out := cmd
			out.Argv = argv
			w.emit(out)
			cmd.Wrappers = append(cmd.Wrappers, label)
			cmd.Privileged = cmd.Privileged || sp.priv
			cmd.Remote = cmd.Remote || sp.remote
			w.code(*u.code, &cmd, c, label, st, false)
			return output{}
		}
		cmd.Wrappers = append(cmd.Wrappers, label)
		cmd.Privileged = cmd.Privileged || sp.priv
		cmd.Remote = cmd.Remote || sp.remote
		if sp.dynTail {
			cmd.Via = sp.name // xargs, parallel: the command is fed input
			cmd.NulFed = cmd.NulFed || u.nul
		}
		if u.split != nil {
			split, ok := w.splitArgv(*u.split, c)
			if !ok {
				out := cmd
				out.Argv = argv
				w.emit(out)
				return output{}
			}
			argv = append(split, u.inner...)
			continue
		}
		argv = u.inner
	}
	cmd.Argv = argv
	if len(argv) == 0 {
		return output{}
	}
	if argv[0].Dynamic {
		w.emit(cmd)
		w.issue(DynamicCommand, "the program name is not known statically", argv[0].Span)
		w.res.Issues[len(w.res.Issues)-1].Raw = argv[0].Raw
		w.res.Issues[len(w.res.Issues)-1].FileName = argv[0].FileName()
		return output{}
	}
	name := progName(argv[0].Value)
	if !strings.Contains(argv[0].Value, "/") && len(cmd.Wrappers) == 0 {
		if _, ok := w.funcs[name]; ok {
			if w.active[name] {
				// a recursive call (e.g. a fork bomb): report the call itself
				w.emit(cmd)
				return output{}
			}
			w.markCalled(name)
			fc := c.nested("function " + name)
			fc.pipe, fc.stdin, fc.stdinPiped, fc.redirs = c.pipe, c.stdin, c.stdinPiped, cmd.Redirects
			fc.cond, fc.bg = cmd.Conditional, cmd.Background
			w.callFunc(name, st, fc)
			return output{}
		}
	}
	w.emit(cmd)
	in := stdinOf(cmd, c, src)
	switch name {
	case "cd", "pushd":
		before := st.here()
		w.cd(argv, st)
		if st.untracked || w.cdPathMoves(argv, st) {
			st.cwdDyn, st.cwdAlts, st.cwdVar = true, nil, ""
		}
		w.cdMayFail(argv, before, st, c)
	case "popd":
		st.cwdDyn, st.cwdAlts, st.cwdVar, st.prev = true, nil, "", nil
	case "read", "unset", "mapfile", "readarray", "getopts":
		forgetNames(argv[1:], st)
		// and what they set without being told: read's REPLY, mapfile's
		// MAPFILE, getopts' OPTARG and OPTIND (red-team-28)
		for _, v := range []string{"REPLY", "MAPFILE", "OPTARG", "OPTIND"} {
			st.set(v, "", false)
		}
		w.nulItems(name, argv, cmd, st, c)
	case "set":
		// errexit: a command that fails ends the shell (set -e, -o
		// errexit, -euo pipefail); +e, +o errexit turn it off
		for i, a := range argv[1:] {
			v := a.Value
			switch {
			case a.Dynamic:
				st.errexit = false
			case (v == "-o" || v == "+o") && i+2 < len(argv) && argv[i+2].Value == "errexit":
				st.errexit = v == "-o"
			case len(v) > 1 && (v[0] == '-' || v[0] == '+') && v[1] != '-' && v != "-o" && v != "+o" && strings.ContainsRune(v[1:], 'e'):
				st.errexit = v[0] == '-'
			}
		}
	case "shopt":
		// lastpipe runs a pipeline's last command in this shell (echo x
		// | read d sets d); expand_aliases lets an alias's text run here.
		for _, a := range argv[1:] {
			if a.Dynamic || a.Value == "lastpipe" || a.Value == "expand_aliases" {
				st.untrack()
			}
		}
	case "printf":
		for i := 1; i+1 < len(argv); i++ {
			if argv[i].Value == "-v" {
				forgetNames(argv[i+1:i+2], st)
			}
		}
	case "eval":
		if len(argv) > 1 {
			w.code(joinWords(argv[1:]), &cmd, c, "eval", st, true)
		}
	case "source", ".":
		w.source(cmd, argv, st, c, src, in)
	case "trap":
		w.trap(cmd, argv, st, c)
	case "alias":
		// an alias's text runs wherever the name is used later
		for _, a := range argv[1:] {
			if k := strings.IndexByte(a.Value, '='); k > 0 {
				v := a
				v.Value = a.Value[k+1:]
				v.Prefix = strings.TrimPrefix(a.Prefix, a.Value[:k+1])
				later := cmd
				later.Conditional = true
				// Walked as it would run where it is used: in this
				// shell, so what it changes may hold later
				// (red-team-28: alias refresh="d=~/.kube").
				probe := st.clone()
				m := w.mark()
				w.code(v, &later, c, "alias "+a.Value[:k], probe, true)
				w.keepChanges(st, probe, m)
			}
		}
	case "find":
		w.find(cmd, argv, st, c)
	case "git":
		w.git(cmd, argv, st, c)
	case "tar", "bsdtar", "gtar":
		w.tar(cmd, argv, st, c)
	case "sed", "gsed":
		w.sed(cmd, argv, st, c)
	case "awk", "gawk", "mawk", "nawk":
		w.awk(cmd, argv, st, c)
	case "vim", "vi", "nvim", "ex", "view", "vimdiff":
		w.vim(cmd, argv, st, c)
	case "rg":
		w.rg(cmd, argv, st, c)
	default:
		if IsShell(name) {
			w.shell(cmd, argv, st, c, src, in)
		}
	}
	return w.produce(name, argv, in)
}

// remoteShell reports whether an ssh command string just starts a shell
// that reads stdin ("bash", "sh -s", "sudo bash").
func remoteShell(code Word) (ok, priv bool) {
	if code.Dynamic {
		return false, false
	}
	f := strings.Fields(code.Value)
	if len(f) > 0 && f[0] == "sudo" {
		f, priv = f[1:], true
	}
	if len(f) == 0 || !IsShell(progName(f[0])) {
		return false, false
	}
	for _, a := range f[1:] {
		if !strings.HasPrefix(a, "-") || strings.Contains(a, "c") && !strings.HasPrefix(a, "--") {
			return false, false // a script operand or -c
		}
	}
	return true, priv
}

// Shells are the programs that run a shell's code (-c CODE, a script, or
// their standard input): bash and sh, the other Bourne-like shells (the
// restricted rbash among them), fish and the C shells. Code given to one
// is walked as bash's.
var Shells = []string{"sh", "bash", "rbash", "zsh", "dash", "ksh", "ksh93", "mksh", "lksh", "oksh", "loksh", "pdksh", "yash", "posh", "ash", "fish", "csh", "tcsh"}

// IsShell reports whether name is one of Shells.
func IsShell(name string) bool {
	return slices.Contains(Shells, name)
}

// cdPathMoves reports whether CDPATH (assigned in the line, or the
// environment's) may send cd elsewhere than the walk resolved: to a
// relative name not starting with ./ or ../ (red-team-28: CDPATH=~; cd
// .ssh).
func (w *walker) cdPathMoves(argv []Word, st *state) bool {
	if v, ok := st.vars["CDPATH"]; ok {
		if v.known && v.s == "" {
			return false
		}
	} else if w.opt.Env["CDPATH"] == "" {
		return false
	}
	for _, a := range argv[1:] {
		if a.Dynamic || strings.HasPrefix(a.Value, "-") && a.Value != "-" {
			continue
		}
		d := a.Value
		return !(strings.HasPrefix(d, "/") || d == "." || d == ".." || strings.HasPrefix(d, "./") || strings.HasPrefix(d, "../") || d == "-")
	}
	return false
}

// forgetNames marks every argument that could name a variable as unknown
// (read x, unset x…). Forgetting too much only makes words Dynamic.
func forgetNames(args []Word, st *state) {
	for _, a := range args {
		if a.Dynamic || a.Value == "" || !isIdentStart(a.Value[0]) {
			continue
		}
		name, _, _ := strings.Cut(a.Value, "[")
		st.set(name, "", false)
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// joinDir resolves dir against cwd.
func joinDir(cwd, dir string) string {
	if strings.HasPrefix(dir, "/") || cwd == "" {
		return cleanPath(dir)
	}
	return cleanPath(cwd + "/" + dir)
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	var parts []string
	for _, f := range strings.Split(p, "/") {
		switch f {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, f)
		}
	}
	if strings.HasPrefix(p, "/") {
		return "/" + strings.Join(parts, "/")
	}
	return strings.Join(parts, "/")
}

// cd updates the tracked working directory.
// cdVar is the variable a cd operand is, written as one ($d, "$d", ${d},
// "${d}"), or "".
func cdVar(raw string) string {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	name, ok := strings.CutPrefix(raw, "$")
	if !ok {
		return ""
	}
	if inner, ok := strings.CutPrefix(name, "{"); ok {
		if name, ok = strings.CutSuffix(inner, "}"); !ok {
			return ""
		}
	}
	for i, c := range name {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return ""
		}
	}
	return name
}

func (w *walker) cd(argv []Word, st *state) {
	args := argv[1:]
	for len(args) > 0 && !args[0].Dynamic && len(args[0].Value) > 1 && args[0].Value[0] == '-' {
		if args[0].Value == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) == 1 && !args[0].Dynamic && args[0].Value == "-" && st.prev != nil {
		// cd - goes back where the last cd left (OLDPWD), which is
		// then where it left.
		back := st.prev
		st.prev = st.here()
		st.cwd, st.cwdDyn, st.cwdAlts, st.cwdVar = back.cwd, back.cwdDyn, back.alts, back.cwdVar
		return
	}
	st.prev = st.here()
	if len(args) == 0 {
		if h, ok := w.lookup(st, "HOME"); ok {
			st.cwd, st.cwdDyn, st.cwdAlts = h, false, nil
		} else {
			st.cwdDyn, st.cwdAlts = true, nil
		}
		return
	}
	d := args[0]
	st.cwdVar = ""
	if d.Dynamic || d.Glob || d.Value == "-" || strings.HasPrefix(d.Value, "+") {
		st.cwdDyn, st.cwdAlts = true, nil
		raw := d.Raw
		if raw == "" && d.Span.Start >= 0 && d.Span.End <= len(w.src) && d.Span.Start < d.Span.End {
			raw = w.src[d.Span.Start:d.Span.End]
		}
		st.cwdVar = cdVar(raw)
		if p, ok := TempPath(d); ok && !d.Glob {
			st.cwdVar = tempCwd + p // cd "$d" after d=$(mktemp -d)
		}
		return
	}
	if !strings.HasPrefix(d.Value, "/") && (st.cwd == "" || st.cwdDyn) {
		st.cwdDyn, st.cwdAlts = true, nil
		return
	}
	st.cwd = joinDir(st.cwd, d.Value)
	if strings.HasPrefix(d.Value, "/") {
		st.cwdAlts = nil
		return
	}
	for i, a := range st.cwdAlts {
		st.cwdAlts[i] = joinDir(a, d.Value)
	}
}

// cdMayFail keeps, after a cd that may fail (a directory that may not be
// there) and is neither an element of an && or || list (whose merge does
// it) nor under set -e (which ends the shell), the directory it left as one the
// shell may still be in: cd build; rm -rf * deletes the project's files
// when there is no build (it was allowed as rm -rf build/*).
func (w *walker) cdMayFail(argv []Word, before *dir, st *state, c *ctx) {
	if c.chainElem || st.errexit || st.cwdDyn || before.cwdDyn || before.cwd == "" || before.cwd == st.cwd {
		return
	}
	if t := argv[len(argv)-1]; len(argv) > 1 && !t.Dynamic && (t.Value == "/" || t.Value == "/tmp" || t.Value == w.opt.Home || t.Value == "-") {
		return // always there (cd - goes where the shell was)
	}
	for _, d := range append([]string{before.cwd}, before.alts...) {
		if d != st.cwd && !slices.Contains(st.cwdAlts, d) {
			st.cwdAlts = append(st.cwdAlts, d)
		}
	}
	if len(st.cwdAlts) > maxCwdAlts {
		st.cwdDyn, st.cwdAlts = true, nil
	}
}

// nulItems marks the variable mapfile or read -r fills, given -d with an
// empty delimiter, from the output of a process substitution (< <(find …
// -print0)):
// its items end with NUL, so each is one whole item the producer printed,
// whatever bytes it holds (varVal.fed). Only at the top level, where the
// substitution's span is its own.
func (w *walker) nulItems(name string, argv []Word, cmd Command, st *state, c *ctx) {
	if c.span != nil || name == "unset" || name == "getopts" {
		return
	}
	var from *Span
	for _, r := range append(slices.Clone(c.redirs), cmd.Redirects...) {
		if r.Op != "<" || r.Fd != "" && r.Fd != "0" || r.Target.Span.End > len(w.src) || r.Target.Span.Start >= r.Target.Span.End {
			continue
		}
		raw := w.src[r.Target.Span.Start:r.Target.Span.End]
		if strings.HasPrefix(raw, "<(") && strings.HasSuffix(raw, ")") {
			sp := r.Target.Span
			from = &sp
		} else {
			from = nil // a later redirection of stdin wins
		}
	}
	if from == nil {
		return
	}
	nul, raw, names := false, false, []string(nil)
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a.Dynamic:
			return
		case a.Value == "-d" && i+1 < len(argv):
			nul = !argv[i+1].Dynamic && argv[i+1].Value == ""
			i++
		case a.Value == "-r":
			raw = true
		case a.Value == "-t":
		case a.Value == "--":
		case strings.HasPrefix(a.Value, "-"):
			return // another option (-n, -u FD, -C…): not followed
		default:
			names = append(names, a.Value)
		}
	}
	if name == "mapfile" || name == "readarray" {
		raw = true // no backslash or IFS processing
		if len(names) == 0 {
			names = []string{"MAPFILE"}
		}
	}
	if !nul || !raw || len(names) != 1 || !isIdentStart(names[0][0]) {
		return
	}
	st.setFed(names[0], *from)
}
