package redact

import "strings"

// schemes are the HTTP authorization schemes kept readable in front of the
// credentials they introduce.
var schemes = [...]string{"Bearer", "Basic", "Token", "Digest", "Bot", "Negotiate", "AWS4-HMAC-SHA256"}

// skipScheme returns the start of the credentials in s[lo:hi] after an
// authorization scheme such as "Bearer " or "Basic ", or lo when there is none.
func skipScheme(s string, lo, hi int) int {
	sp := strings.IndexByte(s[lo:hi], ' ')
	if sp <= 0 {
		return lo
	}
	for _, name := range &schemes {
		if strings.EqualFold(s[lo:lo+sp], name) {
			k := lo + sp
			for k < hi && s[k] == ' ' {
				k++
			}
			return k
		}
	}
	return lo
}

// matchBearer returns the span of the token after "Bearer " (any case) at
// s[i] when it appears without a header name, or an empty span: at least 8
// bytes that look random (see looksRandom), so that "bearer tokens" or
// "bearer authentication" in prose stay readable.
func matchBearer(s string, i int) span {
	const word = "bearer "
	if len(s)-i <= len(word) || !strings.EqualFold(s[i:i+len(word)], word) {
		return span{}
	}
	lo := i + len(word)
	for lo < len(s) && s[lo] == ' ' {
		lo++
	}
	hi := lo
	for hi < len(s) && isTokenByte(s[hi]) {
		hi++
	}
	if hi-lo < 8 || !looksRandom(s[lo:hi]) {
		return span{}
	}
	return span{lo, hi}
}

// isTokenByte reports whether c may appear in an RFC 6750 bearer token.
func isTokenByte(c byte) bool {
	switch c {
	case '-', '.', '_', '~', '+', '/', '=':
		return true
	}
	return isAlnum(c)
}
