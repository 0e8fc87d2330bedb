package inject

import "unicode"

// Invisible characters: which ones hide text, and in which contexts the
// legitimate ones (joiners, variation selectors, flag tags) are kept.

const (
	zwnj       = '\u200C'
	zwj        = '\u200D'
	tagBase    = 0xE0000
	tagCancel  = 0xE007F
	blackFlag  = 0x1F3F4 // the base of emoji subdivision flags (🏴 + tags + CANCEL TAG)
	maxFlagTag = 6       // tag letters in one subdivision flag: "gbeng", "usca"…
)

// isTag reports whether r is a Unicode tag character (U+E0000–U+E007F).
func isTag(r rune) bool { return r >= tagBase && r <= tagCancel }

// tagASCII is the ASCII character a tag character stands for, or 0.
func tagASCII(r rune) rune {
	if r >= 0xE0020 && r <= 0xE007E {
		return r - tagBase
	}
	return 0
}

// isVariationSelector reports VS1–VS16 and VS17–VS256.
func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// isBidiControl reports the bidi embeddings, overrides and isolates
// (U+202A–202E, U+2066–2069): they reorder what a person sees against what
// the model reads (Trojan Source). The marks LRM, RLM and ALM are not here:
// they reorder nothing and RTL text needs them.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// isBidiOverride reports LRO and RLO, which display text reversed.
func isBidiOverride(r rune) bool { return r == 0x202D || r == 0x202E }

// isBidiMark reports LRM, RLM and ALM.
func isBidiMark(r rune) bool { return r == 0x200E || r == 0x200F || r == 0x061C }

// isHidingInvisible reports a character the forward view always removes:
// it renders as nothing and has no use a person needs in text given to a
// model. Joiners, variation selectors and tag characters depend on context
// and are decided by the sanitiser.
func isHidingInvisible(r rune) bool {
	switch {
	case r == 0x200B, r == 0x2060, r == 0xFEFF, r == 0x180E: // ZWSP, WJ, BOM/ZWNBSP, MVS
		return true
	case r >= 0x2061 && r <= 0x2064, r >= 0x206A && r <= 0x206F: // invisible operators, deprecated format
		return true
	case isBidiControl(r):
		return true
	case r == 0x00AD, r == 0x034F: // soft hyphen, combining grapheme joiner
		return true
	case r == 0x3164, r == 0xFFA0, r == 0x115F, r == 0x1160: // Hangul fillers
		return true
	case r == 0x17B4, r == 0x17B5, r >= 0x180B && r <= 0x180D, r == 0x180F:
		return true
	case r >= 0x1BCA0 && r <= 0x1BCA3, r >= 0x1D173 && r <= 0x1D17A:
		return true
	case r >= 0xFFF0 && r <= 0xFFF8:
		return true
	case r >= 0xE0080 && r <= 0xE00FF, r >= 0xE01F0 && r <= 0xE0FFF: // unassigned default-ignorables
		return true
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7F, r >= 0x80 && r <= 0x9F && r != 0x85:
		return true // C0/C1 controls, ESC (ANSI escapes)
	}
	return false
}

// isLineSeparator reports the separators that break line-based parsing
// without looking like a line break to every tool; both views map them to
// "\n".
func isLineSeparator(r rune) bool { return r == 0x2028 || r == 0x2029 || r == 0x85 }

// joiningScript reports a letter or mark of a script whose words need ZWJ or
// ZWNJ: Arabic-script languages (Persian, Urdu), Syriac, N'Ko, Mongolian, and
// the Brahmic scripts (conjuncts after a virama).
func joiningScript(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsMark(r) {
		return false
	}
	return unicode.In(r, unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian,
		unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya,
		unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala,
		unicode.Khmer, unicode.Myanmar, unicode.Tibetan, unicode.Thaana)
}

// isEmojiPart reports a character that takes part in an emoji ZWJ sequence:
// pictographs, skin-tone modifiers, VS16, the keycap mark, and symbols.
func isEmojiPart(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF:
		return true
	case r == 0xFE0F, r == 0x20E3, r == 0x2640, r == 0x2642, r == 0x2695, r == 0x2708, r == 0x2764:
		return true
	case r >= 0x2190 && r <= 0x21FF, r >= 0x2300 && r <= 0x23FF:
		return true
	}
	return unicode.Is(unicode.So, r)
}

// keepJoiner reports whether the ZWJ or ZWNJ j between prev and next is
// there for a reason a reader needs: inside a word of a joining script, or
// (ZWJ only) inside an emoji sequence.
func keepJoiner(j, prev, next rune) bool {
	if joiningScript(prev) && joiningScript(next) {
		return true
	}
	return j == zwj && isEmojiPart(prev) && isEmojiPart(next)
}

// flagSequenceLen is the length, in runes, of the valid emoji subdivision
// flag starting at rs[i] (🏴, 1–6 tag letters or digits, CANCEL TAG), or 0.
func flagSequenceLen(rs []rune, i int) int {
	if i >= len(rs) || rs[i] != blackFlag {
		return 0
	}
	n := 0
	for j := i + 1; j < len(rs) && n <= maxFlagTag; j++ {
		r := rs[j]
		switch {
		case r == tagCancel:
			if n == 0 {
				return 0
			}
			return j - i + 1
		case r >= 0xE0061 && r <= 0xE007A, r >= 0xE0030 && r <= 0xE0039:
			n++
		default:
			return 0
		}
	}
	return 0
}
