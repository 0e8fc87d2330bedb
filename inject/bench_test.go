package inject

import (
	"strings"
	"testing"
)

// benchText is size bytes of ordinary tool output (an email and a table, with
// some non-ASCII), the common case the scanner must be fast on.
func benchText(size int) string {
	const para = "Hi David, your card ending 4605 was charged $373.52 at Café Mercury on 22 Feb. " +
		"If this transaction is in error, you can raise a dispute at mercury.com. | item | qty | price |\n" +
		"Meeting notes — the quarterly report is attached; please review the numbers before Monday. 😊\n"
	return strings.Repeat(para, size/len(para)+1)[:size]
}

func benchmarkScan(b *testing.B, size int) {
	s, err := NewScanner(Options{})
	if err != nil {
		b.Fatal(err)
	}
	text := benchText(size)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		s.Scan(text)
	}
}

func BenchmarkScan1KB(b *testing.B)   { benchmarkScan(b, 1<<10) }
func BenchmarkScan100KB(b *testing.B) { benchmarkScan(b, 100<<10) }

func BenchmarkSanitize100KB(b *testing.B) {
	text := benchText(100 << 10)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Sanitize(text)
	}
}
