package nestedgit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// modeGitlink is the mode of an index entry that records a commit of
// another repository (a submodule, or any repository added with git add);
// modeDir that of a sparse index's entry for a whole directory.
const (
	modeGitlink = 0o160000
	modeDir     = 0o040000
)

// Hash sizes of git's object formats.
const (
	sha1Size   = 20
	sha256Size = 32
)

// ErrIndex is wrapped by every error gitlinks returns: the data is not a
// git index this reader understands.
var ErrIndex = errors.New("not a git index")

// gitlinks returns the paths of the gitlink entries of a git index (the
// file .git/index, versions 2, 3 and 4), with object ids hashSize bytes
// long. Only what it needs is read: each entry's mode and name, and the
// extensions' signatures. A split index is an error here (its entries are
// partly in a shared index file): splitIndex reads one whole.
func gitlinks(data []byte, hashSize int) ([]string, error) {
	x, err := readIndex(data, hashSize)
	if err != nil {
		return nil, err
	}
	if x.shared != nil {
		return nil, fmt.Errorf("%w: a split index (its entries are in sharedindex.%x)", ErrIndex, x.shared)
	}
	return x.links, nil
}

// An index is what readIndex reads of one.
type index struct {
	links []string // the gitlink entries' paths
	names []string // every entry's path, when the caller asked (all)
	// shared is the id of the shared index a split index's "link"
	// extension names (nil for any other index); replacedLink says one
	// of its entries replaces a shared entry (whose path it does not
	// repeat) with a gitlink.
	shared       []byte
	replacedLink bool
	// escapes is the first entry path git would not write (escapingPath):
	// git reads it all the same, as a path from the work tree, and goes
	// outside it (../../.ssh/id_rsa, /home/user/.cache/repo).
	escapes string
}

// escapingPath reports whether an index entry's path is one git never
// writes (its verify_path refuses it): absolute, with an empty, "." or
// ".." component, or a .git component in any case. git still reads such
// an entry, and follows it out of the work tree.
func escapingPath(name []byte) bool {
	if len(name) == 0 || name[0] == '/' {
		return true
	}
	for _, c := range bytes.Split(name, []byte{'/'}) {
		if len(c) == 0 || string(c) == "." || string(c) == ".." || bytes.EqualFold(c, []byte(".git")) {
			return true
		}
	}
	return false
}

// readIndex reads a git index. With all it lists every entry's path too.
//
// Of the extensions git requires a reader to understand, "link" (a split
// index: entries replacing those of a shared index have empty paths, and
// the shared index holds the rest) is read, and "sdir" (a sparse index:
// directories outside the sparse cone folded into single entries; git
// checks nothing out there, and enters no repository) is passed over; any
// other is an error (Reachable then searches the work tree), as it is to
// git. The trailing checksum is not verified (index.skipHash leaves it
// zero).
//
// git's own code and go-git's index decoder were the alternatives: running
// git on the host in a repository the agent wrote is what this package is
// there to make safe, and go-git v5 reads only SHA-1 repositories (its
// SHA-256 support is in the v6 pre-release) while bringing twenty modules
// into the build. This reader is fuzzed (FuzzGitlinks).
func readIndex(data []byte, hashSize int, all ...bool) (*index, error) {
	x := &index{}
	wantAll := len(all) > 0 && all[0]
	emptyNames := false
	if hashSize != sha1Size && hashSize != sha256Size {
		return nil, fmt.Errorf("%w: hash size %d", ErrIndex, hashSize)
	}
	if len(data) < 12 || !bytes.Equal(data[:4], []byte("DIRC")) {
		return nil, fmt.Errorf("%w: no DIRC header", ErrIndex)
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: version %d", ErrIndex, version)
	}
	count := binary.BigEndian.Uint32(data[8:12])
	// 40 bytes of stat data, the object id, 2 bytes of flags, and at
	// least a NUL after the name.
	fixed := 40 + hashSize + 2
	if uint64(count) > uint64(len(data)-12)/uint64(fixed+1) {
		return nil, fmt.Errorf("%w: %d entries cannot fit in %d bytes", ErrIndex, count, len(data))
	}
	var (
		prev []byte
		pos  = 12
	)
	for i := uint32(0); i < count; i++ {
		start := pos
		if len(data)-pos < fixed {
			return nil, fmt.Errorf("%w: entry %d is cut short", ErrIndex, i)
		}
		mode := binary.BigEndian.Uint32(data[pos+24 : pos+28])
		flags := binary.BigEndian.Uint16(data[pos+40+hashSize : pos+fixed])
		pos += fixed
		if flags&0x4000 != 0 { // extended flags
			if version < 3 {
				return nil, fmt.Errorf("%w: entry %d has extended flags in version %d", ErrIndex, i, version)
			}
			if len(data)-pos < 2 {
				return nil, fmt.Errorf("%w: entry %d is cut short", ErrIndex, i)
			}
			pos += 2
		}
		var name []byte
		if version == 4 {
			strip, n, err := offsetVarint(data[pos:])
			if err != nil {
				return nil, fmt.Errorf("%w: entry %d: %v", ErrIndex, i, err)
			}
			pos += n
			if strip > uint64(len(prev)) {
				return nil, fmt.Errorf("%w: entry %d strips %d bytes of a %d-byte name", ErrIndex, i, strip, len(prev))
			}
			end := bytes.IndexByte(data[pos:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d has no end to its name", ErrIndex, i)
			}
			name = append(append([]byte(nil), prev[:uint64(len(prev))-strip]...), data[pos:pos+end]...)
			pos += end + 1
		} else {
			end := bytes.IndexByte(data[pos:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d has no end to its name", ErrIndex, i)
			}
			if l := int(flags & 0xfff); l < 0xfff && l != end {
				return nil, fmt.Errorf("%w: entry %d's name is %d bytes, its flags say %d", ErrIndex, i, end, l)
			}
			name = data[pos : pos+end]
			// 1 to 8 NUL bytes pad the entry to a multiple of 8.
			pad := 8 - (pos+end-start)%8
			if len(data)-(pos+end) < pad {
				return nil, fmt.Errorf("%w: entry %d is cut short", ErrIndex, i)
			}
			for _, b := range data[pos+end : pos+end+pad] {
				if b != 0 {
					return nil, fmt.Errorf("%w: entry %d's padding is not NUL", ErrIndex, i)
				}
			}
			pos += end + pad
		}
		if len(name) == 0 {
			// Only a split index's entries that replace shared ones.
			emptyNames = true
			if mode&0o170000 == modeGitlink {
				x.replacedLink = true
			}
			continue
		}
		prev = name
		// A sparse index folds a directory outside the sparse cone into
		// one entry, its path ending in a slash.
		if clean := name; x.escapes == "" {
			if mode&0o170000 == modeDir && bytes.HasSuffix(clean, []byte{'/'}) {
				clean = clean[:len(clean)-1]
			}
			if escapingPath(clean) {
				x.escapes = string(name)
			}
		}
		if mode&0o170000 == modeGitlink {
			x.links = append(x.links, string(name))
		}
		if wantAll {
			x.names = append(x.names, string(name))
		}
	}
	// The extensions, then the checksum. One whose signature does not
	// start with an upper-case letter is one git requires a reader to
	// understand, and this one does not: a split index ("link") keeps
	// entries in a sharedindex file, a sparse index ("sdir") folds
	// directories into single entries, so a gitlink may be in neither
	// list above. Such an index is an error (Reachable then searches the
	// work tree), as it is to git.
	for len(data)-pos > hashSize {
		if len(data)-pos-hashSize < 8 {
			return nil, fmt.Errorf("%w: an extension is cut short", ErrIndex)
		}
		sig := data[pos : pos+4]
		size := binary.BigEndian.Uint32(data[pos+4 : pos+8])
		if uint64(size) > uint64(len(data)-pos-hashSize-8) {
			return nil, fmt.Errorf("%w: the extension %q is cut short", ErrIndex, sig)
		}
		switch {
		case string(sig) == "link":
			if size < uint32(hashSize) {
				return nil, fmt.Errorf("%w: the split index's link is cut short", ErrIndex)
			}
			x.shared = bytes.Clone(data[pos+8 : pos+8+hashSize])
		case string(sig) == "sdir":
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, fmt.Errorf("%w: the required extension %q is not read here", ErrIndex, sig)
		}
		pos += 8 + int(size)
	}
	if len(data)-pos != hashSize {
		return nil, fmt.Errorf("%w: no checksum after the entries", ErrIndex)
	}
	if emptyNames && x.shared == nil {
		return nil, fmt.Errorf("%w: an entry has an empty name", ErrIndex)
	}
	return x, nil
}

// splitIndex is the gitlinks of a split index x of gitDir: its own, and
// those of the shared index it names (a shared entry it deletes is still
// listed: a path listed that holds no repository is passed over). When
// one of its entries replaces a shared entry with a gitlink, every path of
// the shared index is listed, since which one it replaces is not read here.
func splitIndex(gitDir string, x *index, hashSize int) (links []string, escapes string, err error) {
	name := fmt.Sprintf("sharedindex.%x", x.shared)
	data, err := readFile(filepath.Join(gitDir, name))
	if err != nil {
		return nil, "", fmt.Errorf("the split index's %s: %w", name, err)
	}
	sh, err := readIndex(data, hashSize, x.replacedLink)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	if sh.shared != nil {
		return nil, "", fmt.Errorf("%w: %s is itself split", ErrIndex, name)
	}
	links = append(slices.Clone(x.links), sh.links...)
	if x.replacedLink {
		links = append(links, sh.names...)
	}
	slices.Sort(links)
	return slices.Compact(links), sh.escapes, nil
}

// offsetVarint decodes git's variable-length integer of index version 4
// (varint.c): seven bits a byte, most significant first, each further
// byte adding one before the shift.
func offsetVarint(b []byte) (v uint64, n int, err error) {
	for {
		if n >= len(b) || n > 9 {
			return 0, 0, errors.New("a bad variable-length integer")
		}
		c := b[n]
		n++
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			return v, n, nil
		}
		v++
	}
}
