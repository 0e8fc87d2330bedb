package audit

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

func TestTruncate(t *testing.T) {
	limit := warden.OutputLimit
	keep := limit - len(TruncationMark)
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "short", in: "hello", want: "hello"},
		{name: "exactly the limit", in: strings.Repeat("a", limit), want: strings.Repeat("a", limit)},
		{name: "one over", in: strings.Repeat("a", limit+1), want: strings.Repeat("a", keep) + TruncationMark},
		{name: "rune straddles the cut", in: strings.Repeat("a", keep-1) + "€" + strings.Repeat("b", 100), want: strings.Repeat("a", keep-1) + TruncationMark},
		{name: "rune ends at the cut", in: strings.Repeat("a", keep-3) + "€" + strings.Repeat("b", 100), want: strings.Repeat("a", keep-3) + "€" + TruncationMark},
		{name: "four-byte runes", in: strings.Repeat("😀", 400), want: strings.Repeat("😀", keep/4) + TruncationMark},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Truncate(tc.in); got != tc.want {
				t.Errorf("Truncate(%d bytes) = %d bytes %q…, want %d bytes", len(tc.in), len(got), got[max(0, len(got)-20):], len(tc.want))
			}
		})
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("plain")
	f.Add(strings.Repeat("€", 500))
	f.Add(strings.Repeat("a", 1011) + "😀😀😀")
	f.Add(strings.Repeat("\xff", 2000))
	f.Fuzz(func(t *testing.T, s string) {
		got := Truncate(s)
		if len(got) > warden.OutputLimit {
			t.Fatalf("Truncate gave %d bytes, more than the %d limit", len(got), warden.OutputLimit)
		}
		if len(s) <= warden.OutputLimit {
			if got != s {
				t.Fatalf("Truncate changed an output that fits")
			}
			return
		}
		if !strings.HasSuffix(got, TruncationMark) || !strings.HasPrefix(s, strings.TrimSuffix(got, TruncationMark)) {
			t.Fatalf("Truncate result is not a prefix of the input plus the mark")
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate cut a rune in half")
		}
		if Truncate(got) != got {
			t.Fatalf("Truncate is not idempotent")
		}
	})
}
