package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	a39 := strings.Repeat("a", 39)
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"empty", "", 5, ""},
		{"empty, n 0", "", 0, ""},
		{"empty, n negative", "", -1, ""},
		{"shorter", "ab", 5, "ab"},
		{"exactly n", "abc", 3, "abc"},
		{"one over", "abcd", 3, "abc…"},
		{"exactly n runes, more bytes than n", "héllo", 5, "héllo"},
		{"cut after a two-byte rune", "héllo", 2, "hé…"},
		{"two-byte rune straddles byte 40", a39 + "é" + "b", 40, a39 + "é…"},
		{"two-byte rune just after the cut", a39 + "éb", 39, a39 + "…"},
		{"three-byte runes", "日本語テキスト", 3, "日本語…"},
		{"four-byte runes", "😀😀😀", 2, "😀😀…"},
		{"combining mark counts as a rune", "e\u0301e\u0301", 1, "e…"},
		{"invalid byte replaced", "a\xffb", 5, "a\uFFFDb"},
		{"invalid run is one rune", "a\xff\xfeb", 3, "a\uFFFDb"},
		{"cut after an invalid run", "a\xff\xfeb", 2, "a\uFFFD…"},
		{"invalid run at the cut", "abc\xff\xffdef", 4, "abc\uFFFD…"},
		{"truncated rune at the end", "ab\xe2\x80", 10, "ab\uFFFD"},
		{"truncated rune at the cut", "ab\xe2\x80cd", 3, "ab\uFFFD…"},
		{"real U+FFFD then invalid byte", "\uFFFD\xff", 1, "\uFFFD…"},
		{"n 0", "abc", 0, "…"},
		{"n negative", "abc", -3, "…"},
		{"n 0, invalid only", "\xff", 0, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.s, tt.n)
			if got != tt.want {
				t.Errorf("String(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("String(%q, %d) = %q is not valid UTF-8", tt.s, tt.n, got)
			}
		})
	}
}

// TestStringAllocs: a valid string that needs no cut comes back without a
// copy, however long it is.
func TestStringAllocs(t *testing.T) {
	long := strings.Repeat("日本語", 10_000)
	for _, tt := range []struct {
		s string
		n int
	}{{"hello", 40}, {long, 30_000}, {long, 1 << 20}} {
		if allocs := testing.AllocsPerRun(10, func() { _ = String(tt.s, tt.n) }); allocs != 0 {
			t.Errorf("String of %d bytes, n %d: %v allocations, want 0", len(tt.s), tt.n, allocs)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", "héllo", "日本語テキスト", "😀😀😀", "a\xff\xfeb", "ab\xe2\x80cd", "\uFFFD\xff", strings.Repeat("é", 30)} {
		for _, n := range []int{-1, 0, 1, 2, 3, 5, 40} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := String(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("String(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		keep := max(n, 0)
		if c := utf8.RuneCountInString(got); c > keep+1 {
			t.Fatalf("String(%q, %d) = %q has %d runes, want at most %d", s, n, got, c, keep+1)
		}
		valid := strings.ToValidUTF8(s, "\uFFFD")
		if valid == "" || utf8.RuneCountInString(valid) <= keep {
			if got != valid {
				t.Fatalf("String(%q, %d) = %q, want it whole: %q", s, n, got, valid)
			}
			return
		}
		head, cut := strings.CutSuffix(got, "…")
		if !cut {
			t.Fatalf("String(%q, %d) = %q was cut without an ellipsis", s, n, got)
		}
		if !strings.HasPrefix(valid, head) {
			t.Fatalf("String(%q, %d) = %q is not a prefix of %q and an ellipsis", s, n, got, valid)
		}
		if c := utf8.RuneCountInString(head); c != keep {
			t.Fatalf("String(%q, %d) = %q keeps %d runes, want %d", s, n, got, c, keep)
		}
	})
}
