//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompPlan says which optional rules the filter carries.
type seccompPlan struct {
	NoSpawn   bool // refuse fork, vfork and clone without CLONE_THREAD
	BlockInet bool // refuse AF_INET and AF_INET6 sockets (light mode, where no netns cuts them off)
	AllowUnix bool // allow AF_UNIX sockets (Spec.UnixSockets); socketpair is always allowed
}

// Offsets into struct seccomp_data (linux/seccomp.h). The low 32 bits of an
// argument come first on the little-endian architectures this file builds
// for.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

func retErrno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// deniedSyscalls get EPERM: they reach the kernel's most exposed surfaces
// (io_uring, bpf, keyrings, perf), other processes (process_vm_*,
// pidfd_getfd; ptrace is bounded by Landlock instead, see filter), or undo the
// sandbox (mounts, namespaces), and an agent's command has no business with
// them.
var deniedSyscalls = append([]uintptr{
	unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_SYSLOG,
	unix.SYS_QUOTACTL, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_FANOTIFY_INIT, unix.SYS_VHANGUP,
	// A message queue's notification can be any signal, SIGCONT too
	// (see the clone rule).
	unix.SYS_MQ_NOTIFY,
}, archDeniedSyscalls...)

// abi is one system call numbering the filter judges calls by.
type abi struct {
	denied                            []uint32
	socket, socketpair, ptrace, ioctl uint32
	clone3, clone, prctl              uint32
	fork, fcntl                       []uint32
	socketcall                        uint32 // i386's multiplexer; 0 where there is none
}

// nativeABI is the numbering of the architecture warden is built for.
func nativeABI() abi {
	a := abi{socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ptrace: unix.SYS_PTRACE, ioctl: unix.SYS_IOCTL,
		clone3: unix.SYS_CLONE3, clone: unix.SYS_CLONE, prctl: unix.SYS_PRCTL, fcntl: []uint32{unix.SYS_FCNTL}}
	for _, nr := range deniedSyscalls {
		a.denied = append(a.denied, uint32(nr))
	}
	for _, nr := range forkSyscalls {
		a.fork = append(a.fork, uint32(nr))
	}
	return a
}

// compatABI is the numbering of compatArch (compatSyscalls).
func compatABI() abi {
	n := compatSyscalls
	a := abi{socket: n["SOCKET"], socketpair: n["SOCKETPAIR"], ptrace: n["PTRACE"], ioctl: n["IOCTL"],
		clone3: n["CLONE3"], clone: n["CLONE"], prctl: n["PRCTL"], fork: []uint32{n["FORK"], n["VFORK"]},
		fcntl: []uint32{n["FCNTL"], n["FCNTL64"]}, socketcall: n["SOCKETCALL"]}
	for _, name := range compatDenied {
		a.denied = append(a.denied, n[name])
	}
	return a
}

// filter assembles the seccomp program. It is default-allow, so it judges
// each call by the numbering of the ABI it came through: the native one,
// and on x86-64 the i386 one (compatArch) by its own numbers; any other
// (the x32 bit, another architecture) is killed, since its numbers mean
// different syscalls and would otherwise skip every rule below.
func (p seccompPlan) filter() []unix.SockFilter {
	var prog []unix.SockFilter
	ld := func(off uint32) { prog = append(prog, stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off)) }
	ret := func(v uint32) { prog = append(prog, stmt(unix.BPF_RET|unix.BPF_K, v)) }
	// onEq returns v when A == k, else falls through.
	onEq := func(k, v uint32) {
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, 0, 1))
		ret(v)
	}
	// when runs body when A == k, else skips it; body must end in a return.
	when := func(k uint32, body func()) {
		at := len(prog)
		prog = append(prog, unix.SockFilter{})
		body()
		skip := len(prog) - at - 1
		if skip > 255 {
			panic("sandbox: seccomp block too long")
		}
		prog[at] = jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, 0, uint8(skip))
	}
	// rules judges the call in A by numbering a; it ends in a return.
	rules := func(a abi) {
		for _, nr := range a.denied {
			onEq(nr, retErrno(unix.EPERM))
		}
		if a.socketcall != 0 {
			// The multiplexer passes its arguments in memory the filter
			// cannot read: a new socket or pair through it is refused
			// (the direct calls below are judged), the calls on sockets
			// already open pass.
			when(a.socketcall, func() {
				ld(offArg0)
				onEq(1, retErrno(unix.EAFNOSUPPORT)) // SYS_SOCKET
				onEq(8, retErrno(unix.EAFNOSUPPORT)) // SYS_SOCKETPAIR
				ret(retAllow)
			})
		}
		// Socket families are allowed by list; every other family (vsock,
		// Bluetooth, AF_ALG, packet sockets, the rest of netlink...) is an
		// unsupported family, which programs take as "not on this system"
		// and work around. The family and protocol are C ints: the kernel
		// reads the low 32 bits the filter compares.
		when(a.socket, func() {
			ld(offArg0)
			inet := uint32(retAllow)
			if p.BlockInet {
				inet = retErrno(unix.EACCES)
			}
			onEq(unix.AF_INET, inet)
			onEq(unix.AF_INET6, inet)
			unixSock := retErrno(unix.EPERM)
			if p.AllowUnix {
				unixSock = retAllow
			}
			onEq(unix.AF_UNIX, unixSock)
			// Netlink for routing (ip addr, getifaddrs) and socket
			// diagnostics (ss) only; audit, uevents, netfilter and the
			// others stay shut.
			when(unix.AF_NETLINK, func() {
				ld(offArg2)
				onEq(unix.NETLINK_ROUTE, retAllow)
				onEq(unix.NETLINK_SOCK_DIAG, retAllow)
				ret(retErrno(unix.EPROTONOSUPPORT))
			})
			ret(retErrno(unix.EAFNOSUPPORT))
		})
		// socketpair makes a connected pair no one else can reach: libuv
		// and others use it for a child's stdio. Only the Unix family.
		when(a.socketpair, func() {
			ld(offArg0)
			onEq(unix.AF_UNIX, retAllow)
			ret(retErrno(unix.EAFNOSUPPORT))
		})
		// ptrace: a request with high bits the kernel would read as
		// another is refused; the rest pass, PTRACE_ATTACH and
		// PTRACE_SEIZE too (gdb -p, strace -p, and LeakSanitizer, which
		// stops the process's own threads from a clone of it). What a
		// command can attach to is bounded by the kernel, not by this
		// filter: Landlock lets a process in a domain trace only
		// processes in the same domain or one nested in it (the command's
		// own processes and, in a world, its session's), never one
		// outside it: the host's processes, the init and the launcher,
		// which are undumpable besides; and in a pid namespace nothing
		// else can even be named
		// (TestTracingReachesOnlyTheCommandsOwnProcesses).
		when(a.ptrace, func() {
			ld(offArg0 + 4)
			prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, 0, 1, 0))
			ret(retErrno(unix.EPERM))
			ret(retAllow)
		})
		when(a.ioctl, func() {
			ld(offArg1)
			onEq(unix.TIOCSTI, retErrno(unix.EPERM))
			onEq(unix.TIOCLINUX, retErrno(unix.EPERM))
			ret(retAllow)
		})
		// clone3 passes its flags in memory the filter cannot read, so it
		// is refused with ENOSYS, which makes libc fall back to clone,
		// whose flags it can: no new namespaces (a fresh user namespace
		// would hand the command capabilities over it), and under
		// NoSpawn threads only.
		onEq(a.clone3, retErrno(unix.ENOSYS))
		if p.NoSpawn {
			for _, nr := range a.fork {
				onEq(nr, retErrno(unix.EPERM))
			}
		}
		when(a.clone, func() {
			ld(offArg0)
			prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, cloneNamespaces, 0, 1))
			ret(retErrno(unix.EPERM))
			if p.NoSpawn {
				prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, unix.CLONE_THREAD, 1, 0))
				ret(retErrno(unix.EPERM))
			}
			// The signal a child's end sends its parent (clone's low
			// byte) is SIGCHLD or none: a SIGCONT there would let a
			// process the host holds stopped (holder) go on by itself.
			prog = append(prog, stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xff))
			onEq(0, retAllow)
			onEq(uint32(unix.SIGCHLD), retAllow)
			ret(retErrno(unix.EINVAL))
		})
		// Nor may a process name SIGCONT as the signal its files (fcntl
		// F_SETSIG) or its parent's death (prctl PR_SET_PDEATHSIG) send
		// it, nor SIGKILL as its files' signal: the one signal a stopped
		// process dies of, and a death while held can make the kernel
		// continue another process (an orphaned process group's SIGCONT).
		// (A POSIX timer can send either: the hold looks for those.)
		// refuseSignals refuses call nr when its argument at op is k and
		// the one at sig names one of sigs.
		refuseSignals := func(nr, op, k, sig uint32, sigs ...unix.Signal) {
			when(nr, func() {
				ld(op)
				when(k, func() {
					ld(sig)
					for _, s := range sigs {
						onEq(uint32(s), retErrno(unix.EPERM))
					}
					ret(retAllow)
				})
				ret(retAllow)
			})
		}
		for _, nr := range a.fcntl {
			refuseSignals(nr, offArg1, unix.F_SETSIG, offArg2, unix.SIGCONT, unix.SIGKILL)
		}
		refuseSignals(a.prctl, offArg0, unix.PR_SET_PDEATHSIG, offArg1, unix.SIGCONT)
		ret(retAllow)
	}

	ld(offArch)
	if compatArch != 0 {
		when(compatArch, func() {
			ld(offNr)
			rules(compatABI())
		})
	}
	prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nativeArch, 1, 0))
	ret(retKill)
	ld(offNr)
	if x32Bit != 0 {
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, x32Bit, 0, 1))
		ret(retKill)
	}
	rules(nativeABI())
	return prog
}

// cloneNamespaces are the clone flags that create namespaces.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// loadSeccomp installs prog on the calling thread. It makes raw system calls
// only, so it is safe after rlimits that forbid the Go runtime to allocate;
// prog must stay reachable until the thread calls execve.
func loadSeccomp(fprog *unix.SockFprog) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(fprog))); e != 0 {
		return fmt.Errorf("load the seccomp filter: %w", e)
	}
	return nil
}
