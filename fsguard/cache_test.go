package fsguard

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/cachefile"
)

// cacheWorld is a user home whose rules start from plain directories, from
// a directory reached through a symlink, and from a directory holding enough
// of the rules' names to be read whole; and a policy over it.
type cacheWorld struct {
	root, home, outside string
	p                   Policy
	path                string // the cache file
}

func newCacheWorld(t *testing.T) *cacheWorld {
	t.Helper()
	if !stampsSupported {
		t.Skip("the compiled-rules cache reads change times on Linux only; elsewhere NewCached is New")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &cacheWorld{root: root, home: root + "/home/u", outside: root + "/outside", path: root + "/warden/cache/fsguard"}
	mkdir(t, w.home+"/proj")
	mkdir(t, w.outside+"/real")
	mkdir(t, w.outside+"/secret")
	mkdir(t, root+"/warden/sandbox/files")
	symlink(t, w.outside+"/real", w.home+"/linked")
	var allowed []Rule
	denied := append([]string(nil), DefaultDenied...)
	for i := range listAt + 2 {
		mkdir(t, fmt.Sprintf("%s/many/d%d", w.home, i))
		allowed = append(allowed, Rule{Pattern: fmt.Sprintf("~/many/d%d/**", i), Actions: []Action{Read, List}, Level: Auto})
		denied = append(denied, fmt.Sprintf("~/many/d%d/.env", i))
	}
	allowed = append(allowed,
		Rule{Pattern: "~/linked/**", Actions: []Action{Read}, Level: Auto},
		Rule{Pattern: "~/proj/**", Actions: []Action{Read, Write}, Level: Ask},
		Rule{Pattern: "**", Actions: []Action{Read}, Level: Auto},
		Rule{Pattern: w.outside + "/**", Actions: []Action{Read}, Level: Auto},
	)
	denied = append(denied, "~/proj/private/**", "~/linked/keys/**", "**/.secret")
	w.p = Policy{Workspace: root + "/warden/sandbox/files", Allowed: allowed, Denied: denied, WardenHome: root + "/warden", UserHome: w.home}
	return w
}

// testRacy is cacheRacy in the tests (but TestRecentDirectoryIsNotCached):
// waiting a second after every change is slow, and a few ticks of the
// kernel's coarse clock (at most 10 ms each) are enough here.
const testRacy = 30 * time.Millisecond

func shortRacy(t *testing.T) {
	old := cacheRacy
	cacheRacy = testRacy
	t.Cleanup(func() { cacheRacy = old })
}

// settle waits until what was just changed is older than testRacy, so that
// its answers may be cached.
func settle() { time.Sleep(testRacy + 10*time.Millisecond) }

// build is NewCached for w's policy; it fails the test unless the guard is
// exactly New's for the filesystem as it is now, and unless it came from the
// cache exactly when want says.
func (w *cacheWorld) build(t *testing.T, want bool) *Guard {
	t.Helper()
	g, hit := w.buildEither(t)
	if hit != want {
		t.Fatalf("from the cache: %v, want %v", hit, want)
	}
	return g
}

// buildEither is build, whether or not the guard came from the cache.
func (w *cacheWorld) buildEither(t *testing.T) (*Guard, bool) {
	t.Helper()
	g, hit, err := newCached(w.p, w.path, "test-version")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := New(w.p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, fresh) {
		t.Fatalf("the cached guard differs from New's:\n%+v\n%+v", g, fresh)
	}
	return g, hit
}

func TestNewCachedIsNew(t *testing.T) {
	shortRacy(t)
	w := newCacheWorld(t)
	settle()
	w.build(t, false)
	if _, err := os.Stat(w.path); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	g := w.build(t, true)
	// The alias of the symlinked rule directory came from the cache too.
	if d := g.Decide(Read, w.outside+"/real/x.txt", "/"); d.Verdict != warden.Allow || d.Rule != "fs.allowed" {
		t.Fatalf("read through the linked rule's real directory: %v %s (%s)", d.Verdict, d.Reason, d.Rule)
	}
	if d := g.Decide(Read, w.outside+"/real/keys/k", "/"); d.Verdict != warden.Deny || d.Rule != "fs.denied" {
		t.Fatalf("the denied path under the linked directory, by its real name: %v %s", d.Verdict, d.Reason)
	}
	// Another binary, or a policy with other homes, compiles.
	if _, hit, _ := newCached(w.p, w.path, "other-version"); hit {
		t.Fatal("a cache written by another version was used")
	}
	w.build(t, false) // "other-version" rewrote it
	w.build(t, true)
}

// A rule's directory that becomes a symlink to a denied place between two
// processes must be seen by the second: the stale answer ("not a link") would
// leave out the alias that denies the real path.
func TestNewCachedSeesASymlinkChange(t *testing.T) {
	shortRacy(t)
	for _, c := range []struct{ name, dir string }{
		{"looked up", "proj"},      // lstat'ed by itself
		{"read whole", "many/d3"},  // in a directory read whole
		{"its parent", "many"},     // a directory above the rules' directories
		{"the old link", "linked"}, // a symlink pointed elsewhere
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newCacheWorld(t)
			settle()
			w.build(t, false)
			w.build(t, true)
			old := w.home + "/" + c.dir
			if err := os.Rename(old, w.root+"/moved"); err != nil {
				t.Fatal(err)
			}
			symlink(t, w.outside+"/secret", old)
			w.p.Denied = append(w.p.Denied[:len(w.p.Denied):len(w.p.Denied)], "~/"+c.dir+"/**")
			settle()
			g := w.build(t, false) // the policy changed too: compiles
			w.build(t, true)
			if d := g.Decide(Read, w.outside+"/secret/x", "/"); d.Verdict != warden.Deny {
				t.Fatalf("the real path of a denied directory that is now a link: %v %s", d.Verdict, d.Reason)
			}
			// Now only the filesystem changes: point the link back.
			if err := os.Remove(old); err != nil {
				t.Fatal(err)
			}
			symlink(t, w.outside+"/real", old)
			g = w.build(t, false)
			if d := g.Decide(Read, w.outside+"/secret/x", "/"); d.Verdict != warden.Allow {
				t.Fatalf("after the link moved away: %v %s", d.Verdict, d.Reason)
			}
			if d := g.Decide(Read, w.outside+"/real/x", "/"); d.Verdict != warden.Deny {
				t.Fatalf("the link's new real directory: %v %s", d.Verdict, d.Reason)
			}
		})
	}
}

func TestNewCachedSeesOtherChanges(t *testing.T) {
	shortRacy(t)
	for _, c := range []struct {
		name   string
		change func(t *testing.T, w *cacheWorld)
	}{
		{"a missing rule directory is made", func(t *testing.T, w *cacheWorld) { mkdir(t, w.home+"/.ssh") }},
		{"a permission", func(t *testing.T, w *cacheWorld) {
			if err := os.Chmod(w.home+"/proj", 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"a rule's text", func(t *testing.T, w *cacheWorld) { w.p.Allowed[0].Pattern = "~/many/d0/src/**" }},
		{"a rule's actions", func(t *testing.T, w *cacheWorld) { w.p.Allowed[1].Actions = []Action{Read} }},
		{"a rule's level", func(t *testing.T, w *cacheWorld) { w.p.Allowed[2].Level = Ask }},
		{"a rule added", func(t *testing.T, w *cacheWorld) {
			w.p.Allowed = append(w.p.Allowed, Rule{Pattern: "/srv/**", Actions: []Action{Read}})
		}},
		{"a denied path removed", func(t *testing.T, w *cacheWorld) { w.p.Denied = w.p.Denied[1:] }},
		{"the user's home", func(t *testing.T, w *cacheWorld) { w.p.UserHome = w.outside }},
		{"the workspace", func(t *testing.T, w *cacheWorld) { w.p.Workspace = w.home + "/proj" }},
		{"warden's home", func(t *testing.T, w *cacheWorld) { w.p.WardenHome = w.home + "/.w" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newCacheWorld(t)
			settle()
			w.build(t, false)
			w.build(t, true)
			c.change(t, w)
			w.build(t, false)
			settle()
			w.buildEither(t) // writes what it may not have trusted just after the change
			w.build(t, true)
		})
	}
}

// A damaged cache file is compiled past, never an error and never another
// policy: every byte changed, every length cut, and a body that decodes
// against another policy.
func TestNewCachedCorruptCache(t *testing.T) {
	shortRacy(t)
	w := newCacheWorld(t)
	settle()
	w.build(t, false)
	good, err := os.ReadFile(w.path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := New(w.p) // the filesystem does not change below
	if err != nil {
		t.Fatal(err)
	}
	try := func(raw []byte) {
		t.Helper()
		if err := os.WriteFile(w.path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		g, hit, err := newCached(w.p, w.path, "test-version")
		if err != nil || hit || !reflect.DeepEqual(g, want) {
			t.Fatalf("a damaged cache (%d bytes): hit %v, err %v, same as New %v", len(raw), hit, err, reflect.DeepEqual(g, want))
		}
	}
	for i := range good {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x20
		try(bad)
	}
	for n := 0; n < len(good); n += 3 {
		try(good[:n])
	}
	try(append(append([]byte(nil), good...), 0))
}

// Answers read from a directory changed within cacheRacy of compiling are
// not written: its time may not show a change made in the same clock tick.
func TestRecentDirectoryIsNotCached(t *testing.T) {
	w := newCacheWorld(t) // its directories were made just now
	w.build(t, false)
	if _, err := os.Stat(w.path); !os.IsNotExist(err) {
		t.Fatalf("a cache was written from directories changed just now (%v)", err)
	}
	shortRacy(t)
	settle()
	w.build(t, false)
	w.build(t, true)
}

// FuzzDecodeGuardCache decodes cache bodies (with a right CRC, so that the
// fuzzer reaches the decoder) against a fixed policy: it must never panic,
// and what it accepts must be rules for that policy that encode and decode
// to themselves.
func FuzzDecodeGuardCache(f *testing.F) {
	root := f.TempDir()
	mkdir(f, root+"/home/many")
	for i := range listAt {
		mkdir(f, fmt.Sprintf("%s/home/many/d%d", root, i))
	}
	symlink(f, root+"/real", root+"/home/linked")
	p := Policy{
		Workspace: root + "/ws", WardenHome: root + "/w", UserHome: root + "/home",
		Denied: append(append([]string(nil), DefaultDenied...), "~/linked/**", `/srv/\[x]/*`, "**/.env"),
		Allowed: []Rule{
			{Pattern: "~/linked/**", Actions: []Action{Read}, Level: Auto},
			{Pattern: "docs/*.md", Actions: []Action{Read, Write, List, Delete}},
			{Pattern: "~/many/d1/**", Actions: []Action{List}, Level: Auto},
		},
	}
	g, err := newBase(p)
	if err != nil {
		f.Fatal(err)
	}
	c, err := g.compileRules(p)
	if err != nil {
		f.Fatal(err)
	}
	deps, _ := c.fsys.stamps(time.Now().Add(time.Hour))
	raw := encodeGuardCache(p, "v", identity(), deps, c.deniedN, g)
	seed := raw[len(cacheMagic)+4:]
	// The frame the fuzzer's bodies get must be the one decode checks, or
	// every input is refused at the checksum and nothing is fuzzed.
	if _, ok := decodeGuardCache(withCRC(seed), p, "v", identity()); !ok {
		f.Fatal("the seed body, framed by withCRC, does not decode")
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		c, ok := decodeGuardCache(withCRC(body), p, "v", identity())
		if !ok {
			return
		}
		if len(c.allowed) != len(p.Allowed) || len(c.deniedN) != len(p.Denied) {
			t.Fatalf("accepted rules for another policy: %d allowed, %d denied", len(c.allowed), len(c.deniedN))
		}
		for i, r := range c.allowed {
			if r.text != p.Allowed[i].Pattern || len(r.pats) < 1 || len(r.pats) > 2 {
				t.Fatalf("allowed rule %d: %+v", i, r)
			}
		}
		g2 := &Guard{denied: c.denied, allowed: c.allowed}
		again, ok := decodeGuardCache(encodeGuardCache(p, "v", identity(), c.deps, c.deniedN, g2), p, "v", identity())
		if !ok || !reflect.DeepEqual(again, c) {
			t.Fatalf("what was accepted does not encode and decode to itself:\n%+v\n%+v", c, again)
		}
	})
}

// withCRC frames body as a cache file.
func withCRC(body []byte) []byte { return cachefile.Seal(cacheMagic, body) }
