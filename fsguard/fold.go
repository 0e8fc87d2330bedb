package fsguard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldCase maps every letter of s to one representative of its Unicode case
// folding orbit (the smallest code point in it), so that two names a
// case-insensitive filesystem treats as equal fold to the same string:
// ".SSH", ".ssh" and ".ſsh" (long s) all fold alike. Other runes are kept.
func foldCase(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	if isASCII(s) {
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r // an upper-case ASCII letter is the smallest in its orbit
	}
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < low {
			low = f
		}
	}
	return low
}
