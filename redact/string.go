package redact

import (
	"cmp"
	"slices"
	"strings"
)

// maxRounds bounds how often String re-scans its own output. One round almost
// always suffices; a second catches a hint that masking brought into view
// (see keyHintBefore).
const maxRounds = 4

// String returns s with every secret-shaped substring replaced by Mask:
// provider API keys (OpenAI, Anthropic, GitHub, GitLab, Slack, Stripe, AWS,
// Google, Hugging Face, npm), JWTs, PEM private keys, 0x-prefixed 32-byte hex
// strings, BIP-39 mnemonics of twelve or more words, and the values of
// secret-named pairs (KEY=value, key: value, "key": "value"), flags
// (--password value), authorization headers and URL user info. As in JSON, a
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

// redactOnce runs every detector over s once and masks what they found.
func redactOnce(s string) (string, bool) {
	var buf [8]span
	spans := buf[:0]
	spans, mayHoldMnemonic := findShapes(s, spans)
	spans = findPairs(s, spans)
	spans = findFlags(s, spans)
	spans = findUserinfo(s, spans)
	spans = findPEM(s, spans)
	spans = findMnemonic(s, spans, mayHoldMnemonic)
	if len(spans) == 0 {
		return s, false
	}
	return mask(s, spans)
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
