//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A mask hides a path, not a file: a hard link made earlier on the host
// gives the same file a second name, and where that name is readable the
// mask hides nothing. Inside the sandbox no new link to a masked file can be
// made (its path is /dev/null or an empty tmpfs, and Landlock refuses to
// link across directories without the REFER right), so the names to find
// are the ones that already exist.

// Budgets of the hard-link search, in directory entries.
const (
	// linkTreeBudget bounds the walk of each denied tree for files with
	// more than one name, and linkSecretBudget all those walks together: a
	// larger tree (a browser profile, a kube cache) is examined only in
	// part. Each entry costs about a microsecond and a half, every run.
	linkTreeBudget   = 1000
	linkSecretBudget = 4000
	// linkSearchBudget bounds the search of the readable directories for
	// those files' other names. It is spent only when a denied file has
	// more than one name.
	linkSearchBudget = 20000
)

// inode identifies a file across its names.
type inode struct{ dev, ino uint64 }

// linkedSecret is a denied file with more than one name.
type linkedSecret struct {
	path  string // its name under a denied path, for the warning
	nlink uint64
	seen  uint64 // names found so far, in denied trees or the search
}

// hideLinks completes masksFor: it finds the other names of the denied files
// that have several, where the command could read them, and masks those too
// (in light mode, where nothing can be masked, it refuses instead). A file
// whose names it could not all find, where the search of what the command
// can read stopped short (its budget, node_modules), is named in a warning;
// one whose other names lie only where the command cannot read needs
// nothing. It passes an error from masksFor through.
func hideLinks(roots, granted []string, mode Mode, masks, warn []string, err error) ([]string, []string, error) {
	if err != nil {
		return masks, warn, err
	}
	denied := hiddenOutsideSystem(roots)
	for _, pat := range systemSecrets {
		m, _ := filepath.Glob(pat)
		denied = append(denied, m...)
	}
	denied = outermost(denied)
	secrets := linkedFiles(denied, linkTreeBudget, linkSecretBudget)
	if len(secrets) == 0 {
		return masks, warn, nil
	}
	names, partial := findNames(linkSearchRoots(granted, denied, mode), denied, secrets, mode, linkSearchBudget)
	for _, n := range names {
		if !mode.Namespaces() {
			return nil, nil, fmt.Errorf("%s is a hard link to the denied path %s, and light mode cannot hide it; remove the link, or use standard mode", n.name, n.secret)
		}
		if !slices.Contains(masks, n.name) {
			masks = append(masks, n.name)
		}
	}
	if partial {
		var unfound []string
		for _, s := range secrets {
			if s.seen < s.nlink {
				unfound = append(unfound, s.path)
			}
		}
		slices.Sort(unfound)
		for _, path := range unfound {
			warn = append(warn, fmt.Sprintf("the denied file %s has hard links warden did not find in what the command can read; they may expose it (list them with: find / -xdev -samefile %s)", path, path))
		}
	}
	return masks, warn, nil
}

// outermost drops the paths that lie beneath another in the list, and
// duplicates.
func outermost(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(out, func(o string) bool { return within(p, o) }) {
			out = append(out, p)
		}
	}
	return out
}

// linkedFiles finds the regular files with more than one name under the
// denied paths, walking each denied tree up to perTree entries and all of
// them up to total. Names found twice under denied paths count as seen:
// they are hidden already.
func linkedFiles(denied []string, perTree, total int) map[inode]*linkedSecret {
	found := map[inode]*linkedSecret{}
	note := func(path string, st *syscall.Stat_t) {
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink < 2 {
			return
		}
		id := inode{uint64(st.Dev), st.Ino}
		if s, ok := found[id]; ok {
			s.seen++
			return
		}
		found[id] = &linkedSecret{path: path, nlink: uint64(st.Nlink), seen: 1}
	}
	for _, root := range denied {
		if _, ok := lstat(root); !ok {
			continue // most denied paths are stores this user does not have
		}
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r // a denied ~/.ssh that links to where the keys are
		}
		left := min(perTree, total)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if left--; left < 0 {
				return filepath.SkipAll
			}
			total--
			if d.Type().IsRegular() {
				if st, ok := lstat(path); ok {
					note(path, st)
				}
			}
			return nil
		})
	}
	return found
}

// linkSearchRoots picks the granted paths to search for other names, the
// most specific first (the project, the workspace, the writable and further
// readable paths), then the broader ones a whole-filesystem grant
// (Spec.ReadAll) is made of. Left out are the system roots (only root
// writes there), /proc, /dev, /sys, the private /tmp of namespace modes,
// and what lies under a denied path (hidden already).
func linkSearchRoots(granted, denied []string, mode Mode) []string {
	var roots []string
	for _, g := range granted {
		g = filepath.Clean(g)
		switch {
		case g == "" || !filepath.IsAbs(g) || slices.Contains(roots, g):
		case within(g, "/proc") || within(g, "/dev") || within(g, "/sys"):
		case g != "/" && slices.ContainsFunc(systemRoots, func(r string) bool { return within(g, r) }):
		case g == "/tmp" && mode.Namespaces():
		case slices.ContainsFunc(denied, func(d string) bool { return within(g, d) }):
		default:
			roots = append(roots, g)
		}
	}
	depth := func(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }
	slices.SortStableFunc(roots, func(a, b string) int { return depth(b) - depth(a) })
	return roots
}

// linkName is another name of a denied file.
type linkName struct{ name, secret string }

// findNames searches roots in order, up to budget entries, for other names
// of the secrets. It never enters a root searched before, the denied trees
// (their names are hidden already), the system roots, /proc, /dev, /sys,
// the private /tmp of namespace modes, node_modules (package managers' hard
// links) or .git/objects. exhausted says the search stopped or skipped a
// tree before it was done.
func findNames(roots, denied []string, secrets map[inode]*linkedSecret, mode Mode, budget int) (names []linkName, exhausted bool) {
	left := budget
	var done []string
	skip := func(dir string) bool {
		switch {
		case slices.Contains(done, dir), slices.Contains(denied, dir):
			return true
		case dir == "/proc" || dir == "/dev" || dir == "/sys" || dir == "/tmp" && mode.Namespaces():
			return true
		}
		return slices.Contains(systemRoots, dir)
	}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if left--; left < 0 {
				exhausted = true
				return filepath.SkipAll
			}
			if slices.ContainsFunc(denied, func(h string) bool { return within(path, h) }) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if path != root && skip(path) {
					return filepath.SkipDir
				}
				if d.Name() == "node_modules" || d.Name() == "objects" && filepath.Base(filepath.Dir(path)) == ".git" {
					exhausted = true
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			st, ok := lstat(path)
			if !ok || st.Nlink < 2 {
				return nil
			}
			if s, ok := secrets[inode{uint64(st.Dev), st.Ino}]; ok {
				if slices.ContainsFunc(names, func(n linkName) bool { return n.name == path }) {
					return nil
				}
				s.seen++
				names = append(names, linkName{path, s.path})
			}
			return nil
		})
		if left < 0 {
			break
		}
		done = append(done, root)
	}
	return names, exhausted
}

func lstat(path string) (*syscall.Stat_t, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return nil, false
	}
	return &st, true
}
