package keystore_test

// The tests in this file check the package's own key file, personal_sign and
// transaction code against go-ethereum's, which the package does not import
// (its core/types and params cost every warden process their package init):
// here go-ethereum is the independent oracle.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	gethkeystore "github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// gethSign signs tx with go-ethereum's types.SignNewTx and the signer the
// keystore used before it had its own encoding: EIP-155 for legacy, London
// for EIP-1559.
func gethSign(t testing.TB, priv *ecdsa.PrivateKey, tx *signing.Tx) *types.Transaction {
	t.Helper()
	var to *common.Address
	if tx.To != nil {
		a := common.Address(*tx.To)
		to = &a
	}
	value := tx.Value
	if value == nil {
		value = new(big.Int)
	}
	var (
		data   types.TxData
		signer types.Signer
	)
	if tx.Type == signing.TypeLegacy {
		data = &types.LegacyTx{Nonce: tx.Nonce, GasPrice: tx.GasPrice, Gas: tx.Gas, To: to, Value: value, Data: tx.Data}
		signer = types.NewEIP155Signer(tx.ChainID)
	} else {
		data = &types.DynamicFeeTx{ChainID: tx.ChainID, Nonce: tx.Nonce, GasTipCap: tx.MaxPriorityFeePerGas, GasFeeCap: tx.MaxFeePerGas,
			Gas: tx.Gas, To: to, Value: value, Data: tx.Data}
		signer = types.NewLondonSigner(tx.ChainID)
	}
	signed, err := types.SignNewTx(priv, signer, data)
	if err != nil {
		t.Fatalf("go-ethereum SignNewTx: %v", err)
	}
	return signed
}

// wantSameAsGeth fails unless k signs tx to the bytes and hash go-ethereum
// gives with the same key. It returns go-ethereum's transaction.
func wantSameAsGeth(t testing.TB, k *keystore.Key, priv *ecdsa.PrivateKey, tx *signing.Tx) *types.Transaction {
	t.Helper()
	st, err := k.SignTransaction(context.Background(), tx)
	if err != nil {
		t.Fatalf("SignTransaction: %v", err)
	}
	want := gethSign(t, priv, tx)
	wantRaw, err := want.MarshalBinary()
	if err != nil {
		t.Fatalf("go-ethereum MarshalBinary: %v", err)
	}
	if !bytes.Equal(st.Raw, wantRaw) {
		t.Errorf("SignTransaction raw = %x, want go-ethereum's %x", st.Raw, wantRaw)
	}
	if st.Hash != want.Hash() {
		t.Errorf("SignTransaction hash = %x, want go-ethereum's %x", st.Hash, want.Hash())
	}
	return want
}

// TestSignTransactionMatchesGeth signs every combination of type, chain id,
// recipient, value and data with two keys and compares the raw bytes and
// hash with go-ethereum's (both sign deterministically, RFC 6979).
func TestSignTransactionMatchesGeth(t *testing.T) {
	keys := []string{web3Key, eip155Key}
	opened := make([]*keystore.Key, len(keys))
	privs := make([]*ecdsa.PrivateKey, len(keys))
	for i, hexKey := range keys {
		opened[i], privs[i] = openKey(t, hexKey), mustKey(t, hexKey)
	}
	transfer := common.FromHex("0xa9059cbb0000000000000000000000003535353535353535353535353535353535353535000000000000000000000000000000000000000000000000000000000bebc200")
	chains := []*big.Int{big.NewInt(1), big.NewInt(137), big10("9223372036854775771")}
	recipients := []struct {
		name string
		to   *signing.Address
	}{
		{"to an address", addrOf("0x3535353535353535353535353535353535353535")},
		{"contract creation", nil},
	}
	values := []struct {
		name  string
		value *big.Int
	}{
		{"nil value", nil},
		{"zero value", big.NewInt(0)},
		{"value 1", big.NewInt(1)},
		{"max value", maxUint256},
	}
	datas := []struct {
		name string
		data []byte
	}{
		{"no data", nil},
		{"one byte below 0x80", []byte{0x01}},
		{"ERC-20 transfer", transfer},
		{"data over 55 bytes", bytes.Repeat([]byte{0xab}, 100)},
	}
	// Each type must sign with both recovery ids, or v's encoding is only
	// half tested.
	parities := map[int]map[uint64]bool{signing.TypeLegacy: {}, signing.TypeDynamicFee: {}}
	n := 0
	for _, typ := range []int{signing.TypeLegacy, signing.TypeDynamicFee} {
		for _, chain := range chains {
			for _, rcpt := range recipients {
				for _, v := range values {
					for _, d := range datas {
						i := n % len(keys)
						tx := signing.Tx{
							Type: typ, ChainID: chain, Nonce: uint64(n), Gas: 21000 + uint64(n)*1000,
							To: rcpt.to, Value: v.value, Data: d.data,
						}
						if n%5 == 0 {
							tx.Nonce, tx.Gas = 1<<64-1, 1<<64-1
						}
						fee := big10("30000000000")
						if v.value == maxUint256 {
							fee = maxUint256
						}
						if typ == signing.TypeLegacy {
							tx.GasPrice = fee
						} else {
							tx.MaxFeePerGas, tx.MaxPriorityFeePerGas = fee, big.NewInt(int64(n))
						}
						name := fmt.Sprintf("%s, chain %s, %s, %s, %s, key %d", signing.TypeName(typ), chain, rcpt.name, v.name, d.name, i)
						t.Run(name, func(t *testing.T) {
							want := wantSameAsGeth(t, opened[i], privs[i], &tx)
							sv, _, _ := want.RawSignatureValues()
							if typ == signing.TypeLegacy {
								sv = new(big.Int).Sub(sv, new(big.Int).Add(big.NewInt(35), new(big.Int).Lsh(chain, 1)))
							}
							parities[typ][sv.Uint64()] = true
						})
						n++
					}
				}
			}
		}
	}
	for typ, seen := range parities {
		if !seen[0] || !seen[1] {
			t.Errorf("%s transactions signed with recovery ids %v; want both 0 and 1 among the cases", signing.TypeName(typ), seen)
		}
	}
}

// FuzzSignTransactionMatchesGeth checks that any transaction the keystore
// signs is byte for byte what go-ethereum signs.
func FuzzSignTransactionMatchesGeth(f *testing.F) {
	addr := common.FromHex("0x3535353535353535353535353535353535353535")
	f.Add(true, uint64(1), uint64(9), uint64(21000), addr, []byte{0x0d, 0xe0, 0xb6, 0xb3, 0xa7, 0x64, 0x00, 0x00}, []byte{0x04, 0xa8, 0x17, 0xc8, 0x00}, []byte{}, []byte{})
	f.Add(false, uint64(8453), uint64(0), uint64(65000), addr, []byte{}, []byte{0x59, 0x68, 0x2f, 0x00}, []byte{0x01}, []byte{0xa9, 0x05, 0x9c, 0xbb})
	f.Add(false, uint64(9223372036854775771), uint64(1<<64-1), uint64(1<<64-1), []byte{}, bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0x60}, 56))
	k := openKey(f, web3Key)
	priv, err := crypto.HexToECDSA(web3Key)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, legacy bool, chainID, nonce, gas uint64, to, value, feeA, feeB, data []byte) {
		if chainID == 0 || chainID > 9223372036854775771 {
			t.Skip("the keystore refuses this chain id")
		}
		number := func(b []byte) *big.Int { return new(big.Int).SetBytes(b[:min(len(b), 32)]) }
		tx := signing.Tx{Type: signing.TypeDynamicFee, ChainID: new(big.Int).SetUint64(chainID), Nonce: nonce, Gas: gas, Value: number(value), Data: data}
		if len(to) >= 20 {
			var a signing.Address
			copy(a[:], to)
			tx.To = &a
		}
		if legacy {
			tx.Type, tx.GasPrice = signing.TypeLegacy, number(feeA)
		} else {
			tx.MaxFeePerGas, tx.MaxPriorityFeePerGas = number(feeA), number(feeB)
		}
		wantSameAsGeth(t, k, priv, &tx)
	})
}

// TestKeyFilesInteroperateWithGeth checks that the keystore opens key files
// go-ethereum writes and that go-ethereum opens the ones it writes, in the
// same JSON shape.
func TestKeyFilesInteroperateWithGeth(t *testing.T) {
	priv := mustKey(t, eip155Key)
	addr := crypto.PubkeyToAddress(priv.PublicKey)
	gethFile, err := gethkeystore.EncryptKey(&gethkeystore.Key{Id: uuid.New(), Address: addr, PrivateKey: priv},
		string(testPass), gethkeystore.LightScryptN, gethkeystore.LightScryptP)
	if err != nil {
		t.Fatal(err)
	}
	wardenDir, wardenAddr := importKey(t, web3Key)
	entries, err := keystore.List(wardenDir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	wardenFile, err := os.ReadFile(entries[0].Path)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("Open reads go-ethereum's scrypt file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "UTC--2024-01-01T00-00-00.000000000Z--"+hex.EncodeToString(addr[:]))
		if err := os.WriteFile(path, gethFile, 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := keystore.Open(dir, nil, testPass)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer k.Close()
		if k.Address() != signing.Address(addr) {
			t.Errorf("Open address = %s, want %s", k.Address(), addr)
		}
		// It holds go-ethereum's key: it signs as go-ethereum does with it.
		msg := []byte("hello")
		sig, err := k.SignMessage(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := crypto.Sign(accounts.TextHash(msg), priv)
		if err != nil {
			t.Fatal(err)
		}
		want[64] += 27
		if !bytes.Equal(sig, want) {
			t.Errorf("SignMessage = %x, want go-ethereum's %x", sig, want)
		}
		_, err = keystore.Open(dir, nil, []byte("not the passphrase"))
		wantCode(t, err, warden.EInvalid, "the passphrase does not unlock")
	})
	t.Run("ImportFile reads go-ethereum's scrypt file", func(t *testing.T) {
		got, _, err := keystore.ImportFile(t.TempDir(), gethFile, testPass, []byte("new pass"), keystore.Light)
		if err != nil || got != signing.Address(addr) {
			t.Errorf("ImportFile = %s, %v, want %s", got, err, addr)
		}
	})
	t.Run("go-ethereum's DecryptKey reads the keystore's file", func(t *testing.T) {
		gk, err := gethkeystore.DecryptKey(wardenFile, string(testPass))
		if err != nil {
			t.Fatalf("DecryptKey: %v", err)
		}
		if got := hex.EncodeToString(crypto.FromECDSA(gk.PrivateKey)); got != web3Key || signing.Address(gk.Address) != wardenAddr {
			t.Errorf("DecryptKey gives the key of %s, want %s", gk.Address.Hex(), wardenAddr)
		}
		var f struct{ ID string }
		if err := json.Unmarshal(wardenFile, &f); err != nil || gk.Id.String() != f.ID {
			t.Errorf("DecryptKey id = %s, file id %q (%v)", gk.Id, f.ID, err)
		}
		if _, err := gethkeystore.DecryptKey(wardenFile, "not the passphrase"); err != gethkeystore.ErrDecrypt {
			t.Errorf("DecryptKey with another passphrase = %v, want %v", err, gethkeystore.ErrDecrypt)
		}
	})
	t.Run("same JSON shape as go-ethereum's", func(t *testing.T) {
		got, want := jsonShape(t, wardenFile), jsonShape(t, gethFile)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("key file shape =\n%s\nwant go-ethereum's\n%s", got, want)
		}
		var f struct {
			Crypto struct {
				KDFParams map[string]any `json:"kdfparams"`
			} `json:"crypto"`
		}
		if err := json.Unmarshal(wardenFile, &f); err != nil {
			t.Fatal(err)
		}
		p := f.Crypto.KDFParams
		if p["dklen"] != 32.0 || p["n"] != float64(keystore.Light.N) || p["p"] != float64(keystore.Light.P) || p["r"] != 8.0 || len(p["salt"].(string)) != 64 {
			t.Errorf("kdfparams = %v, want dklen 32, n %d, p %d, r 8 and a 32-byte salt", p, keystore.Light.N, keystore.Light.P)
		}
	})
}

// jsonShape lists the paths of data's JSON values in document order, each
// with its kind: "crypto.kdfparams.n: number".
func jsonShape(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []string
	var walk func(path string)
	walk = func(path string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("jsonShape: %v", err)
		}
		kind := "null"
		switch v := tok.(type) {
		case json.Delim:
			kind = map[json.Delim]string{'{': "object", '[': "array"}[v]
			out = append(out, path+": "+kind)
			for dec.More() {
				elem := path + "[]"
				if v == '{' {
					key, err := dec.Token()
					if err != nil {
						t.Fatalf("jsonShape: %v", err)
					}
					elem = path + "." + key.(string)
				}
				walk(elem)
			}
			if _, err := dec.Token(); err != nil {
				t.Fatalf("jsonShape: %v", err)
			}
			return
		case string:
			kind = "string"
		case float64:
			kind = "number"
		case bool:
			kind = "bool"
		}
		out = append(out, path+": "+kind)
	}
	walk("")
	return out
}

// TestParamsMatchGeth checks Standard and Light against go-ethereum's
// constants they are documented to be.
func TestParamsMatchGeth(t *testing.T) {
	cases := []struct {
		name string
		got  keystore.Params
		want keystore.Params
	}{
		{"Standard", keystore.Standard, keystore.Params{N: gethkeystore.StandardScryptN, P: gethkeystore.StandardScryptP}},
		{"Light", keystore.Light, keystore.Params{N: gethkeystore.LightScryptN, P: gethkeystore.LightScryptP}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s = %+v, want go-ethereum's %+v", tc.name, tc.got, tc.want)
			}
		})
	}
}
