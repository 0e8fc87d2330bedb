package paper

import (
	"context"
	"math"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// OpenPerp opens a position on p.Token's asset: MarginUSD is taken from cash
// (ErrInsufficientFunds when short), the size is margin×leverage/price and
// the entry is the oracle price now. Leverage 0 means 1; it must not exceed
// MaxLeverage. There is no perp market for stablecoins.
func (e *Exchange) OpenPerp(ctx context.Context, p finance.PerpOrder, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := e.ready(true); err != nil {
		return finance.Fill{}, err
	}
	if p.Side != finance.Long && p.Side != finance.Short {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the perp's side is %q; it must be long or short", p.Side)
	}
	lev := p.Leverage
	if lev == 0 {
		lev = 1
	}
	if !(lev > 0 && lev <= MaxLeverage) { // also refuses NaN
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the perp's leverage is %v; the paper exchange opens above 0 and up to %dx", p.Leverage, MaxLeverage)
	}
	if p.MarginUSD <= 0 {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the perp's margin is $%s; it must be above 0", p.MarginUSD)
	}
	if isCash(p.Token) {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the paper exchange has no perp market for the stablecoin %s", p.Token.Symbol)
	}
	var fill finance.Fill
	err := e.Store.Update(ctx, func(b *Book) error {
		e.open(b)
		now := e.now()
		price, err := e.oracle(ctx, p.Token, now)
		if err != nil {
			return err
		}
		if b.Cash < p.MarginUSD {
			return warden.Errorf(warden.EConflict, "the paper wallet holds $%s of cash; the perp's margin is $%s", b.Cash, p.MarginUSD).Wrap(ErrInsufficientFunds)
		}
		id := e.newID()
		if _, dup := b.Positions[id]; dup {
			return warden.Errorf(warden.EInternal, "the paper exchange drew the position id %s twice", id)
		}
		size := p.MarginUSD.Dollars() * lev / price.USD
		if math.IsInf(size, 0) || !(size > 0) {
			return warden.Errorf(warden.EInvalid, "the perp's size at $%g is not a usable number", price.USD)
		}
		b.Cash -= p.MarginUSD
		b.Positions[id] = finance.Position{
			ID: id, Token: p.Token, Side: p.Side, Leverage: lev, MarginUSD: p.MarginUSD,
			Size: size, EntryPrice: price.USD, OpenedAt: now, MarkPrice: price.USD,
		}
		fill = finance.Fill{
			ID: e.newID(), TraceID: c.TraceID(), Action: finance.PerpOpen, At: now,
			InToken: CashToken().Symbol, InAmount: p.MarginUSD.Dollars(), OutToken: p.Token.Symbol, OutAmount: size,
			Price: price.USD, ValueUSD: p.MarginUSD, Position: id,
		}
		b.NewFills = append(b.NewFills, fill)
		return nil
	})
	if err != nil {
		return finance.Fill{}, err
	}
	return fill, nil
}

// ClosePerp closes the open position id at the oracle price now and pays
// its value (margin plus profit or loss, never below 0) back to cash. An
// unknown id is an ENotFound error.
func (e *Exchange) ClosePerp(ctx context.Context, id string, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := e.ready(true); err != nil {
		return finance.Fill{}, err
	}
	var fill finance.Fill
	err := e.Store.Update(ctx, func(b *Book) error {
		e.open(b)
		pos, ok := b.Positions[id]
		if !ok {
			return warden.Errorf(warden.ENotFound, "the paper wallet has no open position %q", id).
				WithHint("the portfolio lists the open positions")
		}
		now := e.now()
		price, err := e.oracle(ctx, pos.Token, now)
		if err != nil {
			return err
		}
		pos.MarkPrice = price.USD
		pay := pos.ValueUSD()
		b.Cash += pay
		delete(b.Positions, id)
		fill = finance.Fill{
			ID: e.newID(), TraceID: c.TraceID(), Action: finance.PerpClose, At: now,
			InToken: pos.Token.Symbol, InAmount: pos.Size, OutToken: CashToken().Symbol, OutAmount: pay.Dollars(),
			Price: price.USD, ValueUSD: pay, Position: id,
		}
		b.NewFills = append(b.NewFills, fill)
		return nil
	})
	if err != nil {
		return finance.Fill{}, err
	}
	return fill, nil
}
