//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// setupMounts shapes the init's private mount namespace: nothing it does
// propagates back to the host. Masks must come before Landlock, which
// forbids mount changes once enforced.
// The init has made its mounts private and mounted /proc already
// (prepareNamespaces).
func setupMounts(p *plan) error {
	if p.PrivateTmp {
		return privateTmp(p)
	}
	return finishMounts(p)
}

// mountProc makes the sandbox's mounts private and mounts a fresh /proc.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the sandbox's mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a fresh /proc (the host may forbid it inside containers): %w", err)
	}
	return nil
}

// privateTmp mounts an empty tmpfs on /tmp and carries the granted paths
// that lived under the host's /tmp over into it, as detached copies of
// their mounts taken before the tmpfs covered them.
func privateTmp(p *plan) error {
	trees := make([]int, len(p.Keep))
	for i, k := range p.Keep {
		fd, err := unix.OpenTree(unix.AT_FDCWD, k.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("carry %s into the sandbox's private /tmp: %w", k.Path, err)
		}
		defer unix.Close(fd)
		trees[i] = fd
	}
	opts := "mode=1777"
	if p.TmpSize > 0 {
		opts += fmt.Sprintf(",size=%d", p.TmpSize)
	}
	if p.TmpDir != "" {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p.TmpDir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return fmt.Errorf("mount the session's /tmp %s: %w", p.TmpDir, err)
		}
		err = unix.MoveMount(fd, "", unix.AT_FDCWD, "/tmp", unix.MOVE_MOUNT_F_EMPTY_PATH)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("mount the session's /tmp %s: %w", p.TmpDir, err)
		}
	} else if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount a private /tmp: %w", err)
	}
	if p.Shm {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount a private /dev/shm: %w", err)
		}
	}
	if p.Pty {
		if err := privatePty(); err != nil {
			return err
		}
	}
	if err := carry(p.Keep, trees); err != nil {
		return err
	}
	if st, err := os.Lstat(varTmp); p.VarTmp && err == nil && st.IsDir() {
		if err := unix.Mount("/tmp", varTmp, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mount the sandbox's /tmp on %s: %w", varTmp, err)
		}
	}
	return finishMounts(p)
}

// carry mounts each kept tree at its path in the new /tmp. The part of a
// path that lies in the new /tmp itself (the session's directory on the
// host, which the agent's earlier commands wrote) is walked without
// following a symlink, and its directories made there: a symlink an agent
// left in its /tmp must not make warden create directories or files where
// it leads on the host. Below a tree carried before, the walk is the
// host's own (the tree is the host's), as the host would resolve it.
func carry(keeps []keep, trees []int) error {
	tmp, err := unix.Open("/tmp", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the sandbox's private /tmp: %w", err)
	}
	defer unix.Close(tmp)
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for i, k := range keeps {
		if !k.Writable {
			if err := unix.MountSetattr(trees[i], "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &ro); err != nil {
				return fmt.Errorf("keep %s read-only in the sandbox's private /tmp: %w", k.Path, err)
			}
		}
		target, err := carryPoint(tmp, keeps[:i], trees[:i], k)
		if err != nil {
			return fmt.Errorf("carry %s into the sandbox's private /tmp: %w", k.Path, err)
		}
		err = unix.MoveMount(trees[i], "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(target)
		if err != nil {
			return fmt.Errorf("carry %s into the sandbox's private /tmp: %w", k.Path, err)
		}
	}
	return nil
}

// carryPoint opens (O_PATH) the mount point for k, making it if it is
// missing: inside the deepest directory tree carried before it, by the
// host's resolution through that tree's root; otherwise component by
// component from the new /tmp, refusing a symlink.
func carryPoint(tmp int, before []keep, trees []int, k keep) (int, error) {
	base, from := -1, "/tmp"
	for j, o := range before {
		if o.Dir && within(k.Path, o.Path) && k.Path != o.Path && len(o.Path) > len(from) {
			base, from = trees[j], o.Path
		}
	}
	if base >= 0 {
		path := fmt.Sprintf("/proc/self/fd/%d/%s", base, k.Path[len(from)+1:])
		if err := mountPoint(path, k.Dir); err != nil {
			return -1, err
		}
		return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	rel := k.Path[len(from)+1:]
	return pointBeneath(tmp, rel, k.Dir)
}

// pointBeneath walks rel from the directory dirfd, making each missing
// directory (and, for a file, the last component as an empty file), and
// returns an O_PATH descriptor of its end. A symlink on the way is never
// followed: it is removed and made a directory (or file) in its place, and
// one that comes back meanwhile is an error.
func pointBeneath(dirfd int, rel string, dir bool) (int, error) {
	names := strings.Split(rel, "/")
	fd, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	for i, name := range names {
		last := i == len(names)-1
		if name == "" || name == "." || name == ".." {
			unix.Close(fd)
			return -1, fmt.Errorf("%q is not a plain path", rel)
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			// Where warden mounts, the agent's symlink goes: it would
			// hide the mount anyway.
			_ = unix.Unlinkat(fd, name, 0)
		}
		if last && !dir {
			f, err := unix.Openat(fd, name, unix.O_CREAT|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(f)
			} else if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EACCES) {
				unix.Close(fd)
				return -1, fmt.Errorf("make %s: %w (a symlink there is not followed)", name, err)
			}
		}
		flags := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if !last || dir {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, flags, 0)
		if errors.Is(err, unix.ENOENT) && (!last || dir) {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, name, flags, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w (a symlink there is not followed)", name, err)
		}
		fd = next
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return -1, fmt.Errorf("%s is a symlink in the sandbox's /tmp, not followed", name)
		}
	}
	return fd, nil
}

// mountPoint creates an empty directory or file at path for a mount, unless
// one is already there (a path inside a directory carried before it, which
// may be read-only).
func mountPoint(path string, dir bool) error {
	if dir {
		return os.MkdirAll(path, 0o755)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// finishMounts masks the denied paths and, in max mode, makes the root
// read-only.
func finishMounts(p *plan) error {
	for _, m := range p.Masks {
		content, redacted := p.Redacted[m]
		if redacted {
			if err := maskWith(m, content); err != nil {
				return err
			}
		} else if err := mask(m); err != nil {
			return err
		}
	}
	for _, path := range p.Pinned {
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("pin %s (it holds a protected path): %w", path, err)
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, path := range p.Protected {
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s read-only: %w", path, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &ro); err != nil {
			return fmt.Errorf("keep %s read-only: %w", path, err)
		}
	}
	if p.ReadOnlyRoot {
		return readOnlyRoot(p.Writable)
	}
	return nil
}

// mask hides path: a directory behind an empty read-only tmpfs nobody can
// enter, a file behind /dev/null.
func mask(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // gone since the host looked: nothing to hide
	}
	if err != nil {
		return fmt.Errorf("hide denied path %s: %w", path, err)
	}
	if st.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=0")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	return maskFailed(path, err)
}

// maskWith hides the file at path behind a read-only file holding content
// (a credential file's copy without its secrets): the file is made in a
// tmpfs of its own that is never attached anywhere, and that file alone is
// mounted over path. A path that is not a regular file is masked as mask
// does.
func maskWith(path, content string) error {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return mask(path)
	}
	fail := func(err error) error { return fmt.Errorf("show the redacted copy of %s: %w", path, err) }
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(fsfd)
	if err := unix.FsconfigSetString(fsfd, "size", "1m"); err != nil {
		return fail(err)
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fail(err)
	}
	mnt, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(mnt)
	f, err := unix.Openat(mnt, "copy", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fail(err)
	}
	_, werr := unix.Write(f, []byte(content))
	unix.Close(f)
	if werr != nil && content != "" {
		return fail(werr)
	}
	tree, err := unix.OpenTree(mnt, "copy", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(tree)
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &ro); err != nil {
		return fail(err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return maskFailed(path, err)
	}
	return nil
}

// maskFailed is mask's answer to its mount's error: none when the path was
// removed between its lstat and the mount (a host socket whose server
// stopped: there is nothing left to hide, and a command that fails for it
// fails for nothing), the error otherwise.
func maskFailed(path string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOENT) {
		if _, lerr := os.Lstat(path); errors.Is(lerr, os.ErrNotExist) {
			return nil
		}
	}
	return fmt.Errorf("hide denied path %s: %w", path, err)
}

// readOnlyRoot makes every mount read-only except the writable paths, each
// of which first becomes a mount of its own.
func readOnlyRoot(writable []string) error {
	for _, w := range writable {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s writable under a read-only root: %w", w, err)
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("make the root read-only: %w", err)
	}
	rw := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, w := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, 0, &rw); err != nil {
			return fmt.Errorf("make %s writable again under a read-only root: %w", w, err)
		}
	}
	return nil
}

// loopbackUp brings up the network namespace's loopback interface, so that
// a command can talk to servers it starts itself. Nothing else is there.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	return nil
}

// privatePty mounts a devpts instance of the sandbox's own on /dev/pts and
// its ptmx on /dev/ptmx: the command gets pseudo-terminals of its own and
// sees none of the host's (the plan lets it open what is there). Where the
// kernel refuses devpts in a user namespace, an empty tmpfs hides the
// host's instead, and the command has no pseudo-terminal.
func privatePty() error {
	err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	if err == nil {
		if err = mountPoint("/dev/ptmx", false); err == nil {
			err = unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, "")
		}
		if err == nil {
			return nil
		}
		_ = unix.Unmount("/dev/pts", unix.MNT_DETACH)
	}
	if err := unix.Mount("tmpfs", "/dev/pts", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755"); err != nil {
		return fmt.Errorf("hide the host's /dev/pts: %w", err)
	}
	return nil
}
