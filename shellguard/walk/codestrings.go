package walk

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// code parses text that a command runs as shell code and walks it one level
// deeper. share is set when the code runs in the current shell (eval,
// source), so that its cd and assignments are seen afterwards.
func (w *walker) code(word Word, cmd *Command, c *ctx, via string, st *state, share bool) {
	sp := word.Span
	if c.span != nil {
		sp = *c.span
	}
	if word.Dynamic {
		if word.TempName && word.Shape != "" {
			// Its unknown parts are names mktemp made, of the plain
			// characters of their template (mktempDir): a stand-in of
			// such characters reads as they do wherever the code puts
			// it (trap "rm -rf '$dir'" RETURN).
			w.codeText(strings.ReplaceAll(word.Shape, unknownShape, tempStandIn), cmd, via, st, share, sp)
			return
		}
		if word.Template != "" {
			w.issue(PlaceholderCode, via+": the code string holds the input xargs or find fills in", sp)
			w.codeText(word.Template, cmd, via, st, share, sp)
			return
		}
		if valueCode(word) {
			w.issue(ValueCode, via+": the code string has values only known at run time put in it", sp)
			w.codeText(word.Shape, cmd, via, st, share, sp)
			return
		}
		w.issue(DynamicCode, via+": the code string is not known statically", sp)
		if share {
			st.untrack() // it may assign anything, and cd anywhere
		}
		return
	}
	w.codeText(word.Value, cmd, via, st, share, sp)
}

// tempStandIn stands for a name mktemp made in code text that holds one.
const tempStandIn = "warden-mktemp-name"

// valueCode reports whether a Dynamic code word is code written out with
// values put in it: one word (its unknown parts quoted, not split) with
// code text around them (bash -c "</dev/tcp/127.0.0.1/$port", sh -c "cd
// $d && make"), whose commands are then judged as written. A word of
// values alone ("$CODE", "$a $b") is not.
func valueCode(word Word) bool {
	if word.Shape == "" || word.Splits {
		return false
	}
	return len(strings.Join(strings.Fields(word.Value), "")) >= 4
}

func (w *walker) codeText(text string, cmd *Command, via string, st *state, share bool, sp Span) {
	depth := cmd.Depth + 1
	if depth > w.b.maxDepth {
		w.issue(BudgetExceeded, via+": code strings nested deeper than the depth budget", sp)
		return
	}
	if w.b.stopped || !w.allowParse(len(text), sp) {
		return
	}
	f, err := w.parse(text)
	if err != nil {
		w.parseIssue(err, &sp)
		return
	}
	cc := &ctx{depth: depth, via: via, cond: cmd.Conditional, bg: cmd.Background,
		wrappers: cmd.Wrappers, priv: cmd.Privileged, remote: cmd.Remote, span: &sp, text: text}
	s := st
	if !share {
		s = st.clone()
		s.cwd, s.cwdDyn, s.cwdAlts, s.cwdVar = cmd.Cwd, cmd.CwdDynamic, slices.Clone(cmd.CwdAlts), cmd.CwdVar
		s.prev = nil // another shell: its OLDPWD is its environment's
		w.subshell(func() { w.walkStmts(f.Stmts, s, cc) })
		return
	}
	w.walkStmts(f.Stmts, s, cc)
}

// sub runs an argv that a command executes directly (find -exec).
func (w *walker) sub(argv []Word, parent Command, c *ctx, via string, st *state) {
	if len(argv) == 0 {
		return
	}
	sp := Span{argv[0].Span.Start, argv[len(argv)-1].Span.End}
	if c.span != nil {
		sp = *c.span
	}
	if parent.Depth+1 > w.b.maxDepth {
		w.issue(BudgetExceeded, via+": nested deeper than the depth budget", sp)
		return
	}
	nc := parent
	nc.Argv, nc.Redirects, nc.Assigns = nil, nil, nil
	// run appends to Wrappers: never into the parent's backing array, which
	// a sibling (a second -exec) would share
	nc.Wrappers = slices.Clip(parent.Wrappers)
	nc.Depth++
	nc.Via = via
	nc.Span = sp
	nc.Stdin, nc.StdinKnown = "", false
	cc := &ctx{depth: nc.Depth, via: via, cond: nc.Conditional, bg: nc.Background,
		wrappers: nc.Wrappers, priv: nc.Privileged, remote: nc.Remote, span: &sp,
		pipe: pipeInfo{id: nc.Pipeline, pos: nc.PipePos, n: nc.PipeLen, set: true}}
	w.run(nc, argv, st.clone(), cc, stdinNone)
}

// splitArgv re-splits an env -S string into words.
func (w *walker) splitArgv(word Word, c *ctx) ([]Word, bool) {
	if word.Dynamic {
		w.issue(DynamicCode, "env -S: the string is not known statically", word.Span)
		return nil, false
	}
	if !w.allowParse(len(word.Value), word.Span) {
		return nil, false
	}
	// env's own escapes, which the shell has none of: \_ is a space that
	// separates words, \c ends the string.
	text := word.Value
	if i := strings.Index(text, `\c`); i >= 0 {
		text = text[:i]
	}
	text = strings.ReplaceAll(text, `\_`, " ")
	f, err := w.parse(text)
	if err != nil {
		w.parseIssue(err, &word.Span)
		return nil, false
	}
	sp := word.Span
	cc := c.nested(c.via)
	cc.span = &sp
	var out []Word
	for _, s := range f.Stmts {
		if call, ok := s.Cmd.(*syntax.CallExpr); ok {
			for _, a := range call.Args {
				out = append(out, w.fields(a, &state{}, cc)...)
			}
		}
	}
	return out, true
}

// shellOpts reads a shell's options: whether it has -c, where its first
// operand is, and whether it reads commands from stdin.
func shellOpts(argv []Word) (hasC bool, operand int, stdin bool) {
	i := 1
	for i < len(argv) {
		a := argv[i]
		v := a.Value
		if a.Dynamic {
			break
		}
		if v == "-" || v == "--" {
			// the end of the options (POSIX's single -, bash's --): an
			// operand after it is still the script
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			switch v {
			case "--command":
				hasC = true
			case "--rcfile", "--init-file":
				i++
			}
			i++
			continue
		}
		if len(v) > 1 && (v[0] == '-' || v[0] == '+') {
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'c':
					hasC = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
			i++
			continue
		}
		break
	}
	return hasC, i, stdin
}

// shell handles sh/bash/… : -c CODE, or code read from stdin.
func (w *walker) shell(cmd Command, argv []Word, st *state, c *ctx, src stdinSource, in output) {
	name := progName(argv[0].Value)
	hasC, i, readsStdin := shellOpts(argv)
	if hasC {
		if i < len(argv) {
			// the operands after the code string are $0, $1…
			s := st.clone()
			s.cwd, s.cwdDyn, s.cwdAlts, s.cwdVar = cmd.Cwd, cmd.CwdDynamic, slices.Clone(cmd.CwdAlts), cmd.CwdVar
			s.prev = nil // a new shell's OLDPWD is its environment's
			for k := 0; k < 10; k++ {
				pn := strconv.Itoa(k)
				if i+1+k < len(argv) && !argv[i+1+k].Dynamic {
					s.set(pn, argv[i+1+k].Value, true)
				} else {
					s.set(pn, "", false)
				}
			}
			w.subshell(func() { w.code(argv[i], &cmd, c, name+" -c", s, true) })
		}
		return
	}
	if i < len(argv) && !readsStdin {
		w.script(cmd, argv[i], name, st, c, src, in, false)
		return
	}
	w.stdinCode(cmd, name, st, c, src, in, false)
}

// stdinCode walks code a command reads from its stdin.
func (w *walker) stdinCode(cmd Command, name string, st *state, c *ctx, src stdinSource, in output, share bool) {
	if src != stdinText {
		return
	}
	sp := cmd.Span
	if !in.known {
		w.issue(DynamicCode, name+": reads code from stdin that is not known statically", sp)
		return
	}
	via := in.via + "|" + name
	if in.dec != "" {
		via = in.dec + "|" + name
	}
	if in.via == "heredoc" && in.dec == "" {
		via = "heredoc"
	}
	w.codeText(in.s, &cmd, via, st, share, sp)
}

// source handles source/. FILE.
func (w *walker) source(cmd Command, argv []Word, st *state, c *ctx, src stdinSource, in output) {
	if len(argv) < 2 {
		return
	}
	w.script(cmd, argv[1], "source", st, c, src, in, true)
	w.returnTraps(st)
}

// script handles a shell or source reading a script file: <(…) with known
// output is walked, /dev/stdin reads stdin, an unknown name is DynamicCode,
// and a named file is left to the caller (project code).
func (w *walker) script(cmd Command, a Word, name string, st *state, c *ctx, src stdinSource, in output, share bool) {
	sp := a.Span
	if c.span != nil {
		sp = *c.span
	}
	if o, ok := w.procFor(a, c); ok {
		if !o.known {
			w.issue(DynamicCode, name+" <(…): the code is not known statically", sp)
			return
		}
		w.codeText(o.s, &cmd, name+" <()", st, share, sp)
		return
	}
	switch {
	case !a.Dynamic && (a.Value == "/dev/stdin" || a.Value == "-" || a.Value == "/proc/self/fd/0" || a.Value == "/dev/fd/0"):
		w.stdinCode(cmd, name, st, c, src, in, share)
	case a.Dynamic:
		w.issue(DynamicCode, name+": runs a script whose name is not known statically", sp)
		if share {
			st.untrack()
		}
	case share && a.Value != "/dev/null":
		// A file sourced runs in this shell, and its code is not read
		// here: whatever it assigns is not known after it (echo
		// 'x=$PWD' > env.sh; x=build; . ./env.sh; rm -rf "$x" was
		// allowed as rm -rf build), nor which variables of the
		// environment are still unset. The directory is kept, and what
		// the line assigns after it is known: a venv's activate or a
		// .env file neither moves nor sets up later changes (a DEBUG
		// trap, a name reference, CDPATH), and what a command after one
		// that did could write is the sandbox's writable set, with the
		// project's work saved first where a delete in it is.
		st.forgetVars()
		st.sourced = true
	}
}

// procFor returns the output of the process substitution that word a is,
// when it is one at the top level.
func (w *walker) procFor(a Word, c *ctx) (output, bool) {
	if c.span != nil || !a.Dynamic || a.Value != "" {
		return output{}, false
	}
	o, ok := w.procOut[a.Span]
	return o, ok
}

// placeholder marks a word holding ph (find's {}, xargs -I's string) as
// Dynamic: the placeholder is replaced by input Walk cannot see.
func placeholder(a Word, ph string) Word {
	k := strings.Index(a.Value, ph)
	if ph == "" || k < 0 {
		return a
	}
	if !a.Dynamic {
		a.Prefix = a.Value[:k]
		a.Template = strings.ReplaceAll(a.Value, ph, "${WARDEN_INPUT}")
	}
	a.Input = !a.Dynamic && a.Value == ph
	a.Dynamic = true
	a.Value = strings.ReplaceAll(a.Value, ph, "")
	return a
}

// trap walks the code of trap CODE SIGNAL…; it is Conditional unless a signal
// is EXIT, which always fires. The code stays set (w.traps) and is walked
// again as the state changes: it runs later, at the shell's exit, a
// signal, an error, a return or before a command.
func (w *walker) trap(cmd Command, argv []Word, st *state, c *ctx) {
	args := argv[1:]
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	if len(args) == 1 && !args[0].Dynamic && !strings.HasPrefix(args[0].Value, "-") {
		w.unsetTraps(args) // trap SIGNAL: reset
		return
	}
	if len(args) < 2 {
		return // trap -p, trap -l
	}
	a := args[0]
	exit := false
	for _, s := range args[1:] {
		if trapSignal(s) == "EXIT" {
			exit = true
		}
	}
	if !a.Dynamic && (a.Value == "" || a.Value == "-" || strings.HasPrefix(a.Value, "-")) {
		if a.Value == "" || a.Value == "-" {
			w.unsetTraps(args[1:]) // reset or ignored: the earlier code no longer runs
		}
		return
	}
	cmd.Conditional = cmd.Conditional || !exit
	// It replaces the code set before at each of its signals.
	w.unsetTraps(args[1:])
	t := &laterTrap{code: a, cmd: cmd, c: *c, seen: st.clone(), list: w.lists, reads: w.trapReads(a)}
	for _, sig := range args[1:] {
		t.sigs = append(t.sigs, trapSignal(sig))
	}
	w.traps = append(w.traps, t)
	if !slices.ContainsFunc(t.sigs, func(sig string) bool { return sig != "EXIT" }) {
		// At EXIT only: it runs once the shell ends, which it cannot
		// do while an assignment that follows stores its value
		// (trap 'rm -rf "$tmp"' EXIT; tmp=$(mktemp -d)): walked when
		// the next statement starts, or after it when it is one.
		t.deferred = trapSet
		return
	}
	// Its code is walked as another shell's (what it changes is not the
	// line's at this point), on a copy whose changes say whether it
	// changes anything.
	probe := st.clone()
	probe.prev = nil
	m := w.mark()
	w.inTrap++
	w.code(a, &cmd, c, "trap", probe, true)
	w.inTrap--
	if slices.ContainsFunc(t.sigs, func(sig string) bool { return sig != "EXIT" }) {
		// It runs again at every such signal (DEBUG: before each
		// command; one the line sends itself, kill -USR1 $$): what it
		// assigns, or where it goes, may hold at any later point.
		w.keepChanges(st, probe, m)
	}
}

// trapSignal names the signal a trap's word is: upper case, without SIG,
// 0 as EXIT; "?" for a word only known at run time.
func trapSignal(w Word) string {
	if w.Dynamic {
		return "?"
	}
	v := strings.TrimPrefix(strings.ToUpper(w.Value), "SIG")
	if v == "0" {
		return "EXIT"
	}
	return v
}

// unsetTraps takes the signals words name out of every trap set: their
// code no longer runs at them; a trap left with no signal is gone.
func (w *walker) unsetTraps(words []Word) {
	for _, word := range words {
		sig := trapSignal(word)
		if sig == "?" {
			continue // which it resets is not known: the code stays
		}
		for _, t := range w.traps {
			t.sigs = slices.DeleteFunc(t.sigs, func(s string) bool { return s == sig })
		}
	}
	w.traps = slices.DeleteFunc(w.traps, func(t *laterTrap) bool { return len(t.sigs) == 0 })
}

// laterTrap is code a trap runs later: at the shell's exit (after whichever
// command ends it: a failure under set -e, exit, a signal), at a signal,
// at an error (ERR), after a function or a sourced file (RETURN), before
// each command (DEBUG); with the variables and the directory as they are
// then.
type laterTrap struct {
	sigs []string // the signals it is set at (trapSignal)
	code Word
	cmd  Command
	c    ctx
	seen *state // the state it was last walked in
	// reads are the variables its code can read (trapReads): a state
	// that differs from seen in none of them, nor in the directory, gives
	// it nothing new. nil: any.
	reads    map[string]bool
	walks    int
	deferred trapDeferral
	list     int // how deep in lists of statements it was set (walker.lists)
}

// trapDeferral is where an EXIT trap's first walk waits.
type trapDeferral int

const (
	trapWalked trapDeferral = iota // walked in every state so far
	trapSet                        // not walked yet: the next statement decides
	trapAfter                      // the next statement is an assignment: walked after it
)

// settleTraps is called as statement s starts: an EXIT trap set just
// before it is walked now, in st, unless s is a plain assignment, after
// which it is walked instead (trapsAgain).
func (w *walker) settleTraps(s *syntax.Stmt, st *state) {
	for _, t := range w.traps {
		if t.deferred != trapSet {
			continue
		}
		if storesOnly(s) {
			t.deferred = trapAfter
			continue
		}
		w.walkTrap(t, st)
	}
}

// storesOnly reports whether s only assigns variables, each a value of
// literal text and command substitutions: nothing in it can end the
// shell before the values are stored (no redirection that may fail, no
// parameter that set -u or ${x:?} makes fatal, no arithmetic).
func storesOnly(s *syntax.Stmt) bool {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) > 0 || len(ce.Assigns) == 0 || len(s.Redirs) > 0 || s.Negated || s.Background || s.Coprocess {
		return false
	}
	for _, a := range ce.Assigns {
		if a.Array != nil || a.Index != nil || a.Value == nil {
			return false
		}
		for _, p := range a.Value.Parts {
			switch p := p.(type) {
			case *syntax.Lit, *syntax.SglQuoted, *syntax.CmdSubst:
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					switch q.(type) {
					case *syntax.Lit, *syntax.CmdSubst:
					default:
						return false
					}
				}
			default:
				return false
			}
		}
	}
	return true
}

// walkTrap walks t's code in st, as it would run then.
func (w *walker) walkTrap(t *laterTrap, st *state) {
	probe := st.clone()
	probe.prev = nil
	t.deferred = trapWalked
	t.walks++
	if t.walks > maxTrapWalks {
		probe.untrack()
		w.traps = slices.DeleteFunc(w.traps, func(u *laterTrap) bool { return u == t })
	}
	t.seen = st.clone()
	w.inTrap++
	cmd := t.cmd
	w.code(t.code, &cmd, &t.c, "trap", probe, true)
	w.inTrap--
}

// settleTrapsAtEnd walks, as a list of statements ends in st, each EXIT
// trap set in it (or deeper) still waiting for its first walk: not one
// of an enclosing list, whose next statement is still to come (the
// command substitution in tmp=$(mktemp -d) is a list of its own).
func (w *walker) settleTrapsAtEnd(st *state) {
	for _, t := range slices.Clone(w.traps) {
		if t.deferred != trapWalked && t.list >= w.lists && w.inTrap == 0 && !w.b.stopped {
			w.walkTrap(t, st)
		}
	}
}

// trapReads returns the variables a trap's code can read, or nil when
// that is not known: code only known at run time, or code that may read a
// variable it does not name ($NAME, ${NAME…}) — arithmetic, a name
// reference, eval or source, a builtin that reads or lists variables, a
// function defined in the line (its body, followed) or not. Names with no
// lower-case letter are left to the caller: the shell and programs read
// those from the environment (IFS, PATH, GIT_DIR…).
func (w *walker) trapReads(code Word) map[string]bool {
	src := code.Value
	if code.Dynamic {
		if !code.TempName || code.Shape == "" {
			return nil
		}
		src = strings.ReplaceAll(code.Shape, unknownShape, tempStandIn)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	reads := map[string]bool{}
	seen := map[string]bool{}
	var from func(node syntax.Node, depth int) bool
	from = func(node syntax.Node, depth int) bool {
		ok := depth <= 4
		syntax.Walk(node, func(n syntax.Node) bool {
			if !ok {
				return false
			}
			switch n := n.(type) {
			case *syntax.ParamExp:
				if n.Param == nil || n.Excl || n.NestedParam != nil {
					ok = false
					return false
				}
				reads[n.Param.Value] = true
			case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.DeclClause, *syntax.TestClause:
				ok = false // names read without $ (arithmetic, -v NAME, declare -n)
				return false
			case *syntax.CallExpr:
				if len(n.Args) == 0 {
					return true
				}
				name := n.Args[0].Lit()
				switch name {
				case "", "eval", "source", ".", "set", "env", "printenv", "export", "declare", "typeset", "local",
					"readonly", "compgen", "printf", "read", "mapfile", "readarray", "unset", "test", "[", "let",
					"command", "builtin", "exec", "trap", "alias":
					ok = false // (printf -v, test -v, unset -n…)
					return false
				}
				body, defined := w.funcs[name]
				switch {
				case defined && w.allFuncs[name] <= 1:
					// its body, followed once
					if !seen[name] {
						seen[name] = true
						ok = from(body, depth+1)
					}
				case defined || w.definedLater(name):
					ok = false
				}
			}
			return ok
		})
		return ok
	}
	if !from(f, 0) {
		return nil
	}
	return reads
}

// maxTrapWalks bounds how often one trap's code is walked again; beyond
// it, it is walked once more with every variable and the directory
// unknown, which covers any state to come.
const maxTrapWalks = 8

// trapsAgain walks the code of each trap set again in st when st differs
// from the state it was last walked in: `x=build; trap 'rm -rf "$x"' EXIT;
// x=.` deletes the project when the shell exits, not build; `trap 'cat
// "$f"' ERR; f=~/.ssh/id_rsa; false` prints the key.
func (w *walker) trapsAgain(st *state) {
	if w.inTrap > 0 {
		return
	}
	for _, t := range slices.Clone(w.traps) {
		if w.b.stopped || t.deferred == trapSet || t.deferred == trapAfter && t.list < w.lists || t.deferred == trapWalked && t.seen.sameFor(st, t.reads) {
			continue // (an assignment's command substitution is a list of its own, deeper)
		}
		if returnOnly(t) {
			continue // it runs as a function or a sourced file returns (returnTraps)
		}
		w.walkTrap(t, st)
	}
}

// returnOnly reports whether t runs only as a function or a sourced file
// returns (RETURN).
func returnOnly(t *laterTrap) bool {
	return !slices.ContainsFunc(t.sigs, func(sig string) bool { return sig != "RETURN" })
}

// returnTraps walks, as a function or a sourced file returns in st, the
// code of each trap set at RETURN that st gives something new to (a
// RETURN trap a function sets sees its local variables as it returns,
// not what the caller later puts in the same names: agent-shapes-22).
func (w *walker) returnTraps(st *state) {
	if w.inTrap > 0 {
		return
	}
	for _, t := range slices.Clone(w.traps) {
		if !w.b.stopped && slices.Contains(t.sigs, "RETURN") && !(t.deferred == trapWalked && t.seen.sameFor(st, t.reads)) {
			w.walkTrap(t, st)
		}
	}
}

// walkMark is how far the walk had got: its issues, commands and
// function calls so far.
type walkMark struct{ issues, cmds, calls int }

func (w *walker) mark() walkMark {
	return walkMark{len(w.res.Issues), len(w.res.Commands), len(w.calls)}
}

// keepChanges makes what code that may run at any later point (a trap's,
// an alias's, walked into probe, a copy of st, after m) changes unknown
// in st from then on: the variables it assigned on the copy; every
// variable and the directory when it changed the directory, its code is
// not all known, or it runs a sourced file or a function not yet defined
// or defined more than once (one defined once already was walked into the
// copy).
func (w *walker) keepChanges(st, probe *state, m walkMark) {
	if w.changesAll(st, probe, m) {
		st.untrack()
		return
	}
	var names []string
	for k, v := range probe.vars {
		if old, ok := st.vars[k]; !ok || !old.equal(v) {
			names = append(names, k)
		}
	}
	st.makeVolatile(names...)
	for k, t := range probe.namerefs {
		if st.namerefs == nil {
			st.namerefs = map[string]string{}
		}
		st.namerefs[k] = t
	}
}

// changesAll reports whether code walked into probe may change more than
// the variables it assigned there (keepChanges).
func (w *walker) changesAll(st, probe *state, m walkMark) bool {
	if probe.untracked || probe.cwd != st.cwd || probe.cwdDyn != st.cwdDyn || !slices.Equal(probe.cwdAlts, st.cwdAlts) {
		return true
	}
	for _, is := range w.res.Issues[m.issues:] {
		if is.Kind == DynamicCode || is.Kind == ValueCode || is.Kind == PlaceholderCode || is.Kind == BudgetExceeded {
			return true
		}
	}
	for _, c := range w.res.Commands[m.cmds:] {
		if len(c.Argv) == 0 {
			continue
		}
		name := c.Argv[0].Value
		if c.Argv[0].Dynamic || name == "source" || name == "." || w.definedLater(name) {
			return true
		}
	}
	// A call of a function the walk knows is walked into its body, not
	// emitted: one defined again later may run other code.
	return slices.ContainsFunc(w.calls[m.calls:], w.definedLater)
}

// definedLater reports whether the input defines a function name that
// the walk has not met yet, or defines it more than once.
func (w *walker) definedLater(name string) bool {
	if w.allFuncs == nil {
		w.allFuncs = map[string]int{}
		if w.root != nil {
			syntax.Walk(w.root, func(n syntax.Node) bool {
				if f, ok := n.(*syntax.FuncDecl); ok && f.Name != nil {
					w.allFuncs[f.Name.Value]++
				}
				return true
			})
		}
	}
	_, met := w.funcs[name]
	n := w.allFuncs[name]
	return n > 1 || n == 1 && !met
}

// find runs the argv after -exec/-execdir/-ok/-okdir up to ; or +.
func (w *walker) find(cmd Command, argv []Word, st *state, c *ctx) {
	for i := 1; i < len(argv); i++ {
		switch argv[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		via := "find " + argv[i].Value
		var inner []Word
		j := i + 1
		for ; j < len(argv); j++ {
			v := argv[j].Value
			if !argv[j].Dynamic && (v == ";" || v == "+") {
				break
			}
			inner = append(inner, placeholder(argv[j], "{}"))
		}
		w.sub(inner, cmd, c, via, st)
		i = j
	}
}

// git handles -c alias.X=!CMD and -c core.sshCommand=CMD (also after
// git clone), and git config KEY VALUE for the same keys (which run later:
// Conditional).
func (w *walker) git(cmd Command, argv []Word, st *state, c *ctx) {
	i := 1
	for ; i < len(argv); i++ {
		v := argv[i].Value
		if argv[i].Dynamic || !strings.HasPrefix(v, "-") {
			break
		}
		switch v {
		case "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			i++
		case "-c":
			if i+1 < len(argv) {
				i++
				w.gitConfig(cmd, argv[i], st, c)
			}
		}
	}
	if i >= len(argv) || argv[i].Dynamic {
		return
	}
	switch argv[i].Value {
	case "clone", "submodule":
		for i++; i < len(argv); i++ {
			v := argv[i].Value
			switch {
			case (v == "-c" || v == "--config") && i+1 < len(argv):
				i++
				w.gitConfig(cmd, argv[i], st, c)
			case strings.HasPrefix(v, "--config="):
				kv := argv[i]
				kv.Value = v[len("--config="):]
				kv.Prefix = strings.TrimPrefix(kv.Prefix, "--config=")
				w.gitConfig(cmd, kv, st, c)
			}
		}
	case "config":
		var ops []Word
		for _, a := range argv[i+1:] {
			if !a.Dynamic && strings.HasPrefix(a.Value, "-") {
				continue // --global, --add…
			}
			ops = append(ops, a)
		}
		if len(ops) >= 2 && !ops[0].Dynamic {
			kv := ops[1]
			kv.Value = ops[0].Value + "=" + kv.Value
			if kv.Dynamic {
				kv.Prefix = ops[0].Value + "=" + kv.Prefix
			}
			later := cmd
			later.Conditional = true
			w.gitConfig(later, kv, st, c)
		}
	}
}

// gitConfig walks the command in a KEY=VALUE git setting that runs one.
func (w *walker) gitConfig(cmd Command, kv Word, st *state, c *ctx) {
	key, val, _ := strings.Cut(kv.Value, "=")
	key = strings.ToLower(key)
	cw := kv
	cw.Value = val
	if kv.Dynamic {
		if len(kv.Prefix) <= len(key) || !strings.HasPrefix(strings.ToLower(kv.Prefix), key+"=") {
			// the key itself is unknown
			w.issue(DynamicCode, "git config: a setting whose key is not known statically", kv.Span)
			return
		}
		cw.Prefix = kv.Prefix[len(key)+1:]
	}
	switch {
	case strings.HasPrefix(key, "alias."):
		if kv.Dynamic && cw.Prefix == "" {
			w.issue(DynamicCode, "git "+key+": the alias is not known statically", kv.Span)
			return
		}
		if strings.HasPrefix(val, "!") {
			cw.Value = val[1:]
			cw.Prefix = strings.TrimPrefix(cw.Prefix, "!")
			w.code(cw, &cmd, c, "git alias", st, false)
		}
	case key == "core.sshcommand" || key == "core.fsmonitor" || key == "core.editor" || key == "core.pager" ||
		key == "sequence.editor" || key == "diff.external" || key == "gpg.program":
		if !kv.Dynamic && (val == "" || val == "true" || val == "false") {
			return
		}
		w.code(cw, &cmd, c, "git "+key, st, false)
	}
}

// tar handles --to-command, --checkpoint-action=exec= and
// -I/--use-compress-program.
func (w *walker) tar(cmd Command, argv []Word, st *state, c *ctx) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		v := a.Value
		take := func(prefix string) (Word, bool) {
			if !strings.HasPrefix(v, prefix) {
				return Word{}, false
			}
			cw := a
			cw.Value = v[len(prefix):]
			if cw.Dynamic {
				cw.Prefix = strings.TrimPrefix(a.Prefix, prefix)
			}
			return cw, true
		}
		var cw Word
		var ok bool
		via := "tar"
		switch {
		case v == "--to-command" || v == "--use-compress-program" || v == "-I":
			if i+1 < len(argv) {
				i++
				cw, ok, via = argv[i], true, "tar "+v
			}
		default:
			for _, p := range [...]string{"--to-command=", "--use-compress-program=", "--checkpoint-action=exec=", "-I"} {
				if cw, ok = take(p); ok {
					via = "tar " + strings.TrimSuffix(p, "=")
					break
				}
			}
		}
		if ok {
			w.code(cw, &cmd, c, via, st, false)
		}
	}
}

// rg handles --pre CMD: rg runs CMD for every searched file.
func (w *walker) rg(cmd Command, argv []Word, st *state, c *ctx) {
	for i := 1; i < len(argv); i++ {
		v := argv[i].Value
		switch {
		case v == "--pre" && i+1 < len(argv):
			i++
			w.code(argv[i], &cmd, c, "rg --pre", st, false)
		case strings.HasPrefix(v, "--pre="):
			cw := argv[i]
			cw.Value = v[len("--pre="):]
			w.code(cw, &cmd, c, "rg --pre", st, false)
		case v == "--":
			return
		}
	}
}
