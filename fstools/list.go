package fstools

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentwarden/warden"
)

// Entry describes one file, as List and Stat report it. A symlink is described
// itself, not its target.
type Entry struct {
	Name    string      // the last element of the path; "." for the root
	Type    string      // "file", "dir", "symlink" or "other"
	Size    int64       // in bytes; for a symlink, the length of its target
	Mode    fs.FileMode // type and permission bits
	ModTime time.Time
}

func entryOf(name string, fi fs.FileInfo) Entry {
	typ := "other"
	switch m := fi.Mode(); {
	case m.IsRegular():
		typ = "file"
	case m.IsDir():
		typ = "dir"
	case m&fs.ModeSymlink != 0:
		typ = "symlink"
	}
	return Entry{Name: name, Type: typ, Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
}

// List returns the entries of the directory name, one level deep, sorted by
// name. name may be a symlink to a directory inside the root; the entries are
// described as Stat describes them, so symlinks among them are not followed.
// A directory with more entries than the entry limit is an error: List never
// returns part of a directory.
func (r *Root) List(name string) ([]Entry, error) {
	rel, _, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(rel, noBlock, 0)
	if err != nil {
		return nil, r.pathError("list", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, warden.Errorf(warden.EInternal, "cannot stat %q", name).Wrap(err)
	}
	if !fi.IsDir() {
		return nil, warden.Errorf(warden.EInvalid, "%q is not a directory; List lists directories", name).
			WithHint("use Stat or Read for a file")
	}
	var entries []Entry
	for {
		// A file opened in an os.Root describes each entry with fstatat
		// relative to the directory, never through a path.
		batch, err := f.ReadDir(min(1024, r.lim.MaxEntries+1))
		for _, d := range batch {
			info, ierr := d.Info()
			if ierr != nil {
				continue // removed since the directory was read
			}
			entries = append(entries, entryOf(d.Name(), info))
		}
		if len(entries) > r.lim.MaxEntries {
			return nil, warden.Errorf(warden.EInvalid, "%q has more than %d entries, the entry limit", name, r.lim.MaxEntries).
				WithHint("List never returns part of a directory; use Search, or raise the entry limit")
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, warden.Errorf(warden.EInternal, "cannot list %q", name).Wrap(err)
		}
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// Stat describes the file name without following a symlink at its end. A name
// ending in a slash must name a directory, and then a symlink at its end is
// followed, as the operating system does.
func (r *Root) Stat(name string) (Entry, error) {
	rel, dirOnly, err := r.resolve(name)
	if err != nil {
		return Entry{}, err
	}
	stat := r.root.Lstat
	if dirOnly {
		stat = r.root.Stat
	}
	fi, err := stat(rel)
	if err != nil {
		return Entry{}, r.pathError("stat", name, err)
	}
	if dirOnly && !fi.IsDir() {
		return Entry{}, errNotDir(name)
	}
	return entryOf(path.Base(rel), fi), nil
}

func errNotDir(name string) error {
	return warden.Errorf(warden.EInvalid, "%q ends in a slash but is not a directory", name).
		WithHint("give the name without the trailing slash")
}
