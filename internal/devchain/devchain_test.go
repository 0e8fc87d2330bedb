package devchain

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
)

var oneEther = big.NewInt(params.Ether)

// startChain starts a chain, logs how long Start took and closes it at the
// end of the test.
func startChain(t testing.TB, opts Options) *Chain {
	t.Helper()
	begin := time.Now()
	c, err := Start(opts)
	if err != nil {
		t.Fatalf("Start(%+v): %v", opts, err)
	}
	t.Logf("Start(%+v) took %v; %s", opts, time.Since(begin), c.URL())
	t.Cleanup(func() {
		begin := time.Now()
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		t.Logf("Close took %v", time.Since(begin))
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newKey(t *testing.T) (*ecdsa.PrivateKey, common.Address) {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return key, crypto.PubkeyToAddress(key.PublicKey)
}

// rawChainID asks url for eth_chainId with a plain HTTP POST, not through
// go-ethereum's client.
func rawChainID(t *testing.T, ctx context.Context, url string) *big.Int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("eth_chainId: HTTP %s: %s", resp.Status, data)
	}
	var answer struct {
		Result *hexutil.Big    `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		t.Fatalf("eth_chainId: %v in %s", err, data)
	}
	if answer.Result == nil {
		t.Fatalf("eth_chainId: no result: %s", bytes.TrimSpace(data))
	}
	return answer.Result.ToInt()
}

func balance(t *testing.T, ctx context.Context, c *Chain, addr common.Address) *big.Int {
	t.Helper()
	b, err := c.Balance(ctx, addr)
	if err != nil {
		t.Fatalf("Balance(%s): %v", addr, err)
	}
	return b
}

// transfer signs a type-2 value transfer from key with go-ethereum's
// types.SignTx for signChainID (which the test may set wrong).
func transfer(t *testing.T, ctx context.Context, c *Chain, key *ecdsa.PrivateKey, signChainID *big.Int, to common.Address, value *big.Int) *types.Transaction {
	t.Helper()
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := c.PendingNonce(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tip := big.NewInt(params.GWei)
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID:   signChainID,
		Nonce:     nonce,
		GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip),
		Gas:       params.TxGas,
		To:        &to,
		Value:     value,
	})
	signed, err := types.SignTx(tx, types.NewLondonSigner(signChainID), key)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func marshal(t *testing.T, tx *types.Transaction) []byte {
	t.Helper()
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestChainEndToEnd(t *testing.T) {
	const chainID = 31337
	c := startChain(t, Options{ChainID: chainID})
	ctx := testContext(t)

	if !strings.HasPrefix(c.URL(), "http://127.0.0.1:") || strings.HasSuffix(c.URL(), ":0") {
		t.Errorf("URL() = %q, want http://127.0.0.1:PORT", c.URL())
	}
	if got := rawChainID(t, ctx, c.URL()); got.Int64() != chainID {
		t.Errorf("eth_chainId over HTTP = %v, want %d", got, chainID)
	}
	if got := c.ChainID(); got.Int64() != chainID {
		t.Errorf("ChainID() = %v, want %d", got, chainID)
	}
	if got, err := c.Client().ChainID(ctx); err != nil || got.Int64() != chainID {
		t.Errorf("Client().ChainID() = %v, %v; want %d", got, err, chainID)
	}
	if got := balance(t, ctx, c, c.DevAddress()); got.Cmp(new(big.Int).Lsh(oneEther, 100)) < 0 {
		t.Errorf("developer balance %v is not large", got)
	}

	// Fund a fresh account with 1 ETH; it is mined without anyone committing.
	aliceKey, alice := newKey(t)
	receipt, err := c.Fund(ctx, alice, oneEther)
	if err != nil {
		t.Fatalf("Fund: %v", err)
	}
	if receipt.Status != types.ReceiptStatusSuccessful || receipt.BlockNumber.Sign() <= 0 {
		t.Fatalf("Fund receipt: status %d block %v", receipt.Status, receipt.BlockNumber)
	}
	if got := balance(t, ctx, c, alice); got.Cmp(oneEther) != 0 {
		t.Fatalf("alice balance after Fund = %v, want %v", got, oneEther)
	}

	// Alice signs a type-2 transfer to Bob herself; SendRaw, WaitMined.
	_, bob := newKey(t)
	value := big.NewInt(params.Ether / 10)
	tx := transfer(t, ctx, c, aliceKey, c.ChainID(), bob, value)
	hash, err := c.SendRaw(ctx, marshal(t, tx))
	if err != nil {
		t.Fatalf("SendRaw: %v", err)
	}
	if hash != tx.Hash() {
		t.Errorf("SendRaw hash = %s, want %s", hash, tx.Hash())
	}
	receipt, err = c.WaitMined(ctx, hash)
	if err != nil {
		t.Fatalf("WaitMined: %v", err)
	}
	if receipt.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("transfer status = %d, want success", receipt.Status)
	}
	if receipt.Type != types.DynamicFeeTxType {
		t.Errorf("receipt type = %d, want %d", receipt.Type, types.DynamicFeeTxType)
	}
	if got := balance(t, ctx, c, bob); got.Cmp(value) != 0 {
		t.Errorf("bob balance = %v, want %v", got, value)
	}
	fee := new(big.Int).Mul(new(big.Int).SetUint64(receipt.GasUsed), receipt.EffectiveGasPrice)
	wantAlice := new(big.Int).Sub(new(big.Int).Sub(oneEther, value), fee)
	aliceAfter := balance(t, ctx, c, alice)
	if aliceAfter.Cmp(wantAlice) != 0 {
		t.Errorf("alice balance = %v, want %v (1 ETH - %v - fee %v)", aliceAfter, wantAlice, value, fee)
	}
	aliceNonce, err := c.PendingNonce(ctx, alice)
	if err != nil || aliceNonce != 1 {
		t.Fatalf("alice pending nonce = %d, %v; want 1", aliceNonce, err)
	}

	// Signed for another chain: the node refuses it, nothing moves.
	wrong := transfer(t, ctx, c, aliceKey, big.NewInt(chainID+1), bob, value)
	if _, err := c.SendRaw(ctx, marshal(t, wrong)); err == nil {
		t.Fatal("SendRaw of a tx signed for the wrong chain id succeeded")
	} else if !strings.Contains(err.Error(), "chain id") {
		t.Errorf("SendRaw wrong chain id: error %q does not mention the chain id", err)
	} else {
		t.Logf("wrong chain id rejected: %v", err)
	}
	if got := balance(t, ctx, c, alice); got.Cmp(aliceAfter) != 0 {
		t.Errorf("alice balance after rejected tx = %v, want %v", got, aliceAfter)
	}
	if got := balance(t, ctx, c, bob); got.Cmp(value) != 0 {
		t.Errorf("bob balance after rejected tx = %v, want %v", got, value)
	}
	if n, err := c.PendingNonce(ctx, alice); err != nil || n != aliceNonce {
		t.Errorf("alice pending nonce after rejected tx = %d, %v; want %d", n, err, aliceNonce)
	}
	if _, err := c.Client().TransactionReceipt(ctx, wrong.Hash()); err == nil {
		t.Error("the rejected tx has a receipt")
	}

	// Two transactions, each sealed in a block of its own on demand; the log
	// filter API answers (unindexed) over the whole chain.
	if head, err := c.Client().BlockNumber(ctx); err != nil || head < 2 {
		t.Errorf("head block = %d, %v; want at least 2", head, err)
	}
	if logs, err := c.Client().FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0)}); err != nil || len(logs) != 0 {
		t.Errorf("eth_getLogs = %d logs, %v; want none, no error", len(logs), err)
	}
}

// TestTwoChains runs two chains in one process, concurrently started, to show
// nothing is shared: ports, keys, chain ids and state are their own.
func TestTwoChains(t *testing.T) {
	ctx := testContext(t)
	opts := []Options{{}, {ChainID: 4242}}
	chains := make([]*Chain, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Go(func() {
			begin := time.Now()
			c, err := Start(o)
			if err != nil {
				t.Errorf("Start(%+v): %v", o, err)
				return
			}
			t.Logf("Start(%+v) took %v (concurrently); %s", o, time.Since(begin), c.URL())
			chains[i] = c
		})
	}
	wg.Wait()
	for _, c := range chains {
		if c != nil {
			t.Cleanup(func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	a, b := chains[0], chains[1]
	if a.URL() == b.URL() {
		t.Errorf("both chains at %s", a.URL())
	}
	if a.DevAddress() == b.DevAddress() {
		t.Errorf("both chains have developer %s", a.DevAddress())
	}
	if got := rawChainID(t, ctx, a.URL()); got.Int64() != DefaultChainID {
		t.Errorf("chain a eth_chainId = %v, want %d", got, DefaultChainID)
	}
	if got := rawChainID(t, ctx, b.URL()); got.Int64() != 4242 {
		t.Errorf("chain b eth_chainId = %v, want 4242", got)
	}

	_, addr := newKey(t)
	if _, err := a.Fund(ctx, addr, oneEther); err != nil {
		t.Fatalf("a.Fund: %v", err)
	}
	if got := balance(t, ctx, a, addr); got.Cmp(oneEther) != 0 {
		t.Errorf("balance on a = %v, want %v", got, oneEther)
	}
	if got := balance(t, ctx, b, addr); got.Sign() != 0 {
		t.Errorf("balance on b = %v, want 0", got)
	}
	if got := balance(t, ctx, b, a.DevAddress()); got.Sign() != 0 {
		t.Errorf("a's developer has %v on b, want 0", got)
	}

	// Closing one leaves the other working.
	if err := a.Close(); err != nil {
		t.Fatalf("a.Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second a.Close: %v", err)
	}
	if _, err := b.Fund(ctx, addr, big.NewInt(7)); err != nil {
		t.Fatalf("b.Fund after a.Close: %v", err)
	}
	if got := balance(t, ctx, b, addr); got.Cmp(big.NewInt(7)) != 0 {
		t.Errorf("balance on b = %v, want 7", got)
	}
}

// TestConcurrentFund funds from several goroutines at once: the developer
// nonces must not collide.
func TestConcurrentFund(t *testing.T) {
	c := startChain(t, Options{})
	ctx := testContext(t)
	const n = 4
	addrs := make([]common.Address, n)
	var wg sync.WaitGroup
	for i := range addrs {
		_, addrs[i] = newKey(t)
		wg.Go(func() {
			if _, err := c.Fund(ctx, addrs[i], big.NewInt(int64(i+1))); err != nil {
				t.Errorf("Fund %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i, addr := range addrs {
		if got := balance(t, ctx, c, addr); got.Int64() != int64(i+1) {
			t.Errorf("balance %d = %v, want %d", i, got, i+1)
		}
	}
	if nonce, err := c.PendingNonce(ctx, c.DevAddress()); err != nil || nonce != n {
		t.Errorf("developer nonce = %d, %v; want %d", nonce, err, n)
	}
}

// TestCloseReleasesGoroutines starts, uses and closes chains repeatedly: the
// number of goroutines must not grow with each chain.
func TestCloseReleasesGoroutines(t *testing.T) {
	ctx := testContext(t)
	cycle := func() {
		c, err := Start(Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, addr := newKey(t)
		if _, err := c.Fund(ctx, addr, big.NewInt(1)); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The first chain starts go-ethereum's process-wide goroutines (the
	// sender cacher), which stay.
	cycle()
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	const cycles = 3
	for range cycles {
		cycle()
	}
	// Some goroutines outlive Close briefly: goleveldb's mpoolDrain (of the
	// p2p server's in-memory node database) lingers up to a second.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(3 * time.Second); after > before && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		after = runtime.NumGoroutine()
	}
	t.Logf("goroutines: %d before, %d after %d more chains", before, after, cycles)
	if after > before {
		var dump strings.Builder
		pprof.Lookup("goroutine").WriteTo(&dump, 1)
		t.Logf("goroutines now:\n%s", dump.String())
	}
	if after-before >= cycles {
		t.Errorf("goroutines grew from %d to %d over %d started and closed chains", before, after, cycles)
	}
}

// TestStartThenClose closes chains right after Start. With go-ethereum's own
// on-demand loop (catalyst.RegisterSimulatedBeaconAPIs) this crashed the
// process now and then: the loop subscribes to the pool in its goroutine and
// panics on the nil subscription of an already closed pool (see sealer).
func TestStartThenClose(t *testing.T) {
	for range 5 {
		c, err := Start(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStartRejectsNegativeChainID(t *testing.T) {
	if c, err := Start(Options{ChainID: -1}); err == nil {
		c.Close()
		t.Fatal("Start with chain id -1 succeeded")
	}
}

// BenchmarkStart measures Start followed by Close, and reports each apart.
func BenchmarkStart(b *testing.B) {
	var starting, closing time.Duration
	for b.Loop() {
		begin := time.Now()
		c, err := Start(Options{})
		if err != nil {
			b.Fatal(err)
		}
		started := time.Now()
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		starting += started.Sub(begin)
		closing += time.Since(started)
	}
	b.ReportMetric(float64(starting.Nanoseconds())/float64(b.N), "start-ns/op")
	b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns/op")
}
