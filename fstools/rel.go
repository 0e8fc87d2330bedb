package fstools

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

// MaxNameLen is the longest name, in bytes, that the tools accept.
const MaxNameLen = 4096

// Rel turns a name given by a caller into the clean, slash-separated path
// relative to the root that the tools use; the root itself is ".". A relative
// name is taken relative to the root. An absolute name must lie lexically inside
// Dir (or inside the directory Dir resolved to when the root was opened) and is
// made relative. Cleaning is lexical, like filepath.Clean: no symlink is
// consulted, and there is no "~" expansion.
//
// Rel refuses an empty name, a name with a NUL byte, invalid UTF-8 or more than
// MaxNameLen bytes, an absolute name outside the root, and a name whose ".."
// elements climb above the root.
func (r *Root) Rel(name string) (string, error) {
	rel, _, err := r.resolve(name)
	return rel, err
}

// resolve is Rel that also reports whether name can only name a directory:
// it ends in a slash, or its last element is "." or "..".
func (r *Root) resolve(name string) (rel string, dirOnly bool, err error) {
	switch {
	case name == "":
		return "", false, warden.Errorf(warden.EInvalid, "empty file name").
			WithHint("give a path relative to the root " + r.dir + `, or "." for the root itself`)
	case len(name) > MaxNameLen:
		return "", false, warden.Errorf(warden.EInvalid, "file name %q... is %d bytes long; the limit is %d", name[:40], len(name), MaxNameLen).
			WithHint("use a shorter path")
	case strings.IndexByte(name, 0) >= 0:
		return "", false, warden.Errorf(warden.EInvalid, "file name %q contains a NUL byte", name).
			WithHint("file names cannot contain NUL; remove it")
	case !utf8.ValidString(name):
		return "", false, warden.Errorf(warden.EInvalid, "file name %q is not valid UTF-8", name).
			WithHint("give the name as UTF-8 text")
	}
	dirOnly = strings.HasSuffix(name, "/") || strings.HasSuffix(name, string(filepath.Separator))
	if last := name[strings.LastIndexAny(name, "/"+string(filepath.Separator))+1:]; last == "." || last == ".." {
		dirOnly = true
	}

	if filepath.IsAbs(name) {
		rel, ok := within(r.dir, name)
		if !ok && r.real != r.dir {
			rel, ok = within(r.real, name)
		}
		if !ok {
			return "", false, warden.Errorf(warden.EInvalid, "%q is outside the root %s; file tools only reach files below it", name, r.dir).
				WithHint("give a path inside the root, or relative to it")
		}
		return filepath.ToSlash(rel), dirOnly, nil
	}
	rel = filepath.Clean(name)
	if climbs(rel) {
		return "", false, warden.Errorf(warden.EInvalid, "%q leaves the root %s; file tools only reach files below it", name, r.dir).
			WithHint(`remove the ".." elements that climb above the root`)
	}
	return filepath.ToSlash(rel), dirOnly, nil
}

// within returns abs relative to dir, if abs lies lexically inside dir.
func within(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, filepath.Clean(abs))
	if err != nil || climbs(rel) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// climbs reports whether the clean relative path rel starts with "..".
func climbs(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
