package redact

import "strings"

// findUserinfo appends the spans of passwords in URL user info:
// postgres://admin:hunter2@db/app keeps the user name and masks "hunter2".
func findUserinfo(s string, spans []span) []span {
	for from := 0; ; {
		k := strings.Index(s[from:], "://")
		if k < 0 {
			return spans
		}
		lo := from + k + len("://")
		hi := lo
		for hi < len(s) && !endsAuthority(s[hi]) {
			hi++
		}
		from = hi
		at := strings.LastIndexByte(s[lo:hi], '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(s[lo:lo+at], ':')
		if colon < 0 {
			continue
		}
		plo, phi := lo+colon+1, lo+at
		if phi > plo && !isVarRef(s[plo:phi]) {
			spans = append(spans, span{plo, phi})
		}
	}
}

// endsAuthority reports whether c ends a URL's authority (user info, host and
// port) in free text.
func endsAuthority(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '`', '<', '>':
		return true
	}
	return false
}
