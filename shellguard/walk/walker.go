package walk

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// pipeInfo places a command in its pipeline.
type pipeInfo struct {
	id, pos, n int
	set        bool
}

// output is what a command writes to its stdout, when Walk knows it
// statically (literal producers and decoders).
type output struct {
	s     string
	known bool
	via   string // the producer: "echo", "printf", "heredoc"
	dec   string // the decoders applied after it: "base64", "base64|rev"
}

// ctx is how the statements being walked are reached.
type ctx struct {
	depth        int
	via          string
	cond, bg     bool
	wrappers     []string
	priv, remote bool
	span         *Span  // set inside code strings: the top-level word holding them
	text         string // inside code strings: the code being walked (Word.Raw)
	pipe         pipeInfo
	stdin        output // the pipe into a pipeline element
	stdinPiped   bool
	redirs       []Redirect // redirections of enclosing compound commands
	chainElem    bool       // an element of an && or || list, which the list's merge follows
}

// nested returns the context for code reached from c through via.
func (c *ctx) nested(via string) *ctx {
	return &ctx{depth: c.depth, via: via, cond: c.cond, bg: c.bg, wrappers: c.wrappers,
		priv: c.priv, remote: c.remote, span: c.span, text: c.text}
}

// walker holds one Walk's state.
type walker struct {
	src       string
	opt       Options
	b         budget
	parser    *syntax.Parser
	res       Result
	funcs     map[string]*syntax.Stmt
	root      *syntax.File   // the input parsed
	allFuncs  map[string]int // how often it defines each function (definedLater)
	calls     []string       // the functions called so far, in order
	funcOrder []string
	called    map[string]bool
	active    map[string]bool
	pipeID    int
	procOut   map[Span]output // outputs of top-level <(…) words, by span
	capped    bool            // brace expansion was cut at maxFields
	traps     []*laterTrap    // the traps set, walked again as the state changes
	inTrap    int             // walking a trap's code: no EXIT trap is walked again meanwhile
	unrolled  int             // how many passes the for loops being unrolled make, multiplied
	lists     int             // how deep in lists of statements the walk is
}

// Walk parses src as bash and returns the simple commands it would run, with
// what it could not see through as issues. It never panics and never hangs:
// a recovered panic becomes an Internal issue and the budgets in opt bound
// the work.
func Walk(src string, opt Options) (res Result) {
	w := &walker{src: src, opt: opt, b: newBudget(opt)}
	defer func() {
		if r := recover(); r != nil {
			w.parser = nil // may be in a bad state; let it go
			w.res.Issues = append(w.res.Issues, Issue{Kind: Internal,
				Message: fmt.Sprintf("walk: recovered panic: %v", r), Span: Span{0, len(src)}})
			res = w.res
		}
	}()
	defer w.release()
	if len(src) > w.b.maxBytes {
		w.issue(BudgetExceeded, fmt.Sprintf("input of %d bytes exceeds %d", len(src), w.b.maxBytes), Span{0, len(src)})
		return w.res
	}
	f, err := w.parse(src)
	if err != nil {
		w.parseIssue(err, nil)
		return w.res
	}
	w.root = f
	st := &state{cwd: opt.Cwd}
	w.walkStmts(f.Stmts, st, &ctx{})
	w.uncalledFuncs(st)
	return w.res
}

func (w *walker) issue(k IssueKind, msg string, sp Span) {
	w.res.Issues = append(w.res.Issues, Issue{Kind: k, Message: msg, Span: sp})
}

func (w *walker) parseIssue(err error, sp *Span) {
	s := Span{0, len(w.src)}
	var pe syntax.ParseError
	if errors.As(err, &pe) && sp == nil {
		s.Start = min(int(pe.Pos.Offset()), len(w.src))
	}
	if sp != nil {
		s = *sp
	}
	w.issue(ParseError, "parse: "+err.Error(), s)
}

// span returns the span of node n as seen from c.
func (w *walker) span(n syntax.Node, c *ctx) Span {
	if c.span != nil {
		return *c.span
	}
	return Span{int(n.Pos().Offset()), int(n.End().Offset())}
}

// wordRaw is word's text inside the code string c walks, or "" at the top
// level (and for a word whose offsets fall outside it).
func wordRaw(word *syntax.Word, c *ctx) string {
	if c.span == nil || c.text == "" || word == nil || len(word.Parts) == 0 {
		return ""
	}
	start, end := int(word.Pos().Offset()), int(word.End().Offset())
	if start < 0 || end > len(c.text) || start >= end {
		return ""
	}
	return c.text[start:end]
}

func (w *walker) wordSpan(word *syntax.Word, c *ctx) Span {
	if c.span != nil {
		return *c.span
	}
	if word == nil || len(word.Parts) == 0 {
		return Span{}
	}
	return Span{int(word.Pos().Offset()), int(word.End().Offset())}
}

func (w *walker) walkStmts(stmts []*syntax.Stmt, st *state, c *ctx) output {
	var out output
	if c.chainElem {
		cc := *c
		cc.chainElem = false // a list of its own: { cd x; rm -rf *; } && y
		c = &cc
	}
	w.lists++
	defer func() {
		w.settleTrapsAtEnd(st)
		w.lists--
	}()
	for i, s := range stmts {
		if w.b.stopped {
			return output{}
		}
		out = w.walkStmt(s, st, c)
		w.trapsAgain(st)
		if i+1 < len(stmts) {
			// The next statement runs whether this one's cd did or
			// not (cd /missing; cd -): where cd - goes back to is
			// known only within one && list.
			st.prev = nil
		}
	}
	return out
}

// walkNested walks the statements of a $(…) or <(…): a subshell.
func (w *walker) walkNested(stmts []*syntax.Stmt, st *state, c *ctx, via string) output {
	var out output
	w.subshell(func() { out = w.walkStmts(stmts, st.clone(), c.nested(via)) })
	return out
}

// subshell runs walk as that of a shell of its own (a subshell, a command
// substitution, a pipeline's element, code another shell runs): the traps
// it sets end with it, and this shell's EXIT trap does not run in it;
// its ERR, DEBUG and RETURN traps may (set -E, set -T).
func (w *walker) subshell(walk func()) {
	saved := w.traps
	w.traps = slices.DeleteFunc(slices.Clone(saved), func(t *laterTrap) bool {
		return !slices.ContainsFunc(t.sigs, func(sig string) bool { return sig != "EXIT" })
	})
	defer func() { w.traps = saved }()
	walk()
}

// walkEmbedded walks the command substitutions inside any node (arithmetic,
// test expressions…).
func (w *walker) walkEmbedded(n syntax.Node, st *state, c *ctx) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if w.b.stopped {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.walkNested(n.Stmts, st, c, "$()")
			return false
		case *syntax.ProcSubst:
			via := "<()"
			if n.Op == syntax.CmdOut {
				via = ">()"
			}
			w.walkNested(n.Stmts, st, c, via)
			return false
		case *syntax.BinaryArithm:
			if op := n.Op.String(); strings.HasSuffix(op, "=") && op != "==" && op != "!=" && op != "<=" && op != ">=" {
				forgetArithm(n.X, st)
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				forgetArithm(n.X, st)
			}
		case *syntax.LetClause:
			// let 'x=1' 'a[2]+=1': quoted, its expressions are not
			// parsed; every name in them may be assigned.
			for _, e := range n.Exprs {
				if wd, ok := e.(*syntax.Word); ok && wd.Lit() == "" {
					forgetIdents(wordText(wd), st)
				}
			}
		}
		return true
	})
}

// forgetArithm marks a variable assigned by arithmetic ((x=…), x++,
// a[1]=…) as unknown: Walk does not evaluate arithmetic.
func forgetArithm(x syntax.ArithmExpr, st *state) {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return
	}
	if name := wd.Lit(); name != "" {
		st.set(name, "", false)
		return
	}
	if len(wd.Parts) == 1 {
		if p, ok := wd.Parts[0].(*syntax.ParamExp); ok && p.Param != nil {
			st.set(p.Param.Value, "", false)
			return
		}
	}
	forgetIdents(wordText(wd), st)
}

// wordText is the literal text of a word's parts, quoted or not.
func wordText(wd *syntax.Word) string {
	var b strings.Builder
	syntax.Walk(wd, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			b.WriteString(n.Value)
		case *syntax.SglQuoted:
			b.WriteString(n.Value)
		case *syntax.ParamExp:
			if n.Param != nil {
				b.WriteString(" " + n.Param.Value + " ")
			}
		}
		b.WriteByte(' ')
		return true
	})
	return b.String()
}

// forgetIdents marks every name in text as unknown.
func forgetIdents(text string, st *state) {
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if isIdentStart(f[0]) {
			st.set(f, "", false)
		}
	}
}

func (w *walker) walkStmt(s *syntax.Stmt, st *state, c *ctx) output {
	if !w.node() || s == nil {
		return output{}
	}
	if w.inTrap == 0 {
		w.settleTraps(s, st)
	}
	if s.Background || s.Coprocess || s.Disown {
		cc := *c
		cc.bg = true
		c = &cc
		st = st.clone()
		saved := w.traps
		defer func() { w.traps = saved }() // a subshell's own traps end with it
	}
	if s.Cmd == nil {
		// a bare redirection (> file): a Command with no Argv
		if len(s.Redirs) > 0 {
			cmd := w.base(s, c)
			cmd.Redirects = append(cmd.Redirects, w.redirects(s.Redirs, st, c, &cmd)...)
			cmd.Cwd, cmd.CwdDynamic, cmd.CwdAlts, cmd.CwdVar = st.cwd, st.cwdDyn, slices.Clone(st.cwdAlts), st.cwdVar
			w.emit(cmd)
		}
		return output{}
	}
	if _, ok := s.Cmd.(*syntax.CallExpr); !ok && len(s.Redirs) > 0 {
		cc := *c
		cc.redirs = append(append([]Redirect(nil), c.redirs...), w.redirects(s.Redirs, st, c, nil)...)
		c = &cc
	}
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
		return w.walkCall(s, x, st, c)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			return w.walkPipe(x, st, c)
		default: // && and ||
			return w.walkAndOr(x, st, c)
		}
	case *syntax.Subshell:
		var out output
		w.subshell(func() { out = w.walkStmts(x.Stmts, st.clone(), c) })
		return out
	case *syntax.Block:
		return w.walkStmts(x.Stmts, st, c)
	case *syntax.IfClause:
		w.walkIf(x, st, c, false)
	case *syntax.WhileClause:
		w.walkStmts(x.Cond, st, c)
		w.branch(x.Do, st, c)
	case *syntax.ForClause:
		switch l := x.Loop.(type) {
		case *syntax.WordIter:
			var items []Word
			for _, it := range l.Items {
				items = append(items, w.fields(it, st, c)...)
			}
			if w.unroll(x, l, items, st, c) {
				return output{}
			}
			if x.Select {
				// select sets REPLY to the line it reads, and the name
				// to the item chosen, or to nothing (red-team-28)
				st.set("REPLY", "", false)
			}
			if l.Name != nil {
				if len(items) == 1 && !items[0].Dynamic && !x.Select {
					st.set(l.Name.Value, items[0].Value, true)
				} else {
					st.set(l.Name.Value, "", false)
				}
			}
		case *syntax.CStyleLoop:
			w.walkEmbedded(l, st, c)
		}
		w.branch(x.Do, st, c)
	case *syntax.CaseClause:
		w.str(x.Word, st, c)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				w.str(p, st, c)
			}
			w.branch(it.Stmts, st, c)
		}
	case *syntax.FuncDecl:
		if w.funcs == nil {
			w.funcs = map[string]*syntax.Stmt{}
		}
		if x.Name != nil && x.Body != nil {
			if _, ok := w.funcs[x.Name.Value]; !ok {
				w.funcOrder = append(w.funcOrder, x.Name.Value)
			}
			w.funcs[x.Name.Value] = x.Body
		}
	case *syntax.DeclClause:
		w.walkDecl(s, x, st, c)
	case *syntax.TimeClause:
		cc := *c
		cc.wrappers = append(append([]string(nil), c.wrappers...), "time")
		return w.walkStmt(x.Stmt, st, &cc)
	case *syntax.CoprocClause:
		cc := *c
		cc.bg = true
		out := w.walkStmt(x.Stmt, st.clone(), &cc)
		name := "COPROC"
		if x.Name != nil {
			name = x.Name.Lit()
		}
		if name != "" {
			st.setFDs(name)
		}
		return out
	case *syntax.TestDecl:
		return w.walkStmt(x.Body, st, c)
	default:
		// [[ … ]], (( … )), let: a Command holding just the keyword; the
		// commands in their expansions are walked separately.
		kw := "[["
		switch x.(type) {
		case *syntax.ArithmCmd:
			kw = "(("
		case *syntax.LetClause:
			kw = "let"
		}
		w.walkEmbedded(x, st, c)
		cmd := w.base(s, c)
		cmd.Argv = []Word{{Value: kw, Span: w.span(s, c)}}
		cmd.Cwd, cmd.CwdDynamic, cmd.CwdAlts, cmd.CwdVar = st.cwd, st.cwdDyn, slices.Clone(st.cwdAlts), st.cwdVar
		w.emit(cmd)
	}
	return output{}
}

// maxUnrolled bounds how many times a for loop's body is walked, loops
// inside loops multiplied.
const maxUnrolled = 32

// unroll walks a for loop over known words as the commands it runs: the
// body once for each word, in order, with the name set to it, as straight
// code (for v in debug release; do "build/$v/wc2"; done runs build/debug/wc2
// and then build/release/wc2). It does so only where every word is known and
// nothing in the body can leave the loop early (break, continue, return,
// code or a function that may), so that each pass runs in full and the
// state after it is the last pass's; it reports whether it did.
func (w *walker) unroll(x *syntax.ForClause, l *syntax.WordIter, items []Word, st *state, c *ctx) bool {
	if x.Select || l.Name == nil || len(items) == 0 || w.unrolled*len(items) > maxUnrolled {
		return false
	}
	for _, it := range items {
		if it.Dynamic || it.Glob {
			return false
		}
	}
	if w.mayLeaveLoop(x.Do, 0) {
		return false
	}
	outer := max(w.unrolled, 1)
	w.unrolled = outer * len(items)
	defer func() { w.unrolled = outer }()
	if outer == 1 {
		defer func() { w.unrolled = 0 }()
	}
	for _, it := range items {
		if w.b.stopped {
			break
		}
		st.set(l.Name.Value, it.Value, true)
		w.walkStmts(x.Do, st, c)
	}
	return true
}

// staticText is the text a word gives after quote removal when it holds
// no expansion (\break and br\eak are break); not ok otherwise.
func staticText(wd *syntax.Word) (string, bool) { return StaticText(wd, nil) }

// StaticText is the text a word gives after quote removal when it holds
// no expansion, no glob and no brace, but parameters param gives a text
// for (told whether the parameter starts the word; nil: none); not ok
// otherwise.
func StaticText(wd *syntax.Word, param func(p *syntax.ParamExp, first bool) (string, bool)) (string, bool) {
	var b strings.Builder
	expand := func(p syntax.WordPart) bool {
		pe, ok := p.(*syntax.ParamExp)
		if !ok || param == nil {
			return false
		}
		v, ok := param(pe, b.Len() == 0)
		b.WriteString(v)
		return ok
	}
	for _, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v, glob := unescapeBare(p.Value)
			if glob {
				return "", false
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else if !expand(q) {
					return "", false
				}
			}
		default:
			if !expand(p) {
				return "", false
			}
		}
	}
	return b.String(), true
}

// mayLeaveLoop reports whether running stmts may leave the loop they are
// in before their end: a break, continue or return; a command whose name
// is not a known literal without a slash (it may expand to one); code run
// as text (eval, source, a trap); a function that may, or one not defined
// yet.
func (w *walker) mayLeaveLoop(stmts []*syntax.Stmt, depth int) bool {
	if depth > 4 || slices.ContainsFunc(w.traps, func(t *laterTrap) bool {
		return slices.ContainsFunc(t.sigs, func(sig string) bool { return sig != "EXIT" })
	}) {
		// a trap that runs at an error, a signal, a return or before
		// each command may break out of the loop (red-team-29: trap
		// break ERR)
		return true
	}
	leaves := false
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			if leaves {
				return false
			}
			switch n := n.(type) {
			case *syntax.FuncDecl:
				return false // defining a function runs nothing
			case *syntax.CallExpr:
				if len(n.Args) == 0 {
					return true
				}
				name, ok := staticText(n.Args[0])
				if !ok {
					leaves = !strings.Contains(wordText(n.Args[0]), "/")
					return !leaves
				}
				switch name {
				case "break", "continue", "return", "eval", "source", ".", "trap", "alias", "command", "builtin", "exec":
					leaves = true
				default:
					if w.definedLater(name) {
						leaves = true
					} else if body, ok := w.funcs[name]; ok {
						leaves = w.mayLeaveLoop([]*syntax.Stmt{body}, depth+1)
					}
				}
			}
			return !leaves
		})
		if leaves {
			return true
		}
	}
	return false
}

// walkAndOr walks A && B && C… (and ||). The first operand always runs and
// changes the state; the rest are Conditional. Along a chain of && each
// operand sees what the earlier ones changed (it only runs if they
// succeeded); afterwards those changes are unknown, since the chain may have
// stopped early.
func (w *walker) walkAndOr(x *syntax.BinaryCmd, st *state, c *ctx) output {
	// flatten the left-nested chain: ((A op B) op C)
	var ops []syntax.BinCmdOperator
	var elems []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) &&
			len(s.Redirs) == 0 && !s.Negated && !s.Background && !s.Coprocess && !s.Disown {
			flatten(b.X)
			ops = append(ops, b.Op)
			elems = append(elems, b.Y)
			return
		}
		elems = append(elems, s)
	}
	flatten(x.X)
	ops = append(ops, x.Op)
	elems = append(elems, x.Y)

	head := *c
	head.chainElem = true // a cd here may fail: the list's merge keeps where the shell was
	w.walkStmt(elems[0], st, &head)
	cc := *c
	cc.cond = true
	cc.chainElem = true
	var out output
	b := st.clone()
	for i, e := range elems[1:] {
		if w.b.stopped {
			break
		}
		if ops[i] == syntax.OrStmt {
			// runs when something before failed: only what surely ran is known
			st.merge(b)
			b = st.clone()
		}
		out = w.walkStmt(e, b, &cc)
	}
	st.merge(b)
	return out
}

// branch walks statements that may or may not run; what they change becomes
// unknown afterwards.
func (w *walker) branch(stmts []*syntax.Stmt, st *state, c *ctx) {
	cc := *c
	cc.cond = true
	b := st.clone()
	w.walkStmts(stmts, b, &cc)
	st.merge(b)
}

func (w *walker) walkIf(x *syntax.IfClause, st *state, c *ctx, elif bool) {
	if elif {
		cc := *c
		cc.cond = true
		c = &cc
	}
	w.walkStmts(x.Cond, st, c)
	w.branch(x.Then, st, c)
	if x.Else != nil {
		if len(x.Else.Cond) == 0 {
			w.branch(x.Else.Then, st, c)
		} else {
			w.walkIf(x.Else, st, c, true)
		}
	}
}

func (w *walker) walkPipe(x *syntax.BinaryCmd, st *state, c *ctx) output {
	var elems []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		elems = append(elems, s)
	}
	flatten(x.X)
	flatten(x.Y)
	w.pipeID++
	id := w.pipeID
	var prev output
	for i, e := range elems {
		cc := *c
		cc.pipe = pipeInfo{id: id, pos: i, n: len(elems), set: true}
		cc.stdin = prev
		cc.stdinPiped = i > 0
		w.subshell(func() { prev = w.walkStmt(e, st.clone(), &cc) })
	}
	return prev
}

func (w *walker) walkDecl(s *syntax.Stmt, x *syntax.DeclClause, st *state, c *ctx) {
	cmd := w.base(s, c)
	variant := "declare"
	if x.Variant != nil {
		variant = x.Variant.Value
	}
	cmd.Argv = []Word{{Value: variant, Span: w.span(s, c)}}
	// The attributes it gives, from its options: a name reference (-n)
	// assigns its target; an associative array (-A), -l, -u, -c and -i
	// rewrite what the name is given from then on.
	nameref, rewrites := false, false
	// readonly NAME, declare -r: bash refuses to change the name from then
	// on (not readonly -f, which is of functions); in a function, local
	// and declare without -g make a local name, gone at its return.
	ro, global, funcs := variant == "readonly", variant == "readonly" || variant == "export" || !strings.HasPrefix(c.via, "function "), false
	for _, a := range x.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			f := a.Value.Lit()
			if f == "" {
				if variant == "readonly" {
					st.untrack() // which name is made read-only is not known
				}
				continue
			}
			if !strings.HasPrefix(f, "-") {
				if ro && !funcs {
					st.untrack() // a name only known at run time made read-only
				}
				continue
			}
			funcs = funcs || strings.Contains(f, "f")
			ro = ro || variant != "export" && strings.Contains(f, "r")
			global = global || variant != "local" && strings.Contains(f, "g")
			if variant == "export" || variant == "readonly" {
				continue
			}
			nameref = nameref || strings.Contains(f, "n")
			rewrites = rewrites || strings.ContainsAny(f, "Aluic")
		}
	}
	for _, a := range x.Args {
		if a.Naked && a.Name == nil && a.Value != nil && variant != "export" && variant != "readonly" && a.Value.Lit() == "" {
			st.untrack() // options not known
		}
	}
	for _, a := range x.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			f := a.Value.Lit()
			if f == "" || strings.HasPrefix(f, "-") && strings.Contains(f, "n") {
				st.forgetFDs() // declare -n r=COPROC: r[1]=… assigns it
			}
			cmd.Argv = append(cmd.Argv, w.fields(a.Value, st, c)...)
			continue
		}
		if a.Name == nil {
			continue
		}
		as := w.assign(a, st, c)
		name := a.Name.Value
		switch {
		case nameref:
			// What it reads is its target's value: never known here.
			target := ""
			if a.Value != nil && !as.Value.Dynamic && a.Index == nil {
				target = as.Value.Value
			}
			st.makeVolatile(name)
			if st.namerefs == nil {
				st.namerefs = map[string]string{}
			}
			st.namerefs[name] = target
		case rewrites:
			st.makeVolatile(name)
		}
		if a.Naked {
			cmd.Argv = append(cmd.Argv, Word{Value: name, Span: w.span(a, c)})
			if ro && !funcs {
				st.makeReadonly(name, global)
			}
			continue
		}
		cmd.Assigns = append(cmd.Assigns, as)
		if !nameref {
			setAssigned(st, a, as)
		}
		if ro && !funcs {
			st.makeReadonly(name, global)
		}
	}
	cmd.Redirects = append(cmd.Redirects, w.redirects(s.Redirs, st, c, &cmd)...)
	w.emit(cmd)
}

func (w *walker) assign(a *syntax.Assign, st *state, c *ctx) Assign {
	as := Assign{Name: a.Name.Value}
	if a.Value != nil {
		as.Value = w.str(a.Value, st, c)
		if a.Index == nil {
			as.tempDir, _ = w.mktempDir(a.Value, st)
		}
	}
	if a.Index != nil {
		w.walkEmbedded(a.Index, st, c)
	}
	if a.Array != nil {
		as.tempElems = tempElems(a.Array, st)
		as.elems = w.arrayValue(a.Array, st, c)
		as.Value.Dynamic = true
		as.Value.Span = w.span(a, c)
	}
	return as
}

// arrayValue evaluates the elements of NAME=(…) as the shell does (brace
// expansion, expansions, field splitting), walking what they run; nil
// when any is not known: a subscript ([k]=v), a glob, an unknown word.
func (w *walker) arrayValue(x *syntax.ArrayExpr, st *state, c *ctx) []string {
	var out []string
	known := true
	for _, e := range x.Elems {
		if e.Index != nil {
			w.walkEmbedded(e.Index, st, c)
			known = false
		}
		if e.Value == nil {
			known = false
			continue
		}
		for _, f := range w.fields(e.Value, st, c) {
			if f.Dynamic || f.Glob || len(out) >= maxFields {
				known = false
			}
			out = append(out, f.Value)
		}
	}
	if !known {
		return nil
	}
	if out == nil {
		return []string{} // NAME=(): known, and empty
	}
	return out
}

// setAssigned records in st what the assignment a (evaluated as as) left
// in its variable: a known value, a known array's elements (NAME=(…),
// NAME+=(…) to a known one, NAME[N]=v of one), or an unknown.
func setAssigned(st *state, a *syntax.Assign, as Assign) {
	name := as.Name
	old, had := st.vars[name]
	switch {
	case a.Array != nil && !a.Append:
		st.setArray(name, as.elems)
		if as.elems == nil && as.tempElems != "" {
			st.setTempArray(name, as.tempElems)
		}
	case a.Array != nil:
		switch {
		case had && old.known && old.arr != nil && as.elems != nil:
			st.setArray(name, append(slices.Clone(old.arr), as.elems...))
		case as.tempElems != "" && had && (old.known && len(old.arr) == 0 && old.arr != nil || old.tempArr && old.s == as.tempElems):
			// names mktemp made, added to none or to others of the same
			// directory
			st.setTempArray(name, as.tempElems)
		default:
			st.set(name, "", false)
		}
	case a.Index != nil:
		i := indexLit(a.Index)
		n, err := strconv.Atoi(i)
		if err != nil || i == "" || strings.Trim(i, "0123456789") != "" || n > maxFields || as.Value.Dynamic || !had || !old.known || old.arr == nil || a.Append {
			st.set(name, "", false)
			return
		}
		arr := slices.Clone(old.arr)
		if n >= len(arr) {
			if n > len(arr) {
				st.set(name, "", false) // a sparse array: not followed
				return
			}
			arr = append(arr, "")
		}
		arr[n] = as.Value.Value
		st.setArray(name, arr)
	case as.tempDir != "" && !a.Append:
		st.set(name, "", false)
		st.markTemp(name, varVal{s: as.tempDir, temp: true})
	default:
		st.set(name, as.Value.Value, !as.Value.Dynamic && !a.Append)
		if v := st.vars[name]; as.Value.Dynamic && !a.Append && as.Value.Prefix != "" && !v.known && v.arr == nil && !v.temp {
			// out="dist/$name": what it starts with is known
			if _, ref := st.namerefs[name]; !ref && !st.untracked && !st.volatile[name] {
				st.vars[name] = varVal{prefix: as.Value.Prefix}
			}
		}
	}
}

// setTempArray records an array each of whose elements is a name mktemp
// made in dir (varVal.tempArr), where the variable can be followed.
func (st *state) setTempArray(name, dir string) {
	st.set(name, "", false)
	st.markTemp(name, varVal{s: dir, temp: true, tempArr: true})
}

// markTemp records v (a name mktemp made, or an array of them) for the
// unknown variable name, unless something can change it behind the walk's
// back.
func (st *state) markTemp(name string, v varVal) {
	if cur := st.vars[name]; cur.known || st.untracked || st.volatile[name] {
		return
	}
	if _, ref := st.namerefs[name]; ref {
		return
	}
	st.vars[name] = v
}

// base returns a Command carrying what the context says about it.
func (w *walker) base(s *syntax.Stmt, c *ctx) Command {
	p := c.pipe
	if !p.set {
		w.pipeID++
		p = pipeInfo{id: w.pipeID, n: 1, set: true}
	}
	return Command{
		Wrappers:    append([]string(nil), c.wrappers...),
		Privileged:  c.priv,
		Remote:      c.remote,
		Depth:       c.depth,
		Via:         c.via,
		Span:        w.span(s, c),
		Pipeline:    p.id,
		PipePos:     p.pos,
		PipeLen:     p.n,
		Background:  c.bg,
		Conditional: c.cond,
		Redirects:   append([]Redirect(nil), c.redirs...),
		Stdin:       c.stdin.s,
		StdinKnown:  c.stdin.known,
	}
}

func (w *walker) emit(cmd Command) {
	w.res.Commands = append(w.res.Commands, cmd)
}

// redirects evaluates redirections; heredoc and here-string bodies become
// the command's stdin.
func (w *walker) redirects(rs []*syntax.Redirect, st *state, c *ctx, cmd *Command) []Redirect {
	var out []Redirect
	for _, r := range rs {
		w.node()
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			rd.IsBody = true
			rd.Body, rd.BodyDynamic = w.heredoc(r, st, c)
		case syntax.WordHdoc:
			rd.IsBody = true
			v := w.str(r.Word, st, c)
			rd.Body, rd.BodyDynamic = v.Value+"\n", v.Dynamic
		default:
			rd.Target = w.str(r.Word, st, c)
		}
		if name, ok := strings.CutPrefix(rd.Fd, "{"); ok && strings.HasSuffix(name, "}") && rd.Target.Value != "-" {
			// exec {fd}>file: the shell puts the descriptor it opens in
			// fd ({fd}>&- closes the one fd names).
			st.setFDs(strings.TrimSuffix(name, "}"))
		}
		if rd.IsBody && cmd != nil && (rd.Fd == "" || rd.Fd == "0") {
			cmd.Stdin, cmd.StdinKnown = rd.Body, !rd.BodyDynamic
			cmd.StdinKnown = !rd.BodyDynamic
		}
		if !rd.IsBody && cmd != nil && (rd.Op == "<" || rd.Op == "<>") && (rd.Fd == "" || rd.Fd == "0") {
			cmd.Stdin, cmd.StdinKnown = "", false
		}
		out = append(out, rd)
	}
	return out
}

// heredoc evaluates a heredoc body: raw when the delimiter is quoted, else
// with expansions (whose commands are walked).
func (w *walker) heredoc(r *syntax.Redirect, st *state, c *ctx) (string, bool) {
	if r.Hdoc == nil {
		return "", false
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, "\\") {
				quoted = true
			}
		}
	}
	if quoted {
		var b strings.Builder
		for _, p := range r.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
		return b.String(), false
	}
	var b strings.Builder
	dyn := false
	for _, p := range r.Hdoc.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(unescapeHeredoc(l.Value))
			continue
		}
		for _, alt := range w.evalParts([]syntax.WordPart{p}, true, false, st, c)[:1] {
			v := joinPieces(alt)
			b.WriteString(v.Value)
			dyn = dyn || v.Dynamic
		}
	}
	return b.String(), dyn
}

// uncalledFuncs walks, once and as conditional, every function body the
// input defined but never called.
func (w *walker) uncalledFuncs(st *state) {
	for _, name := range w.funcOrder {
		if w.called[name] || w.b.stopped {
			continue
		}
		w.markCalled(name)
		c := &ctx{via: "function " + name, cond: true}
		w.callFunc(name, st.clone(), c)
	}
}

func (w *walker) markCalled(name string) {
	if w.called == nil {
		w.called = map[string]bool{}
	}
	w.called[name] = true
}

// callFunc walks a function body; a function already being walked (recursion)
// is not entered again.
func (w *walker) callFunc(name string, st *state, c *ctx) {
	w.calls = append(w.calls, name)
	if w.active[name] {
		return
	}
	if w.active == nil {
		w.active = map[string]bool{}
	}
	w.active[name] = true
	w.walkStmt(w.funcs[name], st, c)
	delete(w.active, name)
	w.returnTraps(st)
}
