package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/agentwarden/warden/internal/cachefile"
)

// The policy cache keeps the checked result of a policy file (its Policy and
// its problems) as JSON, with the rule lists that grow with a policy
// (filesystem.allowed_paths and denied_paths, network.allowed_domains and
// denied_domains) after it as length-prefixed strings (see cacheLists), so that a one-shot process (a hook, `warden check`)
// does not parse the YAML again: yaml.v3 builds a node tree of the commented
// default file in about 0.5 ms in a fresh process, a third of a whole check,
// and the JSON decodes in well under half that. A list of 1,000 rules as
// JSON took 0.6 ms more to decode; as length-prefixed strings it is one copy
// and a slice header per rule.
//
// The cache is only ever a copy of what Parse returns for the same bytes. Its
// first line names the SHA-256 of the policy file's exact bytes, the binary
// that wrote it (a binary with another Policy type must not read it) and the
// CRC-32 (IEEE) of the body that follows (the JSON, a newline, the lists: a
// check against torn files). hash/crc32's IEEE path (carry-less multiply)
// needs only a small table: about 9 us for a large policy's 86 KB body in a
// fresh process, where CRC-32C without its hardware tables goes byte by byte
// and, past internal/crc32c's budget, builds them (0.12-0.16 ms), and
// SHA-256 takes 43 us. Anything that does not match, does not
// decode, or cannot be read is ignored and the file parsed as Load does. It
// lives in the warden home, which only its owner may write, like the policy
// file itself.

// cacheMagic starts a cache file; bump the number when the format changes.
const cacheMagic = "warden-policy-cache 5"

// cached is the JSON body of a cache file.
type cached struct {
	Policy   *Policy   `json:"policy"`
	Problems []Problem `json:"problems"`
}

// binaryID names the running binary: its path, size and modification time.
// A rebuilt or replaced binary gets another id, and so misses every entry
// the old one wrote. Empty (never cache) when the binary cannot be found.
var binaryID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
})

// BinaryID names the running binary (its path, size and modification time)
// for caches of what it computes: a rebuilt or replaced binary gets another.
// Empty when the binary cannot be found; then nothing should be cached.
func BinaryID() string { return binaryID() }

// cacheKey is what a cache entry for data is valid for.
func cacheKey(data []byte, binary string) string {
	h := sha256.New()
	h.Write([]byte(binary))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// LoadCached returns what Load returns for the policy file at path, its
// Policy and problems, through the cache file at cachePath: read from it when
// it holds the result for these exact bytes and this binary, else parsed and
// written there for the next process. Errors are Load's; a cache that cannot
// be read or written is never one. Callers that need the file's sections
// (config get and list, Set) use Load.
func LoadCached(path, cachePath string) (*Policy, []Problem, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	bin := binaryID()
	if bin == "" {
		l, err := Parse(data)
		if err != nil {
			return nil, nil, err
		}
		return l.Policy, l.Problems, nil
	}
	key := cacheKey(data, bin)
	if c, ok := readCache(cachePath, key); ok {
		return c.Policy, c.Problems, nil
	}
	l, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	writeCache(cachePath, key, cached{Policy: l.Policy, Problems: l.Problems})
	return l.Policy, l.Problems, nil
}

// readCache returns the entry at path when it is whole and for key.
func readCache(path, key string) (cached, bool) {
	raw, ok := cachefile.Read(path)
	if !ok {
		return cached{}, false
	}
	head, body, ok := bytes.Cut(raw, []byte{'\n'})
	if !ok {
		return cached{}, false
	}
	fields := strings.Fields(string(head))
	if len(fields) != 4 || fields[0]+" "+fields[1] != cacheMagic || fields[2] != key {
		return cached{}, false
	}
	if fields[3] != bodySum(body) {
		return cached{}, false
	}
	return decodeCache(body)
}

// bodySum is the check a cache file's header keeps of its body.
func bodySum(body []byte) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE(body))
}

// encodeCache is a cache file's body for c: its JSON without the rule lists,
// a newline (JSON never holds a raw one), and the lists.
func encodeCache(c cached) ([]byte, error) {
	p := *c.Policy
	lists := cacheLists(&p)
	var l listWriter
	l.paths(p.Filesystem.Allowed)
	for _, list := range lists {
		l.strings(*list)
		*list = nil
	}
	p.Filesystem.Allowed = nil
	body, err := json.Marshal(cached{Policy: &p, Problems: c.Problems})
	if err != nil {
		return nil, err
	}
	body = append(body, '\n')
	return append(body, l.B...), nil
}

// decodeCache reverses encodeCache; false when body is not one it wrote.
// The rule lists' strings share body, which the caller must not write after.
func decodeCache(body []byte) (cached, bool) {
	js, rest, ok := bytes.Cut(body, []byte{'\n'})
	if !ok {
		return cached{}, false
	}
	var c cached
	if json.Unmarshal(js, &c) != nil || c.Policy == nil {
		return cached{}, false
	}
	// An override always names a tool and gives a valid tier (Parse refuses
	// a file without them); an entry that has not is no entry Parse made.
	// A tier that is present is checked by its own UnmarshalJSON; an absent
	// one decodes as 0.
	for _, o := range c.Policy.Tools.Overrides {
		if o.Tool == "" || o.Tier == 0 {
			return cached{}, false
		}
	}
	// The lists' strings share body (a large policy's are 80 KB: copying
	// them was a tenth of a read), which nothing writes after this.
	l := listReader{cachefile.NewReader(rest)}
	c.Policy.Filesystem.Allowed = l.paths()
	for _, list := range cacheLists(c.Policy) {
		*list = l.strings()
	}
	if !l.Done() {
		return cached{}, false
	}
	return c, true
}

// cacheLists are the string lists of p that the cache keeps out of its JSON,
// in the order it writes them.
func cacheLists(p *Policy) []*[]string {
	return []*[]string{&p.Filesystem.Denied, &p.Network.Allowed, &p.Network.Denied}
}

// listWriter appends lists as uvarint(count+1) (0 for nil) and each string
// as cachefile's strings.
type listWriter struct{ cachefile.Writer }

func (w *listWriter) strings(list []string) {
	if list == nil {
		w.Uint(0)
		return
	}
	w.Uint(uint64(len(list) + 1))
	for _, s := range list {
		w.Str(s)
	}
}

func (w *listWriter) paths(list []AllowedPath) {
	if list == nil {
		w.Uint(0)
		return
	}
	w.Uint(uint64(len(list) + 1))
	for _, a := range list {
		w.Str(a.Pattern)
		if m := actionMask(a.Actions); m != 0 {
			w.Byte(m)
		} else {
			w.Byte(0)
			w.strings(a.Actions)
		}
		if a.Auto {
			w.Byte(1)
		} else {
			w.Byte(0)
		}
	}
}

// cacheActions are the filesystem actions in the order a mask's bits name
// them.
var cacheActions = [4]string{"read", "write", "list", "delete"}

// maskActions[m] is the list of the actions whose bits m sets, in
// cacheActions' order; index 0 is unused. Lists are shared by every rule
// with the same actions, so their capacity is their length (append copies).
var maskActions = func() (t [16][]string) {
	for m := 1; m < 16; m++ {
		for i, a := range cacheActions {
			if m&(1<<i) != 0 {
				t[m] = append(t[m], a)
			}
		}
		t[m] = t[m][:len(t[m]):len(t[m])]
	}
	return t
}()

// actionMask returns the mask whose maskActions entry equals actions, or 0
// when there is none (actions out of that order, repeated, unknown, or
// none): such a list is written as it is.
func actionMask(actions []string) byte {
	var m byte
	next := 0
	for _, a := range actions {
		i := next
		for i < len(cacheActions) && cacheActions[i] != a {
			i++
		}
		if i == len(cacheActions) {
			return 0
		}
		m |= 1 << i
		next = i + 1
	}
	return m
}

// listReader reads what listWriter wrote.
type listReader struct{ cachefile.Reader }

// count reads a list's uvarint(count+1): -1 for nil. Every item takes at
// least a byte.
func (r *listReader) count() int {
	n := r.Uint()
	if n == 0 || r.Bad {
		return -1
	}
	if n-1 > uint64(len(r.S)) {
		r.Bad = true
		return -1
	}
	return int(n - 1)
}

func (r *listReader) strings() []string {
	n := r.count()
	if n < 0 {
		return nil
	}
	list := make([]string, n)
	for i := range list {
		list[i] = r.Str()
	}
	return list
}

func (r *listReader) paths() []AllowedPath {
	n := r.count()
	if n < 0 {
		return nil
	}
	list := make([]AllowedPath, n)
	for i := range list {
		list[i].Pattern = r.Str()
		m := r.Byte()
		if m >= byte(len(maskActions)) {
			r.Bad = true
		}
		if r.Bad {
			return nil
		}
		if m != 0 {
			list[i].Actions = maskActions[m]
		} else {
			list[i].Actions = r.strings()
		}
		switch r.Byte() {
		case 0:
		case 1:
			list[i].Auto = true
		default:
			r.Bad = true
		}
		if r.Bad {
			return nil
		}
	}
	return list
}

// writeCache replaces the entry at path, atomically and without syncing (a
// torn entry fails its checksum and is parsed again). Failures are ignored:
// the next process parses the file again.
func writeCache(path, key string, c cached) {
	body, err := encodeCache(c)
	if err != nil {
		return
	}
	data := fmt.Appendf(nil, "%s %s %s\n", cacheMagic, key, bodySum(body))
	data = append(data, body...)
	cachefile.Write(path, data)
}
