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

// bareHexIsKey reports whether the run of exactly 64 hex digits at s[lo:hi],
// without a 0x prefix, is masked. Such a run may be a private key (an
// Ethereum key is often written without 0x) or a SHA-256 digest; the two look
// the same, so the context decides, and without a clear label the run is
// masked (fail safe):
//
//   - a key hint before it ("--private-key", "signing key:") masks it;
//   - a digest label before it ("sha256:", "digest", "checksum", "tx hash",
//     "commit", "uuid", "id=") keeps it readable, and so does the sha256sum listing form,
//     the digest followed by two spaces or " *" and a file name.
func bareHexIsKey(s string, lo, hi int) bool {
	ctx := lineBefore(s, lo)
	if hasAnyFold(ctx, "key", "priv", "secret", "seed") {
		return true
	}
	if hasAnyFold(ctx, "sha", "digest", "hash", "checksum", "commit", "blob", "tree", "image", "container", "keccak", "blake", "uuid", "txid", "id=", "id:", "_id", "-id") {
		return false
	}
	rest := s[hi:]
	if len(rest) > 2 && (rest[:2] == "  " || rest[:2] == " *") && !isSpace(rest[2]) {
		return false
	}
	return true
}

// lineBefore returns the text on s[i]'s line from the start of the second
// whitespace-separated field before i up to i.
func lineBefore(s string, i int) string {
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
	return s[lo:i]
}

// hasAnyFold reports whether s contains any of the lower-case ASCII words,
// ignoring case.
func hasAnyFold(s string, words ...string) bool {
	for _, w := range words {
		if containsFold(s, w) {
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
