//go:build linux

package fsguard

import (
	"errors"
	"syscall"
)

// stampsSupported says whether lstamp can tell changes here.
const stampsSupported = true

// lstamp is lstat's answer for path, as a stamp of a looked-up name or (whole)
// of a directory read whole.
func lstamp(path string, whole bool) stamp {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) || errno == 0 {
			errno = syscall.EIO
		}
		return stamp{whole: whole, errno: uint64(errno)}
	}
	s := stamp{whole: whole, mode: uint64(st.Mode), uid: uint64(st.Uid), gid: uint64(st.Gid)}
	if whole || st.Mode&sIFMT == sIFLNK {
		s.dev, s.ino, s.ctimeNs = uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano()
	}
	if whole {
		s.mtimeNs = st.Mtim.Nano()
	}
	return s
}
