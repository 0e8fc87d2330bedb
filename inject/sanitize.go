package inject

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s as the model should see it: the original text with the
// invisible characters used for hiding removed, and nothing else changed.
//
// Removed: zero-width spaces and word joiners, the byte-order mark, bidi
// embeddings, overrides and isolates, Unicode tag characters outside a valid
// emoji subdivision flag, variation selectors beyond the first after a
// character, soft hyphens, Hangul fillers, C0/C1 control characters other
// than tab and line breaks (so ANSI escapes lose their ESC), and the other
// default-ignorables. Line and paragraph separators become "\n".
//
// Kept: ZWJ and ZWNJ inside a word of a joining script (Persian ZWNJ, Indic
// conjuncts) and ZWJ inside an emoji sequence; one variation selector after a
// character (❤️, Japanese ideographic variants); emoji flags; LRM, RLM and
// ALM, which right-to-left text needs. Sanitize is idempotent.
func Sanitize(s string) string {
	if isPlainASCII(s) {
		return s
	}
	out, _ := sanitize(s)
	return out
}

// isPlainASCII reports text with nothing for Sanitize to remove: printable
// ASCII, tabs and line breaks.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F {
			return false
		}
	}
	return true
}

// hidden is what sanitize found hidden in a text, for the scanner.
type hidden struct {
	tags      []tagRun // runs of tag characters outside flags: ASCII smuggling
	overrides []Span   // LRO/RLO up to the PDF that ends it (or the line's end)
	vsRuns    []Span   // runs of two or more variation selectors: bytes smuggled in emoji
	removed   int      // characters removed
}

// tagRun is a run of tag characters and the ASCII text they spell.
type tagRun struct {
	span Span
	text string
}

// sanitize is Sanitize, also reporting what it removed.
func sanitize(s string) (string, hidden) {
	var h hidden
	rs := []rune(s)
	offs := make([]int, len(rs)+1) // byte offset of each rune in s
	{
		o := 0
		for i, r := range rs {
			offs[i] = o
			if r == utf8.RuneError {
				_, n := utf8.DecodeRuneInString(s[o:])
				o += n
			} else {
				o += utf8.RuneLen(r)
			}
		}
		offs[len(rs)] = o
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := rune(-1) // the last rune written
	var tag strings.Builder
	tagStart := -1
	vsStart, vsLen := -1, 0
	overrideStart := -1
	flushTag := func(end int) {
		if tagStart >= 0 {
			h.tags = append(h.tags, tagRun{span: Span{offs[tagStart], offs[end]}, text: tag.String()})
			tag.Reset()
			tagStart = -1
		}
	}
	flushVS := func(end int) {
		if vsLen > 1 {
			h.vsRuns = append(h.vsRuns, Span{offs[vsStart], offs[end]})
		}
		vsStart, vsLen = -1, 0
	}
	endOverride := func(end int) {
		if overrideStart >= 0 {
			h.overrides = append(h.overrides, Span{offs[overrideStart], offs[end]})
			overrideStart = -1
		}
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if !isTag(r) {
			flushTag(i)
		}
		if !isVariationSelector(r) {
			flushVS(i)
		}
		switch {
		case r == blackFlag:
			if n := flagSequenceLen(rs, i); n > 0 {
				b.WriteString(string(rs[i : i+n]))
				prev = rs[i+n-1]
				i += n - 1
				continue
			}
		case isTag(r):
			if tagStart < 0 {
				tagStart = i
			}
			if a := tagASCII(r); a != 0 {
				tag.WriteRune(a)
			}
			h.removed++
			continue
		case isVariationSelector(r):
			if vsStart < 0 {
				vsStart = i
			}
			vsLen++
			if prev < 0 || isVariationSelector(prev) || vsLen > 1 {
				h.removed++
				continue
			}
		case r == zwj || r == zwnj:
			if !keepJoiner(r, prev, nextKept(rs, i+1)) {
				h.removed++
				continue
			}
		case isBidiOverride(r):
			endOverride(i)
			overrideStart = i
			h.removed++
			continue
		case r == 0x202C || r == 0x2069: // PDF, PDI
			endOverride(i)
			h.removed++
			continue
		case r == '\n' || isLineSeparator(r):
			endOverride(i)
			if r != '\n' {
				b.WriteByte('\n')
				prev = '\n'
				continue
			}
		case isHidingInvisible(r):
			h.removed++
			continue
		}
		b.WriteRune(r)
		prev = r
	}
	flushTag(len(rs))
	flushVS(len(rs))
	endOverride(len(rs))
	return b.String(), h
}

// nextKept is the first rune from rs[i] on that the sanitiser does not
// always remove (0 at the end): the context that decides a joiner.
func nextKept(rs []rune, i int) rune {
	for ; i < len(rs); i++ {
		if r := rs[i]; !isHidingInvisible(r) && !isTag(r) {
			return r
		}
	}
	return 0
}
