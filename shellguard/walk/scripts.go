package walk

import "strings"

// sed finds the shell commands a sed script runs: the e command and the e
// flag of s///.
func (w *walker) sed(cmd Command, argv []Word, st *state, c *ctx) {
	var scripts []Word
	explicit := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		v := a.Value
		switch {
		case v == "-e" || v == "--expression":
			if i+1 < len(argv) {
				i++
				scripts = append(scripts, argv[i])
			}
			explicit = true
		case strings.HasPrefix(v, "--expression="):
			s := a
			s.Value = v[len("--expression="):]
			scripts = append(scripts, s)
			explicit = true
		case v == "-f" || v == "--file":
			i++
			explicit = true
		case v == "-l" || v == "--line-length":
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1 && !strings.HasPrefix(v, "--"):
			if k := strings.IndexByte(v, 'e'); k > 0 && !strings.ContainsAny(v[1:k], "i") {
				s := a
				s.Value = v[k+1:]
				if s.Value == "" && i+1 < len(argv) {
					i++
					s = argv[i]
				}
				scripts = append(scripts, s)
				explicit = true
			} else if strings.IndexByte(v, 'f') > 0 {
				i++
				explicit = true
			}
		case strings.HasPrefix(v, "-"):
		default:
			if !explicit {
				scripts = append(scripts, a)
				explicit = true
			}
		}
	}
	for _, s := range scripts {
		if s.Dynamic {
			if strings.Contains(s.Prefix, "e") {
				w.issue(DynamicCode, "sed: the script is not known statically", s.Span)
			}
			continue
		}
		for _, e := range sedExecs(s.Value) {
			cw := s
			cw.Value, cw.Dynamic = e.text, e.dyn
			if e.dyn {
				w.issue(DynamicCode, "sed: e runs the pattern space, which is not known statically", s.Span)
				continue
			}
			w.code(cw, &cmd, c, "sed e", st, false)
		}
	}
}

type sedExec struct {
	text string
	dyn  bool
}

// sedExecs scans a sed script for e commands and s///e.
func sedExecs(s string) []sedExec {
	var out []sedExec
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		t := s[i : i+j]
		i += j
		return t
	}
	skipRegex := func() {
		if i >= len(s) {
			return
		}
		delim := s[i]
		if delim == '\\' && i+1 < len(s) {
			i++
			delim = s[i]
		}
		i++
		for i < len(s) && s[i] != delim {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		i++
	}
	for steps := 0; i < len(s) && steps < len(s)+1; steps++ {
		// skip separators and addresses
		for i < len(s) && strings.IndexByte(" \t\n;{}!", s[i]) >= 0 {
			i++
		}
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == ',' || s[i] == '~' || s[i] == '+' || s[i] == '/' || s[i] == '\\' || s[i] == ' ' || s[i] == '!') {
			if s[i] == '/' || s[i] == '\\' {
				skipRegex()
				continue
			}
			i++
		}
		if i >= len(s) {
			break
		}
		ch := s[i]
		i++
		switch ch {
		case 'e':
			t := strings.TrimSpace(restOfLine())
			t = strings.TrimSuffix(t, ";")
			out = append(out, sedExec{text: t, dyn: t == ""})
		case 's', 'y':
			if i >= len(s) {
				return out
			}
			delim := s[i]
			i++
			parts := [2]string{}
			for p := 0; p < 2; p++ {
				var b strings.Builder
				for i < len(s) && s[i] != delim {
					if s[i] == '\\' && i+1 < len(s) {
						if s[i+1] != delim {
							b.WriteByte('\\')
						}
						i++
					}
					b.WriteByte(s[i])
					i++
				}
				i++
				parts[p] = b.String()
			}
			flagStart := i
			for i < len(s) && strings.IndexByte("gpeiImM0123456789", s[i]) >= 0 {
				i++
			}
			flags := s[min(flagStart, len(s)):min(i, len(s))]
			if ch == 's' && strings.Contains(flags, "e") {
				repl := parts[1]
				dyn := strings.ContainsAny(repl, "&\\")
				out = append(out, sedExec{text: repl, dyn: dyn})
			}
			if i < len(s) && s[i] == 'w' {
				restOfLine()
			}
		case 'b', 't', 'T', ':':
			// a label ends at ; or the end of the line (GNU sed)
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W':
			restOfLine()
		}
	}
	return out
}

// awk finds the shell commands an awk program runs: system("…"),
// "cmd" | getline and print | "cmd".
func (w *walker) awk(cmd Command, argv []Word, st *state, c *ctx) {
	prog, outside := awkProgram(argv)
	if prog == nil {
		return
	}
	if prog.Dynamic {
		if strings.Contains(prog.Value, "system") || strings.Contains(prog.Value, "|") {
			w.issue(DynamicCode, "awk: the program is not known statically", prog.Span)
		}
		return
	}
	for _, e := range awkExecs(prog.Value, !outside) {
		if e.dyn {
			w.issue(DynamicCode, "awk: runs a command that is not a literal string", prog.Span)
			continue
		}
		cw := *prog
		cw.Value = e.text
		w.code(cw, &cmd, c, "awk", st, false)
	}
}

// awkProgram returns the program word of an awk command line (nil with
// -f, a program file, or none), and whether command-line assignments
// (-v NAME=…, NAME=… operands) set the program's variables from outside
// it: a variable's literal assignments then do not say what it holds.
func awkProgram(argv []Word) (prog *Word, outside bool) {
	for i := 1; i < len(argv); i++ {
		v := argv[i].Value
		switch {
		case v == "-f" || v == "--file":
			return nil, false
		case v == "-v" || v == "-F" || v == "--assign" || v == "--field-separator":
			i++
		case v == "-e" || v == "--source":
			if i+1 < len(argv) {
				prog = &argv[i+1]
			}
			i = len(argv)
		case v == "--":
		case strings.HasPrefix(v, "-") && len(v) > 1 && !argv[i].Dynamic:
		default:
			prog = &argv[i]
			i = len(argv)
		}
	}
	if prog == nil {
		return nil, false
	}
	for i := 1; i < len(argv); i++ {
		if v := argv[i].Value; v == "-v" || v == "--assign" || strings.HasPrefix(v, "-v") || &argv[i] != prog && strings.Contains(v, "=") && !strings.HasPrefix(v, "-") {
			outside = true
		}
	}
	return prog, outside
}

// AwkComputedCommand returns the span of an awk command line's program
// when the program is known and runs a command it builds at run time
// (cmd = "wc -l < " $0; cmd | getline n): the walk's DynamicCode issue
// for it has that span. A program whose variables the command line sets
// (-v c="$CMD") may run what the line handed it, as eval "$CMD" does: it
// is not one.
func AwkComputedCommand(argv []Word) (Span, bool) {
	prog, outside := awkProgram(argv)
	if prog == nil || prog.Dynamic || outside {
		return Span{}, false
	}
	for _, e := range awkExecs(prog.Value, !outside) {
		if e.dyn {
			return prog.Span, true
		}
	}
	return Span{}, false
}

// awkString reads an awk string literal starting at s[i] == '"'.
func awkString(s string, i int) (string, int) {
	var b strings.Builder
	i++
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch c := s[i]; {
			case c >= '0' && c <= '7':
				// \ooo: up to three octal digits (\143 is c).
				v, n := 0, 0
				for n < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7' {
					v = v*8 + int(s[i]-'0')
					i, n = i+1, n+1
				}
				b.WriteByte(byte(v))
				continue
			case c == 'x' && i+1 < len(s) && isHexDigit(s[i+1]):
				// gawk's \xhh: up to two hex digits.
				v, n := 0, 0
				for i++; n < 2 && i < len(s) && isHexDigit(s[i]); i, n = i+1, n+1 {
					v = v*16 + hexValue(s[i])
				}
				b.WriteByte(byte(v))
				continue
			default:
				if e, ok := awkEscapes[c]; ok {
					c = e
				}
				b.WriteByte(c)
			}
			i++
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), i + 1
}

// awkEscapes are the letters of awk's one-character escapes and what each
// stands for; any other escaped character stands for itself.
var awkEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'a': '\a', 'b': '\b', 'f': '\f', 'v': '\v'}

func hexValue(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// awkExecs scans an awk program for command strings. With vars, a
// command held in a variable that the program only ever sets to string
// literals (cmd = "git ls-files"; cmd | getline) is each of those
// literals.
func awkExecs(s string, vars bool) []sedExec {
	var out []sedExec
	var lits map[string][]string
	if vars {
		lits = awkLiteralVars(s)
	}
	// byVar is the commands a variable named just before s[end] holds,
	// each one's text, or a dynamic one.
	byVar := func(end int) []sedExec {
		j := end
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		k := j
		for k > 0 && isIdent(s[k-1]) {
			k--
		}
		if vals, ok := lits[s[k:j]]; ok && k < j {
			var es []sedExec
			for _, v := range vals {
				es = append(es, sedExec{text: v})
			}
			return es
		}
		return []sedExec{{dyn: true}}
	}
	lastStr, lastStrEnd := "", -1
	for i := 0; i < len(s); {
		switch {
		case s[i] == '"':
			lastStr, i = awkString(s, i)
			lastStrEnd = i
		case s[i] == '/' && awkRegexStarts(s, i):
			// A regular expression (/^--- (PASS|FAIL)/): its | is no pipe.
			i = awkRegexEnd(s, i)
		case strings.HasPrefix(s[i:], "system") && (i == 0 || !isIdent(s[i-1])):
			j := skipSpace(s, i+len("system"))
			if j < len(s) && s[j] == '(' {
				j = skipSpace(s, j+1)
				if j < len(s) && s[j] == '"' {
					t, k := awkString(s, j)
					k = skipSpace(s, k)
					out = append(out, sedExec{text: t, dyn: k >= len(s) || s[k] != ')'})
					i = k
					continue
				}
				k := j
				for k < len(s) && isIdent(s[k]) {
					k++
				}
				if skipSpace(s, k) < len(s) && s[skipSpace(s, k)] == ')' {
					out = append(out, byVar(k)...)
				} else {
					out = append(out, sedExec{dyn: true})
				}
			}
			i = j
		case s[i] == '|' && i+1 < len(s) && s[i+1] == '|':
			i += 2
		case s[i] == '|':
			j := skipSpace(s, i+1)
			if j < len(s) && s[j] == '&' {
				j = skipSpace(s, j+1)
			}
			switch {
			case strings.HasPrefix(s[j:], "getline"):
				if lastStrEnd >= 0 && skipSpace(s, lastStrEnd) == i {
					out = append(out, sedExec{text: lastStr})
				} else {
					out = append(out, byVar(i)...)
				}
			case j < len(s) && s[j] == '"':
				t, k := awkString(s, j)
				out = append(out, sedExec{text: t})
				j = k
			case j < len(s) && isIdent(s[j]) && !(s[j] >= '0' && s[j] <= '9'):
				// print … | cmd: the command a variable holds.
				k := j
				for k < len(s) && isIdent(s[k]) {
					k++
				}
				out = append(out, byVar(k)...)
				j = k
			}
			i = max(j, i+1)
		default:
			i++
		}
	}
	return out
}

// awkRegexStarts reports whether the / at s[i] opens a regular
// expression: where an operand may start (the program's start, after an
// opening bracket, a comma, an operator, a statement's end), not after an
// operand (a division).
func awkRegexStarts(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return j == 0 || strings.ContainsRune("{(,!~&|;\n}=?:", rune(s[j-1]))
}

// awkRegexEnd returns the index after the regular expression that opens
// at s[i].
func awkRegexEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '/':
			return j + 1
		case '\n':
			return j
		}
	}
	return len(s)
}

// awkLiteralVars returns, for each variable an awk program only ever sets
// to a string literal (NAME = "…" ending its statement), those literals.
// A variable set any other way (a concatenation, getline NAME, split or
// sub into it, a for-in, an increment, a function's parameter) is left
// out, and so is every variable of a program that defines a function.
func awkLiteralVars(s string) map[string][]string {
	lits := map[string][]string{}
	tainted := map[string]bool{}
	prevIdent := "" // the identifier just before the current position, outside strings
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			_, i = awkString(s, i)
			prevIdent = ""
		case c == '/' && awkRegexStarts(s, i):
			i = awkRegexEnd(s, i)
		case isIdent(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			name := s[i:j]
			switch name {
			case "function", "func":
				// A function's parameters shadow the globals of the
				// same name, whatever space follows the keyword.
				return nil
			case "getline", "split", "sub", "gsub", "in", "delete", "patsplit", "match":
				// what follows (or what comes before "in") may be set
				k := skipSpace(s, j)
				if name == "in" && prevIdent != "" {
					tainted[prevIdent] = true
				}
				// every identifier in the call's arguments or after getline
				e := k
				for e < len(s) && s[e] != ';' && s[e] != '}' && s[e] != '\n' && s[e] != '|' {
					e++
				}
				for _, f := range strings.FieldsFunc(s[k:e], func(r rune) bool {
					return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
				}) {
					tainted[f] = true
				}
			}
			k := skipSpace(s, j)
			switch {
			case k+1 < len(s) && (s[k] == '+' || s[k] == '-') && s[k+1] == s[k],
				i > 1 && (s[i-1] == '+' || s[i-1] == '-') && s[i-2] == s[i-1]:
				tainted[name] = true // NAME++, ++NAME
			case k < len(s) && strings.ContainsRune("+-*/%^", rune(s[k])) && k+1 < len(s) && s[k+1] == '=':
				tainted[name] = true // NAME += …
			case k < len(s) && s[k] == '=' && !(k+1 < len(s) && s[k+1] == '='):
				v := skipSpace(s, k+1)
				if v < len(s) && s[v] == '"' {
					t, e := awkString(s, v)
					if e = skipSpace(s, e); e >= len(s) || strings.ContainsRune(";}\n", rune(s[e])) {
						lits[name] = append(lits[name], t)
						i = e
						prevIdent = ""
						continue
					}
				}
				tainted[name] = true
			}
			prevIdent = name
			i = j
		case c == ' ' || c == '\t':
			i++
		default:
			prevIdent = ""
			i++
		}
	}
	for n := range tainted {
		delete(lits, n)
	}
	return lits
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
