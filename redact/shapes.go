package redact

import "strings"

// A prefixShape is a credential format recognised by its fixed prefix: the
// prefix, then a tail of at least minTail (and, when exact, exactly minTail)
// bytes drawn from set.
type prefixShape struct {
	prefix  string
	set     charSet
	minTail int
	exact   bool
	// random requires the tail to look random (see looksRandom), so
	// that prose such as "sk-the-quick-brown-fox-jumps" is left alone.
	random bool
}

// charSet names the bytes a shape's tail may contain.
type charSet uint8

const (
	alnum      charSet = iota // A-Z a-z 0-9
	alnumUnder                // alnum and _
	alnumDash                 // alnum and -
	alnumDashU                // alnum, - and _ (base64url)
	upperDigit                // A-Z 0-9
	hexDigit                  // 0-9 a-f A-F
)

// has reports whether c belongs to cs.
func (cs charSet) has(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z':
		return cs != upperDigit && (cs != hexDigit || c <= 'f')
	case 'A' <= c && c <= 'Z':
		return cs != hexDigit || c <= 'F'
	case '0' <= c && c <= '9':
		return true
	case c == '_':
		return cs == alnumUnder || cs == alnumDashU
	case c == '-':
		return cs == alnumDash || cs == alnumDashU
	}
	return false
}

// shapes lists the provider formats, longer prefixes before the shorter ones
// they extend ("sk-ant-" before "sk-"). It is a static table: building it costs
// nothing at init.
var shapes = [...]prefixShape{
	{prefix: "sk-ant-", set: alnumDashU, minTail: 20, random: true},  // Anthropic
	{prefix: "sk-proj-", set: alnumDashU, minTail: 20, random: true}, // OpenAI project key
	{prefix: "sk-svcacct-", set: alnumDashU, minTail: 20, random: true},
	{prefix: "sk-admin-", set: alnumDashU, minTail: 20, random: true},
	{prefix: "sk-", set: alnumDashU, minTail: 20, random: true}, // OpenAI legacy
	{prefix: "sk_live_", set: alnum, minTail: 16},               // Stripe
	{prefix: "sk_test_", set: alnum, minTail: 16},
	{prefix: "rk_live_", set: alnum, minTail: 16},
	{prefix: "rk_test_", set: alnum, minTail: 16},
	{prefix: "whsec_", set: alnum, minTail: 24, random: true}, // Stripe webhook secret
	{prefix: "ghp_", set: alnum, minTail: 30},                 // GitHub
	{prefix: "gho_", set: alnum, minTail: 30},
	{prefix: "ghu_", set: alnum, minTail: 30},
	{prefix: "ghs_", set: alnum, minTail: 30},
	{prefix: "ghr_", set: alnum, minTail: 30},
	{prefix: "github_pat_", set: alnumUnder, minTail: 22},
	{prefix: "glpat-", set: alnumDashU, minTail: 20}, // GitLab
	{prefix: "xoxa-", set: alnumDash, minTail: 10, random: true},
	{prefix: "xoxb-", set: alnumDash, minTail: 10, random: true}, // Slack
	{prefix: "xoxp-", set: alnumDash, minTail: 10, random: true},
	{prefix: "xoxr-", set: alnumDash, minTail: 10, random: true},
	{prefix: "xoxs-", set: alnumDash, minTail: 10, random: true},
	{prefix: "xapp-", set: alnumDash, minTail: 10, random: true},
	{prefix: "AKIA", set: upperDigit, minTail: 16, exact: true}, // AWS access key id
	{prefix: "ASIA", set: upperDigit, minTail: 16, exact: true}, // AWS temporary key id
	{prefix: "AIza", set: alnumDashU, minTail: 35, exact: true}, // Google API key
	{prefix: "hf_", set: alnum, minTail: 30, random: true},      // Hugging Face
	{prefix: "npm_", set: alnum, minTail: 30, random: true},     // npm
}

// maxTail bounds how far a provider key's tail is scanned. Real keys are far
// shorter; a longer run is masked whole, which keeps the scan linear.
const maxTail = 256

// findShapes appends the spans of provider keys, JWTs, 0x-prefixed 32-byte
// hex strings, bare 64-digit hex runs not labelled as digests (see
// bareHexIsKey) and bearer tokens in s. Only positions
// that start a word (no letter or digit before them) are tried.
//
// As it visits every byte anyway, it also reports whether s may hold a
// mnemonic: a stretch of at least minMnemonicLen bytes of letters and list
// separators only (see findMnemonic). Bytes inside a matched shape are skipped
// without ending a stretch, so the answer errs towards yes.
func findShapes(s string, spans []span) (_ []span, mayHoldMnemonic bool) {
	// jwtFailed is where the last failed JWT attempt stopped scanning: no
	// JWT can start before it (see matchJWT), so s = "eyJ-eyJ-eyJ..." stays
	// linear.
	jwtFailed := 0
	stretch := 0 // where the current stretch of letters and list separators began
	for i := 0; i < len(s); {
		if !is(s[i], cAlnum) {
			if !is(s[i], cListSep) {
				mayHoldMnemonic = mayHoldMnemonic || i-stretch >= minMnemonicLen
				stretch = i + 1
			}
			i++
			continue
		}
		// s[i] starts a word: no letter or digit before it.
		end := 0
		switch s[i] {
		case 's', 'r', 'w', 'g', 'x', 'A', 'h', 'n':
			if len(s)-i > 4 && (shapeLead(s[i:i+3]) || strings.HasPrefix(s[i:], "github_pat_")) {
				end = matchPrefixShape(s, i)
			}
		case 'e':
			if i >= jwtFailed {
				end, jwtFailed = matchJWT(s, i)
			}
		case '0':
			end = matchHexKey(s, i)
		case 'b', 'B':
			if sp := matchBearer(s, i); sp.hi > 0 {
				spans = append(spans, sp)
				i = sp.hi
				continue
			}
		}
		if end > i {
			spans = append(spans, span{i, end})
			i = end
			continue
		}
		// Skip the rest of the word, noting whether it is all hex.
		lo, hex := i, true
		for ; i < len(s) && is(s[i], cAlnum); i++ {
			hex = hex && is(s[i], cHex)
		}
		if hex && i-lo == 64 && (i == len(s) || s[i] != '_') && (lo == 0 || s[lo-1] != '_') && bareHexIsKey(s, lo, i) {
			spans = append(spans, span{lo, i})
		}
	}
	return spans, mayHoldMnemonic || len(s)-stretch >= minMnemonicLen
}

// shapeLead reports whether lead, three bytes, begins a prefix in shapes. It
// spares the table walk at most word starts, including every "git".
func shapeLead(lead string) bool {
	switch lead {
	case "sk-", "sk_", "rk_", "whs", "ghp", "gho", "ghu", "ghs", "ghr", "glp",
		"xox", "xap", "AKI", "ASI", "AIz", "hf_", "npm":
		return true
	}
	return false
}

// matchPrefixShape returns the end of the provider key starting at s[i], or 0.
func matchPrefixShape(s string, i int) int {
	for k := range shapes {
		sh := &shapes[k]
		if sh.prefix[0] != s[i] || len(s)-i < len(sh.prefix) || s[i:i+len(sh.prefix)] != sh.prefix {
			continue
		}
		j := i + len(sh.prefix)
		end := j
		for end < len(s) && end-j <= maxTail && sh.set.has(s[end]) {
			end++
		}
		n := end - j
		if n > maxTail {
			if sh.exact {
				continue
			}
			for end < len(s) && sh.set.has(s[end]) {
				end++
			}
			return end
		}
		switch {
		case n < sh.minTail:
			continue
		case sh.exact && (n != sh.minTail || end < len(s) && isAlnum(s[end])):
			continue
		case sh.random && !looksRandom(s[j:end]):
			continue
		}
		return end
	}
	return 0
}

// matchJWT returns the end of the JSON Web Token starting at s[i], or 0: a
// base64url header beginning "eyJ" (`{"`), a payload, and a signature that may
// be empty. Further segments (JWE has five) are included. On failure it also
// returns where its scan stopped: a JWT starting before that point would
// share this one's segments and fail the same way.
func matchJWT(s string, i int) (end, failed int) {
	const prefix = "eyJ"
	if len(s)-i < len(prefix) || s[i:i+len(prefix)] != prefix {
		return 0, 0
	}
	end = i
	segs := 0
	for {
		j := end
		for j < len(s) && alnumDashU.has(s[j]) {
			j++
		}
		n := j - end
		if segs == 0 && n < 10 || segs == 1 && n < 4 {
			return 0, j
		}
		end = j
		segs++
		if end >= len(s) || s[end] != '.' {
			break
		}
		end++ // the dot; the next segment may be empty
	}
	if segs < 3 {
		return 0, end
	}
	return end, 0
}

// looksRandom reports whether tail looks machine-generated: it holds a digit,
// or a capital after a small letter ("aB"), which a capitalised word does not.
func looksRandom(tail string) bool {
	low := false
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		switch {
		case '0' <= c && c <= '9':
			return true
		case 'A' <= c && c <= 'Z':
			if low {
				return true
			}
		case 'a' <= c && c <= 'z':
			low = true
		}
	}
	return false
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool { return is(c, cAlnum) }

// isWordByte reports whether c continues an identifier: a letter, digit or '_'.
func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }
