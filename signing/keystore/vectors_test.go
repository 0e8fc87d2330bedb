package keystore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	gethkeystore "github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// TestSignMessageVectors checks personal_sign against published signatures.
func TestSignMessageVectors(t *testing.T) {
	cases := []struct {
		name, key, msg, sig string
	}{
		{
			// web3.js 1.x docs, web3.eth.accounts.sign('Some data', key).
			name: "web3.js accounts.sign Some data",
			key:  web3Key,
			msg:  "Some data",
			sig:  "0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := openKey(t, tc.key)
			sig, err := k.SignMessage(context.Background(), []byte(tc.msg))
			if err != nil {
				t.Fatal(err)
			}
			if got := "0x" + hex.EncodeToString(sig); got != tc.sig {
				t.Errorf("SignMessage(%q) = %s, want %s", tc.msg, got, tc.sig)
			}
		})
	}
}

// TestSignTransactionVectors checks transaction signing against published
// raw transactions.
func TestSignTransactionVectors(t *testing.T) {
	cases := []struct {
		name string
		key  string
		tx   signing.Tx
		raw  string
	}{
		{
			// EIP-155, "Example".
			name: "EIP-155 example",
			key:  eip155Key,
			tx: signing.Tx{
				Type:     signing.TypeLegacy,
				ChainID:  big10("1"),
				Nonce:    9,
				GasPrice: big10("20000000000"),
				Gas:      21000,
				To:       addrOf("0x3535353535353535353535353535353535353535"),
				Value:    big10("1000000000000000000"),
			},
			raw: "0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := openKey(t, tc.key)
			st, err := k.SignTransaction(context.Background(), &tc.tx)
			if err != nil {
				t.Fatal(err)
			}
			if got := "0x" + hex.EncodeToString(st.Raw); got != tc.raw {
				t.Errorf("SignTransaction raw = %s, want %s", got, tc.raw)
			}
			if want := crypto.Keccak256Hash(st.Raw); st.Hash != want {
				t.Errorf("Hash = %x, want keccak256(raw) %x", st.Hash, want)
			}
			if st.From != k.Address() {
				t.Errorf("From = %s, want %s", st.From, k.Address())
			}
		})
	}
}

// vectorFile is a testdata/*.vector file: "key: value" lines.
type vectorFile map[string]string

func readVector(t *testing.T, name string) vectorFile {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v := vectorFile{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("%s: line %q is not key: value", name, sc.Text())
		}
		v[key] = value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImportFileSpecVector imports the Web3 Secret Storage specification's
// scrypt and PBKDF2 test vectors, checks the key each holds, and signs with
// it.
func TestImportFileSpecVector(t *testing.T) {
	for _, name := range []string{"web3-scrypt.vector", "web3-pbkdf2.vector"} {
		t.Run(name, func(t *testing.T) {
			v := readVector(t, name)
			keyJSON, err := os.ReadFile(filepath.Join("testdata", v["file"]))
			if err != nil {
				t.Fatal(err)
			}
			want, err := crypto.HexToECDSA(v["private-key"])
			if err != nil {
				t.Fatal(err)
			}
			wantAddr := signing.Address(crypto.PubkeyToAddress(want.PublicKey))

			dir := t.TempDir()
			addr, path, err := keystore.ImportFile(dir, keyJSON, []byte(v["password"]), testPass, keystore.Light)
			if err != nil {
				t.Fatalf("ImportFile: %v", err)
			}
			if addr != wantAddr {
				t.Fatalf("ImportFile address = %s, want %s", addr, wantAddr)
			}

			// The re-encrypted file holds the spec's key under the new
			// passphrase, as another wallet would read it.
			written, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			gk, err := gethkeystore.DecryptKey(written, string(testPass))
			if err != nil {
				t.Fatalf("geth DecryptKey of the imported file: %v", err)
			}
			if got := hex.EncodeToString(crypto.FromECDSA(gk.PrivateKey)); got != v["private-key"] {
				t.Fatalf("imported file holds another key")
			}

			k, err := keystore.Open(dir, nil, testPass)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer k.Close()
			msg := []byte("signed with the spec's key")
			sig, err := k.SignMessage(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			sig = bytes.Clone(sig)
			sig[64] -= 27
			pub, err := crypto.SigToPub(accounts.TextHash(msg), sig)
			if err != nil {
				t.Fatal(err)
			}
			if got := signing.Address(crypto.PubkeyToAddress(*pub)); got != wantAddr {
				t.Errorf("signature recovers to %s, want %s", got, wantAddr)
			}
		})
	}
}
