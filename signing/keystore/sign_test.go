package keystore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing"
)

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// TestSignTransactionRecovers decodes every signed transaction with
// go-ethereum, recovers its sender and checks each field round-trips.
func TestSignTransactionRecovers(t *testing.T) {
	k := openKey(t, web3Key)
	usdc := addrOf("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48")
	transfer := common.FromHex("0xa9059cbb0000000000000000000000003535353535353535353535353535353535353535000000000000000000000000000000000000000000000000000000000bebc200")
	cases := []struct {
		name string
		tx   signing.Tx
	}{
		{name: "EIP-1559 ether transfer", tx: signing.Tx{
			Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), Nonce: 7, Gas: 21000,
			To: addrOf("0x3535353535353535353535353535353535353535"), Value: big10("1000000000000000"),
			MaxFeePerGas: big10("30000000000"), MaxPriorityFeePerGas: big10("1000000000"),
		}},
		{name: "EIP-1559 ERC-20 transfer on Base", tx: signing.Tx{
			Type: signing.TypeDynamicFee, ChainID: big.NewInt(8453), Nonce: 0, Gas: 65000,
			To: usdc, Data: transfer,
			MaxFeePerGas: big10("1500000000"), MaxPriorityFeePerGas: big10("0"),
		}},
		{name: "EIP-1559 contract creation", tx: signing.Tx{
			Type: signing.TypeDynamicFee, ChainID: big.NewInt(11155111), Nonce: 3, Gas: 500000,
			Data:         common.FromHex("0x6080604052348015600f57600080fd5b50"),
			MaxFeePerGas: big10("2000000000"), MaxPriorityFeePerGas: big10("100000000"),
		}},
		{name: "EIP-1559 extreme values", tx: signing.Tx{
			Type: signing.TypeDynamicFee, ChainID: big10("9223372036854775771"), Nonce: 1<<64 - 2, Gas: 1<<64 - 1,
			To: usdc, Value: maxUint256,
			MaxFeePerGas: maxUint256, MaxPriorityFeePerGas: maxUint256,
		}},
		{name: "legacy transfer", tx: signing.Tx{
			Type: signing.TypeLegacy, ChainID: big.NewInt(137), Nonce: 12, Gas: 21000,
			To: addrOf("0x3535353535353535353535353535353535353535"), Value: big10("5"),
			GasPrice: big10("50000000000"),
		}},
		{name: "legacy at EIP-2294's largest chain id", tx: signing.Tx{
			Type: signing.TypeLegacy, ChainID: big10("9223372036854775771"), Nonce: 1, Gas: 21000,
			To: usdc, Value: maxUint256, GasPrice: maxUint256,
		}},
		{name: "legacy contract creation nil value", tx: signing.Tx{
			Type: signing.TypeLegacy, ChainID: big.NewInt(1), Nonce: 0, Gas: 100000,
			Data: []byte{0x60, 0x00}, GasPrice: big10("1"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := k.SignTransaction(context.Background(), &tc.tx)
			if err != nil {
				t.Fatalf("SignTransaction: %v", err)
			}
			var got types.Transaction
			if err := got.UnmarshalBinary(st.Raw); err != nil {
				t.Fatalf("UnmarshalBinary(Raw): %v", err)
			}
			from, err := types.Sender(types.LatestSignerForChainID(tc.tx.ChainID), &got)
			if err != nil {
				t.Fatalf("Sender: %v", err)
			}
			if signing.Address(from) != k.Address() || st.From != k.Address() {
				t.Errorf("sender = %s, From = %s, want %s", from, st.From, k.Address())
			}
			if got.Hash() != st.Hash {
				t.Errorf("Hash = %x, decoded tx hash %x", st.Hash, got.Hash())
			}
			if int(got.Type()) != tc.tx.Type {
				t.Errorf("type = %d, want %d", got.Type(), tc.tx.Type)
			}
			if !got.Protected() {
				t.Errorf("transaction is not replay-protected")
			}
			if got.ChainId().Cmp(tc.tx.ChainID) != 0 {
				t.Errorf("chain id = %s, want %s", got.ChainId(), tc.tx.ChainID)
			}
			if got.Nonce() != tc.tx.Nonce || got.Gas() != tc.tx.Gas {
				t.Errorf("nonce, gas = %d, %d, want %d, %d", got.Nonce(), got.Gas(), tc.tx.Nonce, tc.tx.Gas)
			}
			wantValue := tc.tx.Value
			if wantValue == nil {
				wantValue = new(big.Int)
			}
			if got.Value().Cmp(wantValue) != 0 {
				t.Errorf("value = %s, want %s", got.Value(), wantValue)
			}
			if !bytes.Equal(got.Data(), tc.tx.Data) {
				t.Errorf("data = %x, want %x", got.Data(), tc.tx.Data)
			}
			switch {
			case tc.tx.To == nil && got.To() != nil:
				t.Errorf("to = %s, want a contract creation", got.To())
			case tc.tx.To != nil && (got.To() == nil || signing.Address(*got.To()) != *tc.tx.To):
				t.Errorf("to = %v, want %s", got.To(), tc.tx.To)
			}
			if tc.tx.Type == signing.TypeDynamicFee {
				if got.GasFeeCap().Cmp(tc.tx.MaxFeePerGas) != 0 || got.GasTipCap().Cmp(tc.tx.MaxPriorityFeePerGas) != 0 {
					t.Errorf("fees = %s/%s, want %s/%s", got.GasFeeCap(), got.GasTipCap(), tc.tx.MaxFeePerGas, tc.tx.MaxPriorityFeePerGas)
				}
			} else if got.GasPrice().Cmp(tc.tx.GasPrice) != 0 {
				t.Errorf("gas price = %s, want %s", got.GasPrice(), tc.tx.GasPrice)
			}
			if len(got.AccessList()) != 0 {
				t.Errorf("access list = %v, want none", got.AccessList())
			}
		})
	}
}

// TestSignMessageRecovers checks that every personal_sign signature
// recovers, with accounts.TextHash, to the key's address.
func TestSignMessageRecovers(t *testing.T) {
	k := openKey(t, web3Key)
	cases := []struct {
		name string
		msg  []byte
	}{
		{"empty", nil},
		{"text", []byte("Sign in to example.org\nNonce: 42")},
		{"binary", []byte{0, 1, 2, 0xff, 0x19}},
		{"long", bytes.Repeat([]byte("a"), 10000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sig, err := k.SignMessage(context.Background(), tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
				t.Fatalf("signature is %d bytes with V %d, want 65 bytes with V 27 or 28", len(sig), sig[len(sig)-1])
			}
			raw := bytes.Clone(sig)
			raw[64] -= 27
			pub, err := crypto.SigToPub(accounts.TextHash(tc.msg), raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := signing.Address(crypto.PubkeyToAddress(*pub)); got != k.Address() {
				t.Errorf("signature recovers to %s, want %s", got, k.Address())
			}
		})
	}
}

// TestSignTransactionRefuses lists what the backend never signs.
func TestSignTransactionRefuses(t *testing.T) {
	k := openKey(t, web3Key)
	good := func() *signing.Tx {
		return &signing.Tx{
			Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), Nonce: 1, Gas: 21000,
			To: addrOf("0x3535353535353535353535353535353535353535"), Value: big.NewInt(1),
			MaxFeePerGas: big.NewInt(2e9), MaxPriorityFeePerGas: big.NewInt(1e9),
		}
	}
	legacy := func() *signing.Tx {
		tx := good()
		tx.Type, tx.GasPrice, tx.MaxFeePerGas, tx.MaxPriorityFeePerGas = signing.TypeLegacy, big.NewInt(2e9), nil, nil
		return tx
	}
	tooBig := new(big.Int).Lsh(big.NewInt(1), 256)
	cases := []struct {
		name string
		tx   func() *signing.Tx
		want string
	}{
		{"nil transaction", func() *signing.Tx { return nil }, "no transaction"},
		{"no chain id", func() *signing.Tx { tx := good(); tx.ChainID = nil; return tx }, "refusing to sign without replay protection"},
		{"zero chain id", func() *signing.Tx { tx := good(); tx.ChainID = big.NewInt(0); return tx }, "refusing to sign without replay protection"},
		{"negative chain id", func() *signing.Tx { tx := good(); tx.ChainID = big.NewInt(-1); return tx }, "refusing to sign without replay protection"},
		{"legacy without chain id", func() *signing.Tx { tx := legacy(); tx.ChainID = nil; return tx }, "refusing to sign without replay protection"},
		{"chain id above EIP-2294's bound", func() *signing.Tx { tx := good(); tx.ChainID = big10("9223372036854775772"); return tx }, "EIP-2294"},
		{"legacy chain id above EIP-2294's bound", func() *signing.Tx { tx := legacy(); tx.ChainID = tooBig; return tx }, "EIP-2294"},
		{"access-list type 1", func() *signing.Tx { tx := good(); tx.Type = signing.TypeAccessList; return tx }, "EIP-2930"},
		{"blob type 3", func() *signing.Tx { tx := good(); tx.Type = signing.TypeBlob; return tx }, "EIP-4844"},
		{"set-code type 4", func() *signing.Tx { tx := good(); tx.Type = signing.TypeSetCode; return tx }, "EIP-7702"},
		{"unknown type", func() *signing.Tx { tx := good(); tx.Type = 0x7e; return tx }, "type 126"},
		{"access list on type 2", func() *signing.Tx { tx := good(); tx.AccessList = true; return tx }, "access list"},
		{"access list on legacy", func() *signing.Tx { tx := legacy(); tx.AccessList = true; return tx }, "access list"},
		{"authorizations", func() *signing.Tx {
			tx := good()
			tx.Authorizations = []signing.Authorization{{ChainID: big.NewInt(1), Address: *addrOf("0x3535353535353535353535353535353535353535")}}
			return tx
		}, "EIP-7702 authorizations"},
		{"type 2 without maxFeePerGas", func() *signing.Tx { tx := good(); tx.MaxFeePerGas = nil; return tx }, "needs maxFeePerGas"},
		{"type 2 without maxPriorityFeePerGas", func() *signing.Tx { tx := good(); tx.MaxPriorityFeePerGas = nil; return tx }, "needs maxPriorityFeePerGas"},
		{"type 2 with only gasPrice", func() *signing.Tx {
			tx := good()
			tx.MaxFeePerGas, tx.MaxPriorityFeePerGas, tx.GasPrice = nil, nil, big.NewInt(1)
			return tx
		}, "needs maxFeePerGas"},
		{"legacy without gasPrice", func() *signing.Tx { tx := legacy(); tx.GasPrice = nil; return tx }, "needs gasPrice"},
		{"negative value", func() *signing.Tx { tx := good(); tx.Value = big.NewInt(-1); return tx }, "value -1 is negative"},
		{"negative legacy value", func() *signing.Tx { tx := legacy(); tx.Value = big.NewInt(-5); return tx }, "value -5 is negative"},
		{"negative maxFeePerGas", func() *signing.Tx { tx := good(); tx.MaxFeePerGas = big.NewInt(-1); return tx }, "maxFeePerGas -1 is negative"},
		{"negative maxPriorityFeePerGas", func() *signing.Tx { tx := good(); tx.MaxPriorityFeePerGas = big.NewInt(-1); return tx }, "maxPriorityFeePerGas -1 is negative"},
		{"negative gasPrice", func() *signing.Tx { tx := legacy(); tx.GasPrice = big.NewInt(-1); return tx }, "gasPrice -1 is negative"},
		{"value above 256 bits", func() *signing.Tx { tx := good(); tx.Value = tooBig; return tx }, "does not fit in 256 bits"},
		{"maxFeePerGas above 256 bits", func() *signing.Tx { tx := good(); tx.MaxFeePerGas = tooBig; return tx }, "does not fit in 256 bits"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := k.SignTransaction(context.Background(), tc.tx())
			wantCode(t, err, warden.EInvalid, tc.want)
			if st.Raw != nil {
				t.Errorf("a refusal returned a signed transaction")
			}
			noSecret(t, "error", err.Error(), []string{web3Key})
		})
	}
	t.Run("the good transaction signs", func(t *testing.T) {
		for _, tx := range []*signing.Tx{good(), legacy()} {
			if _, err := k.SignTransaction(context.Background(), tx); err != nil {
				t.Errorf("SignTransaction(%s) = %v", signing.TypeName(tx.Type), err)
			}
		}
	})
}

// TestConcurrentSignAndClose signs from several goroutines while the key is
// closed: every call either signs correctly or reports the key closed (run
// with -race).
func TestConcurrentSignAndClose(t *testing.T) {
	k := openKey(t, web3Key)
	addr := k.Address()
	tx := &signing.Tx{Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), Gas: 21000, MaxFeePerGas: big.NewInt(1), MaxPriorityFeePerGas: big.NewInt(1)}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				if g%2 == 0 {
					st, err := k.SignTransaction(context.Background(), tx)
					if err == nil && st.From != addr {
						errs <- fmt.Errorf("signed by %s", st.From)
					}
					if err != nil && !strings.Contains(err.Error(), "is closed") {
						errs <- err
					}
					continue
				}
				msg := []byte{byte(i)}
				sig, err := k.SignMessage(context.Background(), msg)
				if err != nil {
					if !strings.Contains(err.Error(), "is closed") {
						errs <- err
					}
					continue
				}
				raw := bytes.Clone(sig)
				raw[64] -= 27
				if pub, err := crypto.SigToPub(accounts.TextHash(msg), raw); err != nil || signing.Address(crypto.PubkeyToAddress(*pub)) != addr {
					errs <- fmt.Errorf("a signature made during Close does not recover (%v)", err)
				}
			}
		})
	}
	k.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSignCanceled checks that a canceled context signs nothing.
func TestSignCanceled(t *testing.T) {
	k := openKey(t, web3Key)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		sign func() error
	}{
		{"message", func() error { _, err := k.SignMessage(ctx, []byte("x")); return err }},
		{"transaction", func() error {
			_, err := k.SignTransaction(ctx, &signing.Tx{Type: signing.TypeDynamicFee, ChainID: big.NewInt(1), MaxFeePerGas: big.NewInt(1), MaxPriorityFeePerGas: big.NewInt(1)})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.sign(); err == nil || !strings.Contains(err.Error(), "canceled") {
				t.Errorf("sign with a canceled context = %v, want context canceled", err)
			}
		})
	}
}
