package keystore_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// BenchmarkUnlockStandard is the start-up cost of a real key: Open of a file
// written with Standard parameters (one scrypt derivation, 256 MB).
func BenchmarkUnlockStandard(b *testing.B) {
	dir := b.TempDir()
	addr, _, err := keystore.Create(dir, testPass, keystore.Standard)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		k, err := keystore.Open(dir, &addr, testPass)
		if err != nil {
			b.Fatal(err)
		}
		k.Close()
	}
}

func BenchmarkSignTransaction(b *testing.B) {
	k := openKey(b, web3Key)
	tx := &signing.Tx{
		Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), Nonce: 1, Gas: 65000,
		To:           addrOf("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"),
		Data:         make([]byte, 68),
		MaxFeePerGas: big.NewInt(30e9), MaxPriorityFeePerGas: big.NewInt(1e9),
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := k.SignTransaction(ctx, tx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignMessage(b *testing.B) {
	k := openKey(b, web3Key)
	msg := []byte("Sign in to example.org\nNonce: 42")
	ctx := context.Background()
	for b.Loop() {
		if _, err := k.SignMessage(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}
