package fstools

import (
	"errors"
	"syscall"

	"github.com/agentwarden/warden"
)

// Delete removes the file name: a regular file, a symlink (the link itself,
// never its target) or an empty directory. A directory that is not empty is an
// error: Delete never removes a tree. The root itself cannot be deleted.
func (r *Root) Delete(name string) error {
	rel, dirOnly, err := r.resolve(name)
	if err != nil {
		return err
	}
	if rel == "." {
		return warden.Errorf(warden.EInvalid, "%q is the root directory %s; it cannot be deleted", name, r.dir).
			WithHint("delete files below the root instead")
	}
	fi, err := r.root.Lstat(rel)
	if err != nil {
		return r.pathError("delete", name, err)
	}
	if dirOnly && !fi.IsDir() {
		return errNotDir(name)
	}
	if err := r.root.Remove(rel); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return warden.Errorf(warden.EConflict, "directory %q is not empty; Delete removes only empty directories", name).
				WithHint("delete the entries inside it first (List shows them)").Wrap(err)
		}
		return r.pathError("delete", name, err)
	}
	return nil
}

// Mkdir creates the directory name and any missing parents (mode 0o755 less
// the umask), like mkdir -p. An existing directory is not an error; an
// existing file is.
func (r *Root) Mkdir(name string) error {
	rel, _, err := r.resolve(name)
	if err != nil {
		return err
	}
	if err := r.root.MkdirAll(rel, 0o755); err != nil {
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTDIR) {
			return warden.Errorf(warden.EConflict, "cannot create directory %q: a file that is not a directory is in the way", name).
				WithHint("choose another name, or delete the file first").Wrap(err)
		}
		return r.pathError("create directory", name, err)
	}
	return nil
}
