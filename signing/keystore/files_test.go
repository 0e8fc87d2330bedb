package keystore_test

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gethkeystore "github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

var gethName = regexp.MustCompile(`^UTC--\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{9}Z--([0-9a-f]{40})$`)

// TestCreate checks that a created key file is what other wallets read:
// geth's DecryptKey opens it, it has geth's name, and only the owner can
// read it or its directory.
func TestCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "keys")
	addr, path, err := keystore.Create(dir, testPass, keystore.Light)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checks := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"geth DecryptKey opens it", func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			k, err := gethkeystore.DecryptKey(data, string(testPass))
			if err != nil {
				t.Fatalf("DecryptKey: %v", err)
			}
			if signing.Address(k.Address) != addr {
				t.Errorf("DecryptKey address = %s, want %s", k.Address.Hex(), addr)
			}
			var f struct {
				Address string `json:"address"`
				Version int    `json:"version"`
			}
			if err := json.Unmarshal(data, &f); err != nil || f.Address != hex.EncodeToString(addr[:]) || f.Version != 3 {
				t.Errorf("file address, version = %q, %d (%v), want %x, 3", f.Address, f.Version, err, addr[:])
			}
		}},
		{"geth-style name", func(t *testing.T) {
			m := gethName.FindStringSubmatch(filepath.Base(path))
			if m == nil || m[1] != hex.EncodeToString(addr[:]) || filepath.Dir(path) != dir {
				t.Errorf("path = %s, want %s/UTC--<time>--%x", path, dir, addr[:])
			}
		}},
		{"file mode 0600", func(t *testing.T) {
			if m := fileMode(t, path); m != 0o600 {
				t.Errorf("file mode = %04o, want 0600", m)
			}
		}},
		{"directory mode 0700", func(t *testing.T) {
			for _, d := range []string{dir, filepath.Dir(dir)} {
				if m := fileMode(t, d); m != 0o700 {
					t.Errorf("%s mode = %04o, want 0700", d, m)
				}
			}
		}},
		{"no temporary file left", func(t *testing.T) {
			names, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != 1 {
				t.Errorf("directory holds %d entries, want only the key file", len(names))
			}
		}},
		{"List shows it", func(t *testing.T) {
			got, err := keystore.List(dir)
			if err != nil || len(got) != 1 || got[0] != (keystore.Entry{Address: addr, Path: path}) {
				t.Errorf("List = %v, %v, want [{%s %s}]", got, err, addr, path)
			}
		}},
		{"Open unlocks it", func(t *testing.T) {
			k, err := keystore.Open(dir, nil, testPass)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			if k.Address() != addr {
				t.Errorf("Open address = %s, want %s", k.Address(), addr)
			}
		}},
	}
	for _, c := range checks {
		t.Run(c.name, c.check)
	}
}

// TestImportPrivateKeyForms checks the accepted spellings of a hex key.
func TestImportPrivateKeyForms(t *testing.T) {
	want := signing.Address(crypto.PubkeyToAddress(mustKey(t, web3Key).PublicKey))
	cases := []struct{ name, in string }{
		{"bare", web3Key},
		{"0x", "0x" + web3Key},
		{"upper case 0X", "0X" + strings.ToUpper(web3Key)},
		{"surrounding white space", "  \t0x" + web3Key + "\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			orig := string(in)
			addr, _, err := keystore.ImportPrivateKey(t.TempDir(), in, testPass, keystore.Light)
			if err != nil {
				t.Fatalf("ImportPrivateKey: %v", err)
			}
			if addr != want {
				t.Errorf("address = %s, want %s", addr, want)
			}
			if string(in) != orig {
				t.Errorf("ImportPrivateKey modified its input")
			}
		})
	}
}

// TestImportRefuses checks the refusals of the import functions and Create,
// and that no message quotes a key or a passphrase.
func TestImportRefuses(t *testing.T) {
	existingDir, _ := importKey(t, web3Key)
	const oldPass = "0ld-wallet-pa55"
	other, err := gethkeystore.EncryptKey(&gethkeystore.Key{PrivateKey: mustKey(t, web3Key), Address: crypto.PubkeyToAddress(mustKey(t, web3Key).PublicKey)}, oldPass, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	// EncryptKey needs an Id; set a fixed one.
	other = setField(t, other, "id", "3198bc9c-6672-5ab3-d995-4942343ae5b6")
	lying := setField(t, other, "address", "3535353535353535353535353535353535353535")
	secrets := []string{web3Key, "ff" + strings.Repeat("f", 62)}
	cases := []struct {
		name string
		run  func() error
		code warden.ErrorCode
		want string
	}{
		{"empty passphrase Create", func() error {
			_, _, err := keystore.Create(t.TempDir(), nil, keystore.Light)
			return err
		}, warden.EInvalid, "passphrase is empty"},
		{"empty passphrase ImportPrivateKey", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte(web3Key), []byte{}, keystore.Light)
			return err
		}, warden.EInvalid, "passphrase is empty"},
		{"empty new passphrase ImportFile", func() error {
			_, _, err := keystore.ImportFile(t.TempDir(), other, []byte(oldPass), nil, keystore.Light)
			return err
		}, warden.EInvalid, "new passphrase is empty"},
		{"zero params", func() error {
			_, _, err := keystore.Create(t.TempDir(), testPass, keystore.Params{})
			return err
		}, warden.EInvalid, "scrypt parameters"},
		{"N not a power of two", func() error {
			_, _, err := keystore.Create(t.TempDir(), testPass, keystore.Params{N: 1000, P: 1})
			return err
		}, warden.EInvalid, "power of two"},
		{"params too costly", func() error {
			_, _, err := keystore.Create(t.TempDir(), testPass, keystore.Params{N: 1 << 22, P: 1})
			return err
		}, warden.EInvalid, "cost too much"},
		{"empty key", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), nil, testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not 64 hex digits"},
		{"63 digits", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte(web3Key[1:]), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not 64 hex digits"},
		{"65 digits", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte(web3Key+"0"), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not 64 hex digits"},
		{"not hex", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte("g"+web3Key[1:]), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not hex"},
		{"zero key", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte(strings.Repeat("0", 64)), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not a valid secp256k1 key"},
		{"key above the curve order", func() error {
			_, _, err := keystore.ImportPrivateKey(t.TempDir(), []byte(strings.Repeat("f", 64)), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not a valid secp256k1 key"},
		{"ImportPrivateKey of a key already in dir", func() error {
			_, _, err := keystore.ImportPrivateKey(existingDir, []byte(web3Key), testPass, keystore.Light)
			return err
		}, warden.EConflict, "already has a key file: " + existingDir + "/UTC--"},
		{"ImportFile of a key already in dir", func() error {
			_, _, err := keystore.ImportFile(existingDir, other, []byte(oldPass), testPass, keystore.Light)
			return err
		}, warden.EConflict, "already has a key file: " + existingDir + "/UTC--"},
		{"ImportFile wrong old passphrase", func() error {
			_, _, err := keystore.ImportFile(t.TempDir(), other, []byte("not the old pass"), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "old passphrase does not unlock"},
		{"ImportFile of a file whose address lies", func() error {
			_, _, err := keystore.ImportFile(t.TempDir(), lying, []byte(oldPass), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "says address 0x3535353535353535353535353535353535353535"},
		{"ImportFile of something else", func() error {
			_, _, err := keystore.ImportFile(t.TempDir(), []byte(`{"hello":"world"}`), []byte(oldPass), testPass, keystore.Light)
			return err
		}, warden.EInvalid, "not a usable Web3 Secret Storage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			wantCode(t, err, tc.code, tc.want)
			noSecret(t, "error", err.Error(), secrets, string(testPass), oldPass)
			if tc.code == warden.EInvalid && strings.Contains(tc.want, "passphrase is empty") && warden.UserMessage(err) == err.Error() {
				t.Errorf("refusal of an empty passphrase has no hint")
			}
		})
	}
	t.Run("the existing file is untouched", func(t *testing.T) {
		got, err := keystore.List(existingDir)
		if err != nil || len(got) != 1 {
			t.Fatalf("List = %v, %v, want one key", got, err)
		}
	})
}

// TestOpen checks key selection and the refusals of Open.
func TestOpen(t *testing.T) {
	one, oneAddr := importKey(t, web3Key)
	two, _ := importKey(t, web3Key)
	secondAddr, _, err := keystore.ImportPrivateKey(two, []byte(eip155Key), testPass, keystore.Light)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := keystore.List(one)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	// A file that says it holds another address than its key.
	lyingDir := t.TempDir()
	data, err := os.ReadFile(entries[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	lyingPath := filepath.Join(lyingDir, "UTC--2020-01-01T00-00-00.000000000Z--3535353535353535353535353535353535353535")
	if err := os.WriteFile(lyingPath, setField(t, data, "address", "3535353535353535353535353535353535353535"), 0o600); err != nil {
		t.Fatal(err)
	}
	absent := addrOf("0x3535353535353535353535353535353535353535")
	cases := []struct {
		name    string
		dir     string
		addr    *signing.Address
		pass    string
		want    signing.Address
		code    warden.ErrorCode
		message []string
	}{
		{name: "only key", dir: one, pass: string(testPass), want: oneAddr},
		{name: "named key", dir: two, addr: &secondAddr, pass: string(testPass), want: secondAddr},
		{name: "wrong passphrase", dir: one, pass: "Tr0ub4dor&3", code: warden.EInvalid,
			message: []string{"the passphrase does not unlock the key in " + entries[0].Path}},
		{name: "empty passphrase", dir: one, pass: "", code: warden.EInvalid, message: []string{"passphrase is empty"}},
		{name: "several keys and no address", dir: two, pass: string(testPass), code: warden.EInvalid,
			message: []string{"holds 2 keys", oneAddr.Hex(), secondAddr.Hex()}},
		{name: "address not in dir", dir: two, addr: absent, pass: string(testPass), code: warden.ENotFound,
			message: []string{"no key file for " + absent.Hex(), oneAddr.Hex(), secondAddr.Hex()}},
		{name: "empty dir", dir: t.TempDir(), pass: string(testPass), code: warden.ENotFound, message: []string{"no key file"}},
		{name: "missing dir", dir: filepath.Join(t.TempDir(), "nope"), pass: string(testPass), code: warden.ENotFound, message: []string{"no key file"}},
		{name: "file whose address lies", dir: lyingDir, pass: string(testPass), code: warden.EInvalid,
			message: []string{lyingPath, "says address " + absent.Hex(), "holds the key of " + oneAddr.Hex()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := keystore.Open(tc.dir, tc.addr, []byte(tc.pass))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Open = %v", err)
				}
				defer k.Close()
				if k.Address() != tc.want {
					t.Errorf("Open address = %s, want %s", k.Address(), tc.want)
				}
				return
			}
			if k != nil {
				t.Errorf("Open returned a key with its error")
			}
			wantCode(t, err, tc.code, tc.message...)
			noSecret(t, "error", warden.UserMessage(err)+err.Error(), []string{web3Key, eip155Key}, tc.pass, string(testPass))
		})
	}
}

// TestMalformedKeyFiles checks that a key file geth's decoder would panic
// on, or that would cost too much to unlock, is refused with the file named.
func TestMalformedKeyFiles(t *testing.T) {
	src, _ := importKey(t, web3Key)
	entries, err := keystore.List(src)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	good, err := os.ReadFile(entries[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"no dklen", func(m map[string]any) { delete(kdf(m), "dklen") }, "dklen"},
		{"short dklen", func(m map[string]any) { kdf(m)["dklen"] = 16 }, "dklen"},
		{"no salt", func(m map[string]any) { delete(kdf(m), "salt") }, "salt"},
		{"salt not a string", func(m map[string]any) { kdf(m)["salt"] = 7 }, "salt"},
		{"no n", func(m map[string]any) { delete(kdf(m), "n") }, "scrypt parameters"},
		{"n not a power of two", func(m map[string]any) { kdf(m)["n"] = 1000 }, "scrypt parameters"},
		{"n huge", func(m map[string]any) { kdf(m)["n"] = 1 << 30 }, "scrypt cost"},
		{"p huge", func(m map[string]any) { kdf(m)["p"] = 1 << 20 }, "scrypt cost"},
		{"fractional r", func(m map[string]any) { kdf(m)["r"] = 8.5 }, "scrypt parameters"},
		{"unknown kdf", func(m map[string]any) { cryptoSection(m)["kdf"] = "argon2id" }, "KDF"},
		{"cbc cipher", func(m map[string]any) { cryptoSection(m)["cipher"] = "aes-128-cbc" }, "cipher"},
		{"short iv", func(m map[string]any) { cryptoSection(m)["cipherparams"] = map[string]any{"iv": "0011"} }, "iv"},
		{"short ciphertext", func(m map[string]any) { cryptoSection(m)["ciphertext"] = "00" }, "ciphertext"},
		{"mac not hex", func(m map[string]any) { cryptoSection(m)["mac"] = "zz" }, "mac"},
		{"version 1", func(m map[string]any) { m["version"] = "1" }, "version 3"},
		{"id not a uuid", func(m map[string]any) { m["id"] = "x" }, "UUID"},
		{"null crypto", func(m map[string]any) { m["crypto"] = nil }, `no "crypto" section`},
		{"crypto not an object", func(m map[string]any) { m["crypto"] = 1 }, "not a JSON key file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(good, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, filepath.Base(entries[0].Path))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := keystore.Open(dir, nil, testPass)
			if k != nil {
				k.Close()
			}
			wantCode(t, err, warden.EInvalid, path, tc.want)
			_, _, err = keystore.ImportFile(t.TempDir(), data, testPass, testPass, keystore.Light)
			wantCode(t, err, warden.EInvalid, tc.want)
		})
	}
}

// TestList checks what List lists, skips and refuses.
func TestList(t *testing.T) {
	dir, addr := importKey(t, web3Key)
	entries, err := keystore.List(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	keyFile := entries[0].Path
	keyJSON, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, path string, data []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("skips what is not a key file", func(t *testing.T) {
		write(t, filepath.Join(dir, "README"), []byte("keys live here\n"), 0o644)
		write(t, filepath.Join(dir, "notes.json"), []byte(`{"address":"3535353535353535353535353535353535353535"}`), 0o644)
		write(t, filepath.Join(dir, "no-address.json"), setField(t, keyJSON, "address", ""), 0o600)
		write(t, filepath.Join(dir, ".UTC--x.tmp-123"), keyJSON, 0o600)
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		got, err := keystore.List(dir)
		if err != nil || len(got) != 1 || got[0].Address != addr || got[0].Path != keyFile {
			t.Errorf("List = %v, %v, want only %s", got, err, keyFile)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		got, err := keystore.List(filepath.Join(dir, "nope"))
		if err != nil || len(got) != 0 {
			t.Errorf("List(missing) = %v, %v, want none", got, err)
		}
	})
	modes := []struct {
		name string
		mode os.FileMode
	}{
		{"0644", 0o644},
		{"0640", 0o640},
		{"0604", 0o604},
		{"0620", 0o620},
	}
	for _, m := range modes {
		t.Run("refuses a key file with mode "+m.name, func(t *testing.T) {
			d := t.TempDir()
			p := filepath.Join(d, filepath.Base(keyFile))
			write(t, p, keyJSON, m.mode)
			_, err := keystore.List(d)
			wantCode(t, err, warden.EInvalid, p, "open to group or others")
			if msg := warden.UserMessage(err); !strings.Contains(msg, "chmod 600 "+p) {
				t.Errorf("message %q does not give the chmod", msg)
			}
			if _, err := keystore.Open(d, nil, testPass); err == nil {
				t.Errorf("Open accepted a key file with mode %s", m.name)
			}
		})
	}
	dirModes := []struct {
		name   string
		mode   os.FileMode
		refuse bool
	}{
		{"0700", 0o700, false},
		{"0755 (others may list)", 0o755, false},
		{"0775", 0o775, true},
		{"0757", 0o757, true},
		{"1777", 0o777 | os.ModeSticky, true},
	}
	for _, m := range dirModes {
		t.Run("directory mode "+m.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "keys")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, m.mode); err != nil {
				t.Fatal(err)
			}
			_, err := keystore.List(d)
			if !m.refuse {
				if err != nil {
					t.Fatalf("List = %v, want no error", err)
				}
				return
			}
			wantCode(t, err, warden.EInvalid, d, "writable by group or others")
			if msg := warden.UserMessage(err); !strings.Contains(msg, "chmod 700 "+d) {
				t.Errorf("message %q does not give the chmod", msg)
			}
			_, _, err = keystore.Create(d, testPass, keystore.Light)
			wantCode(t, err, warden.EInvalid, "writable by group or others")
		})
	}
}

func mustKey(t *testing.T, hexKey string) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.HexToECDSA(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// setField returns the JSON object data with field set to value.
func setField(t *testing.T, data []byte, field string, value any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[field] = value
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cryptoSection(m map[string]any) map[string]any { return m["crypto"].(map[string]any) }

func kdf(m map[string]any) map[string]any { return cryptoSection(m)["kdfparams"].(map[string]any) }
