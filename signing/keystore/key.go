package keystore

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// Key is an unlocked key: it holds the private key in memory and signs with
// it. It is safe for concurrent use. Printing it in any form shows only its
// address. The zero value holds no key: Address is the zero address and
// every signature is refused, as after Close.
type Key struct {
	mu   sync.RWMutex
	addr signing.Address
	priv *ecdsa.PrivateKey // nil when closed
}

var _ signing.Signer = (*Key)(nil)

// Open decrypts the key for address in dir with passphrase and returns it,
// ready to sign. A nil address means the only key in dir; if dir holds more
// than one, the error lists them. A wrong passphrase is EInvalid and names
// the file; so is a file that is malformed or whose key does not match the
// address it names. Open costs one scrypt derivation with the file's
// parameters (about a second and 256 MB for Standard).
func Open(dir string, address *signing.Address, passphrase []byte) (*Key, error) {
	if err := checkPassphrase(passphrase, "the passphrase"); err != nil {
		return nil, err
	}
	found, err := scan(dir)
	if err != nil {
		return nil, err
	}
	file, err := choose(dir, found, address)
	if err != nil {
		return nil, err
	}
	priv, _, err := decrypt(file.data, passphrase)
	if errors.Is(err, errWrongPassphrase) {
		return nil, warden.Errorf(warden.EInvalid, "the passphrase does not unlock the key in %s", file.Path).
			WithHint("check the passphrase file or variable; for an imported key it is the new passphrase given at import")
	}
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the key file %s is not a usable Web3 Secret Storage (v3) key file: %v", file.Path, err)
	}
	if got := addressOf(priv); got != file.Address {
		zeroKey(priv)
		return nil, warden.Errorf(warden.EInvalid, "the key file %s says address %s but holds the key of %s; it was altered or is corrupt", file.Path, file.Address.Hex(), got.Hex())
	}
	return &Key{addr: file.Address, priv: priv}, nil
}

// choose picks the file to open.
func choose(dir string, found []scanned, address *signing.Address) (scanned, error) {
	list := func(files []scanned) string {
		parts := make([]string, len(files))
		for i, f := range files {
			parts[i] = f.Address.Hex() + " (" + f.Path + ")"
		}
		return strings.Join(parts, ", ")
	}
	if address == nil {
		switch len(found) {
		case 0:
			return scanned{}, warden.Errorf(warden.ENotFound, "there is no key file in %s", dir).
				WithHint("create a key or import one first")
		case 1:
			return found[0], nil
		}
		return scanned{}, warden.Errorf(warden.EInvalid, "%s holds %d keys: %s", dir, len(found), list(found)).
			WithHint("name the address of the key to use")
	}
	var match []scanned
	for _, f := range found {
		if f.Address == *address {
			match = append(match, f)
		}
	}
	switch len(match) {
	case 0:
		e := warden.Errorf(warden.ENotFound, "there is no key file for %s in %s", address.Hex(), dir)
		if len(found) > 0 {
			e.Message += "; it holds " + list(found)
		}
		return scanned{}, e
	case 1:
		return match[0], nil
	}
	return scanned{}, warden.Errorf(warden.EConflict, "%s has %d key files in %s: %s", address.Hex(), len(match), dir, list(match)).
		WithHint("keep one of them and move the others out of the directory")
}

// Address is the account the key controls; the zero address for a zero Key.
// It stays available after Close.
func (k *Key) Address() signing.Address {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.addr
}

// Close overwrites the key material k holds and drops it. Later signatures
// return an error. Close is idempotent.
//
// Go cannot promise that no copy survives: the garbage collector may have
// moved memory, and the signing code makes short-lived copies it zeroes only
// in part. Close removes the copy k keeps.
func (k *Key) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	zeroKey(k.priv)
	k.priv = nil
}

// errClosed is the refusal of a closed or zero Key.
func (k *Key) errClosed() error {
	return warden.Errorf(warden.EInvalid, "the keystore key %s is closed; open it again to sign", k.addr.Hex())
}

// String is "keystore key 0x…" with the address; never the key.
func (k *Key) String() string {
	if k == nil {
		return "keystore key <nil>"
	}
	return "keystore key " + k.Address().Hex()
}

// GoString is what %#v prints: the type and address; never the key.
func (k *Key) GoString() string {
	if k == nil {
		return "(*keystore.Key)(nil)"
	}
	return "&keystore.Key{Address: " + k.Address().Hex() + "}"
}

// Format prints k for every verb and flag as String does (GoString for %#v,
// quoted for %q), so that no formatting of a Key reaches its fields.
func (k *Key) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, k.GoString())
	case verb == 'q':
		io.WriteString(f, strconv.Quote(k.String()))
	default:
		io.WriteString(f, k.String())
	}
}
