package redact

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// maskJSON is Mask as a JSON string.
const maskJSON = `"` + Mask + `"`

// JSON returns a redacted copy of a JSON document. The value under a secret
// key (see IsSecretKey), whatever its type, becomes the string Mask. Only a
// coin under a bare "token" key (a ticker symbol, a contract address, or an
// object with a symbol or address, whose members are then judged by their own
// keys) and an integer under a seed key ({"seed": 42}, a sampling seed) stay,
// since neither can be a credential. Every other string value is passed through
// String. Object keys, numbers, key order and white space are kept byte for
// byte, and raw itself is returned when nothing changes. If raw is not valid
// JSON the result is String(string(raw)) encoded as a JSON string, so the
// output is always valid JSON; the one exception is empty input, which returns
// empty output. JSON is idempotent.
func JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		return appendQuoted(nil, String(string(raw)))
	}
	w := walker{src: string(raw)}
	w.value(w.space(0), notSecret)
	if w.out == nil {
		return raw
	}
	return append(w.out, w.src[w.at:]...)
}

// walker copies a valid JSON document, replacing some values. out stays nil
// until the first replacement; at is how much of src has been copied.
type walker struct {
	src string
	out []byte
	at  int
}

// replace substitutes repl for src[lo:hi]; quote says to write repl as a JSON
// string.
func (w *walker) replace(lo, hi int, repl string, quote bool) {
	if w.out == nil {
		w.out = make([]byte, 0, len(w.src)+len(repl)+2)
	}
	w.out = append(w.out, w.src[w.at:lo]...)
	if quote {
		w.out = appendQuoted(w.out, repl)
	} else {
		w.out = append(w.out, repl...)
	}
	w.at = hi
}

// value walks the value at src[i], held under a key of kind k, and returns
// the index just past it.
func (w *walker) value(i int, k keyKind) int {
	if k == bareToken && w.src[i] == '{' && w.coinObject(i) {
		k = notSecret // its members are judged by their own keys
	}
	if k != notSecret {
		end := w.skip(i)
		v := w.src[i:end]
		if v[0] == '"' {
			v = decodeString(v)
		}
		if v != Mask && secretValue(k, v) {
			w.replace(i, end, maskJSON, false)
		}
		return end
	}
	switch w.src[i] {
	case '{':
		named := w.namedSecret(i)
		i = w.space(i + 1)
		for w.src[i] != '}' {
			end := w.stringEnd(i)
			key := decodeString(w.src[i:end])
			i = w.space(end)
			i = w.space(i + 1) // ':'
			kind := classify(key)
			if named != notSecret && kind == notSecret && isValueKey(key) {
				kind = named
			}
			i = w.space(w.value(i, kind))
			if w.src[i] == ',' {
				i = w.space(i + 1)
			}
		}
		return i + 1
	case '[':
		i = w.space(i + 1)
		for w.src[i] != ']' {
			i = w.space(w.value(i, notSecret))
			if w.src[i] == ',' {
				i = w.space(i + 1)
			}
		}
		return i + 1
	case '"':
		end := w.stringEnd(i)
		s := decodeString(w.src[i:end])
		if r := String(s); r != s {
			w.replace(i, end, r, true)
		}
		return end
	}
	return w.skip(i)
}

// coinObject reports whether the object at src[i] describes a coin, as in
// {"token": {"symbol": "USDC", "address": "0x..."}}: one of its own keys is
// symbol, ticker, address, mint, contract or decimals. Only members before
// the first object or array member are looked at, so that nested tokens are
// not scanned again at every level.
func (w *walker) coinObject(i int) bool {
	i = w.space(i + 1)
	for w.src[i] != '}' {
		end := w.stringEnd(i)
		switch strings.ToLower(decodeString(w.src[i:end])) {
		case "symbol", "ticker", "address", "mint", "contract", "decimals":
			return true
		}
		i = w.space(w.space(end) + 1)
		if w.src[i] == '{' || w.src[i] == '[' {
			return false
		}
		i = w.space(w.skip(i))
		if w.src[i] == ',' {
			i = w.space(i + 1)
		}
	}
	return false
}

// namedSecret returns the kind of secret an object at src[i] names in a
// "key" or "name" member, as in {"key": "approvals.telegram.token", "value":
// "..."}, {"name": "API_TOKEN", "value": "..."} (an environment list) or
// {"name": "Authorization", "value": "..."} (a header list): its value
// member is then that secret's. notSecret when it names none. Only members
// before the first object or array member are looked at.
func (w *walker) namedSecret(i int) keyKind {
	i = w.space(i + 1)
	for w.src[i] != '}' {
		end := w.stringEnd(i)
		member := strings.ToLower(decodeString(w.src[i:end]))
		i = w.space(w.space(end) + 1)
		if w.src[i] == '{' || w.src[i] == '[' {
			return notSecret
		}
		vend := w.skip(i)
		if (member == "key" || member == "name") && w.src[i] == '"' {
			if k := classify(decodeString(w.src[i:vend])); k != notSecret {
				return k
			}
		}
		i = w.space(vend)
		if w.src[i] == ',' {
			i = w.space(i + 1)
		}
	}
	return notSecret
}

// isValueKey reports whether key holds the value of a named pair.
func isValueKey(key string) bool {
	switch strings.ToLower(key) {
	case "value", "val", "secret_value", "new", "new_value":
		return true
	}
	return false
}

// skip returns the index just past the value at src[i].
func (w *walker) skip(i int) int {
	switch w.src[i] {
	case '"':
		return w.stringEnd(i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch w.src[i] {
			case '"':
				i = w.stringEnd(i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(w.src) && !endsLiteral(w.src[i]) {
		i++
	}
	return i
}

// endsLiteral reports whether c ends a JSON number, true, false or null.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// stringEnd returns the index just past the string that starts at src[i].
func (w *walker) stringEnd(i int) int {
	for i++; ; i++ {
		switch w.src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// space returns the index of the first non-space byte at or after src[i].
func (w *walker) space(i int) int {
	for i < len(w.src) && (w.src[i] == ' ' || w.src[i] == '\t' || w.src[i] == '\r' || w.src[i] == '\n') {
		i++
	}
	return i
}

// decodeString returns the content of the valid JSON string literal q.
func decodeString(q string) string {
	if strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	var s string
	if err := json.Unmarshal([]byte(q), &s); err != nil {
		return q[1 : len(q)-1] // unreachable: q was validated
	}
	return s
}

// appendQuoted appends s to dst as a JSON string. Invalid UTF-8 becomes
// U+FFFD; '<', '>' and '&' are not escaped.
func appendQuoted(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
