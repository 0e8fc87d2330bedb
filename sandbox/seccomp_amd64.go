//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks the x32 ABI's system call numbers on x86-64.
	x32Bit = 0x40000000
)

var (
	archDeniedSyscalls = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB}
	forkSyscalls       = []uintptr{unix.SYS_FORK, unix.SYS_VFORK}
)
