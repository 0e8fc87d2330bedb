//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// complement lists what to grant so that everything beneath root can be
// read except the excluded paths: full are the entries whose whole tree is
// readable, list the directories on the way to an excluded path, which may
// only be listed. A directory that cannot be read is granted whole (the
// kernel's own permissions still apply inside it).
func complement(root string, excluded []string) (full, list []string) {
	root = filepath.Clean(root)
	var ex []string
	for _, e := range excluded {
		if e = filepath.Clean(e); within(e, root) {
			ex = append(ex, e)
		}
	}
	var walk func(dir string)
	walk = func(dir string) {
		if slices.Contains(ex, dir) {
			return
		}
		if !slices.ContainsFunc(ex, func(e string) bool { return within(e, dir) }) {
			full = append(full, dir)
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			full = append(full, dir)
			return
		}
		list = append(list, dir)
		for _, e := range entries {
			walk(filepath.Join(dir, e.Name()))
		}
	}
	walk(root)
	return full, list
}

// protectedPaths lists the protected paths of s that lie in a writable
// directory and so need a read-only mount of their own. A path written
// with a trailing slash is a directory: when it is missing (and its parent
// exists) it is created empty, so that the command cannot create it with
// contents of its own. A missing file is left out. Without a mount
// namespace nothing can be protected, which the warning says.
func protectedPaths(s *Spec, writable []string, mode Mode) (out, warn []string, err error) {
	for _, raw := range s.Protected {
		dir := strings.HasSuffix(raw, "/")
		p := filepath.Clean(raw)
		if !filepath.IsAbs(p) {
			return nil, nil, fmt.Errorf("protected path %q is not absolute", raw)
		}
		if !slices.ContainsFunc(writable, func(w string) bool { return w != "" && within(p, w) && p != w }) {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if !dir {
				continue
			}
			if _, err := os.Stat(filepath.Dir(p)); err != nil {
				continue
			}
			if !mode.Namespaces() {
				continue
			}
			if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, nil, fmt.Errorf("create the protected directory %s: %w", p, err)
			}
		} else if err != nil {
			return nil, nil, fmt.Errorf("protected path %s: %w", p, err)
		}
		if !mode.Namespaces() {
			warn = append(warn, fmt.Sprintf("without a mount namespace %s cannot be kept read-only", p))
			continue
		}
		out = append(out, p)
	}
	return out, warn, nil
}
