package paper_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/paper"
)

var (
	ctx  = context.Background()
	t0   = time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)
	base = finance.Chain{Name: "base", ID: 8453}
	sol  = finance.Chain{Name: "solana", ID: 101}

	usdc  = finance.Token{Symbol: "USDC", Chain: base, Address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", AssetID: "USDC", Class: finance.ClassStablecoin, Decimals: 6, Canonical: true}
	usdt  = finance.Token{Symbol: "USDT", Chain: sol, Address: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", AssetID: "USDT", Class: finance.ClassStablecoin, Decimals: 6, Canonical: true}
	eth   = finance.Token{Symbol: "ETH", Chain: base, AssetID: "ETH", Class: finance.ClassMajor, Decimals: 18, Canonical: true}
	cbbtc = finance.Token{Symbol: "cbBTC", Chain: base, Address: "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf", AssetID: "BTC", Class: finance.ClassMajor, Decimals: 8, Canonical: true}
	solT  = finance.Token{Symbol: "SOL", Chain: sol, AssetID: "SOL", Class: finance.ClassMajor, Decimals: 9, Canonical: true}
)

const wallet = "0x1111111111111111111111111111111111111111"

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// tick moves the clock to the start of scripted tick n.
func (c *clock) tick(n int) { c.Set(t0.Add(time.Duration(n) * time.Minute)) }

// scripted prices: ETH 3000 → 3300 → 2700, BTC 60000, SOL 150 (tick 0, 1, 2).
func scripted() *paper.PathPrices {
	return &paper.PathPrices{Epoch: t0, Step: time.Minute, Ticks: map[string][]float64{
		"ETH": {3000, 3300, 2700},
		"BTC": {60000},
		"SOL": {150, 165, 135},
	}}
}

// newExchange returns an exchange on a fresh MemStore with scripted prices,
// sequential ids and a clock at tick 0.
func newExchange(t testing.TB) (*paper.Exchange, *paper.MemStore, *clock) {
	t.Helper()
	store := &paper.MemStore{}
	clk := &clock{t: t0}
	var n atomic.Int64
	e := &paper.Exchange{
		Store: store, Prices: scripted(), Wallet: wallet, Now: clk.Now,
		NewID: func() string { return fmt.Sprintf("id-%d", n.Add(1)) },
	}
	return e, store, clk
}

// state is everything a store holds, to show that a refused order changed
// nothing.
type state struct {
	book  *paper.Book
	fills []finance.Fill
}

func snapshot(t testing.TB, s *paper.MemStore) state {
	t.Helper()
	var st state
	if err := s.View(ctx, func(b *paper.Book) error { st.book = b; return nil }); err != nil {
		t.Fatal(err)
	}
	st.fills = s.Fills(0)
	return st
}

func sameState(a, b state) bool { return reflect.DeepEqual(a, b) }

func usd(dollars float64) warden.USD { return finance.USDOf(dollars) }

// buy swaps dollars of cash into tok.
func buy(t testing.TB, e *paper.Exchange, c finance.Clearance, tok finance.Token, dollars float64) finance.Fill {
	t.Helper()
	f, err := e.Swap(ctx, finance.SwapQuote{In: usdc, Out: tok, AmountUSD: usd(dollars), MaxSlippage: 0.01}, c)
	if err != nil {
		t.Fatalf("buy $%v of %s: %v", dollars, tok.Symbol, err)
	}
	return f
}

func portfolio(t testing.TB, e *paper.Exchange) finance.Portfolio {
	t.Helper()
	p, err := e.Portfolio(ctx)
	if err != nil {
		t.Fatalf("Portfolio: %v", err)
	}
	return p
}

// holding returns the amount and value of tok in p (cash for a stablecoin).
func holding(p finance.Portfolio, tok finance.Token) (float64, warden.USD) {
	for _, h := range p.Holdings {
		if h.Token.Key() == tok.Key() || tok.Class == finance.ClassStablecoin && h.Token.Class == finance.ClassStablecoin {
			return h.Amount, h.ValueUSD
		}
	}
	return 0, 0
}

func near(a, b, tol float64) bool {
	d := a - b
	return d <= tol && -d <= tol
}
