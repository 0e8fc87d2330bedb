package redact

import (
	"sort"
	"strings"
)

// shellText is a text read as shell words, the way a shell would see it after
// quote removal: AKIA""IOSF and "ghp_"'abc' are single words whose values
// hold the whole secret. Free text that is not a command reads the same way,
// with its apostrophes and quotes removed.
type shellText struct {
	// d is the dequoted copy: the text without its quotes and escaping
	// backslashes, operators and blanks kept.
	d string
	// pos[k] is the index in the text of the byte that gave d[k].
	pos []int
	// segs are the quoted segments of the text, quotes included, in order.
	segs []span
	// words are the shell words, in order.
	words []shellWord
}

// shellWord is one shell word: its bytes in the text and its value in d.
type shellWord struct {
	lo, hi   int  // the word in the text, quotes included
	dlo, dhi int  // its value in d
	cmd      bool // the first word after a command separator (or the text's start)
}

// parseShell reads s as shell words. An unclosed quote runs to the end of s.
// The parse is linear in len(s) and never fails.
func parseShell(s string) *shellText {
	t := &shellText{pos: make([]int, 0, len(s))}
	d := make([]byte, 0, len(s))
	add := func(c byte, at int) {
		d = append(d, c)
		t.pos = append(t.pos, at)
	}
	var w shellWord
	inWord, cmdStart := false, true
	begin := func(i int) {
		if !inWord {
			w = shellWord{lo: i, dlo: len(d), cmd: cmdStart}
			inWord, cmdStart = true, false
		}
	}
	end := func(i int) {
		if inWord {
			w.hi, w.dhi = i, len(d)
			t.words = append(t.words, w)
			inWord = false
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\r':
			end(i)
			add(c, i)
			i++
		case c == '&' && i > 0 && (s[i-1] == '>' || s[i-1] == '<'):
			// 2>&1: a redirection, not a separator.
			end(i)
			add(c, i)
			i++
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '`' || c == '{' && (i+1 == len(s) || isSpace(s[i+1])):
			end(i)
			add(c, i)
			cmdStart = true
			i++
		case c == '<' || c == '>':
			end(i)
			add(c, i)
			i++
		case c == '\\':
			begin(i)
			if i+1 < len(s) && s[i+1] != '\n' {
				add(s[i+1], i+1)
			}
			i += 2
		case c == '\'':
			begin(i)
			k := i + 1
			for k < len(s) && s[k] != '\'' {
				add(s[k], k)
				k++
			}
			hi := min(k+1, len(s))
			t.segs = append(t.segs, span{i, hi})
			i = hi
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			begin(i)
			k := i + 2
			for k < len(s) && s[k] != '\'' {
				if s[k] == '\\' && k+1 < len(s) {
					add(ansiEscape(s[k+1]), k)
					k += 2
					continue
				}
				add(s[k], k)
				k++
			}
			hi := min(k+1, len(s))
			t.segs = append(t.segs, span{i, hi})
			i = hi
		case c == '"':
			begin(i)
			k := i + 1
			for k < len(s) && s[k] != '"' {
				if s[k] == '\\' && k+1 < len(s) && strings.IndexByte("$`\"\\\n", s[k+1]) >= 0 {
					if s[k+1] != '\n' {
						add(s[k+1], k+1)
					}
					k += 2
					continue
				}
				add(s[k], k)
				k++
			}
			hi := min(k+1, len(s))
			t.segs = append(t.segs, span{i, hi})
			i = hi
		default:
			begin(i)
			add(c, i)
			i++
		}
	}
	end(len(s))
	t.d = string(d)
	return t
}

// ansiEscape returns the byte that a backslash and c stand for inside $'...'.
// Numeric escapes are rare in commands and are read as the letter after the
// backslash, which keeps the mapping one byte per escape.
func ansiEscape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	}
	return c
}

// val returns the value of word w.
func (t *shellText) val(w shellWord) string { return t.d[w.dlo:w.dhi] }

// orig returns the span of the text that gave d[a:b], a < b (see widen).
func (t *shellText) orig(a, b int) span { return t.widen(t.pos, a, b) }

// widen returns the span of the text that gave the bytes [a, b) of a copy
// whose byte k came from the text's byte pos[k]. When the span crosses a
// removed quote or backslash, as a secret split by quoting does, each end
// inside a quoted segment is widened to the segment's quote, so that masking
// leaves no quote unbalanced: "ghp_"'abc' is masked whole.
func (t *shellText) widen(pos []int, a, b int) span {
	lo, hi := pos[a], pos[b-1]+1
	if hi-lo == b-a {
		return span{lo, hi}
	}
	if sg, ok := t.segAt(lo); ok {
		lo = sg.lo
	}
	if sg, ok := t.segAt(hi - 1); ok {
		hi = sg.hi
	}
	return span{lo, hi}
}

// joined returns s with the quotes that split a word removed, and where each
// of its bytes came from: a quote whose outer side touches a byte that may
// belong to a token (see splitsWord: AKIA""IOSF, "ghp_"'abc', --password
// "hun""ter2") and a backslash
// outside quotes. Quotes at a word's edge stay, so that a quoted value still
// ends at its quote ("Authorization: Bearer x" https://...). ok is false
// when nothing was removed.
func (t *shellText) joined(s string) (j string, pos []int, ok bool) {
	var drop []bool // allocated on the first quote to remove
	mark := func(i int) {
		if drop == nil {
			drop = make([]bool, len(s))
		}
		drop[i] = true
	}
	outer := func(i int) bool { return i >= 0 && i < len(s) && splitsWord(s[i]) }
	for _, sg := range t.segs {
		q, open := s[sg.lo], 1
		if q == '$' {
			if strings.IndexByte(s[sg.lo:sg.hi], '\\') >= 0 {
				continue // $'...' with escapes is rare; its words are read by parseShell
			}
			q, open = '\'', 2
		}
		if outer(sg.lo - 1) {
			for k := range open {
				mark(sg.lo + k)
			}
		}
		if last := sg.hi - 1; last >= sg.lo+open && s[last] == q && outer(sg.hi) {
			mark(last)
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if _, in := t.segAt(i); !in && i+1 < len(s) {
			mark(i)
			i++
		}
	}
	if drop == nil {
		return s, nil, false
	}
	b := make([]byte, 0, len(s))
	pos = make([]int, 0, len(s))
	for i := 0; i < len(s); i++ {
		if !drop[i] {
			b = append(b, s[i])
			pos = append(pos, i)
		}
	}
	return string(b), pos, true
}

// splitsWord reports whether a quote next to c splits a secret: c may be part
// of a token (a letter, a digit, _ - . / + ~ %) or is another quote. A quote
// next to JSON or prose punctuation ({"a": "b"}, ["x", "y"]) splits nothing.
func splitsWord(c byte) bool {
	switch c {
	case '_', '-', '.', '/', '+', '~', '%', '\'', '"':
		return true
	}
	return isAlnum(c)
}

// segAt returns the quoted segment holding the text's byte i.
func (t *shellText) segAt(i int) (span, bool) {
	k := sort.Search(len(t.segs), func(k int) bool { return t.segs[k].hi > i })
	if k < len(t.segs) && t.segs[k].lo <= i {
		return t.segs[k], true
	}
	return span{}, false
}

// wordSpan returns the span of the text that gave word w's value from byte
// off on (off is less than the value's length): the whole word, quotes
// included, when off is 0.
func (t *shellText) wordSpan(w shellWord, off int) span {
	if off == 0 {
		return span{w.lo, w.hi}
	}
	return t.orig(w.dlo+off, w.dhi)
}
