package redact

import "strings"

// proseKeywords name a secret in running text ("the password is hunter42",
// "my token: ..." is a pair already). Only these plain words count: a
// compound key (db_password) is a pair's key, found by findPairs.
var proseKeywords = []string{"password", "passwd", "passphrase", "passcode", "secret", "token", "apikey"}

// proseLinks are the words that may stand between a keyword and its value.
var proseLinks = map[string]bool{"is": true, "was": true, "of": true, "to": true, "are": true}

// findProse appends the spans of secret values named in prose: a keyword of
// proseKeywords, at most one linking word (is, was, of, to), then a value
// that looks made up rather than written (credentialLike). "the password
// is Pw8fe1x9" loses its value; "the token limit is 4096" and "the secret
// ingredient" keep theirs.
func findProse(s string, spans []span) []span {
	lower := strings.ToLower(s)
	for _, kw := range proseKeywords {
		for from := 0; from < len(lower); {
			at := strings.Index(lower[from:], kw)
			if at < 0 {
				break
			}
			at += from
			end := at + len(kw)
			from = end
			if at > 0 && isWordByte(lower[at-1]) {
				continue
			}
			// "passwords", "tokens": a plural names no one value.
			if end < len(lower) && lower[end] == 's' {
				end++
			}
			// Prose puts a space before the value; KEY=value and key: value
			// are pairs (findPairs).
			if end >= len(lower) || lower[end] != ' ' && lower[end] != '\t' {
				continue
			}
			lo, hi := nextWord(s, end)
			if lo < hi && proseLinks[strings.ToLower(s[lo:hi])] {
				lo, hi = nextWord(s, hi)
			}
			if lo < hi && credentialLike(s[lo:hi]) {
				spans = append(spans, span{lo, hi})
			}
		}
	}
	return spans
}

// nextWord returns the bounds of the word after s[i:], past spaces and
// tabs only (a value is on the keyword's line), with trailing sentence
// punctuation left out.
func nextWord(s string, i int) (lo, hi int) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	lo = i
	for i < len(s) && s[i] > ' ' && s[i] != '"' && s[i] != '\'' && s[i] != '`' {
		i++
	}
	hi = i
	for hi > lo && strings.IndexByte(".,;:!?)", s[hi-1]) >= 0 {
		hi--
	}
	return lo, hi
}

// credentialLike reports whether w looks like a made-up secret: at least 6
// bytes with a letter and a digit, or 16 and more of one run; not a
// variable reference, a path, a number, or the mask itself.
func credentialLike(w string) bool {
	if len(w) < 6 || strings.ContainsAny(w[:1], "$/~.[(<{") || w == Mask {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case strings.IndexByte("_-+=/!@#%^&*", c) >= 0:
		default:
			return false
		}
	}
	return letter && digit || letter && len(w) >= 16 && !isPlainWord(w)
}

// isPlainWord reports whether w is letters only, in one case after its
// first: a long ordinary word, not a random run.
func isPlainWord(w string) bool {
	rest := w[1:]
	return strings.ToLower(rest) == rest && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0
}
