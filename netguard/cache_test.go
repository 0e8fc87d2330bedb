package netguard

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/agentwarden/warden/internal/cachefile"
)

// bigRulePolicy is rulePolicy with n allowed and n denied rules more, as the
// policy-size benchmark adds them.
func bigRulePolicy(n int) Policy {
	p := rulePolicy
	p.Allowed = slices.Clone(p.Allowed)
	p.Denied = slices.Clone(p.Denied)
	for i := range n {
		p.Allowed = append(p.Allowed, fmt.Sprintf("api%d.example.com", i))
		p.Denied = append(p.Denied, fmt.Sprintf("*.bad%d.example.net", i))
	}
	return p
}

// sameDecisions fails unless a and b decide every query alike.
func sameDecisions(t *testing.T, what string, a, b *Guard) {
	t.Helper()
	for _, q := range ruleQueries(t) {
		if da, db := a.Decide(q), b.Decide(q); !reflect.DeepEqual(da, db) {
			t.Fatalf("%s: %s %s: %v %s (%s), want %v %s (%s)", what, q.Method, q.Target.Authority(), db.Verdict, db.Reason, db.Rule, da.Verdict, da.Reason, da.Rule)
		}
	}
}

// TestNewCachedIsNew: a guard compiled through the cache, and one read from
// it, are the guard New compiles, and decide every query as it does.
func TestNewCachedIsNew(t *testing.T) {
	empty := Policy{}
	asking := rulePolicy
	asking.AskUnknown = true
	for name, p := range map[string]Policy{"rules": rulePolicy, "asking": asking, "empty": empty, "big": bigRulePolicy(1000)} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache", "netguard")
			want, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			compiled, hit, err := newCached(p, path, "v1")
			if err != nil || hit {
				t.Fatalf("first guard: hit %v, %v; want compiled", hit, err)
			}
			cached, hit, err := newCached(p, path, "v1")
			if err != nil || !hit {
				t.Fatalf("second guard: hit %v, %v; want read from the cache", hit, err)
			}
			if !reflect.DeepEqual(compiled, want) || !reflect.DeepEqual(cached, want) {
				t.Fatalf("the guards differ from New's:\n%+v\n%+v\n%+v", want, compiled, cached)
			}
			sameDecisions(t, "compiled", want, compiled)
			sameDecisions(t, "from the cache", want, cached)
		})
	}
}

// TestNewCachedSeesAnEditedPolicy: after any edit of the rules (one removed,
// added, changed, reordered, moved to the other list, or only respelled so
// that it compiles the same but reads differently) the cache written for the
// old policy is not used, and the guard decides as New's for the new one.
// What the cache does not hold is read from the policy.
func TestNewCachedSeesAnEditedPolicy(t *testing.T) {
	edit := func(f func(p *Policy)) Policy {
		p := rulePolicy
		p.Allowed, p.Denied, p.AllowPrivate = slices.Clone(p.Allowed), slices.Clone(p.Denied), slices.Clone(p.AllowPrivate)
		f(&p)
		return p
	}
	edits := map[string]Policy{
		"denied rule removed":        edit(func(p *Policy) { p.Denied = p.Denied[1:] }),
		"denied rule changed":        edit(func(p *Policy) { p.Denied[0] = "evil.example.co" }),
		"denied rule added":          edit(func(p *Policy) { p.Denied = append(p.Denied, "api.github.com") }),
		"allowed rule's port":        edit(func(p *Policy) { p.Allowed[0] = "api.github.com:443" }),
		"allowed rules swapped":      edit(func(p *Policy) { p.Allowed[1], p.Allowed[2] = p.Allowed[2], p.Allowed[1] }),
		"rule moved to denied":       edit(func(p *Policy) { p.Denied = append(p.Denied, p.Allowed[0]); p.Allowed = p.Allowed[1:] }),
		"rule respelled":             edit(func(p *Policy) { p.Allowed[7] = "docs.example.net" }),
		"last allowed rule dropped":  edit(func(p *Policy) { p.Allowed = p.Allowed[:len(p.Allowed)-1] }),
		"no rules":                   {},
		"ask about unknown hosts":    edit(func(p *Policy) { p.AskUnknown = true }),
		"no private address allowed": edit(func(p *Policy) { p.AllowPrivate = nil }),
	}
	for name, p := range edits {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "netguard")
			if _, _, err := newCached(rulePolicy, path, "v1"); err != nil {
				t.Fatal(err)
			}
			want, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			rulesSame := slices.Equal(p.Allowed, rulePolicy.Allowed) && slices.Equal(p.Denied, rulePolicy.Denied)
			got, hit, err := newCached(p, path, "v1")
			if err != nil || hit != rulesSame {
				t.Fatalf("hit %v, %v; want hit only when the rules are the same (%v)", hit, err, rulesSame)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("guard %+v, want New's %+v", got, want)
			}
			sameDecisions(t, name, want, got)
			if again, hit, err := newCached(p, path, "v1"); err != nil || !hit || !reflect.DeepEqual(again, want) {
				t.Fatalf("the next guard: hit %v, %v; want New's, read from the cache", hit, err)
			}
		})
	}
}

// TestNewCachedOtherVersion: rules another build compiled are compiled again.
func TestNewCachedOtherVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netguard")
	if _, _, err := newCached(rulePolicy, path, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := newCached(rulePolicy, path, "v2"); err != nil || hit {
		t.Fatalf("another version: hit %v, %v; want compiled", hit, err)
	}
	if _, hit, err := newCached(rulePolicy, path, "v2"); err != nil || !hit {
		t.Fatalf("then the same version: hit %v, %v; want read from the cache", hit, err)
	}
	if _, hit, err := newCached(rulePolicy, path, ""); err != nil || hit {
		t.Fatalf("no version: hit %v, %v; want compiled (New)", hit, err)
	}
}

// TestNewCachedErrorsAsNew: a policy New refuses is refused with New's
// error, cache or not, and nothing is cached for it.
func TestNewCachedErrorsAsNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netguard")
	if _, _, err := newCached(rulePolicy, path, "v1"); err != nil {
		t.Fatal(err)
	}
	badRule := rulePolicy
	badRule.Denied = append(slices.Clone(rulePolicy.Denied), "*")
	badPrivate := rulePolicy
	badPrivate.AllowPrivate = []string{"10.0.0.0/33"}
	for name, p := range map[string]Policy{"bad rule": badRule, "bad allow_private": badPrivate} {
		_, want := New(p)
		g, _, err := newCached(p, path, "v1")
		if want == nil || err == nil || err.Error() != want.Error() || g != nil {
			t.Fatalf("%s: %v, %v; want New's error %v", name, g, err, want)
		}
	}
	if _, hit, err := newCached(rulePolicy, path, "v1"); err != nil || !hit {
		t.Fatalf("the good policy's cache was replaced (hit %v, %v)", hit, err)
	}
}

// TestNewCachedCorruptCache: a cache file with any byte changed, or cut
// short anywhere, is compiled past: the guard is New's.
func TestNewCachedCorruptCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "netguard")
	p := rulePolicy
	want, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	good := encodeRuleCache("v1", want)
	try := func(what string, data []byte) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		g, hit, err := newCached(p, path, "v1")
		if err != nil || hit || !reflect.DeepEqual(g, want) {
			t.Fatalf("%s: hit %v, %v; want New's guard, compiled", what, hit, err)
		}
	}
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x20
		try(fmt.Sprintf("byte %d flipped", i), bad)
	}
	for n := range len(good) {
		try(fmt.Sprintf("cut to %d bytes", n), good[:n])
	}
	try("a byte more", append(slices.Clone(good), 0))
}

// FuzzDecodeRuleCache: whatever a whole (checksummed) cache file holds, the
// decoder never panics, accepts only records for the policy's rules, in
// order, and what it accepts encodes back to the same file and decides
// without panicking.
func FuzzDecodeRuleCache(f *testing.F) {
	g, err := New(rulePolicy)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(encodeRuleCache("v1", g)[len(ruleCacheMagic)+4:])
	f.Add([]byte{})
	f.Add([]byte{2, 'v', '1', 0, 0, 0, 0})
	queries := ruleQueries(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		raw := cachefile.Seal(ruleCacheMagic, body)
		allowed, denied, ok := decodeRuleCache(raw, rulePolicy, "v1")
		if !ok {
			return
		}
		for _, c := range []struct {
			s     ruleSet
			texts []string
		}{{allowed, rulePolicy.Allowed}, {denied, rulePolicy.Denied}} {
			if c.s.n != len(c.texts) {
				t.Fatalf("accepted %d rules for %d", c.s.n, len(c.texts))
			}
			i := 0
			c.s.first(func(r *rec) bool {
				if string(r.text) != c.texts[i] {
					t.Fatalf("rule %d is %q, want %q", i, r.text, c.texts[i])
				}
				i++
				return false
			})
			if i != c.s.n {
				t.Fatalf("read %d of %d rules", i, c.s.n)
			}
		}
		g, err := newBase(rulePolicy)
		if err != nil {
			t.Fatal(err)
		}
		g.allowed, g.denied = allowed, denied
		if again := encodeRuleCache("v1", g); !slices.Equal(again, raw) {
			t.Fatalf("what was accepted encodes to another file:\n%q\n%q", raw, again)
		}
		for _, q := range queries[:50] {
			g.Decide(q)
		}
	})
}
