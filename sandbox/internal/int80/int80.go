// Package int80 makes a system call through the i386 ABI (int $0x80) from a
// 64-bit process. The sandbox's tests use it to show that the seccomp filter
// judges such calls by their i386 numbers (a rule keyed on x86-64 numbers
// alone would let them through).
package int80

// Getpid is the i386 number of getpid, a harmless call to make; Mount is
// mount's, which the sandbox refuses.
const (
	Getpid = 20
	Mount  = 21
)
