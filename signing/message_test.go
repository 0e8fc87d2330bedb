package signing

import (
	"strconv"
	"strings"
	"testing"
)

type readableCase struct {
	name string
	msg  string
	want bool
}

func readableCases() []readableCase {
	return []readableCase{
		{"sentence", "Sign in to app.example.com", true},
		{"multi-line", "Welcome!\r\nClick to sign in.\n\tNonce: 0xabababababababababababababababababababababababababababababababab", true},
		{"unicode", "Bienvenue à bord 🚀", true},
		{"short word", "hello", true},
		{"hex-letter word", "facade", true},
		{"long word", "internationalization", true},
		{"version", "v1.2.3", true},
		{"empty", "", false},
		{"blank", " \n\t ", false},
		{"invalid UTF-8", "hello \xff", false},
		{"NUL", "hello\x00world", false},
		{"escape", "hello \x1b[2J", false},
		{"DEL", "hello\x7f", false},
		{"C1 control", "hello\u0085", false},
		{"right-to-left override", "pay \u202eevil", false},
		{"isolate", "pay \u2066x\u2069", false},
		{"0x hash as text", "0x" + strings.Repeat("ab", 32), false},
		{"0x hash as text with spaces around", "  0x" + strings.Repeat("ab", 32) + "\n", false},
		{"short 0x", "0x1234", false},
		{"bare 0x", "0x", false},
		{"upper-case 0X", "0X" + strings.Repeat("AB", 20), false},
		{"bare hex", strings.Repeat("cd", 16), false},
		{"15 hex digits", "abcdef012345678", true},
		{"base64", "SGVsbG8sIFdvcmxkIQ0K4oCUZXhhbXBsZQ==", false},
		{"base64url", "eyJhbGciOiJIUzI1NiJ9_eyJzdWIiOjF9-abc", false},
		{"raw bytes", string([]byte{0xab, 0xab, 0xab, 0xab}), false},
	}
}

func TestReadable(t *testing.T) {
	for _, c := range readableCases() {
		t.Run(c.name, func(t *testing.T) {
			if got := Readable([]byte(c.msg)); got != c.want {
				t.Errorf("Readable(%q) = %v, want %v", c.msg, got, c.want)
			}
		})
	}
}

// siwe is the corpus's sign-in message, signed by siweAddr.
const (
	siwe     = "app.example.com wants you to sign in with your Ethereum account:\n0x2c7536E3605D9C16a7a3D7b1898e529396a65c23\n\nURI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: 8f3k2l1a\nIssued At: 2026-11-21T17:00:00Z"
	siweAddr = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
)

// siweCase is a text and what ParseSIWE makes of it: "" for not a SIWE
// message, else domain/chain id/nonce/expiration.
type siweCase struct{ name, text, want string }

func siweCases() []siweCase {
	const addr = siweAddr
	tail := "URI: https://app.example.com\nVersion: 1\nChain ID: 8453\nNonce: 8f3k2l1a\nIssued At: 2026-11-21T17:00:00Z"
	head := "app.example.com wants you to sign in with your Ethereum account:\n" + addr + "\n\n"
	return []siweCase{
		{"the corpus's", siwe, "app.example.com/8453/8f3k2l1a/"},
		{"two blank lines, no statement", head + "\n" + tail, "app.example.com/8453/8f3k2l1a/"},
		{"statement", head + "Sign in to the app.\n\n" + tail, "app.example.com/8453/8f3k2l1a/"},
		{"scheme and port", "https://app.example.com:8443" + siwe[len("app.example.com"):], "app.example.com:8443/8453/8f3k2l1a/"},
		{"lower-case address", strings.Replace(siwe, addr, strings.ToLower(addr), 1), "app.example.com/8453/8f3k2l1a/"},
		{"optional fields", siwe + "\nExpiration Time: 2026-11-21T18:00:00.000Z\nNot Before: 2026-11-21T17:00:00Z\nRequest ID: r-1\nResources:\n- ipfs://bafybeiemxf5abjwjbikoz4mc3a3dla6ual3jsgpdr4cjr3oz3evfyavhwq/\n- https://example.com/my-web2-claim.json", "app.example.com/8453/8f3k2l1a/2026-11-21T18:00:00.000Z"},
		{"expiration only", siwe + "\nExpiration Time: 2026-11-22T00:00:00+01:00", "app.example.com/8453/8f3k2l1a/2026-11-22T00:00:00+01:00"},
		{"plain text", "hello", ""},
		{"empty", "", ""},
		{"wrong preamble", strings.Replace(siwe, "wants you to sign in", "would like you to sign in", 1), ""},
		{"domain with a space", "app example.com" + siwe[len("app.example.com"):], ""},
		{"domain with a path", "app.example.com/login" + siwe[len("app.example.com"):], ""},
		{"domain with user info", "evil@app.example.com" + siwe[len("app.example.com"):], ""},
		{"bad scheme", "1http://app.example.com" + siwe[len("app.example.com"):], ""},
		{"empty domain", siwe[len("app.example.com"):], ""},
		{"bad address", strings.Replace(siwe, addr, "0x1234", 1), ""},
		{"bad address checksum", strings.Replace(siwe, addr, "0x2C7536E3605D9C16a7a3D7b1898e529396a65c23", 1), ""},
		{"no blank line after the address", strings.Replace(siwe, addr+"\n\n", addr+"\n", 1), ""},
		{"statement without a blank line after it", head + "Sign in.\n" + tail, ""},
		{"statement that is a blob", head + "0x" + strings.Repeat("ab", 32) + "\n\n" + tail, ""},
		{"version 2", strings.Replace(siwe, "Version: 1", "Version: 2", 1), ""},
		{"chain id 0", strings.Replace(siwe, "Chain ID: 8453", "Chain ID: 0", 1), ""},
		{"chain id with a sign", strings.Replace(siwe, "Chain ID: 8453", "Chain ID: +8453", 1), ""},
		{"chain id hex", strings.Replace(siwe, "Chain ID: 8453", "Chain ID: 0x2105", 1), ""},
		{"chain id too big", strings.Replace(siwe, "Chain ID: 8453", "Chain ID: 99999999999999999999", 1), ""},
		{"short nonce", strings.Replace(siwe, "8f3k2l1a", "8f3k", 1), ""},
		{"nonce with punctuation", strings.Replace(siwe, "8f3k2l1a", "8f3k-2l1a", 1), ""},
		{"bad issued at", strings.Replace(siwe, "2026-11-21T17:00:00Z", "yesterday", 1), ""},
		{"URI without a scheme", strings.Replace(siwe, "https://app.example.com\n", "app.example.com\n", 1), ""},
		{"fields out of order", strings.Replace(siwe, "Version: 1\nChain ID: 8453", "Chain ID: 8453\nVersion: 1", 1), ""},
		{"missing nonce", strings.Replace(siwe, "Nonce: 8f3k2l1a\n", "", 1), ""},
		{"CRLF line ends", strings.ReplaceAll(siwe, "\n", "\r\n"), ""},
		{"trailing newline", siwe + "\n", ""},
		{"unknown trailing field", siwe + "\nPayment: 1 ETH", ""},
		{"bad expiration", siwe + "\nExpiration Time: soon", ""},
		{"optional fields out of order", siwe + "\nRequest ID: r-1\nExpiration Time: 2026-11-21T18:00:00Z", ""},
		{"bad resource", siwe + "\nResources:\n- not a uri", ""},
	}
}

func TestParseSIWE(t *testing.T) {
	const addr = siweAddr
	for _, c := range siweCases() {
		t.Run(c.name, func(t *testing.T) {
			s, ok := ParseSIWE(c.text)
			if c.want == "" {
				if ok || s != nil {
					t.Fatalf("ParseSIWE(%q) = %+v, %v; want not a SIWE message", c.text, s, ok)
				}
				return
			}
			if !ok {
				t.Fatalf("ParseSIWE(%q) = not a SIWE message; want %s", c.text, c.want)
			}
			if got := s.Domain + "/" + strconv.FormatInt(s.ChainID, 10) + "/" + s.Nonce + "/" + s.ExpirationTime; got != c.want {
				t.Errorf("ParseSIWE(%q) = %s, want %s", c.text, got, c.want)
			}
			if Checksum(s.Address) != addr || s.URI != "https://app.example.com" || s.Version != "1" || s.IssuedAt != "2026-11-21T17:00:00Z" {
				t.Errorf("ParseSIWE(%q) = %+v", c.text, s)
			}
		})
	}
}
