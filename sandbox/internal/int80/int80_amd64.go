package int80

// Available says this architecture has the i386 ABI to call through.
const Available = true

// Call makes system call nr through int $0x80 and returns what the kernel
// put in eax.
func Call(nr uint32) uint32
