package finance

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// scamTickers are symbols of known rug pulls and impersonations, refused on
// every chain whatever the allow lists say. Changing them needs a code change.
var scamTickers = map[string]string{
	"SQUID":    "the 2021 Squid Game token rug pull",
	"SAFEMARS": "a honeypot family that blocks selling",
}

// scamAddresses are contracts of known scam tokens (lower case).
var scamAddresses = map[string]string{}

// scamWords mark airdrop-phishing tickers: a symbol that carries a URL or a
// call to action is bait, never a token to trade.
var scamWords = []string{"http", "www.", ".com", ".io", ".org", ".net", ".xyz", ".app", "claim", "airdrop", "reward", "visit", "gift", "free"}

// scam reports whether ref is on the scam list, and why. The symbol is
// checked as written and as its skeleton, so fullwidth or Cyrillic spellings
// of a scam ticker or a bait word are caught too.
func scam(ref TokenRef) (string, bool) {
	sym := strings.TrimSpace(ref.Symbol)
	if addr := strings.TrimSpace(ref.Address); addr != "" {
		if why, ok := scamAddresses[addrKey(addr)]; ok {
			return why, true
		}
	}
	if sym == "" {
		return "", false
	}
	upper, sk := strings.ToUpper(sym), skeleton(sym)
	for _, s := range []string{upper, sk} {
		if why, ok := scamTickers[s]; ok {
			return why, true
		}
	}
	for _, s := range []string{strings.ToLower(sym), strings.ToLower(sk)} {
		for _, w := range scamWords {
			if strings.Contains(s, w) {
				return "a ticker that carries a link or a call to action (" + strings.Trim(w, ".") + ") is airdrop phishing", true
			}
		}
	}
	if sk != upper && reservedTicker(sk) {
		return "the ticker imitates " + sk + " with look-alike characters", true
	}
	return "", false
}

// confusables maps characters that render like Latin letters or digits to
// them: Cyrillic and Greek capitals and small letters that have Latin twins.
var confusables = map[rune]rune{
	'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P', 'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'У': 'Y',
	'а': 'A', 'с': 'C', 'е': 'E', 'і': 'I', 'ј': 'J', 'о': 'O', 'р': 'P', 'ѕ': 'S', 'х': 'X', 'у': 'Y',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	'ο': 'O', 'ν': 'V', 'τ': 'T',
}

// skeleton folds a symbol for look-alike comparison: NFKC (fullwidth and
// compatibility forms), confusable letters to Latin, invisible characters
// dropped, upper case.
func skeleton(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	for _, r := range s {
		if c, ok := confusables[r]; ok {
			r = c
		}
		if unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
