//go:build unix

package app

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// claimWorld takes world for this run alone, without waiting: nil when
// another run has it. The claim ends when the returned file is closed (or
// this process ends).
func (a *App) claimWorld(world string) *os.File {
	dir := filepath.Join(a.Home.Abs(), RunDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, world+".claim"), os.O_CREATE|os.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}
