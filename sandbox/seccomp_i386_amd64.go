//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// compatArch is the other ABI an x86-64 process can call the kernel
// through: the i386 one (int 0x80, and 32-bit programs: GOARCH=386
// tests, gcc -m32). Its calls are judged by the same rules, by their i386
// numbers (compatSyscalls); the x32 ABI stays refused.
const compatArch = unix.AUDIT_ARCH_I386

// compatSyscalls are the i386 numbers of the calls the filter judges,
// by the names of x/sys/unix's zsysnum_linux_386.go
// (TestCompatSyscallNumbers checks them against that file).
var compatSyscalls = map[string]uint32{
	"FORK": 2, "MOUNT": 21, "UMOUNT": 22, "STIME": 25, "PTRACE": 26, "ACCT": 51, "UMOUNT2": 52,
	"IOCTL": 54, "CHROOT": 61, "SETTIMEOFDAY": 79, "USELIB": 86, "SWAPON": 87, "REBOOT": 88,
	"IOPERM": 101, "SOCKETCALL": 102, "SYSLOG": 103, "IOPL": 110, "VHANGUP": 111, "VM86OLD": 113,
	"SWAPOFF": 115, "CLONE": 120, "ADJTIMEX": 124, "INIT_MODULE": 128, "DELETE_MODULE": 129,
	"QUOTACTL": 131, "VM86": 166, "VFORK": 190, "PIVOT_ROOT": 217, "LOOKUP_DCOOKIE": 253,
	"CLOCK_SETTIME": 264, "KEXEC_LOAD": 283, "ADD_KEY": 286, "REQUEST_KEY": 287, "KEYCTL": 288,
	"UNSHARE": 310, "PERF_EVENT_OPEN": 336, "FANOTIFY_INIT": 338, "NAME_TO_HANDLE_AT": 341,
	"OPEN_BY_HANDLE_AT": 342, "CLOCK_ADJTIME": 343, "SETNS": 346, "PROCESS_VM_READV": 347,
	"PROCESS_VM_WRITEV": 348, "FINIT_MODULE": 350, "BPF": 357, "SOCKET": 359, "SOCKETPAIR": 360,
	"USERFAULTFD": 374, "CLOCK_SETTIME64": 404, "CLOCK_ADJTIME64": 405, "IO_URING_SETUP": 425,
	"IO_URING_ENTER": 426, "IO_URING_REGISTER": 427, "OPEN_TREE": 428, "MOVE_MOUNT": 429,
	"FSOPEN": 430, "FSCONFIG": 431, "FSMOUNT": 432, "FSPICK": 433, "CLONE3": 435,
	"PIDFD_GETFD": 438, "MOUNT_SETATTR": 442,
	"FCNTL": 55, "FCNTL64": 221, "PRCTL": 172, "MQ_NOTIFY": 281,
}

// compatDenied are the names of the i386 calls that get EPERM: the
// native deniedSyscalls', the i386 ABI's own ways to the same surfaces
// (the old umount, stime), and vm86.
var compatDenied = []string{
	"PROCESS_VM_READV", "PROCESS_VM_WRITEV", "PIDFD_GETFD",
	"MOUNT", "UMOUNT", "UMOUNT2", "PIVOT_ROOT", "CHROOT",
	"OPEN_TREE", "MOVE_MOUNT", "FSOPEN", "FSCONFIG", "FSMOUNT", "FSPICK", "MOUNT_SETATTR",
	"UNSHARE", "SETNS", "KEYCTL", "ADD_KEY", "REQUEST_KEY",
	"BPF", "PERF_EVENT_OPEN", "USERFAULTFD", "IO_URING_SETUP", "IO_URING_ENTER", "IO_URING_REGISTER",
	"KEXEC_LOAD", "INIT_MODULE", "FINIT_MODULE", "DELETE_MODULE",
	"REBOOT", "SWAPON", "SWAPOFF", "ACCT", "SYSLOG", "QUOTACTL", "LOOKUP_DCOOKIE",
	"NAME_TO_HANDLE_AT", "OPEN_BY_HANDLE_AT", "SETTIMEOFDAY", "STIME", "CLOCK_SETTIME", "CLOCK_SETTIME64",
	"CLOCK_ADJTIME", "CLOCK_ADJTIME64", "ADJTIMEX", "FANOTIFY_INIT", "VHANGUP",
	"IOPL", "IOPERM", "USELIB", "VM86", "VM86OLD", "MQ_NOTIFY",
}
