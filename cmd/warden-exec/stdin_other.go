//go:build !linux

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// replaceStdin makes payload this process's stdin, from its start, so that
// the warden it execs reads it: an unlinked temporary file.
func replaceStdin(payload []byte) error {
	f, err := os.CreateTemp("", "warden-hook-payload-")
	if err != nil {
		return err
	}
	defer f.Close()
	_ = os.Remove(f.Name())
	if _, err := f.Write(payload); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return unix.Dup2(int(f.Fd()), 0)
}
