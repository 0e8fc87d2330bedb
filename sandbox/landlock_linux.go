//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockPlan is the filesystem (and, in light mode, network) ruleset.
type landlockPlan struct {
	ReadDirs   []string // read, list and execute beneath
	WriteDirs  []string // everything beneath
	ReadFiles  []string // read and execute
	ListDirs   []string // list beneath, nothing more (parents of what is partly hidden)
	WriteFiles []string // read and write (devices such as /dev/null)
	RemoveDirs []string // remove an empty directory beneath, nothing more
	BlockNet   bool     // handle TCP bind and connect, granting no port
	// Scope keeps signals and abstract Unix sockets inside the command's own
	// Landlock domain (ABI 6): what namespaces give a sandbox without them.
	// With namespaces it is off, so that the commands of one long-lived
	// sandbox (each its own domain) can signal what an earlier one started.
	Scope bool
	ABI   int
}

// Filesystem access rights by the ABI that introduced them.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llV1   = 1<<13 - 1
	llV2   = llV1 | unix.LANDLOCK_ACCESS_FS_REFER
	llV3   = llV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llV5   = llV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// llFileOnly are the rights that make sense on a file, not a directory.
	llFileOnly = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// LandlockABI returns the Landlock ABI version the kernel supports, 0 when
// it has none.
func LandlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

func handledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return llV5
	case abi >= 3:
		return llV3
	case abi == 2:
		return llV2
	case abi == 1:
		return llV1
	}
	return 0
}

// landlockRuleset is a ruleset built but not yet enforced: building opens
// files and allocates, enforcing (restrict) makes raw system calls only.
type landlockRuleset struct{ fd int }

// build creates the ruleset. A path that does not exist is skipped: the
// plan lists optional system directories, and the host checked the ones the
// user named.
func (p landlockPlan) build() (*landlockRuleset, error) {
	fs := handledFS(p.ABI)
	if fs == 0 {
		return nil, errors.New("the kernel has no Landlock, so the sandbox cannot restrict the filesystem")
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: fs}
	if p.BlockNet && p.ABI >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if p.ABI >= 6 && p.Scope {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	// The kernel reads as much of the attribute as the caller's ABI knows.
	size := unsafe.Offsetof(attr.Quiet_access_fs)
	if p.ABI < 6 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	if p.ABI < 4 {
		size = unsafe.Offsetof(attr.Handled_access_net)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return nil, fmt.Errorf("create the Landlock ruleset: %w", e)
	}
	rs := &landlockRuleset{fd: int(fd)}
	writeFile := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	for _, r := range []struct {
		paths  []string
		access uint64
	}{
		{p.ListDirs, unix.LANDLOCK_ACCESS_FS_READ_DIR},
		{p.ReadDirs, llRead},
		{p.WriteDirs, fs},
		{p.ReadFiles, unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE},
		{p.WriteFiles, writeFile},
		{p.RemoveDirs, unix.LANDLOCK_ACCESS_FS_REMOVE_DIR},
	} {
		for _, path := range r.paths {
			if err := rs.add(path, r.access&fs); err != nil {
				rs.close()
				return nil, err
			}
		}
	}
	return rs, nil
}

func (rs *landlockRuleset) add(path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s for the Landlock ruleset: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for the Landlock ruleset: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileOnly
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("add %s to the Landlock ruleset: %w", path, e)
	}
	return nil
}

// restrict enforces the ruleset on the calling thread, which must already
// have no_new_privs set. The thread's domain is what the program it execs
// inherits.
func (rs *landlockRuleset) restrict() error {
	if _, _, e := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0, 0); e != 0 {
		return fmt.Errorf("enforce the Landlock ruleset: %w", e)
	}
	return nil
}

func (rs *landlockRuleset) close() { unix.Close(rs.fd) }
