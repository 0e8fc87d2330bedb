package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLinear feeds inputs that make a naive scanner rescan the rest of the text
// at every position. Each must finish far inside the bound; a quadratic scan
// takes tens of seconds at this size.
func TestLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("slow inputs skipped in -short mode")
	}
	const n = 100_000
	hex := strings.Repeat("a", 64)
	texts := map[string]string{
		"prefix-chain": strings.Repeat("sk-", n/3),
		"prefix-long":  "sk-" + strings.Repeat("a", n),
		"jwt-chain":    strings.Repeat("eyJaaaaaaaaaaaa-", n/16),
		"pair-chain":   "token=" + strings.Repeat("token=", n/6),
		"glued-chain":  strings.Repeat("password:", n/9),
		"line-chain":   strings.Repeat("password: a ", n/12),
		"many-spans":   strings.Repeat("token=abc1 sk-"+strings.Repeat("A1", 12)+" ", n/40),
		"flags":        strings.Repeat("--password x ", n/13),
		"hex-hints":    "key " + strings.Repeat(hex+" ", n/65),
		"pem-begins":   strings.Repeat("-----BEGIN PRIVATE KEY-----", n/27),
		"mnemonic":     strings.Repeat("abandon ", n/8),
		"userinfo":     strings.Repeat("a://b:c@", n/8),
		"quoted-keys":  strings.Repeat(`"secret":`, n/9),
		"long-key":     strings.Repeat("a", n) + "=x",
	}
	docs := map[string]string{
		"nested-tokens": strings.Repeat(`{"token":`, 5000) + `"x"` + strings.Repeat(`,"symbol":"X"}`, 5000),
		"nested-arrays": strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000),
		"many-strings":  "[" + strings.Repeat(`"token=abc1 x",`, n/15) + `""]`,
	}
	const bound = 2 * time.Second
	for name, s := range texts {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			String(s)
			if d := time.Since(start); d > bound {
				t.Errorf("String(%d bytes of %s) took %v, want under %v", len(s), name, d, bound)
			}
		})
	}
	for name, s := range docs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out := JSON(json.RawMessage(s))
			if d := time.Since(start); d > bound {
				t.Errorf("JSON(%d bytes of %s) took %v, want under %v", len(s), name, d, bound)
			}
			if !json.Valid(out) {
				t.Errorf("JSON(%s) is not valid JSON", name)
			}
		})
	}
}
