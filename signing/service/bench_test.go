package service_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden/signing/keystore"
)

// BenchmarkSubmitSign measures one allowed signing request in process: parse,
// value, decide (global and signing stages), record the decision with its
// rate slot durably in SQLite, record the events, and sign with a real
// keystore key (secp256k1, EIP-1559).
func BenchmarkSubmitSign(b *testing.B) {
	s := corpusSettings(nil)
	s.PerHour, s.PerDay = 1<<30, 1<<30
	h := newHarness(b, s)
	dir := filepath.Join(b.TempDir(), "keys")
	if _, _, err := keystore.Create(dir, []byte("bench passphrase"), keystore.Light); err != nil {
		b.Fatal(err)
	}
	k, err := keystore.Open(dir, nil, []byte("bench passphrase"))
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	h.svc.Signer = k
	b.ResetTimer()
	for i := range b.N {
		res, err := h.svc.Submit(ctx, nativeTx(fmt.Sprint("b-", i), "1000000000000000"), serviceOptions())
		if err != nil || !res.Success {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
