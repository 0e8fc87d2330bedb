package walk

import "strings"

// vim finds the shell commands that vim's command-line commands (-c CMD,
// +CMD, --cmd CMD) run where they are written out: :!CMD and a range's
// filter (%!CMD), :read !CMD, :write !CMD and system('CMD'). Other editor
// code (a script it sources, a command built at run time) is left to the
// sandbox that runs the editor; nothing here is an issue.
func (w *walker) vim(cmd Command, argv []Word, st *state, c *ctx) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		v := a.Value
		var text Word
		switch {
		case v == "--":
			return
		case v == "-c" || v == "--cmd":
			if i+1 >= len(argv) {
				return
			}
			i++
			text = argv[i]
		case strings.HasPrefix(v, "-c") && !strings.HasPrefix(v, "--"):
			text = a
			text.Value = v[2:]
		case strings.HasPrefix(v, "+"):
			text = a
			text.Value = v[1:]
		default:
			continue
		}
		if text.Dynamic {
			continue
		}
		for _, e := range vimExecs(text.Value) {
			cw := text
			cw.Value = e.text
			w.code(cw, &cmd, c, "vim !", st, false)
		}
	}
}

// vimExecs scans an ex command line for the shell commands it writes out.
// Commands are separated by "|", which a shell command takes with the rest
// of the line.
func vimExecs(s string) []sedExec {
	var out []sedExec
	for s != "" {
		s = strings.TrimLeft(s, " \t:")
		for _, p := range []string{"silent!", "silent", "sil!", "sil"} {
			if t, ok := strings.CutPrefix(s, p); ok && (t == "" || t[0] == ' ' || t[0] == '\t' || t[0] == '!' && !strings.HasSuffix(p, "!")) {
				s = strings.TrimLeft(t, " \t")
				break
			}
		}
		s = skipRange(s)
		name := s[:len(s)-len(strings.TrimLeft(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))]
		rest := s[len(name):]
		switch {
		case name == "" && strings.HasPrefix(rest, "!"):
			out = append(out, sedExec{text: rest[1:]}) // :!CMD, :%!CMD
			return out
		case (name == "r" || name == "read") && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "!"),
			(name == "w" || name == "write") && strings.HasPrefix(strings.TrimLeft(rest, " \t"), "!") && !strings.HasPrefix(rest, "!"):
			out = append(out, sedExec{text: strings.TrimLeft(rest, " \t")[1:]})
			return out
		}
		if k := strings.Index(s, "system("); k >= 0 {
			j := skipSpace(s, k+len("system("))
			if j < len(s) && (s[j] == '\'' || s[j] == '"') {
				if end := strings.IndexByte(s[j+1:], s[j]); end >= 0 {
					out = append(out, sedExec{text: s[j+1 : j+1+end]})
				}
			}
		}
		k := strings.IndexByte(s, '|')
		if k < 0 {
			break
		}
		s = s[k+1:]
	}
	return out
}

// skipRange skips the line range an ex command starts with (%, 1,$, .,+3,
// 'a,'b, /pattern/).
func skipRange(s string) string {
	for s != "" {
		switch c := s[0]; {
		case strings.IndexByte("%.$,;+-0123456789 \t", c) >= 0:
			s = s[1:]
		case c == '\'' && len(s) > 1:
			s = s[2:]
		case c == '/' || c == '?':
			end := strings.IndexByte(s[1:], c)
			if end < 0 {
				return ""
			}
			s = s[end+2:]
		default:
			return s
		}
	}
	return s
}
