package warden

import (
	"errors"
	"fmt"
)

// ErrorCode classifies an Error. Callers map codes to exit status or HTTP status
// in one table (see package cli).
type ErrorCode string

const (
	EInvalid     ErrorCode = "invalid"     // the caller's input is wrong; the message says how
	ENotFound    ErrorCode = "not_found"   // the named thing does not exist
	EConflict    ErrorCode = "conflict"    // the state does not allow it now
	EUnavailable ErrorCode = "unavailable" // a dependency (database, daemon) cannot be reached
	EInternal    ErrorCode = "internal"    // a bug or an unexpected failure
)

// Error is the one error type shown to users. Message and Hint are safe to print;
// Err carries the internal cause for logs and errors.Is/As, and is never shown as
// the message.
type Error struct {
	Code    ErrorCode
	Message string // what was wrong, in the user's terms
	Hint    string // what to do about it; may be empty
	Err     error  // the cause; may be nil
}

// Errorf builds an Error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set.
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// Wrap returns e with its cause set.
func (e *Error) Wrap(err error) *Error { e.Err = err; return e }

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCodeOf returns the code of the first *Error in err's chain, or EInternal.
func ErrorCodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// UserMessage returns the text to show a user for err: the message and hint of the
// first *Error in its chain, or a generic message for anything else.
func UserMessage(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return "internal error: " + err.Error()
	}
	if e.Hint != "" {
		return e.Message + "\nhint: " + e.Hint
	}
	return e.Message
}
