package hook

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// directArgs returns the words of cmd when bash -c cmd would do nothing but
// run one program with them: one simple command, no assignments,
// redirections, expansions, globs, tildes or brace lists, written exactly as
// warden quotes words (so that `warden exec -- WORDS…` names the same
// command line cmd is, for its decision, its approval and its audit row),
// whose program is found on $PATH and is not a bash builtin. ok is false for anything else, which
// keeps its bash. It saves a bash start for every such command (ls, git
// status, go test ./…), and with it a millisecond or so of every run.
func directArgs(cmd string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		lit, ok := literalWord(w)
		if !ok {
			return nil, false
		}
		words[i] = lit
	}
	// A program named by a path may be a script without a #! line, which
	// bash runs itself and exec cannot: it keeps its bash.
	if CommandLine(words) != cmd || bashBuiltins[words[0]] || words[0] == "" || strings.Contains(words[0], "/") {
		return nil, false
	}
	return words, true
}

// CommandLine writes argv as one shell command line that bash parses back
// into exactly these words: a word of plain characters as it is, any other
// quoted (syntax.Quote), and a first word with "=" quoted too (it would be
// read as an assignment). warden exec names its command by it, and a hook
// runs a command without bash only when this is how it was written.
func CommandLine(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		if plainWord(a) && (i > 0 || !strings.Contains(a, "=")) {
			words[i] = a
			continue
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil { // a NUL byte: bash cannot be given it at all
			q = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}

// plainWord reports whether w needs no quoting: letters, digits and
// _ . / : @ % + , = - only, and not empty.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_./:@%+,=-", r):
		default:
			return false
		}
	}
	return true
}

// literalWord is w's value when bash would take it as written: plain
// characters with no backslash, glob, tilde or brace, and single- or
// double-quoted text with nothing to expand.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[]{}~") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "\\$`") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// bashBuiltins are the names bash runs itself rather than as a program
// (`compgen -b` of bash 5.2): `echo` or `cd` must stay bash's.
var bashBuiltins = map[string]bool{}

func init() {
	for _, n := range strings.Fields(". : [ alias bg bind break builtin caller cd command compgen complete compopt continue " +
		"declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local " +
		"logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times " +
		"trap true type typeset ulimit umask unalias unset wait") {
		bashBuiltins[n] = true
	}
}
