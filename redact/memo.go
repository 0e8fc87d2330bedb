package redact

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Repeated is String for text that repeats: the reasons of decisions,
// which a long-lived process (the egress proxy, the daemon) redacts for
// every request although they are mostly the policy's own words ("127.0.0.1:8080 is in network.allowed_domains"). Reading text as
// shell to find secrets costs microseconds a string; a repeated clean
// string costs a map lookup.
//
// It remembers only text in which String found nothing: what it holds is
// exactly what would be stored and shown anyway, never a secret (text that
// String changes is redacted afresh each time, and not kept). It holds at
// most memoEntries copies of strings of at most memoMaxLen bytes each
// (about 256 KiB) and forgets everything when full, so per-request text
// cannot grow it.
// Repeated(s) == String(s) for every s; it is safe for concurrent use.
func Repeated(s string) string { return repeated.String(s) }

var repeated memo

// memo is the set of strings String leaves unchanged, bounded.
type memo struct {
	clean sync.Map // string → struct{}: String(s) == s
	n     atomic.Int32
}

const (
	memoEntries = 1024
	memoMaxLen  = 256
)

// String returns String(s), from memory when s was seen clean before.
func (m *memo) String(s string) string {
	if s == "" {
		return s
	}
	if len(s) > memoMaxLen {
		return String(s)
	}
	if _, ok := m.clean.Load(s); ok {
		return s
	}
	r := String(s)
	if r != s {
		return r
	}
	if m.n.Add(1) > memoEntries {
		m.clean.Clear()
		m.n.Store(1)
	}
	// A copy: s may be a slice of a much longer string (a resource cut
	// from a request's text), which keeping s would keep whole.
	m.clean.Store(strings.Clone(s), struct{}{})
	return s
}
