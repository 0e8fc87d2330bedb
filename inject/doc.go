// Package inject defends the model against prompt injection in untrusted text:
// tool output, web pages, files, MCP results.
//
// It keeps two views of every text. Sanitize is what the model sees: the
// original with only the dangerous invisible characters removed (zero-width
// characters, bidi overrides and isolates, Unicode tag characters, other
// default-ignorables used for hiding), while emoji ZWJ sequences, flags,
// Persian ZWNJ and Indic joiners keep working. Normalize is what the scanner
// sees: NFKC, case-folded, ignorables removed, hidden tag text decoded and
// look-alike letters folded.
//
// A Scanner matches the normalised view, and decoded copies of it (leetspeak,
// base64, hex, rot13, reversed text), against a payload database shipped in
// this package (payloads.yaml) and optionally extended by the user. Every
// Match has a score, a category and a span in the original text. A Classifier
// can add a model-based score; the built-in scanner stands on its own.
//
// Wrap puts untrusted text between delimiters carrying a fresh random nonce,
// with look-alikes of the delimiter inside the text neutralised, and says
// that nothing inside is to be followed.
package inject
