//go:build linux

package sandbox

// compatArch is 0 on arm64: its 32-bit ABI stays refused.
const compatArch = 0

var (
	compatSyscalls = map[string]uint32{}
	compatDenied   []string
)
