package inject

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Classifier is a model-based injection scorer a user plugs into a Scanner
// (a PromptGuard or DeBERTa sidecar, an LLM judge). Classify returns the
// probability in [0, 1] that text is, or contains, a prompt injection. An
// error means it could not judge the text; the scanner returns it and the
// caller must not treat the text as clean. Classify must be safe for
// concurrent use.
type Classifier interface {
	Classify(ctx context.Context, text string) (float64, error)
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(ctx context.Context, text string) (float64, error)

// Classify calls f.
func (f ClassifierFunc) Classify(ctx context.Context, text string) (float64, error) {
	return f(ctx, text)
}

// Chunking: models read a bounded window (PromptGuard: 512 tokens), so a long
// text is classified in overlapping chunks and the highest score wins.
// Nothing is truncated.
const (
	chunkBytes   = 2000
	overlapBytes = 200
)

// classify runs c over text in chunks and returns the best chunk as a match.
func classify(ctx context.Context, c Classifier, text string) (Match, error) {
	best := Match{Rule: "classifier", Category: Override, View: "classifier", Why: "the configured classifier scored this text as an injection"}
	for start := 0; ; {
		end := min(start+chunkBytes, len(text))
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end--
		}
		p, err := c.Classify(ctx, text[start:end])
		if err != nil {
			return Match{}, fmt.Errorf("classify text: %w", err)
		}
		if p < 0 || p > 1 || p != p {
			return Match{}, fmt.Errorf("classify text: the classifier returned %v, not a probability in [0, 1]", p)
		}
		if p > best.Score {
			best.Score, best.Span = p, Span{start, end}
		}
		if end >= len(text) {
			return best, nil
		}
		next := end - overlapBytes
		for next > start && !utf8.RuneStart(text[next]) {
			next--
		}
		if next <= start {
			next = end
		}
		start = next
	}
}
