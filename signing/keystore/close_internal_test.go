package keystore

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

// TestClose checks that Close overwrites the key's secret scalar and that
// the key signs nothing afterwards, as does a zero Key.
func TestClose(t *testing.T) {
	dir := t.TempDir()
	pass := []byte("pass")
	addr, _, err := ImportPrivateKey(dir, []byte("4646464646464646464646464646464646464646464646464646464646464646"), pass, Light)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Open(dir, &addr, pass)
	if err != nil {
		t.Fatal(err)
	}
	priv := k.priv
	words := priv.D.Bits() // the backing array Close must overwrite
	if len(words) == 0 {
		t.Fatal("the key has no words to zero")
	}
	k.Close()
	k.Close() // idempotent

	t.Run("zeroed", func(t *testing.T) {
		for i, w := range words {
			if w != 0 {
				t.Fatalf("word %d of the key is %#x after Close, want 0", i, w)
			}
		}
		if priv.D.Sign() != 0 || k.priv != nil {
			t.Errorf("the key is still set after Close")
		}
	})
	t.Run("address kept", func(t *testing.T) {
		if k.Address() != addr {
			t.Errorf("Address after Close = %s, want %s", k.Address(), addr)
		}
	})
	var zero Key
	tx := &signing.Tx{Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), MaxFeePerGas: big.NewInt(1), MaxPriorityFeePerGas: big.NewInt(1)}
	for _, c := range []struct {
		name string
		key  *Key
	}{{"closed", k}, {"zero value", &zero}} {
		t.Run(c.name+" signs nothing", func(t *testing.T) {
			if sig, err := c.key.SignMessage(context.Background(), []byte("x")); err == nil || sig != nil {
				t.Errorf("SignMessage = %x, %v, want an error", sig, err)
			} else if warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Errorf("SignMessage error code = %s, want invalid", warden.ErrorCodeOf(err))
			}
			if st, err := c.key.SignTransaction(context.Background(), tx); err == nil || st.Raw != nil {
				t.Errorf("SignTransaction = %x, %v, want an error", st.Raw, err)
			}
		})
	}
}

// TestWriteNewNeverOverwrites checks that writeNew leaves an existing file
// and refuses with EConflict, removing its temporary file.
func TestWriteNewNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "UTC--existing")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		verify func(string) error
		code   warden.ErrorCode
	}{
		{"existing name", func(string) error { return nil }, warden.EConflict},
		{"verify fails", func(string) error { return warden.Errorf(warden.EInternal, "no") }, warden.EInternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := writeNew(path, []byte("new"), tc.verify)
			if warden.ErrorCodeOf(err) != tc.code {
				t.Fatalf("writeNew = %v, want %s", err, tc.code)
			}
			if got, _ := os.ReadFile(path); string(got) != "old" {
				t.Errorf("the existing file holds %q, want it untouched", got)
			}
			names, _ := os.ReadDir(dir)
			if len(names) != 1 {
				t.Errorf("directory holds %d entries, want only the existing file", len(names))
			}
		})
	}
	t.Run("new name", func(t *testing.T) {
		p := filepath.Join(dir, "UTC--new")
		if err := writeNew(p, []byte("new"), func(string) error { return nil }); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("new file: %v, %v, want mode 0600", info, err)
		}
	})
}
