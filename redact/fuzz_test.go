package redact

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// plantable returns the fake secrets in a fixed order.
func plantable() []string {
	names := make([]string, 0, len(fakeSecrets))
	for name := range fakeSecrets {
		names = append(names, name)
	}
	sort.Strings(names)
	secrets := make([]string, len(names))
	for i, name := range names {
		secrets[i] = fakeSecrets[name]
	}
	return secrets
}

// stringSeeds are the inputs of the String table, the fake secrets and a few
// inputs that probe masks next to masks.
func stringSeeds() []string {
	seeds := []string{"PASSWORD=" + Mask + Mask, "token=\"" + Mask}
	for _, c := range stringCases() {
		seeds = append(seeds, c.in)
	}
	return append(seeds, plantable()...)
}

// cleanText turns arbitrary bytes into lowercase words and spaces with "the"
// (not a BIP-39 word) every eight words and no word longer than 20 letters:
// text that holds no secret and must come back unchanged.
func cleanText(s string) string {
	var b strings.Builder
	words, length := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c%5 == 0 || length == 20 {
			b.WriteByte(' ')
			words++
			length = 0
			if words%8 == 0 {
				b.WriteString("the ")
			}
			continue
		}
		b.WriteByte('a' + c%26)
		length++
	}
	return b.String()
}

func FuzzString(f *testing.F) {
	for i, s := range stringSeeds() {
		f.Add(s, uint8(i))
	}
	secrets := plantable()
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		got := String(s)
		if again := String(got); again != got {
			t.Fatalf("String(%q) = %q, but String of that = %q", s, got, again)
		}

		secret := secrets[int(which)%len(secrets)]
		prefix, suffix := s[:len(s)/2], s[len(s)/2:]
		if !strings.Contains(prefix, secret) && !strings.Contains(suffix, secret) {
			in := prefix + " " + secret + " " + suffix
			if out := String(in); strings.Contains(out, secret) {
				t.Fatalf("String(%q) = %q, which still holds the secret", in, out)
			}
		}

		if clean := cleanText(s); String(clean) != clean {
			t.Fatalf("String(%q) = %q, want it unchanged", clean, String(clean))
		}
	})
}

func FuzzJSON(f *testing.F) {
	seeds := []string{`["ok", "\u2028", "a\"b"]`, "\xff\xfe", `{"a":"\xff"}`}
	for _, c := range jsonCases() {
		seeds = append(seeds, c.in)
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	secrets := plantable()
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		got := JSON(raw)
		if len(raw) == 0 {
			if len(got) != 0 {
				t.Fatalf("JSON(%q) = %q, want empty", raw, got)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("JSON(%q) = %q, which is not valid JSON", raw, got)
		}
		if again := JSON(got); string(again) != string(got) {
			t.Fatalf("JSON(%q) = %q, but JSON of that = %q", raw, got, again)
		}

		// Plant a secret in a string value beside the fuzzed document.
		secret := secrets[int(which)%len(secrets)]
		text := string(raw)
		prefix, suffix := text[:len(text)/2], text[len(text)/2:]
		if strings.Contains(text, secret) {
			return
		}
		doc := `{"note":` + string(appendQuoted(nil, prefix+" "+secret+" "+suffix)) + `}`
		out := string(JSON(json.RawMessage(doc)))
		quoted := string(appendQuoted(nil, secret))
		if strings.Contains(out, secret) || strings.Contains(out, quoted[1:len(quoted)-1]) {
			t.Fatalf("JSON(%s) = %s, which still holds the secret", doc, out)
		}
	})
}
