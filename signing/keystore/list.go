package keystore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// Entry is one key file in a key directory. The zero value names no file.
type Entry struct {
	// Address is the account the file says it holds (checked against the
	// key itself when it is opened).
	Address signing.Address
	// Path is the file's path: the directory joined with its name.
	Path string
}

// List returns the key files in dir, in file-name order (oldest first for
// geth-style names). A missing directory holds no keys. Hidden files,
// directories and files that are not keystore JSON with an address are
// skipped. A key file with any group or other permission, or a directory
// group or others may write in, is an error naming it and the chmod that
// fixes it.
func List(dir string) ([]Entry, error) {
	found, err := scan(dir)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(found))
	for i, f := range found {
		entries[i] = f.Entry
	}
	return entries, nil
}

// scanned is a key file and the bytes List read from it.
type scanned struct {
	Entry
	data []byte
}

// scan reads dir's key files.
func scan(dir string) ([]scanned, error) {
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot read the key directory %s", dir).Wrap(err)
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	var found []scanned
	for _, de := range names {
		if de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, de.Name())
		f, ok, err := readKeyFile(path)
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, f)
		}
	}
	return found, nil
}

// readKeyFile reads path if it is a key file: a regular file (symbolic links
// are followed) no larger than maxKeyFileSize holding keystore JSON with an
// address. ok is false for anything else. A key file with any group or other
// permission is an error.
func readKeyFile(path string) (f scanned, ok bool, err error) {
	file, err := os.Open(path)
	if err != nil {
		return f, false, warden.Errorf(warden.EInvalid, "cannot read %s in the key directory", path).Wrap(err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return f, false, warden.Errorf(warden.EInvalid, "cannot read %s in the key directory", path).Wrap(err)
	}
	if !info.Mode().IsRegular() || info.Size() > maxKeyFileSize {
		return f, false, nil
	}
	data, err := io.ReadAll(io.LimitReader(file, maxKeyFileSize+1))
	if err != nil {
		return f, false, warden.Errorf(warden.EInvalid, "cannot read %s in the key directory", path).Wrap(err)
	}
	addr, isKey := sniff(data)
	if !isKey || len(data) > maxKeyFileSize {
		return f, false, nil
	}
	if !private(info) {
		return f, false, warden.Errorf(warden.EInvalid, "the key file %s is open to group or others (mode %04o)", path, info.Mode().Perm()).
			WithHint(fmt.Sprintf("chmod 600 %s", path))
	}
	return scanned{Entry: Entry{Address: addr, Path: path}, data: data}, true, nil
}
