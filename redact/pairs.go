package redact

import "strings"

// findPairs appends the spans of values named by secret keys in free text:
// KEY=value (shell assignments, --flag=value, URL query parameters) and
// key: value (HTTP headers, YAML, JSON written inside text).
func findPairs(s string, spans []span) []span {
	for i := 0; i < len(s); i++ {
		at := indexPair(s[i:])
		if at < 0 {
			break
		}
		i += at
		switch s[i] {
		case '=':
			if k := classify(keyBeforeAssign(s, i)); k != notSecret {
				var next int
				spans, next = appendAssigned(spans, s, i, k)
				i = max(i, next-1)
			}
		case ':':
			if i+1 < len(s) && (s[i+1] == '/' || s[i+1] == ':' || s[i+1] == '=') {
				continue // a URL scheme, a C++/IPv6 "::", or Go's := (see keyBeforeAssign)
			}
			kend := i
			for kend > 0 && (s[kend-1] == ' ' || s[kend-1] == '\t') {
				kend--
			}
			key, quoted := keyBefore(s, kend)
			if key == "" || !quoted && endsPath(s, kend-len(key)) {
				continue
			}
			k := classify(key)
			if k == notSecret {
				continue
			}
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			form := lineForm
			if j == i+1 && !quoted && skipScheme(s, j, len(s)) == j {
				form = gluedForm
			}
			var next int
			spans, next = appendValue(spans, s, j, k, form)
			i = max(i, next-1)
		}
	}
	return spans
}

// indexPair returns the index of the first '=' or ':' in s, or -1.
func indexPair(s string) int {
	eq := strings.IndexByte(s, '=')
	if eq == 0 {
		return 0
	}
	hay := s
	if eq > 0 {
		hay = s[:eq]
	}
	if colon := strings.IndexByte(hay, ':'); colon >= 0 {
		return colon
	}
	return eq
}

// keyBeforeAssign returns the key assigned by the '=' at s[i], or "": the
// key may be followed by ':' (Go's :=) and by spaces or tabs ("db_password =
// x" in an INI, TOML or .env file, or in code).
func keyBeforeAssign(s string, i int) string {
	end := i
	if end > 0 && s[end-1] == ':' {
		end--
	}
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	key, _ := keyBefore(s, end)
	return key
}

// appendAssigned appends the span of the value assigned by the '=' at s[i] to
// a key of kind k, and where the caller's scan may resume (see appendValue).
// A second
// '=' (HTTPie's token==x) is skipped. KEY=value is a shell word; with spaces
// around the '=' (password = my pass phrase) the value runs to the end of the
// line, as in a configuration file.
func appendAssigned(spans []span, s string, i int, k keyKind) (_ []span, next int) {
	j := i + 1
	if j < len(s) && s[j] == '=' {
		j++
	}
	form := wordForm
	if i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') || j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		form = lineForm
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return appendValue(spans, s, j, k, form)
}

// keyBefore returns the key that ends at s[i]: a run of name bytes, or a
// quoted name ("password":), without leading dashes (--password=). quoted
// reports the second form.
func keyBefore(s string, i int) (key string, quoted bool) {
	end := i
	if end > 0 && (s[end-1] == '"' || s[end-1] == '\'') {
		q := s[end-1]
		open := strings.LastIndexByte(s[:end-1], q)
		if open < 0 {
			return "", false
		}
		return s[open+1 : end-1], true
	}
	j := end
	for j > 0 && isNameByte(s[j-1]) {
		j--
	}
	for j < end && s[j] == '-' {
		j++
	}
	return s[j:end], false
}

// endsPath reports whether the key starting at s[lo] is the last element of a
// path, as in "~/.aws/credentials: no such file": a path names a file, not a
// secret.
func endsPath(s string, lo int) bool {
	return lo > 0 && (s[lo-1] == '/' || s[lo-1] == '\\' || s[lo-1] == '~')
}

// valueForm says where an unquoted value ends.
type valueForm uint8

const (
	// wordForm is a shell word: KEY=value, --flag value, ?key=value&.
	wordForm valueForm = iota
	// lineForm runs to the end of the line or of the enclosing quoted
	// string, or to a ',' or '}' of inline JSON or YAML: "key: value".
	lineForm
	// gluedForm is "key:value" with no space, a shell word that is masked
	// only when it looks random, so that subcommands such as "db:seed:all"
	// and "force:auth:login" stay readable.
	gluedForm
)

// appendValue appends the span of the value that starts at s[j], held under a
// key of kind k. A quoted value runs to its closing quote; an unclosed one
// runs to the end of s, or in lineForm to the end of its line. form says where
// an unquoted value ends. An authorization
// scheme ("Bearer ", "Basic ") stays readable, and so does a value that is
// only a variable reference ($TOKEN, ${TOKEN}) or that secretValue lets
// through.
//
// next is where the caller's scan may resume: past a masked value, or past a
// glued one rejected as not random, so that "token=token=token=..." or
// "pass:pass:pass:..." is scanned once, not once per pair; otherwise j.
func appendValue(spans []span, s string, j int, k keyKind, form valueForm) (_ []span, next int) {
	if j >= len(s) {
		return spans, j
	}
	var lo, hi int
	if q := s[j]; q == '"' || q == '\'' {
		lo = j + 1
		hi = closingQuote(s, lo, q)
		if nl := strings.IndexByte(s[lo:hi], '\n'); hi == len(s) && form == lineForm && nl >= 0 {
			hi = lo + nl // an unclosed quote in a header or YAML ends with its line
		}
		lo = skipScheme(s, lo, hi)
	} else {
		if form == lineForm && q == '<' {
			return spans, j // an HTML tag or a placeholder, not a value
		}
		lo, hi = j, j
		for hi < len(s) {
			if strings.HasPrefix(s[hi:], Mask) {
				hi += len(Mask)
				continue
			}
			c := s[hi]
			if form == lineForm && (c == '"' || c == '\'') && hi > lo && (s[hi-1] == '=' || s[hi-1] == ':') {
				// A pair inside the value (x: --password='y'): its
				// quoted value belongs to this one, up to the end of its
				// line, as the scan resumes after this value.
				end := closingQuote(s, hi+1, c)
				if nl := strings.IndexAny(s[hi:end], "\r\n"); nl >= 0 {
					end = hi + nl
				}
				hi = min(end+1, len(s))
				continue
			}
			if form == lineForm && endsLineValue(c) || form != lineForm && endsWord(c) {
				break
			}
			hi++
		}
		if form != wordForm {
			lo = skipScheme(s, j, hi)
		}
		for hi > lo && (s[hi-1] == ' ' || s[hi-1] == '\t') {
			hi--
		}
		if form == gluedForm && !looksRandom(s[lo:hi]) && s[lo:hi] != Mask {
			return spans, hi
		}
	}
	v := s[lo:hi]
	if v == "" || isVarRef(v) || !secretValue(k, v) {
		return spans, j
	}
	return append(spans, span{lo, hi}), hi
}

// closingQuote returns the index of the quote q that closes a string whose
// content starts at s[lo], or len(s) when it is unterminated. Inside double
// quotes a backslash escapes the next byte.
func closingQuote(s string, lo int, q byte) int {
	for k := lo; k < len(s); k++ {
		switch s[k] {
		case q:
			return k
		case '\\':
			if q == '"' {
				k++
			}
		}
	}
	return len(s)
}

// isVarRef reports whether v is only a shell variable reference: $NAME or
// ${NAME}. Such a value names a secret without holding it.
func isVarRef(v string) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	name := v[1:]
	if name[0] == '{' {
		if name[len(name)-1] != '}' {
			return false
		}
		name = name[1 : len(name)-1]
	}
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isWordByte(name[i]) {
			return false
		}
	}
	return true
}

// isNameByte reports whether c may appear in a key: letters, digits, '_', '-'
// and '.'.
func isNameByte(c byte) bool { return is(c, cName) }

// endsWord reports whether c ends an unquoted shell word or URL parameter.
func endsWord(c byte) bool { return is(c, cWordEnd) }

// endsLineValue reports whether c ends an unquoted header or YAML value.
func endsLineValue(c byte) bool {
	switch c {
	case '\n', '\r', '"', '\'', ',', '}':
		return true
	}
	return false
}
