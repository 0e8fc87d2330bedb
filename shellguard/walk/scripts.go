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
	var prog *Word
	for i := 1; i < len(argv); i++ {
		v := argv[i].Value
		switch {
		case v == "-f" || v == "--file":
			return
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
		return
	}
	if prog.Dynamic {
		if strings.Contains(prog.Value, "system") || strings.Contains(prog.Value, "|") {
			w.issue(DynamicCode, "awk: the program is not known statically", prog.Span)
		}
		return
	}
	for _, e := range awkExecs(prog.Value) {
		if e.dyn {
			w.issue(DynamicCode, "awk: runs a command that is not a literal string", prog.Span)
			continue
		}
		cw := *prog
		cw.Value = e.text
		w.code(cw, &cmd, c, "awk", st, false)
	}
}

// awkString reads an awk string literal starting at s[i] == '"'.
func awkString(s string, i int) (string, int) {
	var b strings.Builder
	i++
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			i++
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), i + 1
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// awkExecs scans an awk program for command strings.
func awkExecs(s string) []sedExec {
	var out []sedExec
	lastStr, lastStrEnd := "", -1
	for i := 0; i < len(s); {
		switch {
		case s[i] == '"':
			lastStr, i = awkString(s, i)
			lastStrEnd = i
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
				out = append(out, sedExec{dyn: true})
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
					out = append(out, sedExec{dyn: true})
				}
			case j < len(s) && s[j] == '"':
				t, k := awkString(s, j)
				out = append(out, sedExec{text: t})
				j = k
			}
			i = max(j, i+1)
		default:
			i++
		}
	}
	return out
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
