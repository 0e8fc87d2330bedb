// Package clip shortens untrusted strings for messages: error messages,
// approval descriptions, Telegram texts and table cells that quote back what
// an agent, a file or a remote service sent.
//
// It counts and cuts in runes, never in bytes, so a multi-byte character is
// never split, and its result is always valid UTF-8: an agent cannot make a
// message invalid (Telegram rejects such a message outright) by placing a
// multi-byte character at the cut or by sending bytes that are not UTF-8.
package clip

import (
	"strings"
	"unicode/utf8"
)

// String is s when it has at most n runes; otherwise its first n runes
// followed by "…". Bytes that are not valid UTF-8 are first replaced with
// U+FFFD, one replacement for each run of them (as
// strings.ToValidUTF8(s, "\uFFFD") does), and each replacement counts as one
// rune, so the result is always valid UTF-8. When n <= 0 the result is "…"
// for any non-empty s, and "" for "".
//
// String reads s only up to the cut, and allocates only when it cuts or
// replaces.
func String(s string, n int) string {
	if len(s) <= n { // at most n bytes, so at most n runes
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	i := 0 // byte index of the end of the runes kept so far
	for kept := 0; kept < n && i < len(s); kept++ {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		if _, w := utf8.DecodeRuneInString(s[i:]); w > 1 {
			i += w
			continue
		}
		// A run of invalid bytes becomes one U+FFFD: keep the whole run.
		for i < len(s) && s[i] >= utf8.RuneSelf {
			if _, w := utf8.DecodeRuneInString(s[i:]); w > 1 {
				break
			}
			i++
		}
	}
	if i == len(s) {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
}
