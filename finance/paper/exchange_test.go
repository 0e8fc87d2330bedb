package paper_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/financetest"
	"github.com/agentwarden/warden/finance/paper"
)

func TestName(t *testing.T) {
	if got := (&paper.Exchange{}).Name(); got != "paper" {
		t.Errorf("Name() = %q, want paper", got)
	}
}

func TestPrice(t *testing.T) {
	e, _, clk := newExchange(t)
	clk.tick(1)
	for _, tc := range []struct {
		name string
		tok  finance.Token
		want float64
	}{
		{"stablecoin is a dollar", usdt, 1},
		{"oracle price of the asset", eth, 3300},
		{"wrapped token priced as its asset", cbbtc, 60000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := e.Price(ctx, tc.tok)
			if err != nil || p.USD != tc.want {
				t.Errorf("Price(%s) = %v, %v; want %v", tc.tok.Symbol, p.USD, err, tc.want)
			}
		})
	}
	unknown := finance.Token{Symbol: "FOO", Chain: base, AssetID: "FOO", Class: finance.ClassUnknown}
	if _, err := e.Price(ctx, unknown); !errors.Is(err, paper.ErrUnknownAsset) {
		t.Errorf("Price(FOO) error = %v; want ErrUnknownAsset", err)
	}
}

// TestPoolMath checks the constant-product quotes against their closed
// forms, and that impact grows with the trade.
func TestPoolMath(t *testing.T) {
	const depth, price = 1_000_000.0, 3000.0
	for _, tc := range []struct {
		name   string
		feeBps int
		fee    float64
	}{
		{"no fee", -1, 0},
		{"default fee", 0, 0.003},
		{"1 % fee", 100, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _, _ := newExchange(t)
			e.FeeBps = tc.feeBps
			prevImpact, prevOut := -1.0, 0.0
			for _, amount := range []float64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000} {
				sim, err := e.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(amount)})
				if err != nil {
					t.Fatal(err)
				}
				a := amount * (1 - tc.fee)
				want := depth / price * a / (depth + a)
				if !near(sim.ExpectedOut, want, want*1e-12) {
					t.Errorf("buy $%v: ExpectedOut = %v, want %v", amount, sim.ExpectedOut, want)
				}
				if wantImpact := 1 - want/(amount/price); !near(sim.PriceImpact, wantImpact, 1e-12) {
					t.Errorf("buy $%v: PriceImpact = %v, want %v", amount, sim.PriceImpact, wantImpact)
				}
				if sim.InputValueUSD != usd(amount) || sim.OutputValueUSD != usd(sim.ExpectedOut*price) {
					t.Errorf("buy $%v: values in/out = %v/%v, want %v/%v", amount, sim.InputValueUSD, sim.OutputValueUSD, usd(amount), usd(sim.ExpectedOut*price))
				}
				if sim.PriceImpact <= prevImpact || sim.ExpectedOut <= prevOut {
					t.Errorf("buy $%v: impact %v, out %v; want both above the smaller trade's (%v, %v)", amount, sim.PriceImpact, sim.ExpectedOut, prevImpact, prevOut)
				}
				prevImpact, prevOut = sim.PriceImpact, sim.ExpectedOut
			}
		})
	}
	t.Run("a $1,000 buy in a $1,000,000 pool moves the price about 0.1 %", func(t *testing.T) {
		e, _, _ := newExchange(t)
		sim, err := e.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(1000)})
		if err != nil {
			t.Fatal(err)
		}
		if impact := sim.PriceImpact - 0.003; impact < 0.00095 || impact > 0.00105 {
			t.Errorf("PriceImpact = %.5f; want the 0.3 %% fee plus about 0.1 %%", sim.PriceImpact)
		}
	})
	t.Run("a shallower pool moves more", func(t *testing.T) {
		e, _, _ := newExchange(t)
		e.PoolDepth = usd(10_000)
		sim, err := e.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(1000)})
		if err != nil {
			t.Fatal(err)
		}
		if sim.PriceImpact < 0.09 {
			t.Errorf("PriceImpact in a $10,000 pool = %v; want about 9 %%", sim.PriceImpact)
		}
	})
}

func TestSimulateRoutes(t *testing.T) {
	e, _, _ := newExchange(t)
	single, err := e.Simulate(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(1000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		in, out finance.Token
		check   func(t *testing.T, s finance.Simulation)
	}{
		{"sell mirrors buy", eth, usdc, func(t *testing.T, s finance.Simulation) {
			if !near(s.PriceImpact, single.PriceImpact, 1e-12) || !near(s.ExpectedOut, 1000*(1-single.PriceImpact), 1e-9) {
				t.Errorf("sell $1000 of ETH = %+v; want the buy's impact %v", s, single.PriceImpact)
			}
		}},
		{"token to token pays two hops", eth, cbbtc, func(t *testing.T, s finance.Simulation) {
			// Hop 1 sells $1000 of ETH for what a $1000 buy would cost in
			// impact; hop 2 buys BTC with those dollars, less the fee.
			dollars := 1000 * (1 - single.PriceImpact)
			a := dollars * 0.997
			want := 1e6 / 60000 * a / (1e6 + a)
			if !near(s.ExpectedOut, want, want*1e-12) || s.PriceImpact <= single.PriceImpact || s.OutputValueUSD != usd(s.ExpectedOut*60000) {
				t.Errorf("ETH → cbBTC $1000 = %+v; want %v BTC out, more impact than one hop's %v", s, want, single.PriceImpact)
			}
		}},
		{"stable to stable is one to one less the fee", usdc, usdt, func(t *testing.T, s finance.Simulation) {
			if !near(s.ExpectedOut, 997, 1e-9) || !near(s.PriceImpact, 0.003, 1e-12) || s.OutputValueUSD != usd(997) {
				t.Errorf("USDC → USDT $1000 = %+v; want 997 out, impact 0.003", s)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := e.Simulate(ctx, finance.SwapQuote{In: tc.in, Out: tc.out, AmountUSD: usd(1000)})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
	for _, tc := range []struct {
		name string
		q    finance.SwapQuote
	}{
		{"zero amount", finance.SwapQuote{In: usdc, Out: eth}},
		{"same token", finance.SwapQuote{In: eth, Out: eth, AmountUSD: usd(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.Simulate(ctx, tc.q); warden.ErrorCodeOf(err) != warden.EInvalid {
				t.Errorf("Simulate(%s) error = %v; want EInvalid", tc.name, err)
			}
		})
	}
}

// TestRoundTrip buys and sells back: only the fees and the impact are lost.
func TestRoundTrip(t *testing.T) {
	e, store, _ := newExchange(t)
	c := financetest.Clearance(t, "trace-test")
	f := buy(t, e, c, eth, 1000)
	if f.Action != finance.Buy || f.ID != "id-1" || f.TraceID != "trace-test" || f.At != t0 || f.InToken != "USDC" || f.OutToken != "ETH" ||
		f.InAmount != 1000 || f.ValueUSD != usd(1000) || !near(f.Price, 1000/f.OutAmount, 1e-9) {
		t.Errorf("buy fill = %+v", f)
	}
	p := portfolio(t, e)
	if units, _ := holding(p, eth); units != f.OutAmount {
		t.Fatalf("holding after the buy = %v ETH, want %v", units, f.OutAmount)
	}
	if _, cash := holding(p, usdc); cash != usd(9000) {
		t.Errorf("cash after the buy = %v, want 9000", cash)
	}
	sell, err := e.Swap(ctx, finance.SwapQuote{In: eth, Out: usdc, AmountUSD: usd(f.OutAmount * 3000), MaxSlippage: 0.01}, c)
	if err != nil {
		t.Fatalf("sell everything: %v", err)
	}
	// AmountUSD is rounded to the micro-dollar; the rest is dust, dropped.
	if sell.Action != finance.Sell || !near(sell.InAmount, f.OutAmount, 1e-6/3000) {
		t.Errorf("sell fill = %+v; want all %v ETH sold", sell, f.OutAmount)
	}
	p = portfolio(t, e)
	if units, _ := holding(p, eth); units != 0 || len(p.Holdings) != 1 {
		t.Errorf("holdings after selling everything = %+v; want cash only", p.Holdings)
	}
	_, cash := holding(p, usdc)
	loss := (usd(10_000) - cash).Dollars()
	// Two fees of 0.3 % and two impacts of about 0.1 % on $1000.
	if loss < 7.9 || loss > 8.1 {
		t.Errorf("round trip lost $%v; want about $8 (fees and impact)", loss)
	}
	if cash != usd(9000)+usd(sell.OutAmount) {
		t.Errorf("cash = %v; want 9000 + the sale's %v", cash, sell.OutAmount)
	}
	if fills := store.Fills(0); len(fills) != 2 || fills[0].ID != sell.ID || fills[1].ID != f.ID {
		t.Errorf("stored fills = %+v; want the sell, then the buy", fills)
	}
}

// TestRefusals shows every refused order returns the right error and leaves
// the book and the fills exactly as they were.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		do    func(e *paper.Exchange, c finance.Clearance) error
		check func(err error) bool
		want  string
	}{
		{
			name:  "buy with more than the cash",
			do:    swap(usdc, eth, 20_000, ""),
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name:  "sell more than held",
			do:    swap(eth, usdc, 1500, ""),
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name:  "sell a token never held",
			do:    swap(cbbtc, usdc, 10, ""),
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name:  "swap more than held into another token",
			do:    swap(eth, cbbtc, 1500, ""),
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name:  "swap to another recipient",
			do:    swap(usdc, eth, 10, "0x2222222222222222222222222222222222222222"),
			check: isCode(warden.EInvalid), want: "EInvalid",
		},
		{
			name: "swap without clearance",
			do: func(e *paper.Exchange, _ finance.Clearance) error {
				return swap(usdc, eth, 10, "")(e, finance.Clearance{})
			},
			check: isErr(finance.ErrNotCleared), want: "ErrNotCleared",
		},
		{
			name: "open a perp without clearance",
			do: func(e *paper.Exchange, _ finance.Clearance) error {
				_, err := e.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: finance.Long, MarginUSD: usd(10), Leverage: 2}, finance.Clearance{})
				return err
			},
			check: isErr(finance.ErrNotCleared), want: "ErrNotCleared",
		},
		{
			name: "close a perp without clearance",
			do: func(e *paper.Exchange, _ finance.Clearance) error {
				_, err := e.ClosePerp(ctx, "id-2", finance.Clearance{})
				return err
			},
			check: isErr(finance.ErrNotCleared), want: "ErrNotCleared",
		},
		{
			name: "transfer without clearance",
			do: func(e *paper.Exchange, _ finance.Clearance) error {
				_, err := e.Transfer(ctx, finance.TransferOrder{Token: usdc, AmountUSD: usd(10), Recipient: "0x2222222222222222222222222222222222222222"}, finance.Clearance{})
				return err
			},
			check: isErr(finance.ErrNotCleared), want: "ErrNotCleared",
		},
		{
			name: "perp margin above the cash",
			do: func(e *paper.Exchange, c finance.Clearance) error {
				_, err := e.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: finance.Long, MarginUSD: usd(9500), Leverage: 2}, c)
				return err
			},
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name: "perp leverage above the maximum",
			do: func(e *paper.Exchange, c finance.Clearance) error {
				_, err := e.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: finance.Long, MarginUSD: usd(10), Leverage: 101}, c)
				return err
			},
			check: isCode(warden.EInvalid), want: "EInvalid",
		},
		{
			name: "close an unknown position",
			do: func(e *paper.Exchange, c finance.Clearance) error {
				_, err := e.ClosePerp(ctx, "nope", c)
				return err
			},
			check: isCode(warden.ENotFound), want: "ENotFound",
		},
		{
			name: "transfer more than held",
			do: func(e *paper.Exchange, c finance.Clearance) error {
				_, err := e.Transfer(ctx, finance.TransferOrder{Token: eth, AmountUSD: usd(1001), Recipient: "0x2222222222222222222222222222222222222222"}, c)
				return err
			},
			check: isErr(paper.ErrInsufficientFunds), want: "ErrInsufficientFunds",
		},
		{
			name: "transfer to the own wallet",
			do: func(e *paper.Exchange, c finance.Clearance) error {
				_, err := e.Transfer(ctx, finance.TransferOrder{Token: usdc, AmountUSD: usd(10), Recipient: wallet}, c)
				return err
			},
			check: isCode(warden.EInvalid), want: "EInvalid",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, store, _ := newExchange(t)
			c := financetest.Clearance(t, "trace-test")
			buy(t, e, c, eth, 1000)
			if _, err := e.OpenPerp(ctx, finance.PerpOrder{Token: solT, Side: finance.Short, MarginUSD: usd(100), Leverage: 3}, c); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, store)
			err := tc.do(e, c)
			if !tc.check(err) {
				t.Errorf("%s: error = %v; want %s", tc.name, err, tc.want)
			}
			if after := snapshot(t, store); !sameState(before, after) {
				t.Errorf("%s changed the store:\nbefore %+v\nafter  %+v", tc.name, before.book, after.book)
			}
		})
	}
}

func swap(in, out finance.Token, dollars float64, recipient string) func(*paper.Exchange, finance.Clearance) error {
	return func(e *paper.Exchange, c finance.Clearance) error {
		_, err := e.Swap(ctx, finance.SwapQuote{In: in, Out: out, AmountUSD: usd(dollars), MaxSlippage: 0.05, Recipient: recipient}, c)
		return err
	}
}

func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func isCode(code warden.ErrorCode) func(error) bool {
	return func(err error) bool { return err != nil && warden.ErrorCodeOf(err) == code }
}

// TestSlippage moves the price between the quote and the execution: the
// swap fills within the tolerance and is refused beyond it.
func TestSlippage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tolerance float64
		ok        bool
	}{
		{"9 % less out refused at 5 %", 0.05, false},
		{"9 % less out refused with no tolerance", math.NaN(), false},
		{"9 % less out filled at 12 %", 0.12, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, store, _ := newExchange(t)
			// Each reading of the clock is the next tick: the quote sees
			// ETH at 3000, the execution at 3300.
			n := 0
			e.Now = func() time.Time { n++; return t0.Add(time.Duration(n-1) * time.Minute) }
			before := snapshot(t, store)
			f, err := e.Swap(ctx, finance.SwapQuote{In: usdc, Out: eth, AmountUSD: usd(1000), MaxSlippage: tc.tolerance}, financetest.Clearance(t, "trace-test"))
			if tc.ok {
				if err != nil || f.Price < 3300 {
					t.Errorf("Swap = %+v, %v; want a fill at the moved price", f, err)
				}
				return
			}
			if !errors.Is(err, paper.ErrSlippage) {
				t.Errorf("Swap error = %v; want ErrSlippage", err)
			}
			if !sameState(before, snapshot(t, store)) {
				t.Error("the refused swap changed the store")
			}
		})
	}
}

func TestPerps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		side     string
		leverage float64
		closeAt  int // tick: ETH 3000, 3300, 2700
		want     float64
	}{
		{"long up", finance.Long, 5, 1, 1500},
		{"long down", finance.Long, 5, 2, 500},
		{"short up", finance.Short, 5, 1, 500},
		{"short down", finance.Short, 5, 2, 1500},
		{"unchanged", finance.Long, 5, 0, 1000},
		{"leverage 0 is 1x", finance.Long, 0, 1, 1100},
		{"a loss beyond the margin pays nothing", finance.Long, 20, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, store, clk := newExchange(t)
			c := financetest.Clearance(t, "trace-test")
			open, err := e.OpenPerp(ctx, finance.PerpOrder{Token: eth, Side: tc.side, MarginUSD: usd(1000), Leverage: tc.leverage}, c)
			if err != nil {
				t.Fatal(err)
			}
			lev := max(tc.leverage, 1)
			if open.Action != finance.PerpOpen || open.Position == "" || open.Price != 3000 || !near(open.OutAmount, 1000*lev/3000, 1e-12) || open.ValueUSD != usd(1000) {
				t.Errorf("open fill = %+v", open)
			}
			p := portfolio(t, e)
			if len(p.Positions) != 1 || p.Positions[0].ID != open.Position || p.Positions[0].OpenedAt != t0 || p.Positions[0].EntryPrice != 3000 || p.Positions[0].Leverage != lev {
				t.Fatalf("positions = %+v", p.Positions)
			}
			if _, cash := holding(p, usdc); cash != usd(9000) {
				t.Errorf("cash with the position open = %v, want 9000", cash)
			}
			clk.tick(tc.closeAt)
			if mark := portfolio(t, e).Positions[0]; mark.ValueUSD() != usd(tc.want) {
				t.Errorf("position value before closing = %v, want %v", mark.ValueUSD(), tc.want)
			}
			closed, err := e.ClosePerp(ctx, open.Position, c)
			if err != nil {
				t.Fatal(err)
			}
			if closed.Action != finance.PerpClose || closed.Position != open.Position || closed.ValueUSD != usd(tc.want) {
				t.Errorf("close fill = %+v; want $%v paid", closed, tc.want)
			}
			p = portfolio(t, e)
			if _, cash := holding(p, usdc); cash != usd(9000+tc.want) || len(p.Positions) != 0 {
				t.Errorf("after closing: cash %v, positions %d; want %v and none", cash, len(p.Positions), 9000+tc.want)
			}
			if _, err := e.ClosePerp(ctx, open.Position, c); warden.ErrorCodeOf(err) != warden.ENotFound {
				t.Errorf("closing twice: %v; want ENotFound", err)
			}
			if n := len(store.Fills(0)); n != 2 {
				t.Errorf("%d fills; want the open and the close", n)
			}
		})
	}
}

func TestTransfer(t *testing.T) {
	e, _, _ := newExchange(t)
	c := financetest.Clearance(t, "trace-test")
	bought := buy(t, e, c, eth, 1000)
	const to = "0x2222222222222222222222222222222222222222"
	f, err := e.Transfer(ctx, finance.TransferOrder{Token: eth, AmountUSD: usd(300), Recipient: to}, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Action != finance.Transfer || !near(f.InAmount, 0.1, 1e-15) || f.Price != 3000 || f.ValueUSD != usd(300) {
		t.Errorf("token transfer fill = %+v; want 0.1 ETH at 3000", f)
	}
	if _, err := e.Transfer(ctx, finance.TransferOrder{Token: usdt, AmountUSD: usd(250), Recipient: to}, c); err != nil {
		t.Fatal(err)
	}
	p := portfolio(t, e)
	if units, _ := holding(p, eth); !near(units, bought.OutAmount-0.1, 1e-12) {
		t.Errorf("ETH left = %v, want %v", units, bought.OutAmount-0.1)
	}
	if _, cash := holding(p, usdc); cash != usd(10_000-1000-250) {
		t.Errorf("cash left = %v, want 8750 (USDT is the same cash)", cash)
	}
}

// TestPortfolio values holdings and positions at oracle prices and agrees
// with finance.Portfolio.Exposure.
func TestPortfolio(t *testing.T) {
	e, _, clk := newExchange(t)
	p := portfolio(t, e)
	if len(p.Holdings) != 1 || p.Holdings[0].Token != paper.CashToken() || p.Holdings[0].ValueUSD != paper.DefaultStartingCash || p.Wallet != wallet || p.At != t0 {
		t.Errorf("a new book's portfolio = %+v; want the starting cash only", p)
	}
	c := financetest.Clearance(t, "trace-test")
	ethFill := buy(t, e, c, eth, 1000)
	btcFill := buy(t, e, c, cbbtc, 2000)
	if _, err := e.OpenPerp(ctx, finance.PerpOrder{Token: solT, Side: finance.Short, MarginUSD: usd(500), Leverage: 2}, c); err != nil {
		t.Fatal(err)
	}
	clk.tick(1) // ETH 3300, SOL 165
	p = portfolio(t, e)
	ethValue, btcValue := usd(ethFill.OutAmount*3300), usd(btcFill.OutAmount*60000)
	solSize := 500 * 2 / 150.0
	solNotional := usd(solSize * 165)
	if _, v := holding(p, eth); v != ethValue {
		t.Errorf("ETH value = %v, want %v", v, ethValue)
	}
	if _, v := holding(p, cbbtc); v != btcValue {
		t.Errorf("cbBTC value = %v, want %v", v, btcValue)
	}
	if len(p.Positions) != 1 || p.Positions[0].MarkPrice != 165 {
		t.Fatalf("positions = %+v; want the SOL short marked at 165", p.Positions)
	}
	x := p.Exposure()
	if x.Total != ethValue+btcValue+solNotional || x.ByAsset["ETH"] != ethValue || x.ByAsset["BTC"] != btcValue || x.ByAsset["SOL"] != solNotional {
		t.Errorf("Exposure() = %+v; want ETH %v, BTC %v, SOL %v", x, ethValue, btcValue, solNotional)
	}
	if _, ok := x.ByAsset["USDC"]; ok || x.ByClass[finance.ClassMajor] != x.Total || x.ByChain["base"] != ethValue+btcValue {
		t.Errorf("Exposure() = %+v; want no cash, all majors, base = the holdings", x)
	}
	shortValue := usd(500 - (165-150)*solSize)
	if want := usd(10_000-1000-2000-500) + ethValue + btcValue + shortValue; p.ValueUSD() != want {
		t.Errorf("ValueUSD() = %v, want %v", p.ValueUSD(), want)
	}
}

// TestTraderOnPaper runs an order end to end: the Trader decides, then the
// paper exchange fills it.
func TestTraderOnPaper(t *testing.T) {
	e, store, _ := newExchange(t)
	tr := &finance.Trader{
		Backend:  e,
		Slippage: finance.SlippagePolicy{SmallMax: 0.01, MidMax: 0.01, LargeMax: 0.01},
		Decide: func(context.Context, *warden.Request, finance.DecideOptions) (warden.Decision, error) {
			return warden.Decision{Verdict: warden.Allow, TraceID: "trace-e2e"}, nil
		},
	}
	req := &warden.Request{Capability: warden.CapTrade, Action: finance.Buy, Resource: "ETH", Params: map[string]json.RawMessage{
		finance.ParamChain: json.RawMessage(`"base"`), finance.ParamAmountUSD: json.RawMessage(`"250"`),
	}}
	ex, err := tr.Execute(ctx, req, finance.DecideOptions{})
	if err != nil || ex.Fill == nil {
		t.Fatalf("Execute = %+v, %v", ex, err)
	}
	if fills := store.Fills(1); len(fills) != 1 || fills[0].TraceID != "trace-e2e" || fills[0].ValueUSD != usd(250) {
		t.Errorf("stored fill = %+v; want the trace's $250 buy", fills)
	}
}

func BenchmarkSimulate(b *testing.B) {
	e, _, _ := newExchange(b)
	e.Prices = &paper.PathPrices{Epoch: t0, Volatility: 0.001, Seed: 1}
	q := finance.SwapQuote{In: eth, Out: cbbtc, AmountUSD: usd(1000)}
	for b.Loop() {
		if _, err := e.Simulate(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}
