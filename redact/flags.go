package redact

import "strings"

// findFlags appends the spans of values given to secret-named command-line
// flags as a separate argument: --password hunter2, -token "abc". The
// --flag=value form is a pair (see findPairs). Flags that take no secret
// themselves (--password-stdin, --ask-pass, --no-password) are skipped, and so
// are one-letter flags such as -p, whose meaning depends on the command.
// A flag whose value is optional and must be attached (MySQL's --password)
// still masks the argument after it: redaction fails safe.
func findFlags(s string, spans []span) []span {
	for i := 0; i+1 < len(s); i++ {
		at := strings.IndexByte(s[i:], '-')
		if at < 0 {
			break
		}
		i += at
		if i+1 >= len(s) || i > 0 && !isSpace(s[i-1]) {
			continue
		}
		lo := i + 1
		if s[lo] == '-' {
			lo++
		}
		hi := lo
		for hi < len(s) && isNameByte(s[hi]) {
			hi++
		}
		i = hi - 1
		name := s[lo:hi]
		if len(name) < 3 || hi < len(s) && !isSpace(s[hi]) {
			continue
		}
		k := classify(name)
		if k == notSecret || !flagTakesSecret(name) {
			continue
		}
		j := hi
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j >= len(s) || s[j] == '-' || endsWord(s[j]) && s[j] != '"' && s[j] != '\'' {
			continue
		}
		spans, _ = appendValue(spans, s, j, k, wordForm)
	}
	return spans
}

// flagTakesSecret reports whether a secret-named flag takes the secret as its
// argument rather than switching a behaviour (--ask-password). Flags that name
// where the secret is kept (--password-file) are not secret-named at all; see
// hasMetaSuffix.
func flagTakesSecret(name string) bool {
	var buf [48]byte
	var spans [8]span
	flat, words := splitKey(name, buf[:0], spans[:0])
	if len(words) < 2 {
		return true
	}
	switch string(wordAt(flat, words, 0)) {
	case "no", "ask", "prompt", "read", "show", "generate", "reset", "change", "require", "skip", "allow", "enable", "disable":
		return false
	}
	return true
}

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool { return is(c, cSpace) }
