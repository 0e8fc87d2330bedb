package redact

import "strings"

// findPEM appends the spans of PEM blocks whose label contains "PRIVATE KEY"
// (RSA, EC, OPENSSH, ENCRYPTED, PGP ... PRIVATE KEY), from the BEGIN line
// through the END line. A block with no END line is masked to the end of s.
func findPEM(s string, spans []span) []span {
	const begin, end, dashes = "-----BEGIN ", "-----END ", "-----"
	for from := 0; ; {
		// "BEGIN " is rarer than the dashes of command-line flags.
		k := strings.Index(s[from:], begin[len(dashes):])
		if k < 0 {
			return spans
		}
		lo := from + k - len(dashes)
		if lo < from || s[lo:lo+len(dashes)] != dashes {
			from += k + 1
			continue
		}
		labelLo := lo + len(begin)
		n := strings.Index(s[labelLo:], dashes)
		if n < 0 || n > 64 || strings.ContainsAny(s[labelLo:labelLo+n], "\r\n") {
			from = labelLo
			continue
		}
		label := s[labelLo : labelLo+n]
		if !strings.Contains(label, "PRIVATE KEY") {
			from = labelLo + n
			continue
		}
		body := labelLo + n + len(dashes)
		hi := len(s)
		if m := strings.Index(s[body:], end+label+dashes); m >= 0 {
			hi = body + m + len(end) + len(label) + len(dashes)
		} else if m := strings.Index(s[body:], end); m >= 0 {
			// A mangled END label still closes the block at its line end.
			hi = body + m + len(end)
			for hi < len(s) && s[hi] != '\n' && s[hi] != '\r' {
				hi++
			}
		}
		spans = append(spans, span{lo, hi})
		from = hi
	}
}
