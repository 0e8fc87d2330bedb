//go:build amd64 || arm64

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A protected path or a mask is a bind mount on one file or directory. When
// that file is replaced in another mount namespace (the user's own git
// writes .git/config by renaming config.lock over it; an editor saves by
// renaming; npm login rewrites ~/.npmrc; a one-shot sandbox's git rewrote
// the config), the kernel cannot refuse it there, and detaches the mount
// here: a long-lived sandbox would then see the new file as its directory
// allows, writable, or readable. Its init puts every such mount back
// (reprotect): at once when a directory holding one changes (inotify), and
// before each command and health check in any case.

var reprotecting sync.Mutex

// reprotect mounts again, read-only, each of p's protected paths, and each
// of its masks, whose mount is no longer there, and reports what it could
// not.
func reprotect(p *plan) error {
	reprotecting.Lock()
	defer reprotecting.Unlock()
	mounted, err := mountedAt(append(slices.Clone(p.Masks), p.Protected...))
	if err != nil {
		return err
	}
	for _, m := range p.Masks {
		if !mounted[m] {
			if err := mask(m); err != nil {
				return err
			}
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, path := range p.Protected {
		if mounted[path] {
			continue
		}
		if _, err := os.Lstat(path); err != nil {
			continue // gone: what a command makes there is swept
		}
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &ro); err != nil {
			return err
		}
	}
	return nil
}

// mountedAt says which of paths are mount points of this mount namespace.
// It asks the kernel about each path (statx's STATX_ATTR_MOUNT_ROOT, Linux
// 5.8) rather than reading the whole mount table: every command in a
// long-lived sandbox pays for this check, and /proc/self/mountinfo of a
// sandbox's 80 mounts cost 0.4–0.8 ms of a one-shot run's 3. A path that
// is not there is not a mount point; a kernel that does not say
// whether a path is a mount root, or a path there that cannot be looked at
// for another reason than its absence, gets the mount table read (else a
// mask there would be mounted again over itself before every command).
func mountedAt(paths []string) (map[string]bool, error) {
	out := make(map[string]bool, len(paths))
	for _, p := range paths {
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, 0, &st)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err != nil {
			return mountPoints()
		}
		if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
			return mountPoints()
		}
		if st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0 {
			out[p] = true
		}
	}
	return out, nil
}

// mountPoints are the mount points of this mount namespace.
func mountPoints() (map[string]bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) > 4 {
			out[unescapeMountinfo(string(fields[4]))] = true
		}
	}
	return out, sc.Err()
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// watchProtected reprotects whenever a directory that holds one of p's
// protected paths or file masks has an entry created, moved or removed,
// until the process ends. A watch that cannot be set leaves that directory
// to the checks before each command and health check.
func watchProtected(p *plan) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return
	}
	dirs := map[string]bool{}
	for _, path := range append(append([]string{}, p.Protected...), p.Masks...) {
		dirs[filepath.Dir(path)] = true
	}
	watched := 0
	for d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_MOVED_FROM|unix.IN_DELETE|unix.IN_ONLYDIR); err == nil {
			watched++
		}
	}
	if watched == 0 {
		unix.Close(fd)
		return
	}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return
			}
			_ = reprotect(p)
		}
	}()
}
