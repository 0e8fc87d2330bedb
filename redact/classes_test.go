package redact

import (
	"strings"
	"testing"
)

// TestClasses checks the classes table against the definition of each class.
func TestClasses(t *testing.T) {
	defs := []struct {
		name string
		mask byte
		in   func(c byte) bool
	}{
		{"alnum", cAlnum, func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }},
		{"letter", cLetter, func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }},
		{"lower", cLower, func(c byte) bool { return 'a' <= c && c <= 'z' }},
		{"hex", cHex, func(c byte) bool { return strings.IndexByte("0123456789abcdefABCDEF", c) >= 0 }},
		{"listSep", cListSep, func(c byte) bool { return strings.IndexByte(" \t\n\r,.;:\"'()[]0123456789", c) >= 0 }},
		{"name", cName, func(c byte) bool { return is(c, cAlnum) || c == '_' || c == '-' || c == '.' }},
		{"wordEnd", cWordEnd, func(c byte) bool { return strings.IndexByte(" \t\n\r\"'`;&|<>()", c) >= 0 }},
		{"space", cSpace, func(c byte) bool { return strings.IndexByte(" \t\n\r", c) >= 0 }},
	}
	for _, d := range defs {
		t.Run(d.name, func(t *testing.T) {
			for c := 0; c < 256; c++ {
				if got, want := is(byte(c), d.mask), d.in(byte(c)); got != want {
					t.Errorf("is(%q, c%s) = %v, want %v", rune(c), d.name, got, want)
				}
			}
		})
	}
}
