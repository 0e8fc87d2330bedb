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
			// A password written with a raw '/', '?' or '#' ends the
			// authority early: https://alice:pa/ss@host. Unless a port
			// follows the colon, the user info runs to the word's last '@'.
			at = rawUserinfo(s, lo, hi)
			if at < 0 {
				continue
			}
			from = lo + at
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

// rawUserinfo returns the offset from lo of the '@' that ends user info whose
// password holds a byte that ends an authority, or -1. s[lo:hi] is the
// authority as far as it reads, without an '@': it must hold a colon that is
// not followed by a port only.
func rawUserinfo(s string, lo, hi int) int {
	colon := strings.IndexByte(s[lo:hi], ':')
	if colon < 0 || hi >= len(s) || s[hi] != '/' && s[hi] != '?' && s[hi] != '#' {
		return -1
	}
	port := true
	for _, c := range []byte(s[lo+colon+1 : hi]) {
		port = port && '0' <= c && c <= '9'
	}
	if port {
		return -1
	}
	end := hi
	for end < len(s) && !isSpace(s[end]) && !strings.ContainsRune("\"'`<>", rune(s[end])) {
		end++
	}
	return strings.LastIndexByte(s[lo:end], '@')
}
