package redact

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestMemoIsString: Repeated's memo answers exactly what String does, the first
// time and from memory, for clean text and for text with a secret.
func TestMemoIsString(t *testing.T) {
	var m memo
	for _, s := range append(stringSeeds(), "", "127.0.0.1:8080 is in network.allowed_domains", strings.Repeat("x", memoMaxLen+1)) {
		for round := range 3 {
			if got, want := m.String(s), String(s); got != want {
				t.Fatalf("round %d: memo.String(%q) = %q, want %q", round, s, got, want)
			}
		}
	}
}

// TestMemoKeepsNoSecret: what the memo holds is text String left unchanged,
// so it never holds a secret; text String masks is redacted again each
// time, and a secret is never answered from memory.
func TestMemoKeepsNoSecret(t *testing.T) {
	var m memo
	for _, secret := range plantable() {
		s := "token " + secret + " in a reason"
		if got := m.String(s); strings.Contains(got, secret) {
			t.Fatalf("memo.String(%q) = %q, which holds the secret", s, got)
		}
		if got := m.String(s); strings.Contains(got, secret) {
			t.Fatalf("memo.String(%q) the second time = %q, which holds the secret", s, got)
		}
	}
	m.clean.Range(func(k, _ any) bool {
		if s := k.(string); String(s) != s {
			t.Errorf("the memo holds %q, which String changes to %q", s, String(s))
		}
		return true
	})
}

// TestMemoIsBounded: however many distinct strings pass through, a Memo
// holds about memoEntries of them, from any number of goroutines.
func TestMemoIsBounded(t *testing.T) {
	var m memo
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 * memoEntries {
				s := fmt.Sprintf("reason %d of goroutine %d", i, g)
				if got := m.String(s); got != s {
					t.Errorf("memo.String(%q) = %q", s, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	m.clean.Range(func(_, _ any) bool { n++; return true })
	if n > memoEntries+8 {
		t.Fatalf("the memo holds %d strings, want at most %d", n, memoEntries+8)
	}
}

// TestMemoKeepsACopy: a short clean string cut from a long one is kept as a
// copy of its own, so the memo's bound (memoEntries strings of at most
// memoMaxLen bytes) is what it holds, not memoEntries long strings kept
// alive by their slices.
func TestMemoKeepsACopy(t *testing.T) {
	var m memo
	long := strings.Repeat("allowed by network.allowed_domains ", 1<<14)
	s := long[:100]
	if got := m.String(s); got != s {
		t.Fatalf("memo.String(%q) = %q", s, got)
	}
	m.clean.Range(func(k, _ any) bool {
		if kept := k.(string); unsafe.StringData(kept) == unsafe.StringData(s) {
			t.Errorf("the memo keeps %q in the %d bytes of the string it was cut from", kept, len(long))
		}
		return true
	})
}

func FuzzRepeated(f *testing.F) {
	for _, s := range stringSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := String(s)
		for range 2 {
			if got := Repeated(s); got != want {
				t.Fatalf("Repeated(%q) = %q, want %q", s, got, want)
			}
		}
	})
}
