package paper

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Defaults of an Exchange's zero fields.
const (
	DefaultStartingCash warden.USD = 10_000 * warden.MicrosPerDollar    // $10,000
	DefaultPoolDepth    warden.USD = 1_000_000 * warden.MicrosPerDollar // $1,000,000 per pool
	DefaultFeeBps                  = 30                                 // 0.3 %
)

// MaxLeverage is the highest leverage the paper exchange opens a perp at.
const MaxLeverage = 100

// Errors the executing methods wrap (inside a *warden.Error whose message
// says what was short or how far the price moved).
var (
	// ErrInsufficientFunds: the wallet holds less cash or fewer tokens than
	// the order spends.
	ErrInsufficientFunds = errors.New("insufficient funds")
	// ErrSlippage: the price moved between the quote and the execution by
	// more than the order's MaxSlippage.
	ErrSlippage = errors.New("slippage above the order's tolerance")
)

// Exchange is the embedded simulated exchange (see the package doc for its
// model). Store and Prices are required; the other fields have defaults:
// StartingCash 0 (or less) funds a new book with DefaultStartingCash,
// PoolDepth 0 (or less) gives every pool DefaultPoolDepth, FeeBps 0 charges
// DefaultFeeBps and a negative FeeBps charges nothing, Now defaults to
// time.Now and NewID to a UUIDv7; a FeeBps of 10000 or more is refused.
// Wallet names the paper wallet, the only recipient a swap may name
// (empty: a swap must name none) and one a transfer may not.
//
// An Exchange is safe for concurrent use as far as its Store and Prices
// are; its fields must not change once it is in use.
type Exchange struct {
	Store        Store
	Prices       PriceSource
	Wallet       string
	StartingCash warden.USD
	PoolDepth    warden.USD
	FeeBps       int
	Now          func() time.Time
	NewID        func() string
}

var _ finance.Backend = (*Exchange)(nil)

// Name returns "paper".
func (e *Exchange) Name() string { return "paper" }

// CashToken is the token the wallet's cash is shown as in a Portfolio: USDC
// on the pseudo-chain "paper", a stablecoin.
func CashToken() finance.Token {
	return finance.Token{Symbol: "USDC", AssetID: "USDC", Class: finance.ClassStablecoin, Chain: finance.Chain{Name: "paper"}, Decimals: 6}
}

func (e *Exchange) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Exchange) newID() string {
	if e.NewID != nil {
		return e.NewID()
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

func (e *Exchange) startingCash() warden.USD {
	if e.StartingCash <= 0 {
		return DefaultStartingCash
	}
	return e.StartingCash
}

func (e *Exchange) poolDepth() float64 {
	if e.PoolDepth <= 0 {
		return DefaultPoolDepth.Dollars()
	}
	return e.PoolDepth.Dollars()
}

// fee returns the fee as a fraction of the input.
func (e *Exchange) fee() (float64, error) {
	switch {
	case e.FeeBps == 0:
		return DefaultFeeBps / 10_000.0, nil
	case e.FeeBps < 0:
		return 0, nil
	case e.FeeBps >= 10_000:
		return 0, warden.Errorf(warden.EInvalid, "the paper exchange's fee is %d bps; it must be below 10000 (100 %%)", e.FeeBps)
	}
	return float64(e.FeeBps) / 10_000, nil
}

// ready checks the required fields; store is false for methods that only
// price.
func (e *Exchange) ready(store bool) error {
	if e.Prices == nil {
		return warden.Errorf(warden.EInternal, "the paper exchange has no price source")
	}
	if store && e.Store == nil {
		return warden.Errorf(warden.EInternal, "the paper exchange has no store for its book")
	}
	return nil
}

// open prepares b for an update: maps created, starting cash paid in once.
func (e *Exchange) open(b *Book) {
	b.init()
	if !b.Funded {
		b.Funded = true
		b.Cash = e.startingCash()
	}
}

// isCash reports whether t counts as cash: every stablecoin does.
func isCash(t finance.Token) bool { return t.Class == finance.ClassStablecoin }

// Price returns t's oracle price: 1.0 for a stablecoin, the PriceSource's
// price of t.AssetID otherwise.
func (e *Exchange) Price(ctx context.Context, t finance.Token) (finance.Price, error) {
	if err := e.ready(false); err != nil {
		return finance.Price{}, err
	}
	now := e.now()
	if isCash(t) {
		return finance.Price{USD: 1, At: now}, nil
	}
	return e.oracle(ctx, t, now)
}

// oracle returns the PriceSource's price of a non-stable token at.
func (e *Exchange) oracle(ctx context.Context, t finance.Token, at time.Time) (finance.Price, error) {
	if t.AssetID == "" {
		return finance.Price{}, warden.Errorf(warden.EInvalid, "the token %s names no asset, so the paper exchange cannot price it", t)
	}
	p, err := e.Prices.Price(ctx, t.AssetID, at)
	if err != nil {
		return finance.Price{}, fmt.Errorf("price %s: %w", t.AssetID, err)
	}
	if !validPrice(p.USD) {
		return finance.Price{}, fmt.Errorf("price %s: the price source returned %v, not a positive price", t.AssetID, p.USD)
	}
	return p, nil
}

// Portfolio returns the book valued at oracle prices now: cash as one
// CashToken holding, then the tokens by key, then the positions by opening
// time with their MarkPrice set. A book that was never funded shows the
// starting cash it will receive. Failing to price any holding is an error.
func (e *Exchange) Portfolio(ctx context.Context) (finance.Portfolio, error) {
	if err := e.ready(true); err != nil {
		return finance.Portfolio{}, err
	}
	var book *Book
	if err := e.Store.View(ctx, func(b *Book) error { book = b; return nil }); err != nil {
		return finance.Portfolio{}, fmt.Errorf("read the paper book: %w", err)
	}
	if !book.Funded {
		book.Cash = e.startingCash()
	}
	now := e.now()
	prices := map[string]float64{}
	price := func(t finance.Token) (float64, error) {
		if p, ok := prices[t.AssetID]; ok {
			return p, nil
		}
		p, err := e.oracle(ctx, t, now)
		if err != nil {
			return 0, err
		}
		prices[t.AssetID] = p.USD
		return p.USD, nil
	}
	pf := finance.Portfolio{Wallet: e.Wallet, At: now, Holdings: []finance.Holding{{Token: CashToken(), Amount: book.Cash.Dollars(), ValueUSD: book.Cash}}}
	for _, key := range slices.Sorted(maps.Keys(book.Balances)) {
		t, ok := book.Tokens[key]
		if !ok {
			return finance.Portfolio{}, warden.Errorf(warden.EInternal, "the paper book holds %s without describing the token", key)
		}
		p, err := price(t)
		if err != nil {
			return finance.Portfolio{}, err
		}
		units := book.Balances[key]
		pf.Holdings = append(pf.Holdings, finance.Holding{Token: t, Amount: units, ValueUSD: finance.USDOf(units * p)})
	}
	for _, pos := range book.Positions {
		p, err := price(pos.Token)
		if err != nil {
			return finance.Portfolio{}, err
		}
		pos.MarkPrice = p
		pf.Positions = append(pf.Positions, pos)
	}
	slices.SortFunc(pf.Positions, func(a, b finance.Position) int {
		return cmp.Or(a.OpenedAt.Compare(b.OpenedAt), cmp.Compare(a.ID, b.ID))
	})
	return pf, nil
}
