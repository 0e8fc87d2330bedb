package fsguard

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentwarden/warden/internal/cachefile"
)

// The compiled-rules cache lets a one-shot process (a hook, `warden check`)
// skip compiling a large policy's paths: checking, expanding and case-folding
// every pattern, and resolving the directory each one starts from (to find
// the ones reached through a symlink). With 1,000 rules that was most of a
// filesystem check.
//
// A cache file holds the compiled rules together with everything they were
// compiled from, and is used only when all of it still holds:
//
//   - the caller's version (the binary's identity: another build may compile
//     differently), the process's user and groups (they decide which
//     directories can be read), and every input of the Policy (workspace,
//     homes, each rule's text, actions and level), compared byte for byte;
//   - everything resolution asked the system, each asked again with one
//     lstat: every name it looked up must still be what it was (missing, the
//     same error, a directory, a file, or the very same symlink inode,
//     with the same permissions and owner), and every directory it read
//     whole (a directory holding many of the rules' names) must still have
//     the same device, inode, mode, owner and modification and change times.
//     A symlink created, replaced or removed, a directory renamed, created,
//     removed or mounted over, or a permission changed anywhere the answers
//     came from changes one of them. The directories that merely hold a
//     looked-up name (the user's home, /tmp) may change freely.
//
// Times must be older than cacheRacy when compiling began, or the answers
// are not written: a directory read whole, whose entries may change in the
// same tick of the coarse clock that file times come from (git's "racy"
// index entries), and a symlink (so that a replacement reusing its inode
// number cannot carry the same change time). A name looked up is also asked
// again after compiling, and must give the answer compiling used. The next
// process compiles again and writes the cache once things have been still
// that long.
//
// Anything that does not match, does not decode or cannot be read is ignored
// and the rules compiled as New does. The file is written atomically and not
// synced; a torn one fails its CRC-32 (IEEE: a fresh process builds no
// tables for it, as it would for CRC-32C past 64 KB). It belongs in
// warden's home, which only its owner may write (as the policy file and its
// cache): whoever can write it can write the policy.

// cacheMagic starts a cache file; bump the number when the format changes.
const cacheMagic = "warden-fsguard-cache 2\n"

// cacheRacy is how long a directory read whole or a symlink must have been
// unchanged before answers read from it are cached. A variable for the
// tests.
var cacheRacy = time.Second

// NewCached is New through the cache file at path: the rules are read from it
// when it holds them compiled from this exact p by this version and
// everything their resolution asked the filesystem still answers the same;
// otherwise they are compiled and written there for the next process.
// version names the code that compiles (the binary); with version or path
// empty it is New. A cache that cannot be read or written is never an error.
func NewCached(p Policy, path, version string) (*Guard, error) {
	g, _, err := newCached(p, path, version)
	return g, err
}

// newCached is NewCached, also saying whether the rules came from the cache.
func newCached(p Policy, path, version string) (*Guard, bool, error) {
	g, err := newBase(p)
	if err != nil {
		return nil, false, err
	}
	if path == "" || version == "" || !stampsSupported {
		if _, err := g.compileRules(p); err != nil {
			return nil, false, err
		}
		return g, false, nil
	}
	who := identity()
	if raw, ok := cachefile.Read(path); ok {
		if c, ok := decodeGuardCache(raw, p, version, who); ok && c.fresh() {
			g.denied, g.allowed = c.denied, c.allowed
			return g, true, nil
		}
	}
	start := time.Now()
	c, err := g.compileRules(p)
	if err != nil {
		return nil, false, err
	}
	if deps, ok := c.fsys.stamps(start); ok {
		cachefile.Write(path, encodeGuardCache(p, version, who, deps, c.deniedN, g))
	}
	return g, false, nil
}

// identity is the process's effective user, group and supplementary groups,
// as one string: what decides which directories it may search.
func identity() string {
	b := binary.AppendUvarint(nil, uint64(os.Geteuid()))
	b = binary.AppendUvarint(b, uint64(os.Getegid()))
	groups, _ := os.Getgroups()
	slices.Sort(groups)
	for _, g := range groups {
		b = binary.AppendUvarint(b, uint64(g))
	}
	return string(b)
}

// stamp is what lstat says of a name resolution looked up (whole unset) or
// of a directory it read whole (whole set): the error number, or the kind,
// permissions and owner; for a symlink or a directory read whole also its
// device, inode and change time, and for the directory its modification
// time. A looked-up directory's times are left out: its entries may change
// without changing what it is.
type stamp struct {
	whole            bool
	errno            uint64 // 0: the rest is set
	mode, uid, gid   uint64
	dev, ino         uint64
	mtimeNs, ctimeNs int64
}

// recent reports whether the times the stamp keeps are too close to start
// (or after it) to show every change since.
func (s stamp) recent(start time.Time) bool {
	limit := start.Add(-cacheRacy).UnixNano()
	return s.errno == 0 && (s.mtimeNs >= limit || s.ctimeNs >= limit)
}

// Raw st_mode file types (the same on every Linux architecture).
const (
	sIFMT  = 0o170000
	sIFDIR = 0o040000
	sIFLNK = 0o120000
)

// agrees reports whether the stamp shows the answer resolution used: the
// same error number, or a directory, a symlink or anything else as it was.
func (s stamp) agrees(me modeErr) bool {
	if me.err != nil {
		var errno syscall.Errno
		return errors.As(me.err, &errno) && uint64(errno) == s.errno
	}
	if s.errno != 0 {
		return false
	}
	switch t := s.mode & sIFMT; {
	case me.mode.IsDir():
		return t == sIFDIR
	case me.mode&fs.ModeSymlink != 0:
		return t == sIFLNK
	default:
		return t != sIFDIR && t != sIFLNK
	}
}

type dep struct {
	path string
	s    stamp
}

// stamps is everything m asked the system, as stamps to check later: each
// name looked up and each directory read whole. false when something is too
// recent (see recent) or no longer gives the answer m used.
func (m *memoLinks) stamps(start time.Time) ([]dep, bool) {
	deps := make([]dep, 0, len(m.modes)+len(m.dirs))
	for name, me := range m.modes {
		s := lstamp(name, false)
		if s.recent(start) || !s.agrees(me) {
			return nil, false
		}
		deps = append(deps, dep{name, s})
	}
	for dir, l := range m.dirs {
		if !l.read {
			continue
		}
		s := lstamp(dir, true)
		if s.recent(start) {
			return nil, false
		}
		deps = append(deps, dep{dir, s})
	}
	slices.SortFunc(deps, func(a, b dep) int { return strings.Compare(a.path, b.path) })
	return deps, true
}

// cachedRules is what a cache file holds beyond its inputs.
type cachedRules struct {
	deps    []dep
	denied  []pattern
	deniedN []int // patterns per denied path
	allowed []allowedRule
}

// fresh reports whether everything the rules' resolution asked the system
// still gives the same answer.
func (c *cachedRules) fresh() bool {
	for _, d := range c.deps {
		if lstamp(d.path, d.s.whole) != d.s {
			return false
		}
	}
	return true
}

// Pattern flags in the cache.
const (
	flagRelative   = 1 << iota
	flagBasePrefix // base is glob[:n]: n is written, not base
	flagLastSuffix // last is glob[len-n:]
	flagMax        = 1<<iota - 1
)

// cacheWriter is a cache file's body: cachefile's values and patterns.
type cacheWriter struct{ cachefile.Writer }

func (w *cacheWriter) pats(ps []pattern) {
	w.Uint(uint64(len(ps)))
	for _, pt := range ps {
		w.Str(pt.glob)
		var f byte
		if pt.relative {
			f |= flagRelative
		}
		if len(pt.base) <= len(pt.glob) && pt.glob[:len(pt.base)] == pt.base {
			f |= flagBasePrefix
		}
		if len(pt.last) <= len(pt.glob) && pt.glob[len(pt.glob)-len(pt.last):] == pt.last {
			f |= flagLastSuffix
		}
		w.Byte(f)
		if f&flagBasePrefix != 0 {
			w.Uint(uint64(len(pt.base)))
		} else {
			w.Str(pt.base)
		}
		if f&flagLastSuffix != 0 {
			w.Uint(uint64(len(pt.last)))
		} else {
			w.Str(pt.last)
		}
	}
}

// encodeGuardCache is the cache file for g, compiled from p by version as
// who, its resolution having read deps.
func encodeGuardCache(p Policy, version, who string, deps []dep, deniedN []int, g *Guard) []byte {
	var w cacheWriter
	w.Str(version)
	w.Str(who)
	w.Str(p.Workspace)
	w.Str(p.WardenHome)
	w.Str(p.UserHome)
	w.Uint(uint64(len(deps)))
	for _, d := range deps {
		w.Str(d.path)
		if d.s.whole {
			w.Byte(1)
		} else {
			w.Byte(0)
		}
		for _, v := range [...]uint64{d.s.errno, d.s.mode, d.s.uid, d.s.gid, d.s.dev, d.s.ino} {
			w.Uint(v)
		}
		w.Int(d.s.mtimeNs)
		w.Int(d.s.ctimeNs)
	}
	// The denied patterns: per entry of p.Denied, its one or two patterns.
	w.Uint(uint64(len(p.Denied)))
	k := 0
	for i, d := range p.Denied {
		w.Str(d)
		w.pats(g.denied[k : k+deniedN[i]])
		k += deniedN[i]
	}
	w.Uint(uint64(len(g.allowed)))
	for i, r := range g.allowed {
		w.Str(p.Allowed[i].Pattern)
		w.Byte(actionMask(r.actions))
		w.Byte(byte(r.level))
		w.pats(r.pats)
	}
	return cachefile.Seal(cacheMagic, w.B)
}

func actionMask(a [4]bool) byte {
	var m byte
	for i, ok := range a {
		if ok {
			m |= 1 << i
		}
	}
	return m
}

// cacheReader reads what cacheWriter wrote.
type cacheReader struct{ cachefile.Reader }

// pats reads one rule's patterns (1 or 2) into dst, with text.
func (r *cacheReader) pats(dst []pattern, text string) []pattern {
	n := r.Count()
	if n < 1 || n > 2 {
		r.Bad = true
		return dst
	}
	for range n {
		pt := pattern{text: text, glob: r.Str()}
		f := r.Byte()
		if f > flagMax {
			r.Bad = true
		}
		pt.relative = f&flagRelative != 0
		if f&flagBasePrefix != 0 {
			if k := r.Uint(); k <= uint64(len(pt.glob)) {
				pt.base = pt.glob[:k]
			} else {
				r.Bad = true
			}
		} else {
			pt.base = r.Str()
		}
		if f&flagLastSuffix != 0 {
			if k := r.Uint(); k <= uint64(len(pt.glob)) {
				pt.last = pt.glob[uint64(len(pt.glob))-k:]
			} else {
				r.Bad = true
			}
		} else {
			pt.last = r.Str()
		}
		if r.Bad {
			return dst
		}
		dst = append(dst, pt)
	}
	return dst
}

// decodeGuardCache reads a cache file compiled from p by version as who;
// false when it is not one encodeGuardCache wrote for exactly these.
func decodeGuardCache(raw []byte, p Policy, version, who string) (*cachedRules, bool) {
	body, ok := cachefile.Open(raw, cacheMagic)
	if !ok {
		return nil, false
	}
	// The strings decoded share body, which nothing writes after this.
	r := cacheReader{cachefile.NewReader(body)}
	if r.Str() != version || r.Str() != who || r.Str() != p.Workspace || r.Str() != p.WardenHome || r.Str() != p.UserHome || r.Bad {
		return nil, false
	}
	c := &cachedRules{}
	nd := r.Count()
	c.deps = make([]dep, 0, nd)
	for range nd {
		d := dep{path: r.Str()}
		switch r.Byte() {
		case 0:
		case 1:
			d.s.whole = true
		default:
			r.Bad = true
		}
		d.s.errno, d.s.mode, d.s.uid, d.s.gid, d.s.dev, d.s.ino = r.Uint(), r.Uint(), r.Uint(), r.Uint(), r.Uint(), r.Uint()
		d.s.mtimeNs, d.s.ctimeNs = r.Int(), r.Int()
		c.deps = append(c.deps, d)
	}
	if r.Bad || r.Count() != len(p.Denied) || r.Bad {
		return nil, false
	}
	c.denied = make([]pattern, 0, len(p.Denied)+len(p.Denied)/8)
	c.deniedN = make([]int, len(p.Denied))
	for i, d := range p.Denied {
		if r.Str() != d || r.Bad {
			return nil, false
		}
		n := len(c.denied)
		c.denied = r.pats(c.denied, d)
		c.deniedN[i] = len(c.denied) - n
	}
	if r.Bad || r.Count() != len(p.Allowed) || r.Bad {
		return nil, false
	}
	c.allowed = make([]allowedRule, len(p.Allowed))
	pats := make([]pattern, 0, len(p.Allowed)+len(p.Allowed)/8)
	for i, a := range p.Allowed {
		ar := &c.allowed[i]
		ar.text = a.Pattern
		if r.Str() != a.Pattern {
			return nil, false
		}
		for _, act := range a.Actions {
			k := actionIndex(act)
			if k < 0 {
				return nil, false
			}
			ar.actions[k] = true
		}
		if r.Byte() != actionMask(ar.actions) || r.Byte() != byte(a.Level) {
			return nil, false
		}
		ar.level = a.Level
		start := len(pats)
		pats = r.pats(pats, a.Pattern)
		ar.pats = pats[start:len(pats):len(pats)]
	}
	if !r.Done() {
		return nil, false
	}
	return c, true
}
