package keystore

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// Create makes a new random key, writes it to a new key file in dir
// encrypted with passphrase under p, and returns its address and the file's
// path. dir is created mode 0700 if missing. An empty passphrase is refused.
func Create(dir string, passphrase []byte, p Params) (signing.Address, string, error) {
	if err := checkPassphrase(passphrase, "the passphrase"); err != nil {
		return signing.Address{}, "", err
	}
	priv, err := crypto.GenerateKey()
	if err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInternal, "cannot generate a key").Wrap(err)
	}
	defer zeroKey(priv)
	return store(dir, priv, uuid.New(), passphrase, p)
}

// ImportPrivateKey writes the private key given as hex (64 hex digits, 0x
// optional, surrounding white space ignored) to a new key file in dir
// encrypted with passphrase under p. hexKey is read, not kept and not
// modified; the caller may zero it afterwards. An address that already has a
// file in dir is refused (EConflict).
func ImportPrivateKey(dir string, hexKey []byte, passphrase []byte, p Params) (signing.Address, string, error) {
	if err := checkPassphrase(passphrase, "the passphrase"); err != nil {
		return signing.Address{}, "", err
	}
	h := bytes.TrimSpace(hexKey)
	if len(h) >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') {
		h = h[2:]
	}
	var raw [32]byte
	defer clear(raw[:])
	// The messages below never quote the input: it is the key.
	if len(h) != 2*len(raw) {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the private key is not 64 hex digits (it has %d characters after trimming and the 0x)", len(h)).
			WithHint("give the raw secp256k1 private key as 64 hex digits, with or without 0x")
	}
	if _, err := hex.Decode(raw[:], h); err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the private key is not 64 hex digits (it holds a character that is not hex)").
			WithHint("give the raw secp256k1 private key as 64 hex digits, with or without 0x")
	}
	priv, err := crypto.ToECDSA(raw[:])
	if err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the private key is not a valid secp256k1 key (zero, or not below the curve order)")
	}
	defer zeroKey(priv)
	return store(dir, priv, uuid.New(), passphrase, p)
}

// ImportFile decrypts keyJSON, a Web3 Secret Storage v3 file from another
// wallet, with oldPass (which may be empty, if that wallet allowed it),
// re-encrypts it with newPass under p and writes it to a new key file in dir.
// A file whose "address" does not match its key is refused, and so is an
// address that already has a file in dir (EConflict).
func ImportFile(dir string, keyJSON []byte, oldPass, newPass []byte, p Params) (signing.Address, string, error) {
	if err := checkPassphrase(newPass, "the new passphrase"); err != nil {
		return signing.Address{}, "", err
	}
	if err := p.check(); err != nil {
		return signing.Address{}, "", err
	}
	priv, named, err := decrypt(keyJSON, oldPass)
	if errors.Is(err, errWrongPassphrase) {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the old passphrase does not unlock the key file being imported").
			WithHint("give the passphrase the file was made with as the old one; the new one is what warden will use")
	}
	if err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the file being imported is not a usable Web3 Secret Storage (v3) key file: %v", err)
	}
	defer zeroKey(priv)
	addr := addressOf(priv)
	if named != nil && *named != addr {
		return signing.Address{}, "", warden.Errorf(warden.EInvalid, "the file being imported says address %s but holds the key of %s; it was altered or is corrupt", named.Hex(), addr.Hex())
	}
	return store(dir, priv, uuid.New(), newPass, p)
}

// store encrypts priv with pass under p and writes it to a new file in dir,
// after checking that dir holds no file for its address. It decrypts the
// written file before giving it its name, as geth does, so that a file that
// would not unlock is never left behind.
func store(dir string, priv *ecdsa.PrivateKey, id uuid.UUID, pass []byte, p Params) (signing.Address, string, error) {
	if err := p.check(); err != nil {
		return signing.Address{}, "", err
	}
	if err := ensureDir(dir); err != nil {
		return signing.Address{}, "", err
	}
	addr := addressOf(priv)
	existing, err := List(dir)
	if err != nil {
		return signing.Address{}, "", err
	}
	for _, e := range existing {
		if e.Address == addr {
			return signing.Address{}, "", warden.Errorf(warden.EConflict, "%s already has a key file: %s", addr.Hex(), e.Path).
				WithHint("open that file instead; remove it first only if it is a copy you no longer need")
		}
	}
	keyBytes := crypto.FromECDSA(priv)
	sealed, err := seal(keyBytes, pass, p)
	clear(keyBytes)
	if err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInternal, "cannot encrypt the key").Wrap(err)
	}
	data, err := json.Marshal(keyFileJSON{
		Address: hex.EncodeToString(addr[:]),
		Crypto:  sealed,
		ID:      id.String(),
		Version: 3,
	})
	if err != nil {
		return signing.Address{}, "", warden.Errorf(warden.EInternal, "cannot encode the key file").Wrap(err)
	}
	path := filepath.Join(dir, fileName(time.Now(), addr))
	err = writeNew(path, data, func(tmp string) error {
		written, err := os.ReadFile(tmp)
		if err != nil {
			return writeError(path, err)
		}
		back, _, err := decrypt(written, pass)
		if err != nil {
			return warden.Errorf(warden.EInternal, "the key file written for %s does not decrypt (%v); nothing was kept", addr.Hex(), err)
		}
		defer zeroKey(back)
		if addressOf(back) != addr {
			return warden.Errorf(warden.EInternal, "the key file written for %s decrypts to another key; nothing was kept", addr.Hex())
		}
		return nil
	})
	if err != nil {
		return signing.Address{}, "", err
	}
	return addr, path, nil
}
