package netguard

import (
	"path/filepath"
	"testing"
)

// BenchmarkNewCached is what a one-shot network check pays for a policy
// with 1,000 allowed and 1,000 denied domain rules more than rulePolicy:
// compiling them (New), or reading them compiled from the cache.
//
//	go test -run XXX -bench 'NewCached|DecideBig' -benchtime 2000x ./netguard/
func BenchmarkNewCached(b *testing.B) {
	p := bigRulePolicy(1000)
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := New(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "netguard")
		if _, _, err := newCached(p, path, "v"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, hit, err := newCached(p, path, "v"); err != nil || !hit {
				b.Fatalf("hit %v, %v", hit, err)
			}
		}
	})
}

// BenchmarkDecideBig is one decision against 1,000 allowed and 1,000 denied
// domain rules more than rulePolicy, for a host the last allowed rule names
// (every rule is scanned).
func BenchmarkDecideBig(b *testing.B) {
	g, err := New(bigRulePolicy(1000))
	if err != nil {
		b.Fatal(err)
	}
	t, err := ParseURL("https://api999.example.com/x")
	if err != nil {
		b.Fatal(err)
	}
	q := Query{Target: t, Method: "GET"}
	b.ReportAllocs()
	for b.Loop() {
		if d := g.Decide(q); d.Rule != "network.allowed_domain" {
			b.Fatal(d.Reason)
		}
	}
}
