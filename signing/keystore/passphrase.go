package keystore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/agentwarden/warden"
)

// maxPassphraseFile bounds what FromFile reads; a larger file is not a
// passphrase.
const maxPassphraseFile = 64 << 10

// FromFile reads a passphrase file: the whole content with one trailing "\n"
// or "\r\n" removed (other white space is part of the passphrase). A file
// that group or others may read or write is refused, naming the file and
// `chmod 600`; so is an empty passphrase, a file that is not a regular file,
// and one larger than 64 KiB.
func FromFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, warden.Errorf(warden.ENotFound, "the passphrase file %s does not exist", path)
	}
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot read the passphrase file %s", path).Wrap(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot read the passphrase file %s", path).Wrap(err)
	}
	if !info.Mode().IsRegular() {
		return nil, warden.Errorf(warden.EInvalid, "the passphrase file %s is not a regular file", path)
	}
	if !private(info) {
		return nil, warden.Errorf(warden.EInvalid, "the passphrase file %s is open to group or others (mode %04o)", path, info.Mode().Perm()).
			WithHint(fmt.Sprintf("chmod 600 %s", path))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPassphraseFile+1))
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot read the passphrase file %s", path).Wrap(err)
	}
	if len(data) > maxPassphraseFile {
		clear(data)
		return nil, warden.Errorf(warden.EInvalid, "the passphrase file %s is larger than %d KiB; it is not a passphrase", path, maxPassphraseFile>>10)
	}
	pass := data
	if p, ok := bytes.CutSuffix(pass, []byte("\r\n")); ok {
		pass = p
	} else if p, ok := bytes.CutSuffix(pass, []byte("\n")); ok {
		pass = p
	}
	if len(pass) == 0 {
		return nil, warden.Errorf(warden.EInvalid, "the passphrase file %s is empty", path).
			WithHint("write a long random passphrase into it")
	}
	return pass, nil
}

// FromEnv reads the passphrase from the environment variable name, looked up
// with lookup (os.LookupEnv if nil). An unset or empty variable is an error
// naming the variable, never its value. The value is taken as is.
func FromEnv(name string, lookup func(string) (string, bool)) ([]byte, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, ok := lookup(name)
	if !ok {
		return nil, warden.Errorf(warden.EInvalid, "the environment variable %s holding the passphrase is not set", name)
	}
	if v == "" {
		return nil, warden.Errorf(warden.EInvalid, "the environment variable %s holding the passphrase is empty", name)
	}
	return []byte(v), nil
}
