// Package int80 makes a system call through the i386 ABI (int $0x80) from a
// 64-bit process. The sandbox's tests use it to show that the seccomp filter
// kills such calls, which would otherwise bypass every rule keyed on x86-64
// system call numbers.
package int80

// Getpid is the i386 number of getpid, a harmless call to make.
const Getpid = 20
