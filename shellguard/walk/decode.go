package walk

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxDecoded caps the text Walk decodes statically.
const maxDecoded = 64 << 10

// stdinOf returns what a command reads on stdin, when known.
func stdinOf(cmd Command, c *ctx, src stdinSource) output {
	for i := len(cmd.Redirects) - 1; i >= len(c.redirs); i-- {
		r := cmd.Redirects[i]
		if r.IsBody && (r.Fd == "" || r.Fd == "0") {
			return output{s: r.Body, known: !r.BodyDynamic, via: "heredoc"}
		}
	}
	if src == stdinText {
		return c.stdin
	}
	return output{}
}

// produce returns the output of a literal producer (echo, printf, seq) or of a
// decoder (base64 -d, xxd -r -p, rev, cat) applied to known input.
func (w *walker) produce(name string, argv []Word, in output) output {
	for _, a := range argv {
		if a.Dynamic || a.Glob {
			return output{}
		}
	}
	args := argv[1:]
	switch name {
	case "echo":
		nl, esc := true, false
		for len(args) > 0 && len(args[0].Value) > 1 && args[0].Value[0] == '-' && strings.Trim(args[0].Value[1:], "neE") == "" {
			nl = nl && !strings.Contains(args[0].Value, "n")
			esc = strings.Contains(args[0].Value, "e")
			args = args[1:]
		}
		var b strings.Builder
		for i, a := range args {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(a.Value)
		}
		s := b.String()
		if esc {
			s = ansiC(s)
		}
		if nl {
			s += "\n"
		}
		return output{s: s, known: true, via: "echo"}
	case "printf":
		if len(args) == 0 {
			return output{}
		}
		f := args[0].Value
		if len(args) == 1 && !strings.Contains(f, "%") {
			return output{s: ansiC(f), known: true, via: "printf"}
		}
		n := strings.Count(f, "%")
		if n != 1 || !(strings.Contains(f, "%s") || strings.Contains(f, "%b")) {
			return output{}
		}
		var b strings.Builder
		for _, a := range args[1:] {
			v := a.Value
			if strings.Contains(f, "%b") {
				v = ansiC(v)
			}
			b.WriteString(ansiC(strings.NewReplacer("%s", v, "%b", v).Replace(f)))
			if b.Len() > maxDecoded {
				return output{}
			}
		}
		return output{s: b.String(), known: true, via: "printf"}
	case "seq":
		return seqOutput(args)
	}
	if !in.known {
		return output{}
	}
	dec := func(d string, s string) output {
		o := output{s: s, known: true, via: in.via, dec: d}
		if in.dec != "" {
			o.dec = in.dec + "|" + d
		}
		return o
	}
	switch name {
	case "cat":
		if len(args) == 0 || (len(args) == 1 && args[0].Value == "-") {
			return in
		}
	case "base64", "base32":
		if !hasFlag(args, "d", "--decode", "-D") || hasOperand(args) {
			return output{}
		}
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
				return -1
			}
			return r
		}, in.s)
		if name == "base32" {
			return output{}
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(clean); err == nil {
				return dec("base64", string(b))
			}
		}
	case "xxd":
		if hasOperand(args) || !hasFlag(args, "r", "--revert", "") || !hasFlag(args, "p", "--plain", "-ps") && !hasFlag(args, "p", "-plain", "-postscript") {
			return output{}
		}
		clean := strings.Map(func(r rune) rune {
			if isHexDigit(byte(r)) && r < 128 {
				return r
			}
			return -1
		}, in.s)
		if len(clean)%2 == 1 {
			clean = clean[:len(clean)-1]
		}
		if b, err := hex.DecodeString(clean); err == nil {
			return dec("xxd", string(b))
		}
	case "rev":
		if len(args) > 0 {
			return output{}
		}
		lines := strings.SplitAfter(in.s, "\n")
		var b strings.Builder
		for _, l := range lines {
			body := strings.TrimSuffix(l, "\n")
			r := []rune(body)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			b.WriteString(string(r))
			if len(body) < len(l) {
				b.WriteByte('\n')
			}
		}
		return dec("rev", b.String())
	}
	return output{}
}

// hasOperand reports whether args name an input file (a non-option other
// than "-"): then the command does not decode its stdin.
func hasOperand(args []Word) bool {
	for _, a := range args {
		if a.Value == "" || a.Value[0] != '-' {
			return true
		}
	}
	return false
}

// hasFlag reports whether args hold the short option letter (alone or in a
// cluster) or one of the long spellings.
func hasFlag(args []Word, short, long1, long2 string) bool {
	for _, a := range args {
		v := a.Value
		if v == long1 || (long2 != "" && v == long2) {
			return true
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.Contains(v[1:], short) {
			return true
		}
	}
	return false
}

// maxSeqLines bounds the output seq is taken to produce: more is unknown.
const maxSeqLines = 64

// seqOutput is what seq prints for integer operands (LAST, FIRST LAST or
// FIRST INCREMENT LAST) and no options, when it is at most maxSeqLines
// lines; unknown otherwise.
func seqOutput(args []Word) output {
	if len(args) == 0 || len(args) > 3 {
		return output{}
	}
	n := make([]int, len(args))
	for i, a := range args {
		v, err := strconv.Atoi(a.Value)
		if err != nil { // an option, or not an integer
			return output{}
		}
		n[i] = v
	}
	first, step, last := 1, 1, n[len(n)-1]
	switch len(n) {
	case 2:
		first = n[0]
	case 3:
		first, step = n[0], n[1]
	}
	if step == 0 {
		return output{}
	}
	var b strings.Builder
	for i, k := first, 0; step > 0 && i <= last || step < 0 && i >= last; i, k = i+step, k+1 {
		if k >= maxSeqLines {
			return output{}
		}
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return output{s: b.String(), known: true, via: "seq"}
}
