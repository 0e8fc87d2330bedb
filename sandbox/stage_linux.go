//go:build amd64 || arm64

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runStage turns this process into the command. Everything that allocates
// happens first; then, on the one locked thread that will call execve, it
// drops privileges, enforces Landlock, sets rlimits (memory last, since the
// Go runtime cannot allocate after it), loads seccomp and execs with raw
// system calls. Landlock, seccomp, no_new_privs and capabilities belong to
// the calling thread, and execve hands exactly that thread's state to the
// command.
func runStage() {
	runtime.LockOSThread()
	report := os.NewFile(fdReport, "exec-error")
	unix.CloseOnExec(fdReport)
	fail := func(errno syscall.Errno, path string) {
		b, _ := json.Marshal(struct {
			Errno int
			Path  string
		}{int(errno), path})
		_, _ = report.Write(b)
		code := 126
		if errno == syscall.ENOENT {
			code = 127
		}
		os.Exit(code)
	}
	p, err := readPlan()
	if err != nil || len(p.Args) == 0 {
		fail(syscall.EINVAL, "")
	}
	path, errno := lookPath(p.Args[0], p.Env)
	if errno != 0 {
		fail(errno, p.Args[0])
	}
	argv0, err := syscall.BytePtrFromString(path)
	if err != nil {
		fail(syscall.EINVAL, path)
	}
	argv, err := syscall.SlicePtrFromStrings(p.Args)
	if err != nil {
		fail(syscall.EINVAL, path)
	}
	envv, err := syscall.SlicePtrFromStrings(p.Env)
	if err != nil {
		fail(syscall.EINVAL, path)
	}
	filter := p.Seccomp.filter()
	fprog := &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	rs, err := p.Landlock.build()
	if err != nil {
		fail(syscall.EPERM, err.Error())
	}

	if err := dropPrivileges(); err != nil {
		fail(syscall.EPERM, err.Error())
	}
	if err := rs.restrict(); err != nil {
		fail(syscall.EPERM, err.Error())
	}
	for _, r := range p.Rlimits {
		lim := unix.Rlimit{Cur: r.Cur, Max: r.Max}
		if _, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(r.Resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
			fail(e, "setrlimit")
		}
	}
	if err := loadSeccomp(fprog); err != nil {
		fail(syscall.EPERM, err.Error())
	}
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	runtime.KeepAlive(filter)
	fail(e, path)
}

// dropPrivileges leaves the calling thread with no capabilities, none it
// can regain by exec (even as uid 0 inside the namespace), and
// no_new_privs. Without CAP_SETPCAP (light mode as an ordinary user) there
// are no capabilities to drop, and no_new_privs alone keeps set-uid and
// file-capability programs from granting any.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	// Only a process that is not root may fail these for want of
	// CAP_SETPCAP: as uid 0 (in any namespace) it would regain every
	// capability at exec, so there a failure stops the command.
	tolerated := func(err error) bool { return os.Geteuid() != 0 && errors.Is(err, unix.EPERM) }
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each locked
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil && !tolerated(err) {
		return fmt.Errorf("lock the securebits: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		// EINVAL: a capability this kernel does not know.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !tolerated(err) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// lookPath finds file the way a shell would with the command's own PATH.
func lookPath(file string, env []string) (string, syscall.Errno) {
	if strings.Contains(file, "/") {
		return file, 0
	}
	pathEnv := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	found := syscall.ENOENT
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		cand := filepath.Join(dir, file)
		st, err := os.Stat(cand)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				found = syscall.EACCES
			}
			continue
		}
		if st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return cand, 0
		}
		found = syscall.EACCES
	}
	return "", found
}
