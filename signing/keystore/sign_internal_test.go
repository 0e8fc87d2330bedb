package keystore

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/agentwarden/warden/signing"
)

// TestPersonalHashMatchesGeth checks personalHash against go-ethereum's
// accounts.TextHash.
func TestPersonalHashMatchesGeth(t *testing.T) {
	cases := []struct {
		name string
		msg  []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"ASCII", []byte("Some data")},
		{"non-ASCII", []byte("Grüße, 世界 ✓")},
		{"binary", []byte{0x00, 0x19, 0xff, 0x80}},
		{"1000 bytes (a four-digit length)", bytes.Repeat([]byte("a"), 1000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := personalHash(tc.msg), accounts.TextHash(tc.msg); !bytes.Equal(got, want) {
				t.Errorf("personalHash(%q) = %x, want accounts.TextHash's %x", tc.msg, got, want)
			}
		})
	}
}

// TestRecoversTo checks the check SignTransaction makes before it returns a
// signature: it accepts only a low-s signature of the hash by the address.
func TestRecoversTo(t *testing.T) {
	priv, err := crypto.HexToECDSA("4646464646464646464646464646464646464646464646464646464646464646")
	if err != nil {
		t.Fatal(err)
	}
	addr := signing.Address(crypto.PubkeyToAddress(priv.PublicKey))
	hash := crypto.Keccak256([]byte("a transaction"))
	sig, err := crypto.Sign(hash, priv)
	if err != nil {
		t.Fatal(err)
	}
	// The high-s twin of sig, s' = N - s with the other recovery id, is as
	// valid a signature of hash by addr, except under EIP-2.
	highS := bytes.Clone(sig)
	s := new(big.Int).SetBytes(sig[32:64])
	new(big.Int).Sub(crypto.S256().Params().N, s).FillBytes(highS[32:64])
	highS[64] ^= 1
	if pub, err := crypto.SigToPub(hash, highS); err != nil || signing.Address(crypto.PubkeyToAddress(*pub)) != addr {
		t.Fatalf("the high-s twin does not recover to the signer (%v); the case below would test nothing", err)
	}
	otherRecID := bytes.Clone(sig)
	otherRecID[64] ^= 1
	cases := []struct {
		name string
		hash []byte
		sig  []byte
		addr signing.Address
		want bool
	}{
		{"the signature", hash, sig, addr, true},
		{"high s", hash, highS, addr, false},
		{"another address", hash, sig, signing.Address{1}, false},
		{"another hash", crypto.Keccak256([]byte("another")), sig, addr, false},
		{"the other recovery id", hash, otherRecID, addr, false},
		{"64 bytes", hash, sig[:64], addr, false},
		{"zero r", hash, append(make([]byte, 32), sig[32:]...), addr, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := recoversTo(tc.hash, tc.sig, tc.addr); got != tc.want {
				t.Errorf("recoversTo = %v, want %v", got, tc.want)
			}
		})
	}
}
