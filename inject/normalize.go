package inject

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Span is a byte range [Start, End) in the original text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Normalize returns s as the scanner sees it: hidden tag text decoded in
// place; invisible characters, joiners, variation selectors, bidi marks,
// controls and private-use characters removed; each character NFKC-normalised
// (fullwidth, mathematical, enclosed and other compatibility forms become
// plain letters) and lower-cased; in a word that mixes Latin with Cyrillic or
// Greek, the look-alike letters folded to Latin; runs of spaces collapsed to
// one space, and runs of white space with a line break to one "\n".
//
// The result is for matching only: it is lossy and must never be shown to
// the model in place of the original (see Sanitize).
func Normalize(s string) string { return normalize(s).text }

// view is a text derived from an original, with the original span of every
// byte: start[i] and end[i] are where the character that produced byte i
// begins and ends in the original.
type view struct {
	text       string
	start, end []int32
}

// span maps the byte range [a, b) of the view to the original text.
func (v *view) span(a, b int) Span {
	if b <= a || a >= len(v.start) {
		return Span{}
	}
	// In a reversed view the first byte comes from the end of the span.
	return Span{int(min(v.start[a], v.start[b-1])), int(max(v.end[a], v.end[b-1]))}
}

// nrune is one rune of a view being built and the original bytes it stands
// for.
type nrune struct {
	r          rune
	start, end int32
}

// normalize builds the scan view of s.
func normalize(s string) view {
	rs := make([]nrune, 0, len(s))
	var buf [utf8.UTFMax]byte
	var nb []byte
	space := false // the last rune written is a collapsed white-space run
	emit := func(r rune, start, end int) {
		if unicode.IsSpace(r) {
			if space && len(rs) > 0 {
				last := &rs[len(rs)-1]
				if r == '\n' {
					last.r = '\n'
				}
				last.end = int32(end)
				return
			}
			if r != '\n' {
				r = ' '
			}
			space = true
		} else {
			space = false
		}
		rs = append(rs, nrune{r, int32(start), int32(end)})
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		start, end := i, i+n
		i = end
		switch {
		case r < utf8.RuneSelf:
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			} else if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7F {
				continue
			}
			emit(r, start, end)
			continue
		case r == blackFlag:
			// A subdivision flag's tags are not smuggled text: skip the
			// whole flag (emoji carry nothing the rules match).
			j := i
			for j < len(s) {
				t, m := utf8.DecodeRuneInString(s[j:])
				if !isTag(t) {
					break
				}
				j += m
				if t == tagCancel {
					break
				}
			}
			i = j
			continue
		case isTag(r):
			if a := tagASCII(r); a != 0 {
				emit(unicode.ToLower(a), start, end)
			}
			continue
		case isLineSeparator(r):
			emit('\n', start, end)
			continue
		case isHidingInvisible(r), r == zwj, r == zwnj, isVariationSelector(r), isBidiMark(r),
			unicode.Is(unicode.Co, r), unicode.Is(unicode.Cf, r):
			continue
		}
		n = utf8.EncodeRune(buf[:], r)
		nb = norm.NFKC.Append(nb[:0], buf[:n]...)
		for k := 0; k < len(nb); {
			q, m := utf8.DecodeRune(nb[k:])
			k += m
			if isHidingInvisible(q) || unicode.Is(unicode.Cf, q) {
				continue
			}
			emit(unicode.ToLower(q), start, end)
		}
	}
	foldMixedScript(rs)
	return encodeView(rs)
}

// encodeView turns runes with origins into a view.
func encodeView(rs []nrune) view {
	n := 0
	for _, r := range rs {
		n += utf8.RuneLen(r.r)
	}
	v := view{start: make([]int32, 0, n), end: make([]int32, 0, n)}
	var b strings.Builder
	b.Grow(n)
	for _, r := range rs {
		m, _ := b.WriteRune(r.r)
		for k := 0; k < m; k++ {
			v.start = append(v.start, r.start)
			v.end = append(v.end, r.end)
		}
	}
	v.text = b.String()
	return v
}

// foldMixedScript folds the look-alike letters of a word that mixes Latin
// with another script to Latin: "іgnоrе" written with Cyrillic і, о and е
// becomes "ignore". A word written wholly in Cyrillic or Greek is left alone,
// so Russian or Greek rules still match Russian or Greek text.
func foldMixedScript(rs []nrune) {
	for i := 0; i < len(rs); {
		if !unicode.IsLetter(rs[i].r) {
			i++
			continue
		}
		j := i
		latin, other := false, false
		for j < len(rs) && (unicode.IsLetter(rs[j].r) || unicode.IsMark(rs[j].r)) {
			r := rs[j].r
			if r < 0x250 {
				latin = true
			} else if _, ok := confusables[r]; ok {
				other = true
			}
			j++
		}
		if latin && other {
			for k := i; k < j; k++ {
				if l, ok := confusables[rs[k].r]; ok {
					rs[k].r = l
				}
			}
		}
		i = j
	}
}

// confusables maps lower-case Cyrillic, Greek and other letters that look
// like a Latin letter to it (a subset of Unicode's confusables.txt, UTS #39:
// the letters that occur in homoglyph attacks on English keywords).
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'ё': 'e', 'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j',
	'к': 'k', 'ӏ': 'l', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'г': 'r', 'ѕ': 's',
	'т': 't', 'и': 'u', 'ѵ': 'v', 'ԝ': 'w', 'х': 'x', 'у': 'y', 'ү': 'y', 'ɡ': 'g', 'ո': 'n',
	// Greek
	'α': 'a', 'β': 'b', 'ϲ': 'c', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o',
	'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'γ': 'y', 'ω': 'w',
	// Armenian, Latin extensions and others seen in the wild
	'օ': 'o', 'ս': 'u', 'հ': 'h', 'ı': 'i', 'ȷ': 'j', 'ℓ': 'l', 'ꮪ': 's',
}
