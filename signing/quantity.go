package signing

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Field values as the agent's JSON gives them: quantities, hex byte strings,
// addresses and strings. Every reader names the field in its error, so the
// agent can find what to fix, and none goes through float64.

const (
	// maxDecimalDigits and maxHexDigits bound a uint256 once leading zeros
	// are stripped, so an oversized quantity is refused before big.Int
	// spends time on it.
	maxDecimalDigits = 78
	maxHexDigits     = 64

	quantityHint = `give a non-negative integer: a JSON number, a decimal string such as "1000", or 0x-hex such as "0x3e8"`
)

// invalid is the error of every parser in this package: EInvalid with a
// message in the agent's terms.
func invalid(format string, args ...any) *warden.Error {
	return warden.Errorf(warden.EInvalid, format, args...)
}

// present returns raw trimmed and whether it holds a value: an absent field
// and a JSON null are both "not given".
func present(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	return raw, len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// parseUint reads a quantity of at most bits bits (256 for a uint256, 64
// for a nonce or a gas limit): a JSON integer, a decimal string or a 0x-hex
// string. Negative, fractional, exponent, signed, padded or empty forms, and
// values wider than bits, are errors naming field.
func parseUint(field string, raw json.RawMessage, bits int) (*big.Int, error) {
	raw = bytes.TrimSpace(raw)
	var (
		n   *big.Int
		err error
	)
	switch {
	case len(raw) == 0:
		return nil, invalid("%s is empty", field).WithHint(quantityHint)
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, invalid("%s is not a valid JSON string", field)
		}
		n, err = quantityString(field, s)
	default:
		n, err = quantityNumber(field, string(raw))
	}
	if err != nil {
		return nil, err
	}
	if n.BitLen() > bits {
		return nil, invalid("%s is %s, more than a uint%d holds", field, clip.String(n.String(), 80), bits)
	}
	return n, nil
}

// quantityNumber reads a JSON number that must be a plain integer.
func quantityNumber(field, s string) (*big.Int, error) {
	switch {
	case strings.HasPrefix(s, "-"):
		return nil, invalid("%s is %s: a quantity cannot be negative", field, clip.String(s, 80))
	case s == "true" || s == "false" || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "["):
		return nil, invalid("%s is %s; want a number or a string", field, clip.String(s, 80)).WithHint(quantityHint)
	case scientific(s):
		return nil, invalid("%s is %s: a quantity cannot have an exponent", field, clip.String(s, 80)).WithHint(quantityHint)
	case strings.Contains(s, "."):
		return nil, invalid("%s is %s: a quantity must be a whole number", field, clip.String(s, 80)).WithHint(quantityHint)
	case !allDigits(s, isDecimal) || len(s) > 1 && s[0] == '0':
		return nil, invalid("%s is %s: not a JSON integer", field, clip.String(s, 80)).WithHint(quantityHint)
	}
	return decimal(field, s)
}

// quantityString reads a decimal or 0x-hex string.
func quantityString(field, s string) (*big.Int, error) {
	switch {
	case s == "":
		return nil, invalid("%s is an empty string", field).WithHint(quantityHint)
	case strings.ContainsFunc(s, unicode.IsSpace):
		return nil, invalid("%s is %q: a quantity cannot contain whitespace", field, clip.String(s, 80)).WithHint(quantityHint)
	case s[0] == '-':
		return nil, invalid("%s is %q: a quantity cannot be negative", field, clip.String(s, 80))
	case s[0] == '+':
		return nil, invalid("%s is %q: a quantity has no sign", field, clip.String(s, 80)).WithHint(quantityHint)
	case strings.HasPrefix(s, "0x"):
		digits := s[2:]
		if digits == "" {
			return nil, invalid("%s is \"0x\" with no digits", field).WithHint(`zero is "0x0"`)
		}
		if !allDigits(digits, isHex) {
			return nil, invalid("%s is %q: not 0x followed by hex digits", field, clip.String(s, 80)).WithHint(quantityHint)
		}
		digits = strings.TrimLeft(digits, "0")
		if len(digits) > maxHexDigits {
			return nil, invalid("%s is %q, more than a uint256 holds", field, clip.String(s, 80))
		}
		n, _ := new(big.Int).SetString("0"+digits, 16)
		return n, nil
	case allDigits(s, isDecimal):
		return decimal(field, s)
	case scientific(s):
		return nil, invalid("%s is %q: a quantity cannot have an exponent", field, clip.String(s, 80)).WithHint(quantityHint)
	case strings.Contains(s, "."):
		return nil, invalid("%s is %q: a quantity must be a whole number", field, clip.String(s, 80)).WithHint(quantityHint)
	}
	return nil, invalid("%s is %q: not a decimal or 0x-hex quantity", field, clip.String(s, 80)).WithHint(quantityHint)
}

// scientific reports whether s is a number in exponent form ("1e18",
// "1.5E+3").
func scientific(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 1 || !allDigits(strings.Replace(s[:i], ".", "", 1), isDecimal) {
		return false
	}
	exp := strings.TrimLeft(s[i+1:], "+-")
	return len(s[i+1:])-len(exp) <= 1 && allDigits(exp, isDecimal)
}

// decimal converts a string of decimal digits (leading zeros allowed).
func decimal(field, s string) (*big.Int, error) {
	digits := strings.TrimLeft(s, "0")
	if len(digits) > maxDecimalDigits {
		return nil, invalid("%s is %s, more than a uint256 holds", field, clip.String(s, 80))
	}
	n, _ := new(big.Int).SetString("0"+digits, 10)
	return n, nil
}

func isDecimal(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDecimal(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// allDigits reports whether s is non-empty and every byte passes ok.
func allDigits(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// parseHexBytes reads a 0x-prefixed hex string with an even number of
// digits and at most max bytes. "0x" is empty data (nil).
func parseHexBytes(field string, raw json.RawMessage, max int) ([]byte, error) {
	s, err := parseString(field, raw)
	if err != nil {
		return nil, err
	}
	return hexBytes(field, s, max)
}

// hexBytes decodes s, a 0x-prefixed hex string of at most max bytes.
func hexBytes(field, s string, max int) ([]byte, error) {
	if !strings.HasPrefix(s, "0x") {
		return nil, invalid("%s is %q: hex data must start with 0x", field, clip.String(s, 80))
	}
	digits := s[2:]
	if len(digits)%2 != 0 {
		return nil, invalid("%s has an odd number of hex digits (%d); each byte is two digits", field, len(digits))
	}
	if len(digits)/2 > max {
		return nil, invalid("%s is %d bytes; at most %d are accepted", field, len(digits)/2, max)
	}
	if digits == "" {
		return nil, nil
	}
	if !allDigits(digits, isHex) {
		return nil, invalid("%s is %q: not 0x followed by hex digits", field, clip.String(s, 80))
	}
	b, _ := hex.DecodeString(digits)
	return b, nil
}

// parseString reads a JSON string.
func parseString(field string, raw json.RawMessage) (string, error) {
	var s string
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", invalid("%s must be a JSON string", field)
	}
	return s, nil
}

// parseAddressField reads an address given as a JSON string.
func parseAddressField(field string, raw json.RawMessage) (Address, error) {
	s, err := parseString(field, raw)
	if err != nil {
		return Address{}, err
	}
	a, err := ParseAddress(s)
	if err != nil {
		return Address{}, within(field, err)
	}
	return a, nil
}

// object is a JSON object of the request, read field by field. path names it
// in errors ("tx", "typedData.domain").
type object struct {
	path string
	m    map[string]json.RawMessage
}

// decodeObject reads raw as a JSON object (checkJSON's rules apply).
func decodeObject(path string, raw json.RawMessage) (object, error) {
	raw = bytes.TrimSpace(raw)
	if err := checkJSON(path, raw); err != nil {
		return object{}, err
	}
	if len(raw) == 0 || raw[0] != '{' {
		return object{}, invalid("%s must be a JSON object", path)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return object{}, invalid("%s is not valid JSON", path).Wrap(err)
	}
	return object{path: path, m: m}, nil
}

// field is the path of key, for errors.
func (o object) field(key string) string { return o.path + "." + key }

// get returns key's value; false when it is absent or null.
func (o object) get(key string) (json.RawMessage, bool) { return present(o.m[key]) }

// unknown returns the first key (in sorted order) not in allowed, or "".
func (o object) unknown(allowed ...string) string {
	for _, k := range slices.Sorted(maps.Keys(o.m)) {
		if !slices.Contains(allowed, k) {
			return k
		}
	}
	return ""
}

// only fails on a key not in allowed, naming it.
func (o object) only(allowed ...string) error {
	if k := o.unknown(allowed...); k != "" {
		return invalid("unknown key %q in %s", clip.String(k, 80), o.path).
			WithHint(fmt.Sprintf("%s takes only %s", o.path, strings.Join(allowed, ", ")))
	}
	return nil
}

// quantity reads an optional uint256 of at most bits bits; nil when absent.
func (o object) quantity(key string, bits int) (*big.Int, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	return parseUint(o.field(key), raw, bits)
}

// required reads a uint of at most bits bits that must be given.
func (o object) required(key string, bits int) (*big.Int, error) {
	if _, ok := o.get(key); !ok {
		return nil, invalid("%s is missing", o.field(key))
	}
	return o.quantity(key, bits)
}

// address reads an address that must be given.
func (o object) address(key string) (Address, error) {
	raw, ok := o.get(key)
	if !ok {
		return Address{}, invalid("%s is missing", o.field(key))
	}
	return parseAddressField(o.field(key), raw)
}

// str reads a string; "" when absent, unless it is required.
func (o object) str(key string, required bool) (string, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return "", invalid("%s is missing", o.field(key))
		}
		return "", nil
	}
	return parseString(o.field(key), raw)
}

// array reads key as a JSON array; nil when absent or null.
func (o object) array(key string) ([]json.RawMessage, error) {
	raw, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, invalid("%s must be a JSON array", o.field(key))
	}
	return items, nil
}

// checkJSON accepts raw only if it is one valid JSON value in valid UTF-8,
// nested at most maxDepth deep, with no object holding a key twice: a
// duplicate key is read differently by different parsers (encoding/json
// keeps the last), so what the policy judged could differ from what is
// signed.
func checkJSON(path string, raw []byte) error {
	if !utf8.Valid(raw) {
		return invalid("%s is not valid UTF-8", path)
	}
	type frame struct {
		keys    map[string]bool // nil for an array
		wantKey bool
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return invalid("%s is not valid JSON: %v", path, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			if len(stack) >= maxDepth {
				return invalid("%s is nested more than %d levels deep", path, maxDepth)
			}
			f := frame{wantKey: d == '{'}
			if d == '{' {
				f.keys = map[string]bool{}
			}
			stack = append(stack, f)
			continue
		} else if ok {
			stack = stack[:len(stack)-1]
		} else if n := len(stack); n > 0 && stack[n-1].wantKey {
			key, _ := tok.(string)
			if stack[n-1].keys[key] {
				return invalid("%s holds the key %q twice", path, clip.String(key, 80)).
					WithHint("give each key once: parsers disagree on which duplicate wins")
			}
			stack[n-1].keys[key] = true
			stack[n-1].wantKey = false
			continue
		}
		// A value ended: its object wants the next key, or the document is
		// complete.
		if n := len(stack); n > 0 {
			stack[n-1].wantKey = stack[n-1].keys != nil
			continue
		}
		if _, err := dec.Token(); err != io.EOF {
			return invalid("%s has data after its JSON value", path)
		}
		return nil
	}
}

// compactJSON is raw without insignificant whitespace and with <, >, &,
// U+2028 and U+2029 escaped in strings: the form encoding/json gives a
// json.RawMessage when it marshals one, so a payload kept as received reads
// back byte for byte after the request is stored as JSON.
func compactJSON(path string, raw []byte) (json.RawMessage, error) {
	var compact, escaped bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, invalid("%s is not valid JSON: %v", path, err)
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return escaped.Bytes(), nil
}

// within prefixes err's message with the field it is about, keeping its
// code and hint.
func within(field string, err error) error {
	var e *warden.Error
	if errors.As(err, &e) {
		return &warden.Error{Code: e.Code, Message: field + ": " + e.Message, Hint: e.Hint, Err: e.Err}
	}
	return invalid("%s: %v", field, err)
}
