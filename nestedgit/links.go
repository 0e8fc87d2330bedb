package nestedgit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentwarden/warden/internal/safedir"
)

// gitLinks lists the symbolic links in the git directory dir, by their
// path under it, with where each leads. git on the host reads the files of
// a git directory through a link and prints what it read in its status
// and its errors (BISECT_START, rebase-merge/head-name, shallow,
// objects/info/alternates, packed-refs, a ref); none of git's own is a
// link. It walks without following a link, and passes over objects/
// but for objects/info: git reads objects and packs only as such, and
// never prints one.
//
// It has no bound but depth: a command that fills a git directory with
// entries to hide a link past a bound would have it left there. What it
// costs such a command is its own time.
func gitLinks(dir *safedir.Dir) (map[string]string, error) {
	out := map[string]string{}
	err := walkLinks(dir, "", 0, out)
	return out, err
}

func walkLinks(dir *safedir.Dir, rel string, depth int, out map[string]string) error {
	entries, err := dir.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		path := name
		if rel != "" {
			path = rel + "/" + name
		}
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(dir.Path() + "/" + name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[path] = target
		case e.IsDir():
			if rel == "objects" && name != "info" || depth >= maxDepth {
				continue
			}
			// git opens a file in a directory it cannot list: so does
			// the walk, made able to list it.
			sub, err := dir.SubListable(name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			err = walkLinks(sub, path, depth+1, out)
			sub.Close()
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// linksOf is gitLinks of the git directory at gitDir (where it really is),
// nil when it cannot be opened.
func linksOf(gitDir string) map[string]string {
	d, err := openListable(gitDir)
	if err != nil {
		return nil
	}
	defer d.Close()
	links, _ := gitLinks(d)
	return links
}

// removeNewLinks removes from the git directory of f (where it really is)
// every link that is not in before with the same target, and records each
// in f (Links) and in a RESTORE.txt under quarantine. It returns the links
// left (before's that are still there).
func removeNewLinks(f *Finding, before map[string]string, writable func(string) bool, quarantine string, now time.Time) map[string]string {
	d, err := openListable(f.GitDir)
	if err != nil {
		f.Err = errors.Join(f.Err, err)
		return before
	}
	defer d.Close()
	links, err := gitLinks(d)
	if err != nil {
		f.Err = errors.Join(f.Err, fmt.Errorf("look for links in %s: %w", f.GitDir, err))
	}
	var gone []string
	for path, target := range links {
		if t, ok := before[path]; ok && t == target {
			continue
		}
		if err := removeUnder(d, path); err != nil {
			f.Err = errors.Join(f.Err, fmt.Errorf("remove the link %s: %w", filepath.Join(f.GitDir, path), err))
			continue
		}
		gone = append(gone, path)
		f.Links = append(f.Links, path+" -> "+target)
		delete(links, path)
	}
	gone = append(gone, alternateLinks(filepath.Join(f.GitDir, "objects"), writable, 0, f)...)
	sort.Strings(f.Links)
	if len(gone) > 0 {
		dst := quarantineDir(quarantine, f.GitDir, now)
		if f.Moved != "" {
			dst = f.Moved
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			f.Err = errors.Join(f.Err, err)
		} else {
			f.Moved = dst
			if err := os.WriteFile(filepath.Join(dst, "RESTORE.txt"), []byte(restoreText(*f)), 0o600); err != nil {
				f.Err = errors.Join(f.Err, err)
			}
		}
	}
	return links
}

// openListable opens the directory at path as safedir.Open does, made
// listable by its owner first when it is not (SubListable).
func openListable(path string) (*safedir.Dir, error) {
	d, err := safedir.Open(path)
	if !errors.Is(err, syscall.EACCES) {
		return d, err
	}
	parent, perr := safedir.Open(filepath.Dir(path))
	if perr != nil {
		return nil, err
	}
	defer parent.Close()
	return parent.SubListable(filepath.Base(path))
}

// removeUnder removes the link at path (slash-separated) under d, through
// descriptors that follow no link on the way; unlinkat never follows the
// link it removes.
func removeUnder(d *safedir.Dir, path string) error {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return os.Remove(d.Path() + "/" + path)
	}
	sub, err := openUnder(d, path[:i])
	if err != nil {
		return err
	}
	defer sub.Close()
	return os.Remove(sub.Path() + "/" + path[i+1:])
}

// openUnder opens the directory rel (slash-separated) under d, one
// component at a time, following no link.
func openUnder(d *safedir.Dir, rel string) (*safedir.Dir, error) {
	cur := d
	for c := range strings.SplitSeq(rel, "/") {
		next, err := cur.Sub(c)
		if cur != d {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// quarantineDir is the directory under quarantine for what a sweep takes
// out of gitDir at now.
func quarantineDir(quarantine, gitDir string, now time.Time) string {
	return filepath.Join(quarantine, now.UTC().Format("20060102T150405.000000000Z")+"-git-"+strings.ReplaceAll(strings.TrimPrefix(gitDir, "/"), "/", "_"))
}

// maxAlternateDepth is how deep git follows alternates that name
// alternates (five, in git's object store).
const maxAlternateDepth = 5

// alternateLinks looks at the object directories objects/info/alternates
// of objectsDir names, and those they name in turn as deep as git follows
// them, that lie in what the command could write: there a link git would
// read through (the directory's info, its info/alternates) is removed and
// recorded in f (by its absolute path). git reads each alternates file and
// prints a line it cannot use in its error; a directory outside every git
// directory (vendor/objs, a tool cache) is in no walk of gitLinks. It
// returns the paths it removed.
func alternateLinks(objectsDir string, writable func(string) bool, depth int, f *Finding) []string {
	if depth >= maxAlternateDepth {
		return nil
	}
	file := filepath.Join(objectsDir, "info", "alternates")
	if st, err := os.Lstat(file); err != nil || !st.Mode().IsRegular() || st.Size() > maxConfig {
		return nil
	}
	data, err := readFile(file)
	if err != nil {
		return nil
	}
	var gone []string
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			if unq, err := strconv.Unquote(line); err == nil {
				line = unq
			}
		}
		dir := line
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(objectsDir, dir)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(dir))
		if err != nil || !writable(real) {
			continue // not there, or not what the command could write
		}
		d, err := safedir.Open(real)
		if err != nil {
			continue
		}
		for _, rel := range []string{"info", "info/alternates"} {
			st, err := os.Lstat(d.Path() + "/" + rel)
			if err != nil || st.Mode()&os.ModeSymlink == 0 {
				continue
			}
			target, _ := os.Readlink(d.Path() + "/" + rel)
			if err := removeUnder(d, rel); err != nil {
				f.Err = errors.Join(f.Err, fmt.Errorf("remove the link %s: %w", filepath.Join(real, rel), err))
				continue
			}
			path := filepath.Join(real, rel)
			gone = append(gone, path)
			f.Links = append(f.Links, path+" -> "+target)
		}
		d.Close()
		gone = append(gone, alternateLinks(real, writable, depth+1, f)...)
	}
	return gone
}
