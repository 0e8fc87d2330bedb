package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentwarden/warden"
)

// checkCacheRoundTrip fails unless l's Policy and problems come back from the
// cache's JSON exactly as they are: what LoadCached serves must be what
// Parse returned.
func checkCacheRoundTrip(t *testing.T, l *Loaded) {
	t.Helper()
	body, err := encodeCache(cached{Policy: l.Policy, Problems: l.Problems})
	if err != nil {
		t.Fatalf("encode for the cache: %v", err)
	}
	c, ok := decodeCache(body)
	if !ok {
		t.Fatalf("the cache's body does not decode:\n%q", body)
	}
	if !reflect.DeepEqual(c.Policy, l.Policy) || !reflect.DeepEqual(c.Problems, l.Problems) {
		t.Fatalf("the cache changes the policy:\nparsed %+v %+v\ncached %+v %+v\n%s", l.Policy, l.Problems, c.Policy, c.Problems, body)
	}
}

// loadTwice loads path through the cache twice: once parsing it (and writing
// the cache), once from the cache. Both must equal Parse's answer.
func loadTwice(t *testing.T, path, cache string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		p, problems, err := LoadCached(path, cache)
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		if !reflect.DeepEqual(p, want.Policy) || !reflect.DeepEqual(problems, want.Problems) {
			t.Fatalf("load %d differs from Parse:\n%+v %+v\nwant %+v %+v", i, p, problems, want.Policy, want.Problems)
		}
		if _, err := os.Stat(cache); err != nil {
			t.Fatalf("load %d left no cache: %v", i, err)
		}
	}
}

func TestLoadCachedEqualsParse(t *testing.T) {
	paths, _ := filepath.Glob("testdata/load/*.yaml")
	paths = append(paths, writeFile(t, DefaultFile()))
	for _, path := range paths {
		if _, err := Parse(mustRead(t, path)); err != nil {
			continue // a file Load refuses is refused the same way: TestLoadCachedRefusesWhatLoadRefuses
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			loadTwice(t, path, filepath.Join(t.TempDir(), "cache", "policy.json"))
		})
	}
}

func TestLoadCachedRefusesWhatLoadRefuses(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "policy.json")
	for _, name := range []string{"syntax.yaml", "two_docs.yaml", "missing.yaml"} {
		path := filepath.Join("testdata", "load", name)
		_, lerr := Load(path)
		p, _, err := LoadCached(path, cache)
		if lerr == nil || err == nil || p != nil || err.Error() != lerr.Error() {
			t.Errorf("%s: LoadCached = %v, %v; Load's error is %v", name, p, err, lerr)
		}
	}
}

// TestCacheServesOnlyItsOwnKey: a hit is served from the cache file; a
// changed policy file, another binary, or a cache that is torn, altered or
// not a cache at all is parsed again (and the cache rewritten).
func TestCacheServesOnlyItsOwnKey(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, DefaultFile())
	cache := filepath.Join(dir, "policy.json")
	if _, _, err := LoadCached(path, cache); err != nil {
		t.Fatal(err)
	}
	// Plant an entry under the same key whose policy differs (a kill switch
	// on): served as is, which shows a hit reads the cache.
	data := mustRead(t, path)
	planted, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	planted.Policy.Safety.KillSwitch = true
	writeCache(cache, cacheKey(data, binaryID()), cached{Policy: planted.Policy, Problems: planted.Problems})
	if p, _, err := LoadCached(path, cache); err != nil || !p.Safety.KillSwitch {
		t.Fatalf("hit = kill switch %v, %v; want the cached entry", p.Safety.KillSwitch, err)
	}
	good := mustRead(t, cache)

	miss := func(name string, prepare func()) {
		t.Helper()
		if err := os.WriteFile(cache, good, 0o600); err != nil {
			t.Fatal(err)
		}
		prepare()
		p, _, err := LoadCached(path, cache)
		if err != nil || p.Safety.KillSwitch {
			t.Errorf("%s: kill switch %v, %v; want the file parsed again", name, p != nil && p.Safety.KillSwitch, err)
		}
		if bytes.Equal(mustRead(t, cache), good) {
			t.Errorf("%s: the cache was not rewritten", name)
		}
	}
	head, body, _ := bytes.Cut(good, []byte{'\n'})
	rewrite := func(b []byte) func() { return func() { os.WriteFile(cache, b, 0o600) } }
	miss("torn", rewrite(good[:len(good)-10]))
	miss("altered body", rewrite(append(append(append([]byte{}, head...), '\n'), bytes.Replace(body, []byte(`"KillSwitch":true`), []byte(`"KillSwitch":false`), 1)...)))
	altered := bytes.Replace(body, []byte(`"KillSwitch":true`), []byte(`"KillSwitch":tru `), 1)
	miss("body that does not decode", rewrite(fmt.Appendf(nil, "%s %s %s\n%s", cacheMagic, cacheKey(data, binaryID()), bodySum(altered), altered)))
	miss("other format", rewrite(bytes.Replace(good, []byte(cacheMagic), []byte("warden-policy-cache 0"), 1)))
	miss("no header", rewrite(body))
	miss("empty", rewrite(nil))
	miss("changed policy file", func() {
		if err := os.WriteFile(path, append(DefaultFile(), "\n# edited\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.WriteFile(path, DefaultFile(), 0o600); err != nil {
		t.Fatal(err)
	}
	old := binaryID
	t.Cleanup(func() { binaryID = old })
	miss("another binary", func() { binaryID = func() string { return "/other/warden\x001\x002" } })
}

// TestUnwritableCacheStillLoads: the cache is an optimisation; a cache path
// that cannot be written (here, under a regular file) changes nothing.
func TestUnwritableCacheStillLoads(t *testing.T) {
	path := writeFile(t, DefaultFile())
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p, _, err := LoadCached(path, filepath.Join(blocker, "cache", "policy.json"))
		if err != nil || !reflect.DeepEqual(p, Default()) {
			t.Fatalf("LoadCached = %v; want the default policy", err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkLoadCached is Load served from a warm cache.
func BenchmarkLoadCached(b *testing.B) {
	path := writeFile(b, DefaultFile())
	cache := filepath.Join(b.TempDir(), "policy.json")
	if _, _, err := LoadCached(path, cache); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := LoadCached(path, cache); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeCache feeds decodeCache bodies: it never panics, and what it
// accepts encodes back to a body that decodes to the same policy.
func FuzzDecodeCache(f *testing.F) {
	for _, data := range [][]byte{DefaultFile(), bigFile(20)} {
		l, err := Parse(data)
		if err != nil {
			f.Fatal(err)
		}
		body, err := encodeCache(cached{Policy: l.Policy, Problems: l.Problems})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"policy":{}}` + "\n\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, ok := decodeCache(body)
		if !ok {
			return
		}
		again, err := encodeCache(c)
		if err != nil {
			t.Fatalf("a decoded cache does not encode: %v", err)
		}
		c2, ok := decodeCache(again)
		if !ok || !reflect.DeepEqual(c2, c) {
			t.Fatalf("decode(encode(decode(body))) = %+v, %v; want %+v", c2, ok, c)
		}
	})
}

// TestCacheKeepsAllowedPathActions: actions in the usual order are written
// as a mask, any others as they are; all come back exactly.
func TestCacheKeepsAllowedPathActions(t *testing.T) {
	p := Default()
	p.Filesystem.Allowed = []AllowedPath{
		{Pattern: "a", Actions: []string{"read", "list"}, Auto: true},
		{Pattern: "b", Actions: []string{"list", "read"}},
		{Pattern: "c", Actions: []string{"read", "read"}},
		{Pattern: "d", Actions: []string{"read", "write", "list", "delete"}},
		{Pattern: "e", Actions: []string{}},
		{Pattern: "f"},
		{Pattern: "g", Actions: []string{"delete"}, Auto: true},
	}
	body, err := encodeCache(cached{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := decodeCache(body)
	if !ok || !reflect.DeepEqual(c.Policy.Filesystem.Allowed, p.Filesystem.Allowed) {
		t.Fatalf("allowed paths through the cache = %#v, %v; want %#v", c.Policy.Filesystem.Allowed, ok, p.Filesystem.Allowed)
	}
	a := c.Policy.Filesystem.Allowed[0].Actions
	if cap(a) != len(a) {
		t.Errorf("a shared action list has room to grow (len %d, cap %d): an append would write into other rules' lists", len(a), cap(a))
	}
}

// TestCacheRefusesAnOverrideWithoutItsTier: an entry whose override has no
// tier (0 after decoding, which no policy Parse accepts can hold) is no
// entry Parse made; it is refused and the file parsed again. Found by
// FuzzDecodeCache.
func TestCacheRefusesAnOverrideWithoutItsTier(t *testing.T) {
	p := Default()
	p.Tools.Overrides = []TierOverride{{Tool: "transfer_token", Tier: warden.TierAlwaysConfirm}}
	body, err := encodeCache(cached{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeCache(body); !ok {
		t.Fatal("an entry with a whole override does not decode")
	}
	cut := bytes.Replace(body, []byte(`,"Tier":3`), nil, 1)
	if bytes.Equal(cut, body) {
		t.Fatalf("the encoded override has no \"Tier\":3 to cut: %.300s", body)
	}
	if c, ok := decodeCache(cut); ok {
		t.Fatalf("an override without its tier decoded: %+v", c.Policy.Tools.Overrides)
	}
}
