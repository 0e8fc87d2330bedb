package paper

import (
	"context"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Transfer sends AmountUSD worth of t.Token to t.Recipient, which must be
// someone other than the Wallet: cash for a stablecoin, else units of the
// token at its oracle price now (ErrInsufficientFunds when the wallet holds
// less). The tokens leave the paper book; nothing arrives anywhere.
func (e *Exchange) Transfer(ctx context.Context, t finance.TransferOrder, c finance.Clearance) (finance.Fill, error) {
	if err := c.Check(); err != nil {
		return finance.Fill{}, err
	}
	if err := e.ready(true); err != nil {
		return finance.Fill{}, err
	}
	if strings.TrimSpace(t.Recipient) == "" {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the transfer names no recipient")
	}
	if e.Wallet != "" && finance.SameAddress(t.Recipient, e.Wallet) {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the transfer's recipient is the paper wallet itself")
	}
	if t.AmountUSD <= 0 {
		return finance.Fill{}, warden.Errorf(warden.EInvalid, "the transfer's amount is $%s; it must be above 0", t.AmountUSD)
	}
	var fill finance.Fill
	err := e.Store.Update(ctx, func(b *Book) error {
		e.open(b)
		now := e.now()
		price := 1.0
		if !isCash(t.Token) {
			p, err := e.oracle(ctx, t.Token, now)
			if err != nil {
				return err
			}
			price = p.USD
		}
		units, err := debit(b, t.Token, t.AmountUSD.Dollars()/price, price, t.AmountUSD, finance.Transfer)
		if err != nil {
			return err
		}
		fill = finance.Fill{
			ID: e.newID(), TraceID: c.TraceID(), Action: finance.Transfer, At: now,
			InToken: t.Token.Symbol, InAmount: units, Price: price, ValueUSD: t.AmountUSD,
		}
		b.NewFills = append(b.NewFills, fill)
		return nil
	})
	if err != nil {
		return finance.Fill{}, err
	}
	return fill, nil
}
