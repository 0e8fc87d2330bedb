//go:build amd64 || arm64

package sandbox

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
)

// HelperName is the small binary (cmd/warden-sandbox) that runs as the
// sandbox's init, stage and launcher when it sits beside warden.
const HelperName = "warden-sandbox"

// helperBuildID is the Go build ID of the warden-sandbox built with this
// binary, set at link time (-X, by make build); empty in builds that have
// no helper (go install, go test), which re-execute themselves.
var helperBuildID string

// initExe returns the binary a sandbox's init is started from: exe when
// set, else warden-sandbox beside this executable when it is the one this
// binary was built with, else this executable. A helper that is missing,
// unreadable or from another build is never used: a plan means exactly
// what the code that wrote it means only to the same code.
func initExe(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	return ownInitExe()
}

// ownInitExe is initExe for this executable, looked up once per process
// (a one-shot run asks twice: StartEarly, then Run).
var ownInitExe = sync.OnceValues(func() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return initExeFor(self), nil
})

// initExeFor is initExe for the executable self.
func initExeFor(self string) string {
	if h := helperBeside(self); h != "" {
		return h
	}
	return self
}

// helperBeside returns the path of the matching warden-sandbox beside self,
// or "".
func helperBeside(self string) string {
	if helperBuildID == "" {
		return ""
	}
	path := filepath.Join(filepath.Dir(self), HelperName)
	if goBuildID(path) != helperBuildID {
		return ""
	}
	return path
}

// goBuildID reads the Go build ID note of the ELF file at path; "" when
// there is none or it cannot be read.
func goBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	return noteBuildID(f.ByteOrder, b)
}

// noteBuildID reads the ID out of a Go build-ID note: namesz, descsz and
// type (4 bytes each), the name "Go\x00\x00", then descsz bytes of ID; ""
// when b is anything else.
func noteBuildID(order binary.ByteOrder, b []byte) string {
	if len(b) < 16 || order.Uint32(b[0:4]) != 4 || string(b[12:16]) != "Go\x00\x00" {
		return ""
	}
	n := uint64(order.Uint32(b[4:8]))
	if n == 0 || n > uint64(len(b)-16) {
		return ""
	}
	return string(b[16 : 16+n])
}
