package redact

// matchHexKey returns the end of a 0x-prefixed run of exactly 64 hex digits
// starting at s[i], or 0. Such a string may be a private key or a transaction
// or block hash; the two cannot be told apart, so it is masked either way (fail
// safe). A 40-digit address and longer runs (calldata, signatures) are kept.
func matchHexKey(s string, i int) int {
	if len(s)-i < 2+64 || s[i+1] != 'x' && s[i+1] != 'X' {
		return 0
	}
	j := i + 2
	for j < len(s) && hexDigit.has(s[j]) {
		j++
	}
	if j-(i+2) != 64 || j < len(s) && isWordByte(s[j]) {
		return 0
	}
	return j
}

// keyHintBefore reports whether the text on s[i]'s line, from the start of the
// second whitespace-separated field before i, mentions a key, a private value,
// a secret or a seed ("--private-key", "signing key:"). A bare run of exactly
// 64 hex digits is masked only with such a hint; without one it is far more
// often a SHA-256 digest, which stays readable.
func keyHintBefore(s string, i int) bool {
	lo, fields, inField := i, 0, false
	for lo > 0 && s[lo-1] != '\n' {
		space := s[lo-1] == ' ' || s[lo-1] == '\t'
		if space && inField {
			fields++
			if fields == 2 {
				break
			}
		}
		inField = !space
		lo--
	}
	ctx := s[lo:i]
	for _, hint := range [...]string{"key", "priv", "secret", "seed"} {
		if containsFold(ctx, hint) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word sub,
// ignoring case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}
