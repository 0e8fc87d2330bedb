package httpexchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/agentwarden/warden"
)

// maxText bounds a string in an answer (ids, symbols, addresses), in bytes.
const maxText = 256

// maxDollars bounds any dollar figure in an answer, and a portfolio's gross
// value, so that sums of them cannot overflow warden.USD.
const maxDollars = 1e12

// decodeObject decodes one JSON object from data into v: no trailing data,
// no other top-level value. Unknown fields are ignored.
func decodeObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return fmt.Errorf("%w: the answer is empty", ErrMalformed)
	}
	if data[0] != '{' {
		return fmt.Errorf("%w: the answer is not a JSON object", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON object", ErrMalformed)
	}
	return nil
}

// jsonProblem describes a decoding error by where it is, not by the
// venue's text.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		// te.Value may quote the venue's number; the field is ours.
		return fmt.Sprintf("%s has the wrong JSON type", te.Field)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return "invalid JSON"
}

// checker validates an answer's fields, keeping the first problem.
type checker struct{ err error }

func (c *checker) fail(path, why string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s %s", ErrMalformed, path, why)
	}
}

func missing(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// text checks a string field: at most maxText bytes, valid UTF-8, no
// control characters; non-empty when required.
func (c *checker) text(path, s string, required bool) string {
	switch {
	case s == "" && required:
		c.fail(path, "is missing")
	case len(s) > maxText:
		c.fail(path, fmt.Sprintf("is longer than %d bytes", maxText))
	case s != clean(s, ""):
		c.fail(path, "holds control characters, invalid UTF-8 or spaces other than single ones between words")
	}
	return s
}

// numberText reads a number given as a JSON number or a string holding
// one, in JSON's number syntax (no NaN, Infinity, hex or a + sign).
func numberText(raw json.RawMessage) (string, bool) {
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
	}
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) || !json.Valid([]byte(s)) {
		return "", false
	}
	return s, true
}

// number reads a finite, non-negative number; 0 when absent and not
// required.
func (c *checker) number(path string, raw json.RawMessage, required bool) float64 {
	if missing(raw) {
		if required {
			c.fail(path, "is missing")
		}
		return 0
	}
	s, ok := numberText(raw)
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		c.fail(path, "is not a finite number")
		return 0
	case f < 0:
		c.fail(path, "is negative")
		return 0
	}
	return f
}

// positive reads a required number above zero: a price, a leverage.
func (c *checker) positive(path string, raw json.RawMessage) float64 {
	f := c.number(path, raw, true)
	if f == 0 && c.err == nil {
		c.fail(path, "is zero; want a positive number")
	}
	return f
}

// usd reads a non-negative dollar amount up to maxDollars: exactly when it
// has at most six decimals, else rounded to the micro-dollar.
func (c *checker) usd(path string, raw json.RawMessage, required bool) warden.USD {
	f := c.number(path, raw, required)
	if c.err != nil || missing(raw) {
		return 0
	}
	s, _ := numberText(raw)
	if u, err := warden.ParseUSD(s); err == nil {
		return u
	}
	u, err := warden.USDFromFloat(f)
	if err != nil || f > maxDollars {
		c.fail(path, "is above a trillion dollars")
		return 0
	}
	return u
}

// time reads an RFC 3339 time; ok is false when it is absent.
func (c *checker) time(path string, raw json.RawMessage, required bool) (t time.Time, ok bool) {
	if missing(raw) {
		if required {
			c.fail(path, "is missing")
		}
		return time.Time{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		c.fail(path, "is not a string")
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		c.fail(path, "is not an RFC 3339 time")
		return time.Time{}, false
	}
	return t, true
}
