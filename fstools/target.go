package fstools

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"syscall"

	"github.com/agentwarden/warden"
)

// target is a file that Write, Append or Patch is about to create or change:
// its parent directory, held open as a root of its own so that every step
// works in that one directory even if a path above it is swapped, and its name
// in that directory.
type target struct {
	r    *Root
	dir  *os.Root
	base string
	rel  string // the root-relative path
	name string // as the caller gave it, for messages
}

// openTarget opens the directory of name for op ("write", ...).
func (r *Root) openTarget(op, name string) (*target, error) {
	rel, dirOnly, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	if dirOnly {
		return nil, errDirOnly(op, name)
	}
	if rel == "." {
		return nil, r.errIsRoot(op, name)
	}
	parent, base := path.Split(rel)
	if parent == "" {
		parent = "."
	}
	dir, err := r.root.OpenRoot(parent)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, warden.Errorf(warden.ENotFound, "the directory %q of %q does not exist in the root %s", path.Clean(parent), name, r.dir).
				WithHint("create the directory with Mkdir first").Wrap(err)
		}
		return nil, r.pathError(op, name, err)
	}
	return &target{r: r, dir: dir, base: base, rel: rel, name: name}, nil
}

func (t *target) close() { t.dir.Close() }

// existing returns the FileInfo of the file that is there now, or nil if there
// is none. Anything but a regular file, a symlink included, is an error.
func (t *target) existing(op string) (fs.FileInfo, error) {
	fi, err := t.dir.Lstat(t.base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, t.r.pathError(op, t.name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular(op, t.name, fi.Mode())
	}
	return fi, nil
}

// replace puts data in place of the file atomically: it writes a temporary
// file in the same directory, syncs it, renames it over the name and syncs the
// directory. A reader sees the old content or the new, never a mix. With exact
// the file gets exactly perm; otherwise perm is reduced by the umask, as for a
// new file. On error the name is unchanged and the temporary file is removed.
func (t *target) replace(op string, data []byte, perm fs.FileMode, exact bool) (err error) {
	tmp, f, err := t.createTemp(op, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			t.dir.Remove(tmp)
		}
	}()
	_, err = f.Write(data)
	if err == nil && exact {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return warden.Errorf(warden.EInternal, "cannot %s %q: writing the temporary file failed", op, t.name).
			WithHint("check that the file system has space; the file is unchanged").Wrap(err)
	}
	if err = t.dir.Rename(tmp, t.base); err != nil {
		if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return warden.Errorf(warden.EConflict, "%q became a directory while being written; nothing was written", t.name).
				WithHint("choose another name, or delete the directory first").Wrap(err)
		}
		return t.r.pathError(op, t.name, err)
	}
	if err := t.syncDir(); err != nil {
		return warden.Errorf(warden.EInternal, "wrote %q but could not sync its directory; the change may not survive a crash", t.name).Wrap(err)
	}
	return nil
}

// createTemp creates a new, empty temporary file beside the target.
func (t *target) createTemp(op string, perm fs.FileMode) (string, *os.File, error) {
	prefix := t.base
	if len(prefix) > 100 {
		prefix = prefix[:100]
	}
	var err error
	for range 10 {
		tmp := fmt.Sprintf(".%s.tmp-%016x", prefix, rand.Uint64())
		var f *os.File
		f, err = t.dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return tmp, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", nil, t.r.pathError(op, t.name, err)
}

// syncDir flushes the directory, making a rename or a new name durable.
func (t *target) syncDir() error {
	d, err := t.dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err // EINVAL: the file system cannot sync directories
	}
	return nil
}
