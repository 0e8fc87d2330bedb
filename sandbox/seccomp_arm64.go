//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_AARCH64
	x32Bit     = 0 // arm64 has no second ABI in the syscall number
)

var (
	archDeniedSyscalls []uintptr
	forkSyscalls       []uintptr // arm64 creates processes through clone and clone3 only
)
