package warden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxRequestBytes bounds a Request read from JSON.
const MaxRequestBytes = 1 << 20

// DecodeRequest reads exactly one Request as a JSON object from r. It is strict:
// unknown fields (including "tier": a caller cannot choose its own tier),
// trailing data, more than MaxRequestBytes, a missing capability or action, and
// control characters in the identifying fields are all *Error with code EInvalid
// and a message naming what was wrong.
func DecodeRequest(r io.Reader) (*Request, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return nil, Errorf(EInvalid, "read request: %v", err)
	}
	if len(data) > MaxRequestBytes {
		return nil, Errorf(EInvalid, "request JSON is larger than %d bytes", MaxRequestBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, Errorf(EInvalid, "no request on stdin").
			WithHint(`send one JSON object such as {"capability":"tool","action":"call","resource":"get_price"}`)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, requestJSONError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, Errorf(EInvalid, "request JSON has data after the object").WithHint("send exactly one JSON object")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return &req, nil
}

func requestJSONError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &syn):
		msg = fmt.Sprintf("request JSON is malformed at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		msg = fmt.Sprintf("request JSON field %q must be %v, not a JSON %s", typ.Field, typ.Type, typ.Value)
	case strings.HasPrefix(msg, "json: unknown field"):
		msg = "request JSON has an " + strings.TrimPrefix(msg, "json: ")
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "request JSON ends early"
	default:
		msg = "request JSON: " + strings.TrimPrefix(msg, "json: ")
	}
	return Errorf(EInvalid, "%s", msg).Wrap(err).WithHint(
		"fields are capability, action, resource, tool, params, context, requested_by, autonomous, session, host, cwd, raw, trace_id")
}

// maxIdent bounds identifying fields (capability, action, tool, session…).
const maxIdent = 256

// Validate checks the fields every capability relies on: capability and action
// are lower-case words, and the identifying fields are short, valid UTF-8 with
// no control characters. It returns an *Error with code EInvalid.
func (r *Request) Validate() error {
	if !isWord(r.Capability) {
		return Errorf(EInvalid, "request capability %q is not valid", r.Capability).
			WithHint("use one of shell, filesystem, network, trade, sign, tool")
	}
	if !isWord(r.Action) {
		return Errorf(EInvalid, "request action %q is not valid", r.Action).WithHint("an action is a lower-case word such as call, exec, read or swap")
	}
	for _, f := range []struct{ name, v string }{
		{"tool", r.Tool}, {"requested_by", r.RequestedBy}, {"session", r.Session}, {"host", r.Host}, {"trace_id", r.TraceID},
	} {
		if len(f.v) > maxIdent || !utf8.ValidString(f.v) || hasControl(f.v) {
			return Errorf(EInvalid, "request field %s is not a short printable string", f.name)
		}
	}
	if !utf8.ValidString(r.Resource) || !utf8.ValidString(r.Context) {
		return Errorf(EInvalid, "request resource and context must be valid UTF-8")
	}
	for k := range r.Params {
		if k == "" || len(k) > maxIdent || hasControl(k) {
			return Errorf(EInvalid, "request param name %q is not valid", k)
		}
	}
	return nil
}

func isWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// storedRequest is a Request as a store keeps it: the caller-facing JSON,
// plus the flags only warden's own code sets (which DecodeRequest never
// reads from a caller).
type storedRequest struct {
	*Request
	StoredProtective bool `json:"protective,omitempty"`
}

// EncodeStoredRequest encodes r for a store, keeping Protective, so that a
// request read back (e.g. an approval's, re-checked when a human answers)
// is judged as it was asked. Only stores use it: what they hold was written
// by warden, never by a caller.
func EncodeStoredRequest(r *Request) ([]byte, error) {
	return json.Marshal(storedRequest{Request: r, StoredProtective: r.Protective})
}

// DecodeStoredRequest reads what EncodeStoredRequest wrote (and the plain
// JSON that older stores hold).
func DecodeStoredRequest(data []byte, r *Request) error {
	s := storedRequest{Request: r}
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	r.Protective = s.StoredProtective
	return nil
}
