//go:build unix

package config

import (
	"os"
	"syscall"

	"github.com/agentwarden/warden"
)

// withLock runs fn while holding an exclusive lock on path+".lock", so two
// read-modify-write cycles on the policy file (a `warden kill` racing a
// `warden config set`) cannot lose either change.
func withLock(path string, fn func() error) error {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, FileMode)
	if err != nil {
		return warden.Errorf(warden.EInvalid, "cannot lock the policy file %s", path).Wrap(err).
			WithHint("check that its directory is writable by this user")
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return warden.Errorf(warden.EInvalid, "cannot lock the policy file %s", path).Wrap(err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}
