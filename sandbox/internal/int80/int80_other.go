//go:build !amd64

package int80

// Available says this architecture has the i386 ABI to call through.
const Available = false

// Call reports that there is no i386 ABI here; callers check Available.
func Call(nr uint32) uint32 { panic("int80: no i386 ABI on this architecture") }
