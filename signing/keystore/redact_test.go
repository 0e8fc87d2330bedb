package keystore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// TestKeyNeverPrinted formats an open Key every way a log line might and
// checks that only its address shows.
func TestKeyNeverPrinted(t *testing.T) {
	k := openKey(t, web3Key)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("signer", "key", k)
	asJSON, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, out string }{
		{"%v %+v %#v %s", fmt.Sprintf("%v %+v %#v %s", k, k, k, k)},
		{"%q %x %X %d", fmt.Sprintf("%q %x %X %d", k, k, k, k)},
		{"in a struct %+v", fmt.Sprintf("%+v", struct{ K *keystore.Key }{k})},
		{"in a struct %#v", fmt.Sprintf("%#v", struct{ K *keystore.Key }{k})},
		{"in a slice %v", fmt.Sprint([]any{k})},
		{"as a signing.Signer %#v", fmt.Sprintf("%#v", signing.Signer(k))},
		{"String", k.String()},
		{"GoString", k.GoString()},
		{"slog", logged.String()},
		{"json", string(asJSON)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			noSecret(t, tc.name, tc.out, []string{web3Key}, string(testPass))
			if tc.name != "json" && !strings.Contains(tc.out, k.Address().Hex()) {
				t.Errorf("%s = %q, want the address %s in it", tc.name, tc.out, k.Address())
			}
		})
	}
	t.Run("String form", func(t *testing.T) {
		if got, want := fmt.Sprint(k), "keystore key "+k.Address().Hex(); got != want {
			t.Errorf("Sprint = %q, want %q", got, want)
		}
		var nilKey *keystore.Key
		if got := fmt.Sprintf("%v %#v", nilKey, nilKey); got != "keystore key <nil> (*keystore.Key)(nil)" {
			t.Errorf("nil key prints %q", got)
		}
	})
}

// TestErrorsNeverLeak collects the errors of every failure path of an
// opened and then closed key and checks none quotes the key or passphrase.
func TestErrorsNeverLeak(t *testing.T) {
	dir, addr := importKey(t, web3Key)
	k, err := keystore.Open(dir, &addr, testPass)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	_, err = keystore.Open(dir, &addr, []byte("a wrong passphrase"))
	errs = append(errs, err)
	_, err = k.SignTransaction(context.Background(), &signing.Tx{Type: signing.TypeDynamicFee})
	errs = append(errs, err)
	_, _, err = keystore.ImportPrivateKey(dir, []byte(web3Key), testPass, keystore.Light)
	errs = append(errs, err)
	_, _, err = keystore.ImportPrivateKey(dir, []byte(web3Key[:63]+"z"), testPass, keystore.Light)
	errs = append(errs, err)
	k.Close()
	_, err = k.SignMessage(context.Background(), []byte("x"))
	errs = append(errs, err)
	_, err = k.SignTransaction(context.Background(), &signing.Tx{Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), MaxFeePerGas: big.NewInt(1), MaxPriorityFeePerGas: big.NewInt(1)})
	errs = append(errs, err)
	for i, err := range errs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if err == nil {
				t.Fatal("err = nil, want an error")
			}
			out := fmt.Sprintf("%v %+v %#v", err, err, err) + warden.UserMessage(err)
			noSecret(t, "error", out, []string{web3Key}, string(testPass), "a wrong passphrase")
		})
	}
}
