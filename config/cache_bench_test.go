package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bigFile is the default policy file with rules more filesystem and network
// rules, half allowed and half denied (as app's policy-size benchmark).
func bigFile(rules int) []byte {
	s := string(DefaultFile())
	half := rules / 2
	var b strings.Builder
	for i := range half {
		fmt.Fprintf(&b, "    - path: \"~/projects/p%d/**\"\n      actions: [read, list]\n      level: auto\n", i)
	}
	s = strings.Replace(s, "  allowed_paths:\n", "  allowed_paths:\n"+b.String(), 1)
	list := func(format string, n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(format, i)
		}
		return strings.Join(items, ", ")
	}
	s = regexp.MustCompile(`(?m)^  denied_paths: \[`).ReplaceAllLiteralString(s, "  denied_paths: ["+list(`"~/private/d%d/**"`, rules-half)+", ")
	s = regexp.MustCompile(`(?m)^  allowed_domains: \[`).ReplaceAllLiteralString(s, "  allowed_domains: ["+list("api%d.example.com", half)+", ")
	s = regexp.MustCompile(`(?m)^  denied_domains: \[\]`).ReplaceAllLiteralString(s, "  denied_domains: ["+list(`"*.bad%d.example.net"`, rules-half)+"]")
	return []byte(s)
}

// BenchmarkLoadCached is what every one-shot process pays for its policy:
// the file read and hashed, the cache read, checked and decoded. With 2,000
// rules more it should cost little more than the default.
//
//	go test -run XXX -bench LoadCachedSize -count 5 ./config/
func BenchmarkLoadCachedSize(b *testing.B) {
	for _, rules := range []int{0, 2000} {
		name := "default"
		data := DefaultFile()
		if rules > 0 {
			name, data = fmt.Sprintf("rules=%d", rules), bigFile(rules)
		}
		b.Run(name, func(b *testing.B) {
			p := writeFile(b, data)
			cache := filepath.Join(b.TempDir(), "policy.cache")
			want, _, err := LoadCached(p, cache)
			if err != nil {
				b.Fatal(err)
			}
			if rules > 0 && len(want.Network.Allowed) < rules/2 {
				b.Fatalf("the big policy has %d allowed domains, want over %d", len(want.Network.Allowed), rules/2)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := LoadCached(p, cache); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
