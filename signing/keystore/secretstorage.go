package keystore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"

	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/crypto/scrypt"

	"github.com/agentwarden/warden/internal/clip"
)

// The encryption of Web3 Secret Storage, version 3
// (https://ethereum.org/developers/docs/data-structures-and-encoding/web3-secret-storage/):
// a KDF (scrypt, or PBKDF2 with HMAC-SHA256) derives 32 bytes from the
// passphrase and a salt. The first 16 are the AES-128-CTR key that encrypts
// the private key; the last 16 authenticate the ciphertext, as
// MAC = keccak256(derived[16:32] ‖ ciphertext). keyfile.go reads and checks
// the JSON around it.

const (
	// dkLen is the length of the derived key: the only one the spec uses.
	dkLen = 32
	// cipherName is the only cipher the spec names.
	cipherName = "aes-128-ctr"
)

// kdfParams are a key file's KDF and its parameters, as checkKDF read them.
type kdfParams struct {
	name    string // "scrypt" or "pbkdf2"
	salt    []byte
	n, r, p int // scrypt's cost parameters
	c       int // PBKDF2's round count; its PRF is always HMAC-SHA256
}

// sealedKey is a key file's crypto section, as checkKeyFile read it.
type sealedKey struct {
	kdf                 kdfParams
	iv, ciphertext, mac []byte
}

// seal encrypts key with pass as geth writes a key file: scrypt under p
// (r = 8) with a random 32-byte salt, AES-128-CTR with a random 16-byte IV,
// and the spec's MAC. The result is the file's "crypto" section.
func seal(key, pass []byte, p Params) (cryptoJSON, error) {
	salt := make([]byte, 32)
	iv := make([]byte, aes.BlockSize)
	_, _ = rand.Read(salt) // crypto/rand.Read never fails
	_, _ = rand.Read(iv)
	dk, err := scrypt.Key(pass, salt, p.N, scryptR, p.P, dkLen)
	if err != nil {
		return cryptoJSON{}, err
	}
	defer clear(dk)
	ciphertext, err := aesCTR(dk[:16], iv, key)
	if err != nil {
		return cryptoJSON{}, err
	}
	return cryptoJSON{
		Cipher:       cipherName,
		CipherText:   hex.EncodeToString(ciphertext),
		CipherParams: cipherParamsJSON{IV: hex.EncodeToString(iv)},
		KDF:          "scrypt",
		KDFParams: map[string]any{
			"dklen": dkLen,
			"n":     p.N,
			"p":     p.P,
			"r":     scryptR,
			"salt":  hex.EncodeToString(salt),
		},
		MAC: hex.EncodeToString(crypto.Keccak256(dk[16:32], ciphertext)),
	}, nil
}

// unseal derives the key from pass with s's KDF, checks s's MAC in
// constant time and decrypts. A MAC that does not match is
// errWrongPassphrase. The caller zeroes the plaintext it gets.
func unseal(s *sealedKey, pass []byte) ([]byte, error) {
	dk, err := s.kdf.derive(pass)
	if err != nil {
		return nil, err
	}
	defer clear(dk)
	if subtle.ConstantTimeCompare(crypto.Keccak256(dk[16:32], s.ciphertext), s.mac) != 1 {
		return nil, errWrongPassphrase
	}
	return aesCTR(dk[:16], s.iv, s.ciphertext)
}

// derive runs the KDF on pass and returns dkLen bytes.
func (k kdfParams) derive(pass []byte) ([]byte, error) {
	switch k.name {
	case "scrypt":
		return scrypt.Key(pass, k.salt, k.n, k.r, k.p, dkLen)
	case "pbkdf2":
		// crypto/pbkdf2 takes the passphrase as a string, a copy this
		// package cannot zero.
		return pbkdf2.Key(sha256.New, string(pass), k.salt, k.c, dkLen)
	}
	return nil, fmt.Errorf("its KDF %q is neither scrypt nor pbkdf2", clip.String(k.name, 40))
}

// aesCTR is AES-128 in counter mode with key and iv over in; the same
// operation encrypts and decrypts.
func aesCTR(key, iv, in []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(in))
	cipher.NewCTR(block, iv).XORKeyStream(out, in)
	return out, nil
}
