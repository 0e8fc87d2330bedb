package httpexchange

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentwarden/warden/finance"
)

var (
	// ErrMalformed is wrapped by every error about an answer that is not
	// the contract's JSON: too large, trailing data, a missing field, a
	// negative or non-finite number.
	ErrMalformed = errors.New("the venue's answer breaks the wire contract")
	// ErrRedirect is wrapped when the venue answered with a redirect, which
	// is never followed.
	ErrRedirect = errors.New("the venue answered with a redirect, which warden does not follow")
	// ErrOutcomeUnknown is wrapped when an execution was sent but no
	// readable answer came back (a timeout, a dropped connection, a 2xx
	// that does not decode): the venue may have executed it. Retrying with
	// the same trace id is safe on a venue that honours the Idempotency-Key.
	ErrOutcomeUnknown = finance.ErrOutcomeUnknown
)

// StatusError is a non-2xx answer. Body is at most 200 bytes of the answer,
// without control characters and with the bearer token redacted.
type StatusError struct {
	StatusCode int
	Body       string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.StatusCode)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// maxExcerpt bounds the body an error carries, in bytes.
const maxExcerpt = 200

// redacted replaces the bearer token wherever it appears in a message.
const redacted = "[redacted]"

// excerpt is the part of a body an error may show: printable, without the
// token, at most maxExcerpt bytes.
func excerpt(body []byte, token string) string {
	s := clean(string(body), token)
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clean makes venue text safe to show: invalid UTF-8, control and format
// characters (bidi overrides, zero-width) go, whitespace runs become one
// space, and the token is redacted. Control characters are removed before
// redacting, so a token split by them is still found.
func clean(s, token string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return redact(b.String(), token)
}

func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, redacted)
}

// redactedError stands in for an error whose text held the token: the text
// is redacted and only the package's sentinels and context errors survive
// for errors.Is, so no unwrapped cause can print the token.
type redactedError struct {
	msg   string
	kinds []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kinds }

// sentinels are the errors a caller may test for with errors.Is.
var sentinels = []error{ErrMalformed, ErrRedirect, ErrOutcomeUnknown, context.DeadlineExceeded, context.Canceled}

// scrub returns err, or a redactedError when its text holds the token.
func scrub(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	r := &redactedError{msg: redact(err.Error(), token)}
	for _, k := range sentinels {
		if errors.Is(err, k) {
			r.kinds = append(r.kinds, k)
		}
	}
	return r
}
