package signing

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// parseMessage reads a personal_sign message. A string of 0x and hex digits
// is the bytes it spells (hex true), as wallets read it; an odd number of
// digits is an error rather than a guess. Anything else is UTF-8 text.
func parseMessage(raw json.RawMessage) (msg []byte, hex bool, err error) {
	s, err := parseString(keyMessage, raw)
	if err != nil {
		return nil, false, err
	}
	if isHexMessage(s) {
		b, err := hexBytes(keyMessage, s, MaxMessageBytes)
		return b, true, err
	}
	if len(s) > MaxMessageBytes {
		return nil, false, invalid("message is %d bytes; at most %d are accepted", len(s), MaxMessageBytes)
	}
	return []byte(s), false, nil
}

// isHexMessage reports whether a personal_sign message spells bytes in hex:
// 0x and nothing but hex digits.
func isHexMessage(s string) bool {
	digits, ok := strings.CutPrefix(s, "0x")
	return ok && (digits == "" || allDigits(digits, isHex))
}

// Readable reports whether msg is text a person can read before signing it:
// valid UTF-8, not blank, free of control characters other than \n, \r and
// \t and of the bidirectional overrides that reorder what is shown, and not
// a bare hex or base64-looking blob (such as a 32-byte hash given as
// "0x…" text). The zero value (empty) is not readable.
func Readable(msg []byte) bool {
	if !utf8.Valid(msg) {
		return false
	}
	text := strings.TrimSpace(string(msg))
	if text == "" {
		return false
	}
	for _, r := range string(msg) {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' || isBidiControl(r) {
			return false
		}
	}
	return !isBlob(text)
}

// isBidiControl reports the explicit bidirectional embeddings, overrides
// and isolates (U+202A–U+202E, U+2066–U+2069): they make the text shown
// differ from the text signed.
func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// isBlob reports whether text is one opaque token: 0x and hex digits, 16 or
// more bare hex digits, or 20 or more base64 characters mixing letters and
// digits. A sentence that merely contains such a token is not a blob.
func isBlob(text string) bool {
	if strings.ContainsFunc(text, unicode.IsSpace) {
		return false
	}
	if digits, ok := strings.CutPrefix(strings.ToLower(text), "0x"); ok && (digits == "" || allDigits(digits, isHex)) {
		return true
	}
	if len(text) >= 16 && allDigits(text, isHex) {
		return true
	}
	body := strings.TrimRight(text, "=")
	if len(body) < 20 || len(text)-len(body) > 2 || !allDigits(body, isBase64) {
		return false
	}
	return strings.ContainsFunc(body, unicode.IsDigit) && strings.ContainsFunc(body, unicode.IsLetter)
}

func isBase64(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDecimal(c) || c == '+' || c == '/' || c == '-' || c == '_'
}

// SIWE is a Sign-In with Ethereum (EIP-4361) message. Fields the struct
// does not hold (the statement, Not Before, Request ID, Resources) are
// checked and dropped. The zero value is not a sign-in.
type SIWE struct {
	// Domain is the authority (host and optional port) asking for the
	// sign-in, without the scheme.
	Domain  string
	Address Address
	URI     string
	// Version is always "1".
	Version string
	ChainID int64
	Nonce   string
	// IssuedAt and ExpirationTime are RFC 3339 times as written;
	// ExpirationTime is "" when the message has none.
	IssuedAt, ExpirationTime string
}

const siwePreamble = " wants you to sign in with your Ethereum account:"

// ParseSIWE reads text as an EIP-4361 message:
//
//	<domain> wants you to sign in with your Ethereum account:
//	<address>
//
//	[<statement>
//	]
//	URI: <uri>
//	Version: 1
//	Chain ID: <chain id>
//	Nonce: <nonce>
//	Issued At: <RFC 3339 time>
//	[Expiration Time: …][Not Before: …][Request ID: …][Resources: - …]
//
// with the fields in that order and lines ended by \n. ok is false, and the
// SIWE nil, for any text that is not such a message, so the caller treats
// it as an ordinary message.
func ParseSIWE(text string) (*SIWE, bool) {
	lines := strings.Split(text, "\n")
	head, ok := strings.CutSuffix(lines[0], siwePreamble)
	if !ok || len(lines) < 8 {
		return nil, false
	}
	if scheme, rest, found := strings.Cut(head, "://"); found {
		if !validScheme(scheme) {
			return nil, false
		}
		head = rest
	}
	if !validAuthority(head) {
		return nil, false
	}
	s := &SIWE{Domain: head}
	addr, err := ParseAddress(lines[1])
	if err != nil || lines[2] != "" {
		return nil, false
	}
	s.Address = addr
	rest := lines[3:]
	// An optional statement line, with a blank line before (EIP-4361's
	// current form) or after it; a message without one may have one blank
	// line or two.
	if len(rest) > 0 && rest[0] == "" {
		rest = rest[1:]
	}
	if len(rest) > 1 && !strings.HasPrefix(rest[0], "URI: ") {
		if rest[1] != "" || !Readable([]byte(rest[0])) {
			return nil, false
		}
		rest = rest[2:]
	}
	var chainID string
	required := []struct {
		prefix string
		dst    *string
	}{{"URI: ", &s.URI}, {"Version: ", &s.Version}, {"Chain ID: ", &chainID}, {"Nonce: ", &s.Nonce}, {"Issued At: ", &s.IssuedAt}}
	for _, f := range required {
		if len(rest) == 0 {
			return nil, false
		}
		v, ok := strings.CutPrefix(rest[0], f.prefix)
		if !ok || v == "" {
			return nil, false
		}
		*f.dst, rest = v, rest[1:]
	}
	if s.Version != "1" || !validURI(s.URI) || !validNonce(s.Nonce) || !validTime(s.IssuedAt) {
		return nil, false
	}
	if s.ChainID, ok = chainIDOf(chainID); !ok {
		return nil, false
	}
	if !siweOptional(s, rest) {
		return nil, false
	}
	return s, true
}

// siweOptional reads the optional trailing fields, in order.
func siweOptional(s *SIWE, rest []string) bool {
	if v, ok := strings.CutPrefix(first(rest), "Expiration Time: "); ok {
		if !validTime(v) {
			return false
		}
		s.ExpirationTime, rest = v, rest[1:]
	}
	if v, ok := strings.CutPrefix(first(rest), "Not Before: "); ok {
		if !validTime(v) {
			return false
		}
		rest = rest[1:]
	}
	if v, ok := strings.CutPrefix(first(rest), "Request ID: "); ok {
		if !Readable([]byte(v)) {
			return false
		}
		rest = rest[1:]
	}
	if first(rest) == "Resources:" {
		rest = rest[1:]
		for len(rest) > 0 {
			v, ok := strings.CutPrefix(rest[0], "- ")
			if !ok || !validURI(v) {
				return false
			}
			rest = rest[1:]
		}
	}
	return len(rest) == 0
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// validAuthority accepts a host with an optional port: no whitespace,
// slash, query or user info.
func validAuthority(s string) bool {
	return s != "" && len(s) <= 255 && !strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("/?#@\\", r) || r > unicode.MaxASCII
	})
}

// validURI accepts an absolute URI: a scheme, a colon and printable ASCII
// without spaces.
func validURI(s string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || !validScheme(scheme) || rest == "" || len(s) > 2048 {
		return false
	}
	return !strings.ContainsFunc(rest, func(r rune) bool { return r <= ' ' || r >= 0x7f })
}

// validScheme accepts a URI scheme (RFC 3986): a letter, then letters,
// digits, +, - and dots.
func validScheme(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (isDecimal(c) || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// validNonce accepts EIP-4361's nonce: at least 8 letters and digits.
func validNonce(s string) bool {
	return len(s) >= 8 && len(s) <= 128 && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// chainIDOf reads a positive decimal chain id.
func chainIDOf(s string) (int64, bool) {
	if !allDigits(s, isDecimal) || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
