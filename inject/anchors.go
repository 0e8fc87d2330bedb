package inject

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// Prefilter: most text contains none of the words a rule needs, so each rule
// carries anchors, literals one of which occurs in every match, and the
// scanner runs the rule's regexp only near an anchor's occurrences.

const (
	minAnchor  = 3   // the shortest literal worth using as an anchor
	maxExact   = 256 // the most strings an exact set may hold
	windowSpan = 512 // bytes either side of an anchor that a match may reach
)

// anchors returns literals of which at least one occurs in every string re
// matches, or nil when there are none worth checking.
func anchors(re *regexp.Regexp) []string {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	set := required(t.Simplify())
	if set == nil || weakest(set) < minAnchor {
		return nil
	}
	return dedupe(set)
}

// alsoRequired returns further anchor sets a match of re needs besides its
// anchors (each child of a top-level concatenation with one): a text must
// hold a literal of every set before the rule's regexp runs on it.
func alsoRequired(re *regexp.Regexp) [][]string {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	t = t.Simplify()
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	if t.Op != syntax.OpConcat {
		return nil
	}
	var sets [][]string
	for _, sub := range t.Sub {
		if c := required(sub); c != nil && weakest(c) >= minAnchor {
			sets = append(sets, dedupe(c))
		}
	}
	return sets
}

// containsAny reports whether text holds one of set.
func containsAny(text string, set []string) bool {
	for _, a := range set {
		if strings.Contains(text, a) {
			return true
		}
	}
	return false
}

// exact returns every string t can match, or nil when that set is not small
// and finite. Empty-width assertions match "".
func exact(t *syntax.Regexp) []string {
	if t.Flags&syntax.FoldCase != 0 {
		return nil
	}
	switch t.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return []string{""}
	case syntax.OpLiteral:
		return []string{string(t.Rune)}
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(t.Rune); i += 2 {
			if t.Rune[i+1]-t.Rune[i] > 8 {
				return nil
			}
			for r := t.Rune[i]; r <= t.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		if len(out) > 16 {
			return nil
		}
		return out
	case syntax.OpCapture:
		return exact(t.Sub[0])
	case syntax.OpQuest:
		s := exact(t.Sub[0])
		if s == nil {
			return nil
		}
		return append([]string{""}, s...)
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range t.Sub {
			s := exact(sub)
			if s == nil {
				return nil
			}
			if out = product(out, s); out == nil {
				return nil
			}
		}
		return out
	case syntax.OpAlternate:
		var out []string
		for _, sub := range t.Sub {
			s := exact(sub)
			if s == nil {
				return nil
			}
			out = append(out, s...)
		}
		if len(out) > maxExact {
			return nil
		}
		return out
	}
	return nil
}

// product is every a+b, or nil when there would be too many.
func product(as, bs []string) []string {
	if len(as)*len(bs) > maxExact {
		return nil
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			out = append(out, a+b)
		}
	}
	return out
}

// required returns a set of literals one of which every match of t
// contains, or nil when it cannot tell.
func required(t *syntax.Regexp) []string {
	if e := exact(t); e != nil {
		return e
	}
	switch t.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
	case syntax.OpConcat:
		// Candidates: each run of consecutive exact children (their
		// product), and each other child's own required set.
		var best []string
		consider := func(c []string) {
			if c != nil && (best == nil || weakest(c) > weakest(best)) {
				best = c
			}
		}
		run := []string{""}
		for _, sub := range t.Sub {
			if e := exact(sub); e != nil {
				if p := product(run, e); p != nil {
					run = p
					continue
				}
				consider(run)
				run = e
				continue
			}
			consider(run)
			run = []string{""}
			consider(required(sub))
		}
		consider(run)
		return best
	case syntax.OpAlternate:
		var all []string
		for _, s := range t.Sub {
			c := required(s)
			if c == nil {
				return nil
			}
			all = append(all, c...)
		}
		return all
	}
	return nil
}

// weakest is the length of the shortest literal in a set, after trimming the
// spaces and punctuation a boundary may stand for: a set is as selective as
// its shortest member.
func weakest(set []string) int {
	n := -1
	for _, s := range set {
		if l := len(strings.TrimSpace(s)); n < 0 || l < n {
			n = l
		}
	}
	return n
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// windows returns the ranges of text, merged, within windowSpan of an
// occurrence of one of the anchors, widened to line starts and spaces so a
// window does not start or end inside a word or a line. nil anchors: the
// whole text.
func windows(text string, anchors []string) [][2]int {
	if anchors == nil {
		return [][2]int{{0, len(text)}}
	}
	var ws [][2]int
	for _, a := range anchors {
		for off := 0; ; {
			i := strings.Index(text[off:], a)
			if i < 0 {
				break
			}
			p := off + i
			ws = append(ws, [2]int{p, p + len(a)})
			off = p + len(a)
			if len(ws) > 4096 {
				return [][2]int{{0, len(text)}}
			}
		}
	}
	if len(ws) == 0 {
		return nil
	}
	for i := range ws {
		ws[i][0] = widenBack(text, max(0, ws[i][0]-windowSpan))
		ws[i][1] = widenForward(text, min(len(text), ws[i][1]+windowSpan))
	}
	sortRanges(ws)
	out := ws[:1]
	for _, w := range ws[1:] {
		last := &out[len(out)-1]
		if w[0] <= last[1] {
			last[1] = max(last[1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

func widenBack(text string, i int) int {
	if k := strings.LastIndexByte(text[:i], '\n'); k >= 0 && i-k < 256 {
		return k + 1
	}
	for i > 0 && text[i-1] != ' ' {
		i--
	}
	return i
}

func widenForward(text string, i int) int {
	for i < len(text) && text[i] != ' ' && text[i] != '\n' {
		i++
	}
	return i
}

func sortRanges(ws [][2]int) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j][0] < ws[j-1][0]; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}
