package telegram

import (
	"errors"
	"net/url"
	"strings"
)

// tokenMask stands in for the bot token in errors.
const tokenMask = "<bot-token>"

// scrubbedError is an error whose text had the bot token taken out. It does
// not unwrap to the original, whose text still holds the token, but it
// matches what the original matches with errors.Is.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

// scrub returns err with every form of the bot token in its text masked. The
// Bot API client builds URLs with the token in their path, and most
// transport errors quote the URL.
func (c *Channel) scrub(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbedError{msg: scrubText(err.Error(), c.token), err: err}
}

// scrubText masks token in s, as written and as escaped in a URL, and then
// its secret part (after the bot id) wherever it still stands alone.
func scrubText(s, token string) string {
	if token == "" {
		return s
	}
	forms := []string{token, url.PathEscape(token), url.QueryEscape(token)}
	if _, secret, ok := strings.Cut(token, ":"); ok && secret != "" {
		forms = append(forms, secret)
	}
	for _, t := range forms {
		s = strings.ReplaceAll(s, t, tokenMask)
	}
	return s
}
