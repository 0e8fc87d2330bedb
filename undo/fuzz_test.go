package undo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseList: reading for-each-ref's output never panics, and every
// snapshot it returns came from a ref under RefPrefix.
func FuzzParseList(f *testing.F) {
	f.Add("refs/warden/undo/a\x00abc\x001700000000\x00def\x00warden undo: x\n\nWarden-Command: git reset --hard\nWarden-Head: 123\n\x00\x00")
	f.Add("refs/heads/main\x00abc\x00x\x00y\x00z\x00\x00")
	f.Add("\x00\x00\x00\x00")
	f.Fuzz(func(t *testing.T, out string) {
		for _, s := range parseList(out) {
			if !strings.Contains(out, RefPrefix+s.ID) {
				t.Errorf("parseList(%q) returned %q, which no ref under %s names", out, s.ID, RefPrefix)
			}
		}
	})
}

// FuzzOneLine: oneLine's result has no line break, stays within its bound
// (plus the ellipsis) and is valid UTF-8 when its input is.
func FuzzOneLine(f *testing.F) {
	f.Add("git reset --hard\nrm -rf x", 10)
	f.Add("héllo", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := oneLine(s, n)
		if strings.ContainsAny(got, "\r\n") {
			t.Errorf("oneLine(%q, %d) = %q has a line break", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Errorf("oneLine(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if len(got) > max(n, 0)+len("…") && len(got) > len(strings.ReplaceAll(strings.ReplaceAll(s, "\r", ""), "\n", "⏎")) {
			t.Errorf("oneLine(%q, %d) = %q is too long", s, n, got)
		}
	})
}

// FuzzValidID: a valid id is a safe ref name component.
func FuzzValidID(f *testing.F) {
	f.Add("20261128-030000.000000-abcd1234")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, id string) {
		if ValidID(id) && (strings.ContainsAny(id, "/\\ :~^?*[") || strings.Contains(id, "..") || strings.HasPrefix(id, ".") || strings.HasPrefix(id, "-")) {
			t.Errorf("ValidID(%q) = true", id)
		}
	})
}
