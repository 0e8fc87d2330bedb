package fstools

import (
	"bytes"
	"io/fs"
	"os"
	"regexp"
	"unicode/utf8"

	"github.com/agentwarden/warden"
)

const (
	// MaxMatchText is the most bytes of a line that a Match holds.
	MaxMatchText = 512

	// binarySniffLen is how much of a file is looked at for a NUL byte, the
	// sign of a binary file.
	binarySniffLen = 8 << 10
)

// Match is one line that Search found.
type Match struct {
	Path string // the file, relative to the root, slash-separated
	Line int    // 1-based line number
	Text string // the line without its line ending, cut to MaxMatchText bytes
}

// Search returns the lines matching re in the regular files below dir (or in
// dir itself, if it names a file), in path order and then line order. dir may
// be a symlink to a directory inside the root, like List's argument. It walks
// the tree without following symlinks: a symlink inside the tree, to a file or
// a directory, is skipped. It also skips binary files (a NUL byte in the first
// 8 KiB), files larger than the search file limit, and directories it cannot
// read. After the result limit, it stops and reports truncated.
//
// skip, when not nil, is asked about every file and directory below dir (by
// its root-relative path) before it is read or entered; true leaves it out.
// The caller uses it to apply its path policy to each file the walk reaches.
func (r *Root) Search(dir string, re *regexp.Regexp, skip func(rel string, isDir bool) bool) (matches []Match, truncated bool, err error) {
	if re == nil {
		return nil, false, warden.Errorf(warden.EInvalid, "no pattern to search for").
			WithHint("give a regular expression")
	}
	rel, dirOnly, err := r.resolve(dir)
	if err != nil {
		return nil, false, err
	}
	err = fs.WalkDir(r.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == rel {
				return err // the starting point itself cannot be read
			}
			return nil // skip what vanished or cannot be read
		}
		if p == rel && dirOnly && !d.IsDir() {
			return errNotDir(dir)
		}
		if p != rel && skip != nil && skip(p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // descends into directories, skips everything else
		}
		matches, truncated = r.searchFile(p, re, matches)
		if truncated {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, false, r.pathError("search", dir, err)
	}
	return matches, truncated, nil
}

// searchFile appends the matches in the file p to out. It reports whether the
// result limit was hit, in which case out holds exactly the limit.
func (r *Root) searchFile(p string, re *regexp.Regexp, out []Match) ([]Match, bool) {
	f, err := r.root.OpenFile(p, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return out, false // vanished or replaced since the directory was read
	}
	defer f.Close()
	data, _, err := readRegular(f, p, r.lim.MaxSearchFileBytes, "the search file limit")
	if err != nil {
		return out, false
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return out, false
	}
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !re.Match(line) {
			continue
		}
		if len(out) == r.lim.MaxResults {
			return out, true
		}
		out = append(out, Match{Path: p, Line: n, Text: cutLine(line)})
	}
	return out, false
}

// cutLine returns line cut to at most MaxMatchText bytes, not in the middle of
// a UTF-8 character.
func cutLine(line []byte) string {
	if len(line) <= MaxMatchText {
		return string(line)
	}
	cut := MaxMatchText
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(line[cut]); i++ {
		cut--
	}
	return string(line[:cut])
}
