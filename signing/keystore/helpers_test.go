package keystore_test

import (
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// Keys with published vectors. Never fund them.
const (
	// web3Key is web3.js's eth.accounts.sign documentation key.
	web3Key = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	// eip155Key is the key of EIP-155's example transaction.
	eip155Key = "4646464646464646464646464646464646464646464646464646464646464646"
)

var testPass = []byte("correct horse battery staple")

// importKey imports hexKey into a new directory with Light parameters.
func importKey(t testing.TB, hexKey string) (dir string, addr signing.Address) {
	t.Helper()
	dir = t.TempDir()
	addr, _, err := keystore.ImportPrivateKey(dir, []byte(hexKey), testPass, keystore.Light)
	if err != nil {
		t.Fatalf("ImportPrivateKey: %v", err)
	}
	return dir, addr
}

// openKey imports hexKey into a new directory and opens it; the key is
// closed when the test ends.
func openKey(t testing.TB, hexKey string) *keystore.Key {
	t.Helper()
	dir, addr := importKey(t, hexKey)
	k, err := keystore.Open(dir, &addr, testPass)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

// wantCode fails unless err is a *warden.Error with code and its message
// contains every one of subs.
func wantCode(t *testing.T, err error, code warden.ErrorCode, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s error", code)
	}
	var we *warden.Error
	if !errors.As(err, &we) {
		t.Fatalf("err = %T %v, want *warden.Error", err, err)
	}
	if we.Code != code {
		t.Errorf("code = %s, want %s (err: %v)", we.Code, code, err)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %q, want it to contain %q", err.Error(), s)
		}
	}
}

// noSecret fails if text contains any 16-character stretch of a secret's
// hex (in any case), or a passphrase.
func noSecret(t *testing.T, what, text string, hexSecrets []string, passphrases ...string) {
	t.Helper()
	low := strings.ToLower(text)
	for _, s := range hexSecrets {
		s = strings.ToLower(s)
		for i := 0; i+16 <= len(s); i++ {
			if strings.Contains(low, s[i:i+16]) {
				t.Fatalf("%s contains part of a private key: %q", what, text)
			}
		}
	}
	for _, p := range passphrases {
		if p != "" && strings.Contains(text, p) {
			t.Fatalf("%s contains the passphrase: %q", what, text)
		}
	}
}

func big10(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad number " + s)
	}
	return v
}

func addrOf(s string) *signing.Address {
	a, err := signing.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return &a
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}
