package walk

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// maxFields caps the words one shell word may expand to (brace expansion
// multiplies), so that {a,b}{a,b}… stays linear.
const maxFields = 256

// piece is one evaluated part of a word before field splitting.
type piece struct {
	s      string
	quoted bool // came from quotes: no splitting, no globbing
	split  bool // result of an unquoted expansion: split on IFS
	dyn    bool // unknown
	glob   bool // unquoted * ? [
	brk    bool // a word ends here ("${a[@]}" between two elements)
	temp   bool // with dyn: a name mktemp made (one path segment)
	fed    Span // with dyn: a whole NUL-ended item of the output there (varVal.fed)
}

// fields evaluates a word as a command argument: brace expansion, tilde,
// quote removal, expansions and field splitting (no globbing).
func (w *walker) fields(word *syntax.Word, st *state, c *ctx) []Word {
	w.node()
	sp, raw := w.wordSpan(word, c), wordRaw(word, c)
	parts := word.Parts
	if hasBrace(parts) {
		// split a copy: the AST must keep its positions (a BraceExp with
		// an empty element has none), since function bodies are re-walked
		cp := &syntax.Word{Parts: parts}
		if syntax.SplitBraces(cp) {
			parts = cp.Parts
		}
	}
	w.capped = false
	alts := w.evalParts(parts, false, true, st, c)
	if w.capped {
		w.capped = false
		w.issue(BudgetExceeded, "word expands to more than 256 words", sp)
	}
	ifs, ifsKnown := w.ifs(st)
	var out []Word
	for _, alt := range alts {
		if len(alt) > 0 {
			// brace expansion comes before tilde expansion: {rm,-rf,~}
			if p := alt[0]; !p.quoted && !p.split && !p.dyn && strings.HasPrefix(p.s, "~") {
				t, rest := tilde(p.s)
				v, ok := w.tildeValue(t, st)
				np := []piece{{s: v, dyn: !ok, quoted: true}}
				if rest != "" {
					np = append(np, piece{s: rest, glob: p.glob})
				}
				alt = append(np, alt[1:]...)
			}
		}
		for _, f := range splitFields(alt, ifs, ifsKnown) {
			if len(out) >= maxFields {
				w.issue(BudgetExceeded, "word expands to more than 256 words", sp)
				return out
			}
			f.Span, f.Raw = sp, raw
			out = append(out, f)
		}
	}
	return out
}

func hasBrace(parts []syntax.WordPart) bool {
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// str evaluates a word as one string, as for assignment values, redirection
// targets and case words: no brace expansion, no field splitting.
func (w *walker) str(word *syntax.Word, st *state, c *ctx) Word {
	if word == nil {
		return Word{}
	}
	w.node()
	alts := w.evalParts(word.Parts, false, true, st, c)
	var ps []piece
	if len(alts) > 0 {
		ps = alts[0]
	}
	out := joinPieces(ps)
	out.Span, out.Raw = w.wordSpan(word, c), wordRaw(word, c)
	return out
}

// joinPieces concatenates pieces into one word.
func joinPieces(ps []piece) Word {
	var b, shape strings.Builder
	var out Word
	allTemp := true
	var item itemTracker
	for _, p := range ps {
		item.add(p)
		if p.brk {
			b.WriteByte(' ')
			shape.WriteByte(' ')
			continue
		}
		if p.dyn {
			allTemp = allTemp && p.temp
			if !out.Dynamic {
				out.Prefix = b.String()
			}
			out.Dynamic = true
			out.Splits = out.Splits || !p.quoted
			shape.WriteString(unknownShape)
		}
		b.WriteString(p.s)
		shape.WriteString(p.s)
		out.Quoted = out.Quoted || p.quoted
		out.Glob = out.Glob || p.glob
	}
	out.Value = b.String()
	if out.Dynamic {
		out.Shape = shape.String()
		out.TempName = allTemp
		out.FedBy = item.whole()
	}
	return out
}

// itemTracker follows the pieces of one word: whether it is exactly one
// whole NUL-ended item of a process substitution's output (piece.fed),
// nothing before or after it.
type itemTracker struct {
	fed Span
	bad bool
}

func (t *itemTracker) add(p piece) {
	switch {
	case p.fed != Span{}:
		t.bad = t.bad || t.fed != Span{} || !p.quoted
		t.fed = p.fed
	case p.dyn || p.s != "" || p.brk:
		t.bad = true
	}
}

// whole is the span of the item the word is, or the zero Span.
func (t *itemTracker) whole() Span {
	if t.bad {
		return Span{}
	}
	return t.fed
}

// unknownShape stands for a value only known at run time in Word.Shape.
const unknownShape = "${WARDEN_INPUT}"

// defaultIFS is bash's IFS when the input does not set it.
const defaultIFS = " \t\n"

// ifs returns the field separators in effect: the default, or what the
// input assigned (known or not).
func (w *walker) ifs(st *state) (string, bool) {
	if v, ok := st.vars["IFS"]; ok {
		return v.s, v.known
	}
	return defaultIFS, true
}

// splitFields turns pieces into words, splitting unquoted expansion results
// on the bytes of ifs (runs of separators count as one). With an unknown
// IFS a split piece makes its word Dynamic. Unquoted expansion results are
// also subject to globbing, which sets Glob.
func splitFields(ps []piece, ifs string, ifsKnown bool) []Word {
	var out []Word
	var b, shape strings.Builder
	var cur Word
	has, allTemp := false, true
	var item itemTracker
	flush := func() {
		if has {
			cur.Value = b.String()
			if cur.Dynamic {
				cur.Shape = shape.String()
				cur.TempName = allTemp
				cur.FedBy = item.whole()
			}
			out = append(out, cur)
		}
		b.Reset()
		shape.Reset()
		cur = Word{}
		has, allTemp = false, true
		item = itemTracker{}
	}
	for _, p := range ps {
		if !p.brk {
			item.add(p)
		}
		switch {
		case p.brk:
			flush()
		case p.dyn:
			allTemp = allTemp && p.temp
			if !cur.Dynamic {
				cur.Prefix = b.String()
			}
			cur.Dynamic = true
			cur.Quoted = cur.Quoted || p.quoted
			cur.Splits = cur.Splits || !p.quoted
			shape.WriteString(unknownShape)
			has = true
		case p.split && !p.quoted && !ifsKnown:
			allTemp = false
			if !cur.Dynamic {
				cur.Prefix = b.String()
			}
			cur.Dynamic = true
			cur.Splits = true
			b.WriteString(p.s)
			shape.WriteString(p.s)
			has = true
		case p.split && !p.quoted:
			for i := 0; i < len(p.s); i++ {
				ch := p.s[i]
				if strings.IndexByte(ifs, ch) >= 0 {
					flush()
					continue
				}
				if ch == '*' || ch == '?' || ch == '[' {
					cur.Glob = true
				}
				b.WriteByte(ch)
				shape.WriteByte(ch)
				has = true
			}
		default:
			b.WriteString(p.s)
			shape.WriteString(p.s)
			cur.Quoted = cur.Quoted || p.quoted
			cur.Glob = cur.Glob || p.glob
			has = true
		}
	}
	flush()
	return out
}

// evalParts evaluates word parts into alternatives (more than one only with
// brace expansion).
func (w *walker) evalParts(parts []syntax.WordPart, quoted, first bool, st *state, c *ctx) [][]piece {
	alts := [][]piece{nil}
	for i, part := range parts {
		var add [][]piece
		switch p := part.(type) {
		case *syntax.Lit:
			s := p.Value
			if !quoted && first && i == 0 && strings.HasPrefix(s, "~") {
				t, rest := tilde(s)
				v, ok := w.tildeValue(t, st)
				ps := []piece{{s: v, dyn: !ok, quoted: true}}
				if rest != "" {
					rv, g := unescapeBare(rest)
					ps = append(ps, piece{s: rv, glob: g})
				}
				add = [][]piece{ps}
				break
			}
			if quoted {
				add = [][]piece{{{s: unescapeDouble(s), quoted: true}}}
			} else {
				v, g := unescapeBare(s)
				add = [][]piece{{{s: v, glob: g}}}
			}
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				s = ansiC(s)
			}
			add = [][]piece{{{s: s, quoted: true}}}
		case *syntax.DblQuoted:
			in := w.evalParts(p.Parts, true, false, st, c)
			// "${a[@]}" of an empty array is no word at all
			none := len(p.Parts) == 1 && w.emptyArray(p.Parts[0], st)
			for i, a := range in {
				// the empty quoted piece keeps "" as a word of its own
				if !none {
					a = append(a, piece{quoted: true})
				}
				for j := range a {
					a[j].quoted = true
				}
				in[i] = a
			}
			add = in
		case *syntax.ParamExp:
			if dir, ok := tempVar(p, st); ok {
				// the temporary directory, then the name mktemp made
				add = [][]piece{{{s: dir + "/", quoted: true}, {dyn: true, temp: true, quoted: true}}}
				break
			}
			if elems, ok := w.arrayElems(p, st); ok {
				add = [][]piece{w.elemPieces(p, elems, quoted, st)}
				break
			}
			if from, ok := fedVar(p, st); ok && quoted {
				// "$f", "${a[@]}": whole items, each its own word
				add = [][]piece{{{dyn: true, quoted: true, fed: from}}}
				break
			}
			if pre, ok := prefixVar(p, st); ok {
				// known text, then what is not known
				add = [][]piece{{{s: pre, split: !quoted, quoted: quoted}, {dyn: true, split: !quoted, quoted: quoted}}}
				break
			}
			v, ok := w.paramExp(p, st, c)
			add = [][]piece{{{s: v, dyn: !ok, split: !quoted, quoted: quoted}}}
		case *syntax.CmdSubst:
			w.walkNested(p.Stmts, st, c, "$()")
			add = [][]piece{{{dyn: true, quoted: quoted}}}
			if top, ok := w.gitTop(p, st); ok {
				add = [][]piece{{{s: top, split: !quoted, quoted: quoted}}}
			}
		case *syntax.ProcSubst:
			via := "<()"
			if p.Op == syntax.CmdOut {
				via = ">()"
			}
			out := w.walkNested(p.Stmts, st, c, via)
			if c.span == nil && len(parts) == 1 {
				// source <(…), bash <(…) look the output up by the word's span
				if w.procOut == nil {
					w.procOut = map[Span]output{}
				}
				w.procOut[Span{int(p.Pos().Offset()), int(p.End().Offset())}] = out
			}
			add = [][]piece{{{dyn: true, quoted: true}}}
		case *syntax.ArithmExp:
			w.walkEmbedded(p.X, st, c)
			add = [][]piece{{{dyn: true, quoted: quoted}}}
		case *syntax.ExtGlob:
			add = [][]piece{{{s: p.Op.String() + p.Pattern.Value + ")", glob: true}}}
		case *syntax.BraceExp:
			add = w.braceAlts(p, st, c)
		default:
			add = [][]piece{{{dyn: true}}}
		}
		alts = w.product(alts, add)
	}
	return alts
}

// product appends every alternative of add to every alternative of alts,
// capped at maxFields.
func (w *walker) product(alts, add [][]piece) [][]piece {
	if len(add) == 1 {
		for i := range alts {
			alts[i] = append(alts[i], add[0]...)
		}
		return alts
	}
	out := make([][]piece, 0, min(len(alts)*len(add), maxFields))
	for _, a := range alts {
		for _, b := range add {
			if len(out) >= maxFields {
				w.capped = true
				return out
			}
			n := make([]piece, 0, len(a)+len(b))
			n = append(append(n, a...), b...)
			out = append(out, n)
		}
	}
	return out
}

// braceAlts expands {a,b} and {x..y[..n]}.
func (w *walker) braceAlts(b *syntax.BraceExp, st *state, c *ctx) [][]piece {
	if b.Sequence {
		return w.braceSeq(b)
	}
	var out [][]piece
	for _, e := range b.Elems {
		for _, a := range w.evalParts(e.Parts, false, false, st, c) {
			if len(out) >= maxFields {
				w.capped = true
				return out
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = [][]piece{nil}
	}
	return out
}

func (w *walker) braceSeq(b *syntax.BraceExp) [][]piece {
	lit := func(i int) string {
		if i >= len(b.Elems) {
			return ""
		}
		return b.Elems[i].Lit()
	}
	from, to := lit(0), lit(1)
	incr := 1
	if s := lit(2); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return [][]piece{{{dyn: true}}}
		}
		incr = max(n, -n)
	}
	if incr == 0 {
		incr = 1
	}
	var out [][]piece
	x, err1 := strconv.Atoi(from)
	y, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
		if len(from) != 1 || len(to) != 1 {
			return [][]piece{{{dyn: true}}}
		}
		x, y = int(from[0]), int(to[0])
		defer func() {
			for i := range out {
				n, _ := strconv.Atoi(out[i][0].s)
				out[i][0].s = string(rune(n))
			}
		}()
	}
	step := incr
	if y < x {
		step = -incr
	}
	for i := x; (step > 0 && i <= y) || (step < 0 && i >= y); i += step {
		if len(out) >= maxFields {
			w.capped = true
			break
		}
		out = append(out, []piece{{s: strconv.Itoa(i)}})
	}
	return out
}

// tilde splits a leading ~prefix off s.
func tilde(s string) (string, string) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func (w *walker) tildeValue(t string, st *state) (string, bool) {
	switch t {
	case "~":
		return w.lookup(st, "HOME")
	case "~+":
		return w.lookup(st, "PWD")
	}
	return "", false
}

// TempPath is where a TempName word leads, its mktemp names written as
// ${WARDEN_INPUT}, cleaned; not ok for another word, or one that leads
// out of its temporary directory or to it ("$d/..").
func TempPath(w Word) (string, bool) {
	if !w.Dynamic || !w.TempName || w.Shape == "" {
		return "", false
	}
	i := strings.Index(w.Shape, unknownShape)
	if i < 1 || w.Shape[i-1] != '/' {
		return "", false
	}
	dir := path.Clean(w.Shape[:i])
	p := path.Clean(w.Shape)
	if !strings.HasPrefix(p, dir+"/") {
		return "", false // "$d/../..": out of it; "$d/..": the directory itself
	}
	return p, true
}

// FileName is the last path segment of a word only known at run time
// whose unknown parts all lie before a slash written plainly after them
// ("build/$v/wc2", "$BIN/app"): whatever they hold, the word names a file
// of that name. It is "" for any other word: one known statically, one an
// unquoted part may split into several words or glob, one whose last
// segment is computed, empty, "." or "..", or whose written part climbs
// (..).
func (w Word) FileName() string {
	if !w.Dynamic || w.Splits || w.Glob || w.Shape == "" {
		return ""
	}
	i := strings.LastIndex(w.Shape, unknownShape)
	rest := w.Shape[i+len(unknownShape):]
	j := strings.LastIndexByte(rest, '/')
	if i < 0 || j < 0 {
		return ""
	}
	name := rest[j+1:]
	if name == "" || name == "." || name == ".." || slices.Contains(strings.Split(rest, "/"), "..") {
		return ""
	}
	return name
}

// tempCwd marks a Command's CwdVar that is a TempPath: the command runs
// in a directory mktemp made (or below it).
const tempCwd = "\x00temp:"

// TempCwd returns the TempPath a command's CwdVar holds, if it does.
func TempCwd(cwdVar string) (string, bool) {
	return strings.CutPrefix(cwdVar, tempCwd)
}

// plainParam reports whether p names a variable with no operator on it:
// $NAME, ${NAME}, ${NAME[i]}, ${#NAME…} (Index and Length are the
// caller's to look at).
func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Width && p.Names == 0 && p.NestedParam == nil &&
		p.Slice == nil && p.Repl == nil && p.Flags == nil && len(p.Modifiers) == 0 && p.Exp == nil
}

// prefixVar returns the known start of an unknown value $NAME or ${NAME}
// holds (varVal.prefix).
func prefixVar(p *syntax.ParamExp, st *state) (string, bool) {
	if !plainParam(p) || p.Index != nil || p.Length {
		return "", false
	}
	v, ok := st.vars[p.Param.Value]
	return v.prefix, ok && !v.known && v.prefix != ""
}

// tempVar returns the temporary directory $NAME or ${NAME} holds a name
// mktemp made in, for a variable assigned from mktemp (mktempDir).
func tempVar(p *syntax.ParamExp, st *state) (string, bool) {
	if p.Length {
		return "", false
	}
	array := false
	if p.Index != nil {
		// "${dirs[@]}" of an array of such names: each word is one
		if i := indexLit(p.Index); i != "@" && i != "*" {
			return "", false
		}
		q := *p
		q.Index = nil
		p, array = &q, true
	}
	if q := *p; q.Exp != nil && (q.Exp.Op == syntax.DefaultUnsetOrNull || q.Exp.Op == syntax.DefaultUnset ||
		q.Exp.Op == syntax.ErrorUnsetOrNull || q.Exp.Op == syntax.ErrorUnset) {
		// ${tmp:-…}, ${tmp:?}: a name mktemp made is never empty, so
		// its own
		q.Exp = nil
		p = &q
	}
	if !plainParam(p) {
		return "", false
	}
	v, ok := st.vars[p.Param.Value]
	return v.s, ok && v.temp && !v.known && v.tempArr == array
}

// tempElems returns the temporary directory every element of an array
// value (…) is a name mktemp made in ("$d" for d=$(mktemp -d)), or ""
// when any element is something else.
func tempElems(x *syntax.ArrayExpr, st *state) string {
	dir := ""
	for _, e := range x.Elems {
		if e.Index != nil || e.Value == nil || len(e.Value.Parts) != 1 {
			return ""
		}
		part := e.Value.Parts[0]
		if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			part = dq.Parts[0]
		}
		p, ok := part.(*syntax.ParamExp)
		if !ok || p.Index != nil {
			return ""
		}
		d, ok := tempVar(p, st)
		if !ok || dir != "" && d != dir {
			return ""
		}
		dir = d
	}
	return dir
}

// gitTop is what $(git rev-parse --show-toplevel) prints, where the walk
// knows it: the work tree's top (Options.Top), from a known directory in
// it, with no variable of the line moving git elsewhere (GIT_DIR,
// GIT_WORK_TREE…) and nothing but its errors redirected (2>/dev/null).
// A directory of the tree may be a repository of its own, whose top is
// inside this one.
func (w *walker) gitTop(cs *syntax.CmdSubst, st *state) (string, bool) {
	top := w.opt.Top
	if top == "" || st.cwdDyn || st.untracked || len(st.cwdAlts) > 0 || st.cwd == "" || st.cwd != top && !strings.HasPrefix(st.cwd, top+"/") || len(cs.Stmts) != 1 {
		return "", false
	}
	for name := range st.vars {
		if strings.HasPrefix(name, "GIT_") {
			return "", false
		}
	}
	s := cs.Stmts[0]
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) != 3 || s.Negated || s.Background {
		return "", false
	}
	for i, want := range []string{"git", "rev-parse", "--show-toplevel"} {
		if ce.Args[i].Lit() != want {
			return "", false
		}
	}
	for _, r := range s.Redirs {
		if r.N == nil || r.N.Value != "2" || r.Op != syntax.RdrOut || r.Word == nil || r.Word.Lit() != "/dev/null" {
			return "", false
		}
	}
	return top, true
}

// fedVar is the span of the process substitution whose NUL-ended items a
// variable holds ($f, ${f}, ${a[@]}: varVal.fed); not ok for any other
// form or variable.
func fedVar(p *syntax.ParamExp, st *state) (Span, bool) {
	if !plainParam(p) || p.Length || p.Index != nil && indexLit(p.Index) != "@" {
		return Span{}, false
	}
	v, ok := st.vars[p.Param.Value]
	return v.fed, ok && !v.known && v.fed != Span{}
}

// tmpdirTemplate reports whether a word is the temporary directory's
// variable ($TMPDIR, ${TMPDIR}, ${TMPDIR:-/tmp} or ${TMPDIR-/tmp}) then
// text with no expansion, which it returns.
func tmpdirTemplate(word *syntax.Word) (string, bool) {
	parts := word.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 2 {
		return "", false
	}
	p, ok := parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Param.Value != "TMPDIR" {
		return "", false
	}
	if q := *p; q.Exp != nil {
		if q.Exp.Op != syntax.DefaultUnsetOrNull && q.Exp.Op != syntax.DefaultUnset || q.Exp.Word == nil || q.Exp.Word.Lit() != "/tmp" {
			return "", false
		}
		q.Exp = nil
		p = &q
	}
	lit, ok := parts[1].(*syntax.Lit)
	if !plainParam(p) || p.Index != nil || p.Length || !ok || !strings.HasPrefix(lit.Value, "/") {
		return "", false
	}
	return lit.Value, true
}

// plainTemplate reports whether a mktemp template (or suffix) is only
// characters that read as themselves in any shell context: the name made
// from it holds nothing else (its Xs become letters and digits).
func plainTemplate(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+@%,:=-", c) >= 0) {
			return false
		}
	}
	return true
}

// mktempDir returns the temporary directory a word that is only the
// output of mktemp ($(mktemp -d), "$(mktemp -t x.XXXXXX)") names a new
// file or directory in: TMPDIR, with no directory given to mktemp (-p,
// --tmpdir=, a template with a slash). Not ok for any other word.
func (w *walker) mktempDir(word *syntax.Word, st *state) (string, bool) {
	if word == nil || len(word.Parts) != 1 {
		return "", false
	}
	part := word.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	cs, ok := part.(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 || cs.Stmts[0].Negated || cs.Stmts[0].Background {
		return "", false
	}
	ce, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 || ce.Args[0].Lit() != "mktemp" {
		return "", false
	}
	tmp, ok := w.lookup(st, "TMPDIR")
	if v, set := st.vars["TMPDIR"]; set && !v.known {
		return "", false // TMPDIR=$X earlier: mktemp makes it there, not known
	}
	if !ok || tmp == "" {
		tmp = "/tmp"
	}
	tmp = strings.TrimSuffix(tmp, "/")
	// A directory given (a template's, -p's) must be the temporary one:
	// what it makes there is a new name in it all the same.
	isTmp := func(d string) bool { d = path.Clean(d); return d == tmp || d == "/tmp" || d == "/var/tmp" }
	dir, templates := tmp, 0
	var args []string
	for _, a := range ce.Args[1:] {
		v, ok := staticText(a)
		if !ok {
			// "${TMPDIR:-/tmp}/x.XXXXXX", "$TMPDIR/x.XXXXXX": the
			// temporary directory, then a template
			if rest, isTmp := tmpdirTemplate(a); isTmp {
				v, ok = tmp+rest, true
			}
		}
		if !ok {
			return "", false
		}
		args = append(args, v)
	}
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "":
			return "", false
		case v == "-d" || v == "-q" || v == "-t" || v == "-u" || v == "-dq" || v == "-qd" || v == "-dt" || v == "-td" || v == "-du" || v == "-ud" ||
			v == "--directory" || v == "--quiet" || v == "--tmpdir" || v == "--dry-run":
			// (-u: the name only, not made: a name in the directory all the same)
		case strings.HasPrefix(v, "--suffix="):
			// a suffix after the template's Xs (mktemp refuses one with a
			// slash): the name is still one entry of the directory
			if !plainTemplate(strings.TrimPrefix(v, "--suffix=")) {
				return "", false
			}
		case v == "--suffix" && i+1 < len(args) && plainTemplate(args[i+1]):
			i++
		case v == "-p" && i+1 < len(args) && isTmp(args[i+1]):
			dir = path.Clean(args[i+1])
			i++
		case strings.HasPrefix(v, "--tmpdir=") && isTmp(strings.TrimPrefix(v, "--tmpdir=")):
			dir = path.Clean(strings.TrimPrefix(v, "--tmpdir="))
		case strings.HasPrefix(v, "-"):
			return "", false // -u, --suffix, another directory…
		case !plainTemplate(path.Base(v)) || strings.HasSuffix(v, "/.") || strings.HasSuffix(v, "/..") || v == "." || v == "..":
			return "", false
		case strings.Contains(v, "/"):
			if !path.IsAbs(v) || !isTmp(path.Dir(v)) || path.Base(v) == ".." {
				return "", false // a template elsewhere
			}
			dir = path.Dir(v)
			fallthrough
		default:
			if templates++; templates > 1 {
				return "", false
			}
		}
	}
	if !strings.HasPrefix(dir, "/") || strings.ContainsAny(dir, " \t\n*?[") {
		return "", false
	}
	return dir, true
}

// arrayElems returns the elements of a known array (or a known scalar, an
// array of one) that ${NAME[@]} or ${NAME[*]} expands to; not ok for any
// other form, an unknown or empty array.
func (w *walker) arrayElems(p *syntax.ParamExp, st *state) ([]string, bool) {
	if !plainParam(p) || p.Index == nil || p.Length {
		return nil, false
	}
	if i := indexLit(p.Index); i != "@" && i != "*" {
		return nil, false
	}
	return w.arrayOf(st, p.Param.Value)
}

// arrayOf returns the elements of the variable name when they are known.
func (w *walker) arrayOf(st *state, name string) ([]string, bool) {
	if v, ok := st.vars[name]; ok && v.known && v.arr != nil {
		return v.arr, true
	}
	if v, ok := w.lookup(st, name); ok {
		return []string{v}, true // a scalar is an array of one
	}
	return nil, false
}

// emptyArray reports whether part is ${NAME[@]} of an array known to be
// empty.
func (w *walker) emptyArray(part syntax.WordPart, st *state) bool {
	p, ok := part.(*syntax.ParamExp)
	if !ok || p.Index == nil || indexLit(p.Index) != "@" {
		return false
	}
	elems, ok := w.arrayElems(p, st)
	return ok && len(elems) == 0
}

// elemPieces are the pieces ${NAME[@]} or ${NAME[*]} gives: quoted "@",
// each element a word of its own; quoted "*", one word, the elements
// joined by the first character of IFS; unquoted, each element split.
func (w *walker) elemPieces(p *syntax.ParamExp, elems []string, quoted bool, st *state) []piece {
	if quoted && indexLit(p.Index) == "*" {
		ifs, known := w.ifs(st)
		if !known {
			return []piece{{dyn: true, quoted: true}}
		}
		sep := ""
		if ifs != "" {
			sep = ifs[:1]
		}
		return []piece{{s: strings.Join(elems, sep), quoted: true}}
	}
	var ps []piece
	for i, e := range elems {
		if i > 0 {
			ps = append(ps, piece{brk: true})
		}
		ps = append(ps, piece{s: e, split: !quoted, quoted: quoted})
	}
	return ps
}

// elemExp evaluates ${NAME[N]} (N a literal index), ${#NAME[@]} and
// ${#NAME[*]} of a variable whose elements are known; simple is false for
// every other form.
func (w *walker) elemExp(p *syntax.ParamExp, st *state) (v string, ok, simple bool) {
	if !plainParam(p) || p.Index == nil {
		return "", false, false
	}
	i := indexLit(p.Index)
	elems, known := w.arrayOf(st, p.Param.Value)
	switch {
	case i == "@" || i == "*":
		if !p.Length {
			return "", false, false
		}
		return strconv.Itoa(len(elems)), known, true
	case i == "" || strings.Trim(i, "0123456789") != "" || len(i) > 6:
		return "", false, false // computed, negative or huge: not followed
	}
	n, _ := strconv.Atoi(i)
	if !known {
		return "", false, true
	}
	if n < len(elems) {
		v = elems[n]
	}
	if p.Length {
		return strconv.Itoa(utf8.RuneCountInString(v)), true, true
	}
	return v, true, true
}

// indexLit is an array subscript's literal text, or "".
func indexLit(x syntax.ArithmExpr) string {
	if wd, ok := x.(*syntax.Word); ok {
		return wd.Lit()
	}
	return ""
}

// paramExp evaluates $x, ${x}, ${x:-def}… and walks the commands nested in
// it.
func (w *walker) paramExp(p *syntax.ParamExp, st *state, c *ctx) (string, bool) {
	if fd, ok := w.coprocFD(p, st); ok {
		return fd, true
	}
	if v, ok, simple := w.elemExp(p, st); simple {
		return v, ok
	}
	if p.Param == nil || p.Excl || p.Width || p.Names != 0 || p.Index != nil || p.NestedParam != nil ||
		p.Slice != nil || p.Repl != nil || p.Flags != nil || len(p.Modifiers) > 0 {
		if p.Exp != nil && p.Param != nil {
			if op := p.Exp.Op.String(); op == ":=" || op == "=" {
				// ${a[1]:=v} assigns the element; ${!ref:=v} the
				// variable ref names.
				if p.Excl {
					st.untrack()
				} else {
					st.set(p.Param.Value, "", false)
				}
			}
		}
		if p.Repl != nil {
			w.str(p.Repl.Orig, st, c)
			w.str(p.Repl.With, st, c)
		}
		if p.Slice != nil {
			w.walkEmbedded(p.Slice.Offset, st, c)
			w.walkEmbedded(p.Slice.Length, st, c)
		}
		if p.Index != nil {
			w.walkEmbedded(p.Index, st, c)
		}
		if p.Exp != nil {
			w.condStr(p.Exp.Word, st, c)
		}
		return "", false
	}
	name := p.Param.Value
	if p.Exp != nil && !p.Length {
		switch op := p.Exp.Op.String(); op {
		case ":-", "-", ":=", "=":
			if w.envUnset(st, name) {
				d := w.str(p.Exp.Word, st, c)
				if op == ":=" || op == "=" {
					st.set(name, d.Value, !d.Dynamic)
				}
				return d.Value, !d.Dynamic
			}
		case ":+", "+":
			if w.envUnset(st, name) {
				return "", true // the word is not expanded
			}
		}
	}
	val, known := w.lookup(st, name)
	if p.Length {
		return strconv.Itoa(utf8.RuneCountInString(val)), known
	}
	if p.Exp == nil {
		return val, known
	}
	op := p.Exp.Op.String()
	switch op {
	case ":-", "-", ":=", "=":
		if known && (val != "" || op == "-" || op == "=") {
			return val, true
		}
		if known {
			d := w.str(p.Exp.Word, st, c)
			if op == ":=" && !d.Dynamic {
				st.set(name, d.Value, true)
			}
			return d.Value, !d.Dynamic
		}
		w.condStr(p.Exp.Word, st, c)
		return "", false
	case ":+", "+":
		if known && val == "" && op == ":+" {
			return "", true
		}
		if known {
			d := w.str(p.Exp.Word, st, c)
			return d.Value, !d.Dynamic
		}
		w.condStr(p.Exp.Word, st, c)
		return "", false
	case ":?", "?":
		w.condStr(p.Exp.Word, st, c)
		if v := st.vars[name]; !known && v.elseUnassigned && w.unassignedUnset(st, name) {
			// Assigned by a branch that ran, or unset and the command
			// is not run.
			return v.s, true
		}
		return val, known
	case "#", "%":
		d := w.str(p.Exp.Word, st, c)
		if !known || d.Dynamic || d.Glob {
			return "", false
		}
		if op == "#" {
			return strings.TrimPrefix(val, d.Value), true
		}
		return strings.TrimSuffix(val, d.Value), true
	case "^^", ",,":
		d := w.str(p.Exp.Word, st, c)
		if !known || d.Value != "" || d.Dynamic {
			return "", false
		}
		if op == "^^" {
			return strings.ToUpper(val), true
		}
		return strings.ToLower(val), true
	}
	w.condStr(p.Exp.Word, st, c)
	return "", false
}

// condStr evaluates a word that may or may not be expanded, so that the
// commands in it are walked as conditional.
func (w *walker) condStr(word *syntax.Word, st *state, c *ctx) {
	if word == nil {
		return
	}
	cc := *c
	cc.cond = true
	w.str(word, st.clone(), &cc)
}

// unescapeBare removes unquoted backslashes and reports unescaped glob
// characters.
func unescapeBare(s string) (string, bool) {
	glob := false
	if !strings.ContainsAny(s, "\\*?[") {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case ch == '\\':
			continue
		case ch == '*' || ch == '?' || ch == '[':
			glob = true
		}
		b.WriteByte(ch)
	}
	return b.String(), glob
}

// unescapeDouble applies the backslash rules inside double quotes.
func unescapeDouble(s string) string { return unescape(s, "$`\"\\") }

// unescapeHeredoc applies the backslash rules of an unquoted heredoc body,
// where a double quote is not special.
func unescapeHeredoc(s string) string { return unescape(s, "$`\\") }

// unescape removes a backslash before any byte in special and a backslash
// newline (line continuation); every other backslash stays.
func unescape(s, special string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == '\n' {
				i++
				continue
			}
			if strings.IndexByte(special, s[i+1]) >= 0 {
				b.WriteByte(s[i+1])
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string.
func ansiC(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch ch := s[i]; ch {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(ch)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			n := 8
			switch ch {
			case 'x':
				n = 2
			case 'u':
				n = 4
			}
			j := i + 1
			for j < len(s) && j-i-1 < n && isHexDigit(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(ch)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if ch == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// coprocFD returns the value of ${NAME[0]}, ${NAME[1]} or $NAME where the
// shell put descriptors in NAME (coproc NAME, {NAME}>file): a number it
// chose, written here as the ones bash chooses first for a coprocess
// ("63", "60"), so that eval "exec ${NAME[1]}>&-", which closes the
// coprocess's input, reads as the code it is. The number stands for
// whichever the shell chose: no value of a descriptor is code or a path.
// Not where the input sets a trap: a DEBUG or RETURN trap's code runs
// between any two commands, and may assign the variable there.
func (w *walker) coprocFD(p *syntax.ParamExp, st *state) (string, bool) {
	if p.Param == nil || !st.vars[p.Param.Value].fds || p.Excl || p.Length || p.Width || p.Names != 0 ||
		p.NestedParam != nil || p.Slice != nil || p.Repl != nil || p.Flags != nil || len(p.Modifiers) > 0 || p.Exp != nil ||
		strings.Contains(w.src, "trap") {
		return "", false
	}
	i := "0"
	if p.Index != nil {
		w, ok := p.Index.(*syntax.Word)
		if !ok {
			return "", false
		}
		i = w.Lit()
	}
	switch i {
	case "0":
		return "63", true
	case "1":
		return "60", true
	}
	return "", false
}
