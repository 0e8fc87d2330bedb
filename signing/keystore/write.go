package keystore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// ensureDir creates dir (and missing parents) mode 0700 and checks it.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return warden.Errorf(warden.EInvalid, "cannot create the key directory %s", dir).Wrap(err)
	}
	return checkDir(dir)
}

// checkDir refuses a key directory that is not a directory or that group or
// others may write in: they could delete, replace or plant key files. One
// they may only list is accepted (the names show addresses, not keys); the
// files themselves must be private (see readKeyFile).
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return warden.Errorf(warden.EInvalid, "cannot read the key directory %s", dir).Wrap(err)
	}
	if !info.IsDir() {
		return warden.Errorf(warden.EInvalid, "the key directory %s is not a directory", dir)
	}
	if othersMayWrite(info) {
		return warden.Errorf(warden.EInvalid, "the key directory %s is writable by group or others (mode %04o)", dir, info.Mode().Perm()).
			WithHint(fmt.Sprintf("chmod 700 %s", dir))
	}
	return nil
}

// fileName is geth's key file name: UTC--<ISO 8601 time, colons as
// hyphens>--<lower-case address without 0x>.
func fileName(t time.Time, a signing.Address) string {
	t = t.UTC()
	return fmt.Sprintf("UTC--%04d-%02d-%02dT%02d-%02d-%02d.%09dZ--%x",
		t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), a[:])
}

// writeNew writes data to a new file at path, mode 0600, atomically and never
// over an existing file: it writes a hidden temporary file in the same
// directory, syncs it, runs verify on it, links it to path (which fails if
// path exists), removes the temporary name and syncs the directory. On any
// failure before the link, path does not exist and the temporary file is
// removed.
func writeNew(path string, data []byte, verify func(tmp string) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return writeError(path, err)
	}
	tmp := f.Name()
	defer func() {
		if f != nil {
			f.Close()
		}
		os.Remove(tmp)
	}()
	// CreateTemp makes the file 0600; say so, in case that ever changes.
	if err := f.Chmod(0o600); err != nil {
		return writeError(path, err)
	}
	if _, err := f.Write(data); err != nil {
		return writeError(path, err)
	}
	if err := f.Sync(); err != nil {
		return writeError(path, err)
	}
	closeErr := f.Close()
	f = nil
	if closeErr != nil {
		return writeError(path, closeErr)
	}
	if err := verify(tmp); err != nil {
		return err
	}
	if err := link(tmp, path); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return warden.Errorf(warden.EInternal, "the key file %s is written but the directory could not be synced; it may not survive a crash", path).Wrap(err)
	}
	return nil
}

// link gives tmp the name path without replacing anything at path. Where hard
// links are not supported it falls back to a checked rename, which another
// writer could race.
func link(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return existsError(path)
	}
	if _, statErr := os.Lstat(path); statErr == nil {
		return existsError(path)
	}
	if err := os.Rename(tmp, path); err != nil {
		return writeError(path, err)
	}
	return nil
}

func existsError(path string) error {
	return warden.Errorf(warden.EConflict, "a file named %s already exists; it was left alone", path)
}

func writeError(path string, err error) error {
	return warden.Errorf(warden.EInternal, "cannot write the key file %s", path).Wrap(err)
}
