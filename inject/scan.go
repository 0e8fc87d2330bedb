package inject

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// DefaultThreshold is the score at or above which a text is an injection.
const DefaultThreshold = 0.5

// maxMatchesPerRule bounds the matches one rule reports in one view.
const maxMatchesPerRule = 8

// Match is one finding: which rule matched, its category and score, and
// where in the original text.
type Match struct {
	Rule     string   `json:"rule"`
	Category Category `json:"category"`
	Score    float64  `json:"score"`
	Span     Span     `json:"span"`
	// View is where the payload was found: "text" (the normalised text),
	// "leetspeak", "rot13", "reversed", "base64/hex", "hidden" (invisible
	// characters) or "classifier".
	View string `json:"view"`
	Why  string `json:"why,omitempty"`
}

// Result is a scan's verdict on one text. Its zero value is a clean text.
type Result struct {
	// Injection is Score >= the scanner's threshold.
	Injection bool `json:"injection"`
	// Score in [0, 1] combines the matches: 1 - Π(1 - score) over the
	// rules that matched (each rule counted once, at its best).
	Score      float64    `json:"score"`
	Categories []Category `json:"categories"`
	// Spans are the matched ranges of the original text, merged, in order.
	Spans   []Span  `json:"spans"`
	Matches []Match `json:"matches"`
}

// Scanner scans text against a payload database. It is safe for concurrent
// use. Its zero value has no rules; use NewScanner.
type Scanner struct {
	rules      []compiledRule
	threshold  float64
	classifier Classifier
}

// Options configure a Scanner. The zero value scans with the shipped
// database at DefaultThreshold and no classifier.
type Options struct {
	// Extra rules extend the shipped database (ids must not collide).
	Extra []Rule
	// Threshold overrides DefaultThreshold when > 0.
	Threshold float64
	// Classifier, when set, adds a model-based score (see ScanContext).
	Classifier Classifier
}

type compiledRule struct {
	Rule
	anchors []string   // one of these occurs in every text the pattern matches; nil: always run
	also    [][]string // and one of each of these
}

// NewScanner returns a scanner over the shipped payload database and
// opts.Extra. An error means the database could not be loaded or an extra
// rule is invalid or collides with a shipped one.
func NewScanner(opts Options) (*Scanner, error) {
	base, err := DefaultRules()
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(base), opts.Extra...)
	seen := map[string]bool{}
	s := &Scanner{threshold: DefaultThreshold, classifier: opts.Classifier}
	if opts.Threshold > 0 {
		if opts.Threshold > 1 {
			return nil, fmt.Errorf("scan threshold %v is out of range; use a number in (0, 1]", opts.Threshold)
		}
		s.threshold = opts.Threshold
	}
	for _, r := range all {
		if seen[r.ID] {
			return nil, fmt.Errorf("rule %q is defined twice; give the extra rule another id", r.ID)
		}
		seen[r.ID] = true
		if r.re == nil {
			c, err := compileRules([]Rule{r}, "extra rules")
			if err != nil {
				return nil, err
			}
			r = c[0]
		}
		s.rules = append(s.rules, compiledRule{Rule: r, anchors: anchors(r.re), also: alsoRequired(r.re)})
	}
	return s, nil
}

// Threshold is the score at or above which Scan reports an injection.
func (s *Scanner) Threshold() float64 { return s.threshold }

// Scan scans text with the built-in database only (no classifier).
func (s *Scanner) Scan(text string) Result {
	return s.result(s.matches(text))
}

// ScanContext scans text with the database and, when the scanner has one,
// the classifier; the result's score is the larger of the two. An error
// means the classifier could not judge: the caller must treat the text as
// not known to be clean.
func (s *Scanner) ScanContext(ctx context.Context, text string) (Result, error) {
	ms := s.matches(text)
	if s.classifier != nil {
		m, err := classify(ctx, s.classifier, text)
		if err != nil {
			return s.result(ms), err
		}
		if m.Score > 0 {
			ms = append(ms, m)
		}
	}
	return s.result(ms), nil
}

// matches runs every rule over every view of text.
func (s *Scanner) matches(text string) []Match {
	text = maskFrames(text) // warden's own fences, read back
	var ms []Match
	var hid *hidden
	h := func(text string) hidden {
		if hid == nil {
			hid = &hidden{}
			if !isPlainASCII(text) {
				_, *hid = sanitize(text)
			}
		}
		return *hid
	}
	v := normalize(text)
	s.scanView(&ms, v, "text")
	ms = append(ms, repeatedTokens(v)...)
	ms = append(ms, splicedRequests(v)...)
	if d, ok := deleet(v); ok {
		s.scanView(&ms, d, "leetspeak")
	}
	// Rot13 and reversed text are scanned when they read more like English
	// than the text does: their commonest word outnumbers "the".
	the := strings.Count(v.text, "the ")
	if strings.Count(v.text, "gur ") > the {
		s.scanView(&ms, rot13(v), "rot13")
	}
	if strings.Count(v.text, " eht") > the || len(h(text).overrides) > 0 {
		s.scanView(&ms, reversed(v), "reversed")
	}
	for _, b := range blobs(text, 0, 2) {
		s.scanView(&ms, b, "base64/hex")
	}
	ms = append(ms, hiddenMatches(h(text))...)
	return ms
}

// hiddenMatches turns what the sanitiser found hidden into findings. A
// legitimate use of invisible characters (emoji sequences, flags, joiners,
// RTL marks) is not hidden and scores nothing.
func hiddenMatches(h hidden) []Match {
	var ms []Match
	for _, t := range h.tags {
		if len(strings.TrimSpace(t.text)) >= 3 {
			ms = append(ms, Match{Rule: "hidden.tag-text", Category: Encoded, Score: 0.9, Span: t.span, View: "hidden",
				Why: "text hidden in invisible Unicode tag characters (ASCII smuggling)"})
		}
	}
	for _, o := range h.overrides {
		ms = append(ms, Match{Rule: "hidden.bidi-override", Category: Encoded, Score: 0.3, Span: o, View: "hidden",
			Why: "a bidi override shows this text reversed to a person, not to the model"})
	}
	for _, r := range h.vsRuns {
		if r.End-r.Start >= 4*3 { // four or more selectors in a row
			ms = append(ms, Match{Rule: "hidden.variation-selectors", Category: Encoded, Score: 0.6, Span: r, View: "hidden",
				Why: "a run of variation selectors can carry hidden bytes"})
		}
	}
	return ms
}

func (s *Scanner) scanView(ms *[]Match, v view, name string) {
	for i := range s.rules {
		r := &s.rules[i]
		if !r.mayMatch(v.text) {
			continue
		}
		for _, w := range windows(v.text, r.anchors) {
			for _, loc := range r.find(v.text[w[0]:w[1]], maxMatchesPerRule) {
				*ms = append(*ms, Match{Rule: r.ID, Category: r.Category, Score: r.Score,
					Span: v.span(w[0]+loc[0], w[0]+loc[1]), View: name, Why: r.Why})
			}
		}
	}
}

// result combines matches into a verdict.
// mayMatch is the prefilter: text holds a literal of every set the rule
// needs.
func (r *compiledRule) mayMatch(text string) bool {
	for _, set := range r.also {
		if !containsAny(text, set) {
			return false
		}
	}
	return true
}

func (s *Scanner) result(ms []Match) Result {
	res := Result{Categories: []Category{}, Spans: []Span{}, Matches: []Match{}}
	if len(ms) == 0 {
		return res
	}
	best := map[string]float64{}
	cats := map[Category]bool{}
	for _, m := range ms {
		best[m.Rule] = max(best[m.Rule], m.Score)
		cats[m.Category] = true
		if m.View != "text" && m.View != "classifier" {
			cats[Encoded] = true
		}
	}
	clean := 1.0
	for _, sc := range best {
		clean *= 1 - sc
	}
	res.Score = math.Round((1-clean)*1000) / 1000
	res.Injection = res.Score >= s.threshold
	for c := range cats {
		res.Categories = append(res.Categories, c)
	}
	slices.Sort(res.Categories)
	slices.SortStableFunc(ms, func(a, b Match) int {
		if a.Span.Start != b.Span.Start {
			return a.Span.Start - b.Span.Start
		}
		return a.Span.End - b.Span.End
	})
	res.Matches = ms
	for _, m := range ms {
		if m.Span.End <= m.Span.Start {
			continue
		}
		if n := len(res.Spans); n > 0 && m.Span.Start <= res.Spans[n-1].End {
			res.Spans[n-1].End = max(res.Spans[n-1].End, m.Span.End)
			continue
		}
		res.Spans = append(res.Spans, m.Span)
	}
	return res
}
