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
	report1 := func(f stageFailure) {
		b, _ := json.Marshal(f)
		_, _ = report.Write(b)
		code := 126
		if f.Errno == int(syscall.ENOENT) {
			code = 127
		}
		os.Exit(code)
	}
	fail := func(errno syscall.Errno, path string) { report1(stageFailure{Errno: int(errno), Path: path}) }
	early := len(os.Args) > 1 && os.Args[1] == initEarlyArg
	if early {
		warmPlanDecoder() // started before its plan: while it waits
	}
	p, err := readPlan()
	if err != nil || len(p.Args) == 0 {
		fail(syscall.EINVAL, "")
	}
	// Only a stage started before its plan has the socket; one the init
	// started after its plan came has the standard input the init took.
	if p.StdinPassed && early {
		if err := receiveStdin(p.ListenFD); err != nil {
			fail(syscall.EBADF, err.Error())
		}
	}
	raiseOwnOOMScore(p.OOMScoreAdj)
	// A one-shot run's stage starts in / (startStage); a world's in its
	// command's directory already.
	if p.Dir != "" {
		if err := syscall.Chdir(p.Dir); err != nil {
			errno, _ := err.(syscall.Errno)
			report1(stageFailure{Errno: int(errno), Path: p.Dir, Dir: true})
		}
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
	if err := closeInherited(); err != nil {
		fail(syscall.EPERM, err.Error())
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
// no_new_privs. Without CAP_SETPCAP some steps fail with EPERM: light mode
// as an ordinary user, and uid 0 inside an outer sandbox that took every
// capability away (Codex's). Such a failure is accepted only where what the
// step protects already holds (noCapabilities); anywhere else it stops the
// command.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each locked
	secErr := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0)
	var bndErr error
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		// EINVAL: a capability this kernel does not know.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) && bndErr == nil {
			bndErr = fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop every capability: %w", err)
	}
	for _, e := range []struct {
		err  error
		what string
	}{{secErr, "lock the securebits"}, {bndErr, ""}} {
		if e.err == nil || errors.Is(e.err, unix.EPERM) && noCapabilities(os.Getuid() == 0 || os.Geteuid() == 0) {
			continue
		}
		if e.what != "" {
			return fmt.Errorf("%s: %w", e.what, e.err)
		}
		return e.err
	}
	return nil
}

// noCapabilities reports whether the calling thread holds no capability
// and can gain none by exec: no_new_privs is set and no capability set
// holds any. A thread that is not root gains none at exec without file
// capabilities, which no_new_privs ignores. A root one (real or effective
// uid 0) would gain its bounding set, so that must be empty too: then the
// securebits that stop root from regaining capabilities have nothing left
// to stop.
func noCapabilities(root bool) bool {
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return false
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	for _, d := range data {
		if d.Effective != 0 || d.Permitted != 0 || d.Inheritable != 0 {
			return false
		}
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if on, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && on != 0 {
			return false
		}
		if !root {
			continue
		}
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && in != 0 {
			return false
		}
	}
	return true
}

// lookPath finds file the way a shell would with the command's own PATH,
// in the current directory.
func lookPath(file string, env []string) (string, syscall.Errno) {
	return lookPathIn(file, env, "")
}

// lookPathIn is lookPath for a command that will start in dir ("" is the
// current directory): relative entries of PATH are looked up there, and
// what is found is returned as PATH names it, for the command's own exec
// from dir.
func lookPathIn(file string, env []string, dir string) (string, syscall.Errno) {
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
	for _, entry := range filepath.SplitList(pathEnv) {
		if entry == "" {
			entry = "."
		}
		cand := filepath.Join(entry, file)
		at := cand
		if dir != "" && !filepath.IsAbs(cand) {
			at = filepath.Join(dir, cand)
		}
		st, err := os.Stat(at)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				found = syscall.EACCES
			}
			continue
		}
		if st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			if !filepath.IsAbs(cand) {
				cand = "./" + cand // exec must not search PATH again
			}
			return cand, 0
		}
		found = syscall.EACCES
	}
	return "", found
}

// closeInherited marks every descriptor from 3 up close-on-exec, so that a
// command gets exactly the streams it was given: descriptors the gate
// process inherited from whoever started it (a host's pipes, a directory)
// would otherwise pass through the init and the stage into the command,
// opened before Landlock and outside its rules. Raw system calls only, as
// it runs after the stage's rlimits.
func closeInherited() error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0)>>1, unix.CLOSE_RANGE_CLOEXEC)
	if e == 0 {
		return nil
	}
	if e != unix.ENOSYS && e != unix.EINVAL {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", e)
	}
	// Before Linux 5.11: each descriptor this process can have.
	var lim unix.Rlimit
	if _, _, e := unix.RawSyscall(unix.SYS_GETRLIMIT, unix.RLIMIT_NOFILE, uintptr(unsafe.Pointer(&lim)), 0); e != 0 {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", e)
	}
	for fd := uintptr(3); fd < uintptr(min(lim.Cur, 1<<20)); fd++ {
		_, _, _ = unix.RawSyscall(unix.SYS_FCNTL, fd, unix.F_SETFD, unix.FD_CLOEXEC)
	}
	return nil
}
