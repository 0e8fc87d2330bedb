package fsguard

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// benchGuard builds a guard with n allowed rules and n denied patterns of
// the shapes people write, none of which matches the benchmark's path
// except, when last is set, the final allowed rule.
func benchGuard(b *testing.B, n int, last bool) (*Guard, target) {
	b.Helper()
	g, err := New(benchPolicy(b, n, last))
	if err != nil {
		b.Fatal(err)
	}
	p := "/home/bench/project/internal/server/handler.go"
	return g, target{lexical: p, real: p}
}

// benchPolicy is benchGuard's policy.
func benchPolicy(b *testing.B, n int, last bool) Policy {
	root := b.TempDir()
	var allowed []Rule
	var denied []string
	for i := range n {
		switch i % 4 {
		case 0:
			allowed = append(allowed, Rule{Pattern: fmt.Sprintf("/srv/app%d/**", i), Actions: []Action{Read}, Level: Auto})
			denied = append(denied, fmt.Sprintf("/srv/app%d/secrets/**", i))
		case 1:
			allowed = append(allowed, Rule{Pattern: fmt.Sprintf("~/work/proj%d/src/**/*.go", i), Actions: []Action{Read, Write}, Level: Ask})
			denied = append(denied, fmt.Sprintf("~/.config/tool%d/**", i))
		case 2:
			allowed = append(allowed, Rule{Pattern: fmt.Sprintf("/data/set%d/*.csv", i), Actions: []Action{Read, List}, Level: Auto})
			denied = append(denied, fmt.Sprintf("**/.secret%d", i))
		default:
			allowed = append(allowed, Rule{Pattern: fmt.Sprintf("docs%d/**/*.{md,txt}", i), Actions: []Action{Read}, Level: Auto})
			denied = append(denied, fmt.Sprintf("/opt/vendor%d/**", i))
		}
	}
	if last {
		allowed[len(allowed)-1] = Rule{Pattern: "/home/bench/project/**", Actions: []Action{Read}, Level: Auto}
	}
	return Policy{Workspace: root + "/ws", Allowed: allowed, Denied: denied, WardenHome: root + "/warden", UserHome: "/home/bench"}
}

// BenchmarkRules measures rule evaluation alone (denied paths, warden's home,
// workspace, allowed rules) on a path already resolved: the cost that grows
// with the policy. "match" puts the matching rule last; "none" matches none.
func BenchmarkRules(b *testing.B) {
	for _, n := range []int{10, 1000} {
		for _, last := range []bool{true, false} {
			name := fmt.Sprintf("rules=%d/none", n)
			want := warden.Deny
			if last {
				name = fmt.Sprintf("rules=%d/match", n)
				want = warden.Allow
			}
			b.Run(name, func(b *testing.B) {
				g, tg := benchGuard(b, n, last)
				i := actionIndex(Read)
				b.ReportAllocs()
				for b.Loop() {
					if _, denied := g.denial(tg); denied {
						b.Fatal("denied")
					}
					if d := g.allowance(i, tg, ""); d.Verdict != want {
						b.Fatalf("verdict %s (%s)", d.Verdict, d.Reason)
					}
				}
			})
		}
	}
}

// BenchmarkDecide measures a whole decision on the default policy, path
// resolution (one lstat per component) included.
func BenchmarkDecide(b *testing.B) {
	w := newWorld(b)
	for _, c := range []struct{ name, path string }{
		{"project", "src/main.go"},
		{"workspace", w.workspace + "/notes.txt"},
		{"denied", "~/.ssh/id_ed25519"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w.g.Decide(Read, c.path, w.project)
			}
		})
	}
}

// BenchmarkNew measures compiling a policy of n allowed rules and n denied
// patterns (benchGuard's shapes): what a one-shot filesystem decision pays
// before it judges its path.
//
//	go test -run XXX -bench 'BenchmarkNew$' ./fsguard/
func BenchmarkNew(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			p := benchPolicy(b, n, false)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewCached is BenchmarkNew through the compiled-rules cache, as a
// one-shot process finds it written by the one before: read the file, check
// it against the policy, lstat what resolution asked, and the homes and
// workspace resolved as New does. "compile" is New for the same policy.
//
//	go test -run XXX -bench 'BenchmarkNewCached' ./fsguard/
func BenchmarkNewCached(b *testing.B) {
	if !stampsSupported {
		b.Skip("the compiled-rules cache reads change times on Linux only")
	}
	old := cacheRacy
	cacheRacy = 0 // the policy's directories are made just before
	b.Cleanup(func() { cacheRacy = old })
	for _, n := range []int{10, 1000} {
		p := benchPolicy(b, n, false)
		path := b.TempDir() + "/fsguard"
		time.Sleep(10 * time.Millisecond) // a tick of the coarse clock
		if _, hit, err := newCached(p, path, "bench"); err != nil || hit {
			b.Fatal(err, hit)
		}
		b.Run(fmt.Sprintf("rules=%d/cached", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, hit, err := newCached(p, path, "bench"); err != nil || !hit {
					b.Fatal("not from the cache", err)
				}
			}
		})
		b.Run(fmt.Sprintf("rules=%d/compile", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
