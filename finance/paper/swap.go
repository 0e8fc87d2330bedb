package paper

import (
	"context"
	"math"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// trade is a swap priced at one moment.
type trade struct {
	sim       finance.Simulation
	action    string  // finance.Buy, Sell or Swap
	in, out   float64 // units of In paid and of Out received (dollars for cash)
	priceIn   float64 // oracle prices; 1 for cash
	priceOut  float64
	amountUSD warden.USD
}

// fillPrice is the fill's effective price: dollars paid per unit bought,
// dollars received per unit sold, units of In paid per unit of Out swapped.
func (t *trade) fillPrice() float64 {
	if t.action == finance.Sell {
		return t.out / t.in
	}
	return t.in / t.out
}

// price prices q at the moment at.
func (e *Exchange) price(ctx context.Context, q finance.SwapQuote, at time.Time) (trade, error) {
	if q.AmountUSD <= 0 {
		return trade{}, warden.Errorf(warden.EInvalid, "the swap's amount is $%s; it must be above 0", q.AmountUSD)
	}
	if q.In.Key() == q.Out.Key() {
		return trade{}, warden.Errorf(warden.EInvalid, "the swap pays and receives the same token (%s)", q.In)
	}
	fee, err := e.fee()
	if err != nil {
		return trade{}, err
	}
	t := trade{priceIn: 1, priceOut: 1, amountUSD: q.AmountUSD}
	if !isCash(q.In) {
		p, err := e.oracle(ctx, q.In, at)
		if err != nil {
			return trade{}, err
		}
		t.priceIn = p.USD
	}
	if !isCash(q.Out) {
		p, err := e.oracle(ctx, q.Out, at)
		if err != nil {
			return trade{}, err
		}
		t.priceOut = p.USD
	}
	depth := e.poolDepth()
	amount := q.AmountUSD.Dollars()
	t.in = amount / t.priceIn
	usd := amount // the dollars that reach Out's side
	if !isCash(q.In) {
		usd = poolSell(depth, t.priceIn, t.in, fee)
	}
	switch {
	case isCash(q.In) && isCash(q.Out):
		t.action, t.out = finance.Swap, usd*(1-fee)
	case isCash(q.Out):
		t.action, t.out = finance.Sell, usd
	case isCash(q.In):
		t.action, t.out = finance.Buy, poolBuy(depth, t.priceOut, usd, fee)
	default:
		t.action, t.out = finance.Swap, poolBuy(depth, t.priceOut, usd, fee)
	}
	ideal := amount / t.priceOut
	t.sim = finance.Simulation{
		ExpectedOut:    t.out,
		PriceImpact:    1 - t.out/ideal,
		InputValueUSD:  q.AmountUSD,
		OutputValueUSD: finance.USDOf(t.out * t.priceOut),
	}
	return t, nil
}

// Simulate quotes q at the oracle prices now: ExpectedOut in units of q.Out,
// PriceImpact = 1 − ExpectedOut/ideal (ideal: AmountUSD at q.Out's oracle
// price, without fee), so it includes the fee. Nothing is stored.
func (e *Exchange) Simulate(ctx context.Context, q finance.SwapQuote) (finance.Simulation, error) {
	if err := e.ready(false); err != nil {
		return finance.Simulation{}, err
	}
	t, err := e.price(ctx, q, e.now())
	if err != nil {
		return finance.Simulation{}, err
	}
	return t.sim, nil
}

// Swap executes q: AmountUSD of cash (for a stablecoin In) or AmountUSD
// worth of q.In at its oracle price is paid, and q.Out is received into the
// wallet. It quotes q, then re-prices it inside the book's transaction and
// refuses (ErrSlippage) when the output fell below the quote by more than
// q.MaxSlippage (NaN: no tolerance), as an on-chain amountOutMin would. It
// refuses a recipient other than the Wallet and more than the wallet holds
// (ErrInsufficientFunds); an amount within a micro-dollar of a whole
// holding sells all of it.
func (e *Exchange) Swap(ctx context.Context, q finance.SwapQuote, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := e.ready(true); err != nil {
		return finance.Fill{}, err
	}
	if q.Recipient != "" && !finance.SameAddress(q.Recipient, e.Wallet) {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the paper exchange swaps into its own wallet only, not to %s", q.Recipient).
			WithHint("drop the recipient; to send tokens elsewhere, transfer them")
	}
	tol := q.MaxSlippage
	if math.IsNaN(tol) {
		tol = 0
	}
	if tol < 0 || tol >= 1 {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the swap's slippage tolerance is %v; it must be at least 0 and below 1", q.MaxSlippage)
	}
	quoted, err := e.price(ctx, q, e.now())
	if err != nil {
		return finance.Fill{}, err
	}
	minOut := quoted.out * (1 - tol)
	var fill finance.Fill
	err = e.Store.Update(ctx, func(b *Book) error {
		e.open(b)
		now := e.now()
		t, err := e.price(ctx, q, now)
		if err != nil {
			return err
		}
		if t.out < minOut {
			return warden.Errorf(warden.EConflict, "the price moved: the swap would return %g %s, below the minimum %g (quote %g less %.2f %%)",
				t.out, q.Out.Symbol, minOut, quoted.out, tol*100).Wrap(ErrSlippage)
		}
		paid, err := debit(b, q.In, t.in, t.priceIn, q.AmountUSD, t.action)
		if err != nil {
			return err
		}
		t.in = paid
		credit(b, q.Out, t.out)
		fill = finance.Fill{
			ID: e.newID(), TraceID: c.TraceID(), Action: t.action, At: now,
			InToken: q.In.Symbol, InAmount: t.in, OutToken: q.Out.Symbol, OutAmount: t.out,
			Price: t.fillPrice(), ValueUSD: q.AmountUSD,
		}
		b.NewFills = append(b.NewFills, fill)
		return nil
	})
	if err != nil {
		return finance.Fill{}, err
	}
	return fill, nil
}
