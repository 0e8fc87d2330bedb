package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// replaceStdin makes payload this process's stdin, from its start, so that
// the warden it execs reads it.
func replaceStdin(payload []byte) error {
	fd, err := unix.MemfdCreate("warden-hook-payload", 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "payload")
	defer f.Close()
	if _, err := f.Write(payload); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return unix.Dup2(fd, 0)
}
