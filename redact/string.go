package redact

import (
	"cmp"
	"slices"
	"strings"
)

// maxRounds bounds how often String re-scans its own output. One round almost
// always suffices; a second catches a hint that masking brought into view
// (see bareHexIsKey).
const maxRounds = 4

// String returns s with every secret-shaped substring replaced by Mask:
// provider API keys (OpenAI, Anthropic, GitHub, GitLab, Slack, Stripe, AWS,
// Google, Hugging Face, npm), JWTs, PEM private keys, 0x-prefixed 32-byte hex
// strings, bare 64-digit hex runs not labelled as digests, BIP-39 mnemonics of
// twelve or more words, and the values of secret-named pairs (KEY=value,
// key = value, key: value, "key": "value"), flags (--password value),
// authorization headers, URL user info, secrets split by shell quoting and
// the passwords that a command's options mark (see findCommands). As in JSON, a
// coin under a bare token key (Token: ETH) and an integer seed (--seed 42) stay
// readable, as do variable references ($TOKEN).
//
// When nothing is found String returns s itself without allocating. String is
// idempotent: String(String(s)) == String(s).
func String(s string) string {
	for range maxRounds {
		r, changed := redactOnce(s)
		if !changed {
			return s
		}
		s = r
	}
	return s
}

// span is a half-open byte range [lo, hi).
type span struct{ lo, hi int }

// maxDepth bounds how deeply quoted commands (bash -c "...") are read as
// commands of their own.
const maxDepth = 3

// redactOnce runs every detector over s once and masks what they found.
func redactOnce(s string) (string, bool) {
	var buf [8]span
	spans := findText(s, buf[:0])
	spans = findShell(s, spans, 0)
	if len(spans) == 0 {
		return s, false
	}
	return mask(s, spans)
}

// findText appends the spans of the secrets that the text itself shows.
func findText(s string, spans []span) []span {
	spans, mayHoldMnemonic := findShapes(s, spans)
	spans = findPairs(s, spans)
	spans = findFlags(s, spans)
	spans = findUserinfo(s, spans)
	spans = findPEM(s, spans)
	spans = findProse(s, spans)
	return findMnemonic(s, spans, mayHoldMnemonic)
}

// findShell appends the spans of the secrets that only reading s as shell
// words shows: a secret split by quoting (AKIA""IOSF...), found in the
// dequoted copy of s and mapped back (see shellText.orig), and secrets that
// a command's options mark (see findCommands). A quoted word that holds a
// command of its own, as in bash -c "mysql -pPASS", is read the same way, up
// to maxDepth levels.
func findShell(s string, spans []span, depth int) []span {
	quoted := strings.ContainsAny(s, `'"\`)
	if !quoted && !mayHoldCommand(s) {
		return spans
	}
	t := parseShell(s)
	if quoted {
		if j, pos, ok := t.joined(s); ok {
			var buf [8]span
			for _, sp := range findText(j, buf[:0]) {
				if sp.hi > sp.lo {
					spans = append(spans, t.widen(pos, sp.lo, sp.hi))
				}
			}
		}
	}
	spans = findCommands(t, spans)
	if quoted {
		// Read the commands once more with every quote and backslash
		// removed, for text
		// whose quoting went astray: a command pasted into a JSON string,
		// or after an unclosed quote.
		blind := make([]byte, 0, len(s))
		at := make([]int, 0, len(s))
		for i := 0; i < len(s); i++ {
			if s[i] != '\'' && s[i] != '"' && s[i] != '\\' {
				blind = append(blind, s[i])
				at = append(at, i)
			}
		}
		var buf [8]span
		for _, sp := range findCommands(parseShell(string(blind)), buf[:0]) {
			if sp.hi > sp.lo {
				spans = append(spans, span{at[sp.lo], at[sp.hi-1] + 1})
			}
		}
	}
	if depth+1 >= maxDepth {
		return spans
	}
	for _, w := range t.words {
		v := t.val(w)
		if !strings.ContainsAny(v, " \t\n") || v == s {
			continue
		}
		var buf [8]span
		for _, sp := range findShell(v, buf[:0], depth+1) {
			if sp.hi > sp.lo {
				spans = append(spans, t.orig(w.dlo+sp.lo, w.dlo+sp.hi))
			}
		}
	}
	return spans
}

// mask replaces the union of spans in s with Mask, one Mask for each run of
// overlapping or touching spans. It reports false, and returns s, when every
// such run already reads exactly Mask.
func mask(s string, spans []span) (string, bool) {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.lo <= last.hi {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		merged = append(merged, sp)
	}
	changed := false
	for _, sp := range merged {
		if s[sp.lo:sp.hi] != Mask {
			changed = true
			break
		}
	}
	if !changed {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range merged {
		b.WriteString(s[at:sp.lo])
		b.WriteString(Mask)
		at = sp.hi
	}
	b.WriteString(s[at:])
	return b.String(), true
}
