package keystore

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/agentwarden/warden/internal/clip"
	"github.com/agentwarden/warden/signing"
)

// keyFileJSON is a Web3 Secret Storage v3 file as geth writes it, fields in
// geth's order.
type keyFileJSON struct {
	Address string     `json:"address"`
	Crypto  cryptoJSON `json:"crypto"`
	ID      string     `json:"id"`
	Version int        `json:"version"`
}

// cryptoJSON is a key file's "crypto" section, fields in geth's order.
// KDFParams is a map because its fields depend on KDF; encoding/json writes
// a map's keys sorted, as geth's files have them.
type cryptoJSON struct {
	Cipher       string           `json:"cipher"`
	CipherText   string           `json:"ciphertext"`
	CipherParams cipherParamsJSON `json:"cipherparams"`
	KDF          string           `json:"kdf"`
	KDFParams    map[string]any   `json:"kdfparams"`
	MAC          string           `json:"mac"`
}

// cipherParamsJSON is the "cipherparams" of aes-128-ctr.
type cipherParamsJSON struct {
	IV string `json:"iv"`
}

// maxKeyFileSize bounds what is read as a key file; geth's are about 500
// bytes.
const maxKeyFileSize = 64 << 10

// Cost bounds for a key file's KDF, so that a crafted file cannot make an
// unlock allocate without limit (scrypt allocates 128·r·N bytes, and runs
// out of memory rather than failing) or run for minutes. Standard is 256 MB
// and 2^21 block mixes; these allow four and eight times that.
const (
	maxScryptMemory = 1 << 30
	maxScryptWork   = 1 << 24
	maxPBKDF2Rounds = 1 << 24
)

// errWrongPassphrase is decrypt's answer when the MAC does not match.
var errWrongPassphrase = errors.New("wrong passphrase")

// sniff reports whether data looks like a key file: a JSON object with a
// "crypto" section and an address. A file without an address (possible in
// other wallets' exports) is not listed; ImportFile takes it.
func sniff(data []byte) (signing.Address, bool) {
	var f struct {
		Address string          `json:"address"`
		Crypto  json.RawMessage `json:"crypto"`
	}
	if json.Unmarshal(data, &f) != nil || len(f.Crypto) == 0 {
		return signing.Address{}, false
	}
	return parseFileAddress(f.Address)
}

// parseFileAddress reads a key file's address: 40 hex digits, 0x optional,
// any case (no checksum: files hold lower case).
func parseFileAddress(s string) (signing.Address, bool) {
	var a signing.Address
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if len(s) != 2*len(a) {
		return a, false
	}
	if _, err := hex.Decode(a[:], []byte(s)); err != nil {
		return a, false
	}
	return a, true
}

// strictFile is the shape checkKeyFile requires.
type strictFile struct {
	Address *string         `json:"address"`
	Crypto  *cryptoJSON     `json:"crypto"`
	ID      string          `json:"id"`
	Version json.RawMessage `json:"version"`
}

// checkKeyFile reads a Web3 Secret Storage v3 file and checks everything
// unseal relies on: the cipher, the lengths of the IV, ciphertext and MAC,
// the KDF and each of its parameters, and a cost bounded so that a crafted
// file cannot exhaust memory or time. It returns the crypto section and the
// address the file names, if any. Its errors say what is wrong and never
// quote the file's content.
func checkKeyFile(data []byte) (sealed *sealedKey, addr *signing.Address, err error) {
	var f strictFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, errors.New("it is not a JSON key file")
	}
	if f.Crypto == nil {
		return nil, nil, errors.New(`it has no "crypto" section`)
	}
	var version int
	if json.Unmarshal(f.Version, &version) != nil || version != 3 {
		return nil, nil, errors.New("it is not version 3 of Web3 Secret Storage")
	}
	if f.Address != nil {
		a, ok := parseFileAddress(*f.Address)
		if !ok {
			return nil, nil, errors.New(`its "address" is not 40 hex digits`)
		}
		addr = &a
	}
	if _, err := uuid.Parse(f.ID); err != nil {
		return nil, nil, errors.New(`its "id" is not a UUID`)
	}
	c := f.Crypto
	if c.Cipher != cipherName {
		return nil, nil, fmt.Errorf("its cipher %q is not %s", clip.String(c.Cipher, 40), cipherName)
	}
	sealed = new(sealedKey)
	for _, field := range []struct {
		name, value string
		size        int
		into        *[]byte
	}{
		{"cipherparams.iv", c.CipherParams.IV, 16, &sealed.iv},
		{"ciphertext", c.CipherText, 32, &sealed.ciphertext},
		{"mac", c.MAC, 32, &sealed.mac},
	} {
		b, err := hex.DecodeString(field.value)
		if err != nil || len(b) != field.size {
			return nil, nil, fmt.Errorf("its crypto.%s is not %d bytes of hex", field.name, field.size)
		}
		*field.into = b
	}
	if sealed.kdf, err = checkKDF(c.KDF, c.KDFParams); err != nil {
		return nil, nil, err
	}
	return sealed, addr, nil
}

// checkKDF checks a key file's KDF parameters and returns them.
func checkKDF(kdf string, params map[string]any) (kdfParams, error) {
	salt, ok := params["salt"].(string)
	if !ok {
		return kdfParams{}, errors.New("its crypto.kdfparams.salt is missing")
	}
	k := kdfParams{name: kdf}
	var err error
	if k.salt, err = hex.DecodeString(salt); err != nil {
		return kdfParams{}, errors.New("its crypto.kdfparams.salt is not hex")
	}
	if dk, ok := intParam(params, "dklen"); !ok || dk != dkLen {
		return kdfParams{}, fmt.Errorf("its crypto.kdfparams.dklen is not %d", dkLen)
	}
	switch kdf {
	case "scrypt":
		var okN, okR, okP bool
		k.n, okN = intParam(params, "n")
		k.r, okR = intParam(params, "r")
		k.p, okP = intParam(params, "p")
		if !okN || !okR || !okP || k.n < 2 || k.n&(k.n-1) != 0 {
			return kdfParams{}, errors.New("its scrypt parameters n, r, p are missing or invalid")
		}
		if err := checkScrypt(k.n, k.r, k.p); err != nil {
			return kdfParams{}, err
		}
		return k, nil
	case "pbkdf2":
		if k.c, ok = intParam(params, "c"); !ok {
			return kdfParams{}, errors.New("its pbkdf2 round count c is missing or invalid")
		}
		if k.c > maxPBKDF2Rounds {
			return kdfParams{}, fmt.Errorf("its pbkdf2 round count %d is above the %d this signer accepts", k.c, maxPBKDF2Rounds)
		}
		if prf, _ := params["prf"].(string); prf != "hmac-sha256" {
			return kdfParams{}, errors.New("its pbkdf2 prf is not hmac-sha256")
		}
		return k, nil
	}
	return kdfParams{}, fmt.Errorf("its KDF %q is neither scrypt nor pbkdf2", clip.String(kdf, 40))
}

// checkScrypt bounds scrypt's memory and work.
func checkScrypt(n, r, p int) error {
	mem := 128 * uint64(r) * uint64(n)
	work := uint64(n) * uint64(r) * uint64(p)
	if mem > maxScryptMemory || work > maxScryptWork {
		return fmt.Errorf("its scrypt cost (n=%d r=%d p=%d) is above what this signer accepts (%d MB of memory, %d times geth's standard work)",
			n, r, p, maxScryptMemory>>20, maxScryptWork/(1<<21))
	}
	return nil
}

// intParam reads a positive whole-number KDF parameter.
func intParam(params map[string]any, name string) (int, bool) {
	f, ok := params[name].(float64)
	if !ok || f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// decrypt checks data and decrypts its key with pass. A wrong passphrase is
// errWrongPassphrase; anything else is an error saying what is wrong with
// the file. The caller zeroes the key it gets.
func decrypt(data, pass []byte) (priv *ecdsa.PrivateKey, named *signing.Address, err error) {
	sealed, named, err := checkKeyFile(data)
	if err != nil {
		return nil, nil, err
	}
	plain, err := unseal(sealed, pass)
	if errors.Is(err, errWrongPassphrase) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("it does not decrypt: %w", err)
	}
	defer clear(plain)
	priv, err = crypto.ToECDSA(plain)
	if err != nil {
		// ToECDSA's errors say why the number is not a key (zero, not
		// below the curve order), never the number.
		return nil, nil, fmt.Errorf("it does not decrypt to a key: %w", err)
	}
	return priv, named, nil
}

// addressOf is the address priv controls.
func addressOf(priv *ecdsa.PrivateKey) signing.Address {
	return signing.Address(crypto.PubkeyToAddress(priv.PublicKey))
}

// zeroKey overwrites priv's secret scalar in place.
func zeroKey(priv *ecdsa.PrivateKey) {
	if priv != nil && priv.D != nil {
		clear(priv.D.Bits())
		priv.D.SetInt64(0)
	}
}
