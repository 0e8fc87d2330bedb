// Package safedir opens a directory without following a symlink anywhere
// on its path, and acts in it through its descriptor: what warden's
// unconfined processes read, write, move and remove in a directory a
// sandboxed command may change stays in that very directory, even when the
// command swaps a component of its path for a symlink meanwhile.
package safedir

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// A Dir is a directory opened without following a symlink anywhere on its
// path, and named by its descriptor (Path: /proc/self/fd/N). The last
// component of every name used under it is never followed either
// (ReadNoFollow, CreateNew; rename and lstat do not follow).
type Dir struct {
	f    *os.File
	path string // /proc/self/fd/N
}

// Path is the directory's name through its descriptor: NAME under it is
// Path()+"/"+NAME, in that very directory.
func (d *Dir) Path() string { return d.path }

// Open opens the directory at absolute path p one component at a
// time, refusing any component that is a symlink.
func Open(p string) (*Dir, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("open %s: not an absolute path", p)
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return nil, fmt.Errorf("open %s: a path that climbs", p)
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("open %s without following a symlink: %w", p, err)
		}
		fd = next
	}
	return &Dir{f: os.NewFile(uintptr(fd), p), path: fmt.Sprintf("/proc/self/fd/%d", fd)}, nil
}

// Sub opens the directory name in d, not following a symlink.
func (d *Dir) Sub(name string) (*Dir, error) {
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{f: os.NewFile(uintptr(fd), d.f.Name()+"/"+name), path: fmt.Sprintf("/proc/self/fd/%d", fd)}, nil
}

// SubListable is Sub for a directory its owner may have made unreadable
// (mode 0311: git still opens the files in it by name): refused, it is
// made readable and searchable by its owner (u+rx, through a descriptor
// that followed no symlink) and opened again.
func (d *Dir) SubListable(name string) (*Dir, error) { return d.subWith(name, 0o500) }

// SubWritable is SubListable for a directory warden must also write in
// (its owner's rwx): one a command made 0000 (chmod 000 .git) before
// warden puts back what it changed there. The mode is made u+rwx whenever
// it lacks one of them.
func (d *Dir) SubWritable(name string) (*Dir, error) { return d.subWith(name, 0o700) }

// subWith opens the directory name in d with at least the owner's bits
// owner set on it.
func (d *Dir) subWith(name string, owner uint32) (*Dir, error) {
	sub, err := d.Sub(name)
	if err == nil && owner&0o200 != 0 {
		var st unix.Stat_t
		if unix.Fstat(int(sub.f.Fd()), &st) == nil && st.Mode&owner != owner {
			sub.Close()
			err = unix.EACCES
		}
	}
	if !errors.Is(err, unix.EACCES) {
		return sub, err
	}
	fd, perr := unix.Openat(int(d.f.Fd()), name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if perr != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if perr := unix.Fstat(fd, &st); perr != nil {
		return nil, err
	}
	// chmod of /proc/self/fd/N changes the very inode the descriptor holds.
	if perr := unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), st.Mode&0o7777|owner); perr != nil {
		return nil, err
	}
	return d.Sub(name)
}

// Name is the path the directory was opened by (for messages: the
// directory itself is Path).
func (d *Dir) Name() string { return d.f.Name() }

// Close closes the directory.
func (d *Dir) Close() { d.f.Close() }

// List lists d's entries.
func (d *Dir) List() ([]os.DirEntry, error) { return d.f.ReadDir(-1) }

// ReadNoFollow reads the regular file name in d; a symlink is an error,
// and so is a FIFO or a device, which the open does not wait on.
func (d *Dir) ReadNoFollow(name string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(d.path+"/"+name, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return nil, fmt.Errorf("%s is not a regular file of at most %d bytes", name, limit)
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && n != len(data) {
		return nil, err
	}
	return data[:n], nil
}

// CreateNew writes data to a new file name in d: an existing name (a
// symlink planted there) fails.
func (d *Dir) CreateNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(d.path+"/"+name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
